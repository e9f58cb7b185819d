"""The memory lens: per-process RSS parts, swap and heap (start / peak / end / growth), lmkd
kills, ART GC, and counter names that are log lines.

androidx's MemoryUsageQueryTest assets (api31_startup_cold, api33_motionlayout…) are not
reachable, so the reference here is computed from a direct protobuf decode of the shared
capture, independent of the reader and the metric: Macrobenchmark's Mode.Max / Mode.Last are
the max / last value of the app's ``rss_stat`` members and its ``Heap size (KB)`` atrace counter.
"""

from __future__ import annotations

import os
from collections import defaultdict

import pytest
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
from perfetto.trace_builder.proto_builder import TraceProtoBuilder

from nodes.perf.analysis import analyze_file
from nodes.perf.counter_names import is_counter_name
from nodes.perf.metrics.memory import summarize_memory

DATA = os.path.join(os.path.dirname(__file__), "data", "perfetto")  # SOURCES.md beside them
WARM = os.path.join(DATA, "api32_startup_warm.perfetto-trace")
COLD = os.path.join(DATA, "api24_startup_cold.perfetto-trace")
APP = "androidx.benchmark.integration.macrobenchmark.target"
MEMBERS = {0: "mem.rss.file", 1: "mem.rss.anon", 3: "mem.rss.shmem"}


def _packets(path):
    t = pb.Trace()
    t.ParseFromString(open(path, "rb").read())
    return t.packet


def _reference_memory(path: str, package: str):
    """KB series of the app: rss_stat (curr=1, the app's threads) and Heap size (KB) prints."""
    pid = None
    tids: set[int] = set()
    events = []
    for p in _packets(path):
        if p.HasField("process_tree"):
            for pr in p.process_tree.processes:
                if pr.cmdline and pr.cmdline[0] == package:
                    pid = pr.pid
            for th in p.process_tree.threads:
                if pid is not None and th.tgid == pid:
                    tids.add(th.tid)
        if p.HasField("ftrace_events"):
            for e in p.ftrace_events.event:
                events.append(e)
    tids.add(pid)
    series: dict[str, list[tuple[int, float]]] = defaultdict(list)
    for e in events:
        if e.HasField("rss_stat") and e.rss_stat.curr and e.pid in tids and e.rss_stat.member in MEMBERS:
            series[MEMBERS[e.rss_stat.member]].append((e.timestamp, e.rss_stat.size / 1024.0))
        if e.HasField("print") and e.print.buf.startswith(f"C|{pid}|Heap size (KB)|"):
            series["Heap size (KB)"].append((e.timestamp, float(e.print.buf.rstrip("\n").split("|")[3])))
    return pid, {k: sorted(v) for k, v in series.items()}


def test_app_rss_parts_and_heap_max_and_last_equal_an_independent_decode():
    pid, ref = _reference_memory(WARM, APP)
    res = analyze_file(WARM)
    app = res.memory.processes[0]
    assert (app.pid, app.name) == (pid, APP)  # the app leads
    got = {s.name: s for s in app.series}
    for name in ("mem.rss.anon", "mem.rss.file", "mem.rss.shmem"):
        # rss_stat (KB here) also carries process_stats' one reading: compare max over both
        vals = [v for _, v in ref[name]]
        assert got[name].peak * 1024 == pytest.approx(max(vals), rel=0.01) or got[name].peak * 1024 > max(vals)
        assert got[name].end * 1024 == pytest.approx(vals[-1], rel=0.01), name
    heap = got["Heap size (KB)"]
    hv = [v for _, v in ref["Heap size (KB)"]]
    assert (heap.unit, heap.start, heap.peak, heap.end) == ("KB", hv[0], max(hv), hv[-1])
    assert heap.growth == pytest.approx(hv[-1] - hv[0])
    assert heap.label == f"{APP} ({pid}): Heap size (KB)"
    assert app.rss_max_mb == pytest.approx(118.996, rel=0.01)  # process_stats vm_rss_kb / 1024
    text = summarize_memory(res.memory)
    assert text.startswith(f"{APP} RSS peak 119.0 MB, mem.rss")
    # growth is said from a series with two readings: process_stats gave mem.rss once, rss_stat
    # followed mem.rss.anon ("mem.rss 119.0 → 119.0 MB (+0.0)" once claimed no growth)
    anon = got["mem.rss.anon"]
    assert got["mem.rss"].points == 1 and anon.points >= 2
    assert f"{APP} RSS peak 119.0 MB, mem.rss.anon {anon.start:.1f} → {anon.end:.1f} MB ({anon.growth:+.1f} MB)" in text


def test_a_lone_reading_says_growth_is_unknown():
    res = analyze_file(COLD)
    lone = [p for p in res.memory.processes[:3] if all(s.points < 2 for s in p.series)]
    assert lone  # the cold trace scanned its processes once, at the start
    text = summarize_memory(res.memory)
    assert "+0.0" not in text and text.count("one reading: growth unknown") == len(lone)


def test_gc_events_follow_the_stdlib_rule():
    res = analyze_file(COLD)
    # independent: top-level "*concurrent*GC" slices from the atrace prints, per process
    stacks: dict[int, list[tuple[int, str]]] = defaultdict(list)
    gcs: dict[int, list[float]] = defaultdict(list)
    tgid: dict[int, int] = {}
    for p in _packets(COLD):
        if not p.HasField("ftrace_events"):
            continue
        for e in p.ftrace_events.event:
            if not e.HasField("print"):
                continue
            buf = e.print.buf.rstrip("\n")
            if buf.startswith("B|"):
                _, pid, name = buf.split("|", 2)
                tgid[e.pid] = int(pid)
                stacks[e.pid].append((e.timestamp, name))
            elif buf.startswith("E") and stacks[e.pid]:
                ts, name = stacks[e.pid].pop()
                if not stacks[e.pid] and "concurrent" in name and name.endswith("GC"):
                    gcs[tgid[e.pid]].append((e.timestamp - ts) / 1e6)
    assert gcs
    by_pid = {p.pid: p for p in res.memory.processes}
    checked = [pid for pid in gcs if pid in by_pid]
    assert checked  # com.google.android.gms.persistent's HeapTaskDaemon
    for pid in checked:
        durs = gcs[pid]
        if pid in by_pid:
            gc = by_pid[pid].gc
            assert gc.count == len(durs)
            assert gc.total_ms >= sum(durs) - 0.01  # + a following CompactionPhase, when there is one
            assert set(gc.types) <= {"young", "full", "alloc", "native_alloc", "collector_transition", "explicit"}


# --- bad input and naming -----------------------------------------------------------------


def test_log_lines_are_not_counter_names():
    assert is_counter_name("Heap size (KB)") and is_counter_name("mem.rss.anon") and is_counter_name("hwui_Layer")
    assert not is_counter_name("Davey! duration=597885ms; Flags=1, FrameTimelineVsyncId=12946")
    assert not is_counter_name("x" * 200)


def test_davey_line_kill_and_unowned_rss_stat(tmp_path):
    b = TraceProtoBuilder()
    p = b.add_packet()
    p.trusted_packet_sequence_id = 1
    for pid, name in ((100, "com.example.app"), (200, "com.example.victim")):
        pr = p.process_tree.processes.add()
        pr.pid = pid
        pr.cmdline.append(name)
    p = b.add_packet()
    p.trusted_packet_sequence_id = 1
    p.ftrace_events.cpu = 0
    lines = [
        (1000, 100, "B|100|work"), (2000, 100, "C|100|Heap size (KB)|1000"),
        (3000, 100, "C|100|Davey! duration=597885ms; Flags=1, FrameTimelineVsyncId=12946|1"),
        (4000, 50, "C|50|kill_one_process|200"), (5000, 100, "C|100|Heap size (KB)|1500"), (6000, 100, "E|100"),
    ]
    for ts, tid, line in lines:
        e = p.ftrace_events.event.add()
        e.timestamp, e.pid = ts, tid
        e.print.buf = line + "\n"
    for ts, curr, mm, size in ((2500, 1, 7, 4 << 20), (3500, 0, 7, 6 << 20), (3600, 0, 99, 1 << 20)):
        e = p.ftrace_events.event.add()
        e.timestamp, e.pid = ts, 100
        e.rss_stat.member, e.rss_stat.size, e.rss_stat.curr, e.rss_stat.mm_id = 1, size, curr, mm
    path = tmp_path / "mem.perfetto-trace"
    path.write_bytes(b.serialize())
    res = analyze_file(str(path))
    assert not any("Davey" in c.name for c in res.counters)
    assert any("log lines" in w for w in res.warnings)
    app = next(x for x in res.memory.processes if x.pid == 100)
    heap = next(s for s in app.series if s.name == "Heap size (KB)")
    assert (heap.start, heap.peak, heap.end, heap.growth) == (1000.0, 1500.0, 1500.0, 500.0)
    anon = next(s for s in app.series if s.name == "mem.rss.anon")
    assert (anon.start, anon.end, anon.points) == (4.0, 6.0, 2)  # mm 7 was tied to pid 100 by curr
    assert any("mm_id never tied" in w for w in res.warnings)  # mm 99
    assert [(k.pid, k.process) for k in res.memory.lmk_kills] == [(200, "com.example.victim")]
    assert next(x for x in res.memory.processes if x.pid == 200).killed


def test_lmkd_slices_win_over_kill_one_process_and_name_the_reason(tmp_path):
    b = TraceProtoBuilder()
    p = b.add_packet()
    p.trusted_packet_sequence_id = 1
    pr = p.process_tree.processes.add()
    pr.pid = 300
    pr.cmdline.append("com.example.cached")
    p = b.add_packet()
    p.trusted_packet_sequence_id = 1
    p.ftrace_events.cpu = 0
    for ts, tid, line in ((1000, 50, "B|50|lmk,300,3,905"), (2000, 50, "E|50"), (3000, 50, "C|50|kill_one_process|301")):
        e = p.ftrace_events.event.add()
        e.timestamp, e.pid = ts, tid
        e.print.buf = line + "\n"
    path = tmp_path / "lmk.perfetto-trace"
    path.write_bytes(b.serialize())
    kills = analyze_file(str(path)).memory.lmk_kills
    assert [(k.pid, k.process, k.kill_reason, k.oom_score_adj) for k in kills] == [
        (300, "com.example.cached", "LOW_MEM_AND_SWAP", 905)]


def test_a_gc_slice_without_its_end_counts_to_the_trace_end_and_is_named(tmp_path):
    b = TraceProtoBuilder()
    p = b.add_packet()
    p.trusted_packet_sequence_id = 1
    pr = p.process_tree.processes.add()
    pr.pid = 100
    pr.cmdline.append("com.example.app")
    th = p.process_tree.threads.add()
    th.tid, th.tgid, th.name = 105, 100, "HeapTaskDaemon"
    p = b.add_packet()
    p.trusted_packet_sequence_id = 1
    p.ftrace_events.cpu = 0
    ms = 1_000_000
    for ts, line in ((1 * ms, "B|100|young concurrent copying GC"), (3 * ms, "E|100"),
                     (5 * ms, "B|100|Background concurrent copying GC"), (9 * ms, "B|100|x"), (10 * ms, "E|100")):
        e = p.ftrace_events.event.add()
        e.timestamp, e.pid = ts, 105
        e.print.buf = line + "\n"
    path = tmp_path / "gc.perfetto-trace"
    path.write_bytes(b.serialize())
    res = analyze_file(str(path))
    gc = next(x for x in res.memory.processes if x.pid == 100).gc
    # 2 ms closed + the open one from 5 ms to the trace's end at 10 ms
    assert (gc.count, gc.total_ms, gc.max_ms, gc.types) == (2, 7.0, 5.0, {"young": 1, "full": 1})
    assert gc.thread == "HeapTaskDaemon"
    assert any("1 GC slice had no end (com.example.app: Background concurrent copying GC)" in w for w in res.warnings)


# --- GC pauses, thread states, reclaimed heap and the main thread's waits ------------------------

PAUSES = ("Suspending mutator threads", "Mutator threads suspended for ", "Resuming mutator threads", "ThreadListFlip")
WAITS = ("GC: Wait For Completion", "Lock contention on GC complete lock", "WaitForGcToComplete")


def _union(spans):
    total, end, n = 0, None, 0
    for a, b in sorted(spans):
        if end is None or a > end:
            n += 1
            total += b - a
            end = b
        elif b > end:
            total += b - end
            end = b
    return total, n


def test_gc_pause_thread_states_and_main_thread_waits_equal_the_decoded_capture():
    """api24's one GC (com.google.android.gms.persistent's HeapTaskDaemon), from the ftrace
    events decoded here: its suspend-all slices, its thread's sched_switch / sched_waking
    intervals clipped to the GC, and the main thread's waits on the GC complete lock."""
    events = sorted((e for p in _packets(COLD) if p.HasField("ftrace_events") for e in p.ftrace_events.event),
                    key=lambda e: e.timestamp)
    stacks: dict[int, list] = defaultdict(list)
    tgid: dict[int, int] = {}
    done: list[tuple[int, int, int, str, int]] = []  # tid, start, end, name, depth
    for e in events:
        if e.HasField("print"):
            buf = e.print.buf.rstrip("\n")
            if buf.startswith("B|"):
                _, pid, name = buf.split("|", 2)
                tgid[e.pid] = int(pid)
                stacks[e.pid].append((e.timestamp, name))
            elif buf.startswith("E") and stacks[e.pid]:
                ts, name = stacks[e.pid].pop()
                done.append((e.pid, ts, e.timestamp, name, len(stacks[e.pid])))
    gcs = [(tid, a, b) for tid, a, b, n, d in done if d == 0 and "concurrent" in n and n.endswith("GC")]
    assert len(gcs) == 1
    tid, g0, g1 = gcs[0]
    pid = tgid[tid]
    pause, _ = _union([(max(a, g0), min(b, g1)) for t, a, b, n, _d in done
                       if t == tid and n.startswith(PAUSES) and a < g1 and b > g0])
    wait, waits = _union([(a, b) for t, a, b, n, _d in done if t == pid and tgid.get(t) == pid and n.startswith(WAITS)])
    # the GC thread's states: on CPU from switch-in to switch-out; runnable from a wake-up (or a
    # preempted switch-out) to the next switch-in
    running = runnable = 0
    on_since = ready_since = None
    for e in events:
        t = e.timestamp
        if e.HasField("sched_switch"):
            sw = e.sched_switch
            if sw.prev_pid == tid:
                if on_since is not None:
                    running += max(0, min(t, g1) - max(on_since, g0))
                on_since = None
                ready_since = t if sw.prev_state in (0, 1024) else None  # R, or R+ on this 3.10 kernel
            if sw.next_pid == tid:
                if ready_since is not None:
                    runnable += max(0, min(t, g1) - max(ready_since, g0))
                on_since, ready_since = t, None
        elif e.HasField("sched_waking") and e.sched_waking.pid == tid and on_since is None and ready_since is None:
            ready_since = t
    res = analyze_file(COLD)
    gc = next(p for p in res.memory.processes if p.pid == pid).gc
    assert (gc.count, gc.thread) == (1, "HeapTaskDaemon")
    assert gc.total_ms == pytest.approx((g1 - g0) / 1e6, abs=0.002)
    assert gc.pause_ms == pytest.approx(pause / 1e6, abs=0.002) and gc.pause_ms > 0.5
    assert gc.pause_max_ms == gc.pause_ms == gc.by_type["full"].pause_ms
    assert gc.running_ms == pytest.approx(running / 1e6, rel=0.01)
    assert gc.runnable_ms == pytest.approx(runnable / 1e6, abs=0.002)
    assert (gc.main_thread_waits, gc.main_thread_wait_ms) == (waits, pytest.approx(wait / 1e6, abs=0.002))
    assert waits == 2
    # a single Heap size (KB) reading, none after the GC: the stdlib's reclaimed_mb is NULL
    assert gc.reclaimed_mb is None and gc.by_type["full"].reclaimed_mb is None
    # the memory answer names the pause and the wait
    text = summarize_memory(res.memory)
    assert f"com.google.android.gms.persistent 1 GC ({gc.total_ms:,.1f} ms; its threads paused {gc.pause_ms:,.2f} ms" in text
    assert f"main thread waited {gc.main_thread_wait_ms:,.2f} ms for GC, 2 times" in text


def _gc_trace(tmp_path, prints) -> str:
    b = TraceProtoBuilder()
    p = b.add_packet()
    p.trusted_packet_sequence_id = 1
    pr = p.process_tree.processes.add()
    pr.pid = 100
    pr.cmdline.append("com.example.app")
    for tid, name in ((100, "com.example.app"), (105, "HeapTaskDaemon")):
        th = p.process_tree.threads.add()
        th.tid, th.tgid, th.name = tid, 100, name
    p = b.add_packet()
    p.trusted_packet_sequence_id = 1
    p.ftrace_events.cpu = 0
    for ts_ms, tid, line in prints:
        e = p.ftrace_events.event.add()
        e.timestamp, e.pid = round(ts_ms * 1_000_000), tid
        e.print.buf = line + "\n"
    path = tmp_path / "gc.perfetto-trace"
    path.write_bytes(b.serialize())
    return str(path)


def test_gc_types_pauses_reclaimed_heap_and_waits_on_a_built_trace(tmp_path):
    heap = "C|100|Heap size (KB)|"
    path = _gc_trace(tmp_path, [
        (0.5, 105, heap + "50000"),
        (1.0, 105, "B|100|young concurrent copying GC"),
        (1.1, 100, "B|100|GC: Wait For Completion Alloc"),
        (1.2, 105, "B|100|ThreadListFlip"), (1.5, 105, "E|100"),  # the flip: 0.3 ms
        (1.5, 100, "B|100|Lock contention on GC complete lock (owner tid: 105)"), (1.6, 100, "E|100"),
        (2.0, 105, heap + "52000"),
        (2.9, 100, "E|100"),  # the main thread waited 1.1 → 2.9 (the lock inside it)
        (3.0, 105, "E|100"),
        (3.5, 105, heap + "30000"),  # the first reading after: reclaimed 52000 − 30000 KB
        (5.0, 105, "B|100|Explicit concurrent mark sweep GC"),
        (5.1, 105, "B|100|Suspending mutator threads"), (5.2, 105, "E|100"),
        (5.2, 105, "B|100|Mutator threads suspended for ScopedPause"),
        (5.3, 105, "B|100|(Paused)PausePhase"), (5.6, 105, "E|100"),
        (5.7, 105, "E|100"),
        (5.7, 105, "B|100|Resuming mutator threads"), (5.75, 105, "E|100"),  # paused 5.1 → 5.75
        (6.0, 105, "E|100"),  # no heap reading after it: reclaimed unknown
    ])
    res = analyze_file(path)
    gc = next(x for x in res.memory.processes if x.pid == 100).gc
    assert (gc.count, gc.total_ms, gc.max_ms, gc.types) == (2, 3.0, 2.0, {"young": 1, "explicit": 1})
    assert (gc.pause_ms, gc.pause_max_ms) == (0.95, 0.65)
    young, explicit = gc.by_type["young"], gc.by_type["explicit"]
    assert (young.count, young.total_ms, young.max_ms, young.pause_ms, young.reclaimed_mb) == (1, 2.0, 2.0, 0.3, 22.0)
    assert (explicit.count, explicit.total_ms, explicit.pause_ms, explicit.reclaimed_mb) == (1, 1.0, 0.65, None)
    assert list(gc.by_type) == ["young", "explicit"]  # the longest in total first
    assert gc.reclaimed_mb == 22.0
    assert (gc.main_thread_waits, gc.main_thread_wait_ms) == (1, 1.8)
    assert gc.running_ms is None  # no sched_switch in this trace
    text = summarize_memory(res.memory)
    assert ("2 GC (3.0 ms, the longest 2.0 ms; its threads paused 0.95 ms (longest 0.65 ms); "
            "main thread waited 1.80 ms for GC, 1 time; 22.0 MB reclaimed)") in text


def test_an_open_gc_has_its_pause_to_the_trace_end_and_is_named(tmp_path):
    path = _gc_trace(tmp_path, [
        (1.0, 105, "B|100|Background concurrent copying GC"),
        (2.0, 105, "B|100|ThreadListFlip"), (2.5, 105, "E|100"),
        (4.0, 100, "B|100|x"), (4.5, 100, "E|100"),
    ])
    res = analyze_file(path)
    gc = next(x for x in res.memory.processes if x.pid == 100).gc
    assert (gc.count, gc.total_ms, gc.pause_ms, gc.types) == (1, 3.5, 0.5, {"full": 1})
    assert any("1 GC slice had no end (com.example.app: Background concurrent copying GC)" in w for w in res.warnings)
