"""Frames scoped to one app, FrameTimeline jank types, frame causes, and hot spots that
mean something — on traces built here (FrameTimeline packets encoded by the field numbers of
Perfetto's published frame_timeline_event.proto, not by the reader's own classes) and on
small PerfData, each with its answer worked out by hand."""

from __future__ import annotations

from array import array

import pytest
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
from perfetto.trace_builder.proto_builder import TraceProtoBuilder

from nodes.perf.metrics import compute
from nodes.perf.metrics import scope as scope_mod
from nodes.perf.model import FrameCause, PerfData
from nodes.perf.parsers import perfetto
from tests.protowire import field, varint

SEQ = 7
MS = 1_000_000  # ns
APP, SYSUI, TEST, SYSTEM_SERVER = 100, 200, 300, 1000

# FrameTimelineEvent.JankType bits (protos/perfetto/trace/android/frame_timeline_event.proto)
NONE, SF_SCHEDULING, PREDICTION_ERROR, DISPLAY_HAL = 1, 2, 4, 8
SF_CPU, SF_GPU, APP_DEADLINE, BUFFER_STUFFING, UNKNOWN = 16, 32, 64, 128, 256


# --- protobuf by field number ------------------------------------------------------------


def _msg(fields: list[tuple[int, int | str | bytes]]) -> bytes:
    out = b""
    for num, v in fields:
        if isinstance(v, int):
            out += varint(num << 3) + varint(v)
        else:
            data = v.encode() if isinstance(v, str) else v
            out += field(num, data)
    return out


def _ft(b: TraceProtoBuilder, ts: int, event: int, fields: list[tuple[int, int | str]]) -> None:
    """A TracePacket with field 76 = FrameTimelineEvent{<event>: fields}."""
    payload = _msg([(event, _msg(fields))])
    pkt = b.add_packet()
    pkt.timestamp = ts
    pkt.trusted_packet_sequence_id = SEQ
    pkt.ParseFromString(pkt.SerializeToString() + field(76, payload))


_cookie = iter(range(1, 10_000))


def _surface_frame(b, pid: int, token: int, start_ms: float, dur_ms: float, jank: int,
                   expected_ms: float = 16.0, on_time: int = 0, layer: str = "L") -> None:
    """Expected (3) and actual (4) surface frame starts and their frame_end (5) events:
    fields 1 cookie, 2 token, 3 display_frame_token, 4 pid, 5 layer_name, 7 on_time_finish,
    9 jank_type."""
    ce, ca = next(_cookie), next(_cookie)
    t0 = int(start_ms * MS)
    _ft(b, t0, 3, [(1, ce), (2, token), (3, token + 1000), (4, pid), (5, layer)])
    _ft(b, t0, 4, [(1, ca), (2, token), (3, token + 1000), (4, pid), (5, layer), (6, 1), (7, on_time), (9, jank)])
    _ft(b, t0 + int(expected_ms * MS), 5, [(1, ce)])
    _ft(b, t0 + int(dur_ms * MS), 5, [(1, ca)])


def _process_tree(b, procs: dict[int, str], threads: dict[int, tuple[int, str]]) -> None:
    pkt = b.add_packet()
    pkt.trusted_packet_sequence_id = SEQ
    for pid, name in procs.items():
        pr = pkt.process_tree.processes.add()
        pr.pid = pid
        pr.cmdline.append(name)
    for tid, (tgid, name) in threads.items():
        th = pkt.process_tree.threads.add()
        th.tid, th.tgid, th.name = tid, tgid, name


def _prints(b, events: list[tuple[float, int, str]]) -> None:
    """atrace lines (ts ms, tid, line) in one ftrace bundle."""
    pkt = b.add_packet()
    pkt.trusted_packet_sequence_id = SEQ
    pkt.ftrace_events.cpu = 0
    for ts, tid, line in events:
        e = pkt.ftrace_events.event.add()
        e.timestamp, e.pid = int(ts * MS), tid
        e.print.buf = line + "\n"


def _trace(tmp_path, launch: bool = False, harness: bool = False) -> str:
    """An app (100) with five surface frames of known jank types, SystemUI (200) with six
    clean ones (more frames: it wins "most surface frames" when nothing names the app)."""
    b = TraceProtoBuilder()
    procs = {APP: "com.example.app", SYSUI: "com.android.systemui", SYSTEM_SERVER: "system_server"}
    threads = {APP: (APP, "example.app"), 101: (APP, "RenderThread"), SYSUI: (SYSUI, "ndroid.systemui")}
    if harness:
        procs[TEST] = "com.example.app.test"
        threads[TEST] = (TEST, "roidJUnitRunner")
    _process_tree(b, procs, threads)
    _surface_frame(b, APP, 1, 0, 30, APP_DEADLINE | BUFFER_STUFFING)   # janky, both types
    _surface_frame(b, APP, 2, 33, 10, BUFFER_STUFFING)                 # a state, not jank
    _surface_frame(b, APP, 3, 50, 10, PREDICTION_ERROR)                # not user-visible
    _surface_frame(b, APP, 4, 66, 34, SF_CPU, on_time=1)               # SurfaceFlinger's jank
    _surface_frame(b, APP, 5, 116, 8, NONE)
    for i in range(6):
        _surface_frame(b, SYSUI, 50 + i, 200 + 17 * i, 5, NONE)
    lines = [
        (0.0, APP, "B|100|Choreographer#doFrame 1"),
        (2.0, APP, "B|100|binder transaction"),
        (22.0, APP, "E|100"),
        (28.0, APP, "E|100"),
        (5.0, APP, "S|100|NETWORK: https://example.com/feed|7"),
        (400.0, APP, "F|100|NETWORK: https://example.com/feed|7"),
    ]
    if launch:
        lines += [(0.0, SYSTEM_SERVER, "S|1000|launching: com.example.app|1"),
                  (125.0, SYSTEM_SERVER, "F|1000|launching: com.example.app|1")]
    if harness:
        lines += [(0.0, TEST, "B|300|measureBlock"), (500.0, TEST, "E|300")]
    _prints(b, sorted(lines))
    p = tmp_path / "t.perfetto-trace"
    p.write_bytes(b.serialize())
    return str(p)


# --- FrameTimeline: one app, its jank types ----------------------------------------------


def test_frames_are_the_apps_own_and_each_jank_type_component_counts_on_its_own(tmp_path):
    res = compute(perfetto.parse(_trace(tmp_path)), process="com.example.app")
    fs = res.frames
    assert (fs.pid, fs.process, fs.chosen_by) == (APP, "com.example.app", "named by the user")
    assert fs.count == 5  # SystemUI's six frames are not the app's
    assert fs.jank_types == {"App Deadline Missed": 1, "Buffer Stuffing": 2, "Prediction Error": 1,
                             "SurfaceFlinger CPU Deadline Missed": 1, "None": 1}
    # user-visible: App Deadline Missed (frame 1) and SurfaceFlinger CPU (frame 4); Buffer
    # Stuffing alone and Prediction Error alone are not jank
    assert fs.jank_source == "frame timeline" and fs.jank_count == 2 and fs.jank_ratio == 0.4
    assert [(o.process, o.count, o.jank_count) for o in fs.other_processes] == [("com.android.systemui", 6, 0)]
    assert fs.p50_ms == 10.0 and fs.max_ms == 34.0


def test_without_a_name_the_launched_package_then_the_most_surface_frames_is_the_app(tmp_path):
    d = tmp_path / "a"
    d.mkdir()
    assert compute(perfetto.parse(_trace(d, launch=True))).frames.chosen_by == "launched package"
    assert compute(perfetto.parse(_trace(d, launch=True))).frames.pid == APP
    e = tmp_path / "b"
    e.mkdir()
    fs = compute(perfetto.parse(_trace(e))).frames
    assert (fs.pid, fs.chosen_by, fs.count) == (SYSUI, "most surface frames", 6)
    # a name that is in no process: said, and the usual rules choose
    res = compute(perfetto.parse(_trace(e)), process="com.nowhere")
    assert res.frames.pid == SYSUI and any("--process com.nowhere" in w for w in res.warnings)
    assert compute(perfetto.parse(_trace(e)), process=str(APP)).frames.pid == APP


def test_worst_frames_get_a_cause_with_evidence(tmp_path):
    fs = compute(perfetto.parse(_trace(tmp_path, launch=True))).frames
    by_start = {round(w.start_ms): w for w in fs.worst}
    first = by_start[0]
    assert first.cause == FrameCause.BINDER and first.cause_ms == pytest.approx(20.0)
    assert any(e.startswith("binder transaction 20") for e in first.evidence)
    assert first.overrun_ms == pytest.approx(14.0)  # ends at 30, expected end 16
    sf = by_start[66]
    assert sf.cause == FrameCause.SURFACEFLINGER and "the app finished its work on time" in sf.evidence
    assert fs.causes == {"binder": 1, "surfaceflinger": 1}


def test_jank_findings_lead_with_the_app_its_types_and_causes_with_a_suggestion(tmp_path):
    res = compute(perfetto.parse(_trace(tmp_path, launch=True)))
    jank = next(f for f in res.findings if f.title.startswith("Janky frames"))
    assert jank.title == "Janky frames: 40.0 % of com.example.app" and jank.severity == "high"
    assert "App Deadline Missed 1" in jank.detail and "not counted: Buffer Stuffing 2, Prediction Error 1" in jank.detail
    causes = [f for f in res.findings if f.title.startswith("Late frames")]
    assert {f.title for f in causes} == {"Late frames: the main thread blocked in binder",
                                         "Late frames: SurfaceFlinger (not the app)"}
    for f in [jank, *causes]:
        assert f.suggestion and f.link and f.link.startswith("https://developer.android.com/")


# --- hot spots: the app's thread time --------------------------------------------------


def test_async_spans_are_not_thread_time_and_the_harness_is_summarised_apart(tmp_path):
    res = compute(perfetto.parse(_trace(tmp_path, launch=True, harness=True)))
    overall = [h for h in res.hotspots if h.thread is None]
    assert {h.name for h in overall} == {"Choreographer#doFrame 1", "binder transaction"}
    assert all(h.scope == "app" for h in overall)
    # shares are of the app's thread time: 28 ms of doFrame, 20 of it in binder
    binder = next(h for h in overall if h.name == "binder transaction")
    assert (binder.self_ms, binder.self_pct) == (20.0, pytest.approx(71.43, abs=0.01))
    assert res.app.harness == ["com.example.app.test"]
    groups = {s.scope: s for s in res.app.summaries}
    assert groups["harness"].top == ["measureBlock (500 ms)"] and groups["app"].busy_ms == 28.0
    stats = {(s.scope, s.name): s for s in res.slice_stats}
    net = stats[("app", "NETWORK: https://example.com/feed")]
    assert (net.kind, net.count, net.sum_ms) == ("async", 1, 395.0)
    assert ("app", "measureBlock") not in stats and stats[("all", "measureBlock")].first_process == "com.example.app.test"


def test_self_time_never_exceeds_the_threads_busy_time():
    pd = PerfData("test", "t")
    pd.set_process_name(1, "p")
    # X-style slices that do not nest: each sticks out of the one before
    for i, (t, d) in enumerate([(0, 10), (5, 10), (12, 10), (13, 30)]):
        pd.add_slice(1, 1, t * 1000.0, d * 1000.0, f"s{i}")
    res = compute(pd)
    busy = next(t.busy_ms for t in res.threads if t.tid == 1)
    # each sticking-out part is clipped to its parent: 0-10 and 12-22 are the busy time
    assert sum(h.self_ms for h in res.hotspots if h.thread is None) == busy == 20.0


# --- frame causes on small PerfData --------------------------------------------------------


class _Sched:
    """Scheduler intervals as the reader keeps them (codes: Running, R, R+, S, D, other)."""

    def __init__(self, spans: list[tuple[float, float, int, int]]):
        self.ts, self.dur = array("d", [s[0] for s in spans]), array("d", [s[1] for s in spans])
        self.state, self.io_wait = array("b", [s[2] for s in spans]), array("b", [s[3] for s in spans])

    def __len__(self) -> int:
        return len(self.ts)


def _one_frame(slices: list[tuple[int, float, float, str]], sched: dict | None = None, frame_ms=(0.0, 40.0)):
    """An app (pid 10, RenderThread 11) with one over-budget doFrame-less frame of the reader."""
    from nodes.perf.model import Frame

    pd = PerfData("perfetto", "t")
    pd.set_process_name(10, "com.example")
    pd.set_thread_name(10, 10, "example")
    pd.set_thread_name(10, 11, "RenderThread")
    for tid, t, d, name in slices:
        pd.add_slice(10, tid, t * 1000.0, d * 1000.0, name)
    pd.add_frame(Frame(ts_us=frame_ms[0] * 1000.0, dur_us=frame_ms[1] * 1000.0, pid=10, tid=10))
    if sched:
        pd.sched_intervals = {(10, tid): _Sched([(a * 1000.0, (b - a) * 1000.0, st, io) for a, b, st, io in spans])
                              for tid, spans in sched.items()}
    return compute(pd).frames.worst[0]


@pytest.mark.parametrize("name,cause", [
    ("Lock contention on a monitor lock (owner tid: 42)", FrameCause.LOCK_CONTENTION),
    ("monitor contention with owner Binder:902_2 (914) at void a.b()", FrameCause.LOCK_CONTENTION),
    ("AIDL::java::IPackageManager::getPackageInfo::client", FrameCause.BINDER),
    ("WaitForGcToComplete", FrameCause.GC),
    ("Build GL Shader", FrameCause.SHADER_COMPILATION),
])
def test_the_deepest_blocking_slice_names_the_cause(name, cause):
    w = _one_frame([(10, 0, 38, "Choreographer#doFrame"), (10, 5, 30, name)])
    assert w.cause == cause and w.cause_ms == 30.0
    assert w.evidence[0].startswith(f"{name}")
    assert w.candidates == {cause.value: 30.0, "main_thread_slice": 8.0}


def test_main_thread_work_is_all_its_running_slices_named_by_the_heaviest():
    w = _one_frame([(10, 0, 38, "Choreographer#doFrame"), (10, 5, 30, "inflate")])
    assert w.cause == FrameCause.MAIN_THREAD_SLICE and w.cause_ms == 38.0
    assert w.evidence[:2] == ["inflate (Choreographer#doFrame) 30 ms", "Choreographer#doFrame 8 ms"]


def test_render_thread_work_after_the_ui_thread_is_done():
    w = _one_frame([(10, 0, 5, "Choreographer#doFrame"), (11, 5, 33, "DrawFrame")])
    assert w.cause == FrameCause.RENDER_THREAD and w.cause_ms == 33.0
    assert w.candidates == {"render_thread": 33.0, "main_thread_slice": 5.0}


def test_runnable_main_thread_is_sched_delay_and_io_wait_is_io():
    doframe = [(10, 0, 38, "Choreographer#doFrame")]
    w = _one_frame(doframe, {10: [(0, 4, 0, -1), (4, 30, 1, -1), (30, 38, 0, -1)]})
    assert w.cause == FrameCause.SCHED_DELAY and w.cause_ms == 26.0
    assert "main thread: running 12 ms, runnable 26 ms" in w.evidence
    w = _one_frame(doframe, {10: [(0, 4, 0, -1), (4, 30, 4, 1), (30, 38, 0, -1)]})
    assert w.cause == FrameCause.IO and w.cause_ms == 26.0
    # D without io_wait is not called IO: the sleep is counted against the slice it is in
    w = _one_frame(doframe, {10: [(0, 4, 0, -1), (4, 30, 4, 0), (30, 38, 0, -1)]})
    assert w.cause == FrameCause.MAIN_THREAD_SLICE


def test_ui_thread_sleeping_while_render_thread_works_is_render_thread():
    w = _one_frame([(10, 0, 38, "Choreographer#doFrame"), (11, 2, 30, "DrawFrame")],
                   {10: [(0, 2, 0, -1), (2, 32, 3, -1), (32, 38, 0, -1)], 11: [(0, 40, 0, -1)]})
    # 30 ms the UI thread waited while DrawFrame ran, + 2 ms the RenderThread ran after doFrame
    assert w.cause == FrameCause.RENDER_THREAD and w.cause_ms == 32.0
    assert w.evidence[0].startswith("Choreographer#doFrame waiting for RenderThread 30 ms")


def test_a_cause_that_explains_little_of_the_frame_is_no_cause():
    # 5 ms of main-thread work in a 40 ms frame: the rest happened elsewhere
    w = _one_frame([(10, 0, 5, "Choreographer#doFrame")], {10: [(0, 5, 0, -1), (5, 40, 3, -1)]})
    assert w.cause is None and w.candidates == {"main_thread_slice": 5.0}
    assert "account for 5 ms at most of the 40 ms frame" in w.cause_missing


def test_no_slices_and_no_sched_is_no_cause_and_says_why():
    w = _one_frame([])
    assert w.cause is None and "no atrace slices and no scheduler data" in w.cause_missing


def test_scope_rules_on_names():
    pd = PerfData("perfetto", "t")
    pd.set_process_name(5, "com.verylongpackage.name.app")
    pd.set_process_name(6, "com.verylongpackage.name.app:remote")
    pd.set_thread_name(7, 7, "e.name.app")  # no process name, only the kernel's comm
    assert scope_mod.find_process(pd, "5") == 5
    assert scope_mod.find_process(pd, "com.verylongpackage.name.app") == 5
    assert scope_mod.find_process(pd, "remote") == 6
    sc, _ = scope_mod.identify(pd, "com.verylongpackage.name.app")
    assert sc.app_pids == frozenset({5, 6}) and sc.group(6) == "app" and sc.group(7) == "system"


# --- binder transactions → slices --------------------------------------------------------


def _binder_bundle(b, cpu: int, events: list[tuple[float, int, str, dict]]) -> None:
    pkt = b.add_packet()
    pkt.trusted_packet_sequence_id = SEQ
    pkt.ftrace_events.cpu = cpu
    for ts, tid, kind, fields in events:
        e = pkt.ftrace_events.event.add()
        e.timestamp, e.pid = int(ts * MS), tid
        msg = getattr(e, kind)
        for k, v in fields.items():
            setattr(msg, k, v)


def test_binder_ftrace_events_become_trace_processors_binder_slices(tmp_path):
    b = TraceProtoBuilder()
    _process_tree(b, {APP: "com.example.app", SYSTEM_SERVER: "system_server"},
                  {APP: (APP, "example.app"), 1001: (SYSTEM_SERVER, "binder:1000_1")})
    # the server's CPU bundle is read first: pairing must follow time, not arrival
    _binder_bundle(b, 1, [
        (2.0, 1001, "binder_transaction_received", {"debug_id": 7}),
        (8.0, 1001, "binder_transaction", {"debug_id": 8, "reply": 1}),
        (12.0, 1001, "binder_transaction_received", {"debug_id": 9}),
    ])
    _binder_bundle(b, 0, [
        (1.0, APP, "binder_transaction", {"debug_id": 7, "reply": 0, "flags": 0}),
        (9.0, APP, "binder_transaction_received", {"debug_id": 8}),
        (11.0, APP, "binder_transaction", {"debug_id": 9, "reply": 0, "flags": 1}),  # one-way
    ])
    p = tmp_path / "binder.perfetto-trace"
    p.write_bytes(b.serialize())
    data = perfetto.parse(str(p))

    def slices(key):
        c = data.slices[key]
        return sorted((data.strings[n], t / 1000.0, d / 1000.0) for t, d, n in zip(c.ts, c.dur, c.name))

    # the client blocked from sending until the reply came back; the server replied in between
    assert slices((APP, APP)) == [("binder transaction", 1.0, 8.0), ("binder transaction async", 11.0, 0.0)]
    assert slices((SYSTEM_SERVER, 1001)) == [("binder async rcv", 12.0, 0.0), ("binder reply", 2.0, 6.0)]
