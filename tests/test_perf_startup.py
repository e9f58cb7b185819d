"""Android startups per launch (issue 16 item 1): the reference tools' answers on real captures,
and each metric family on small traces built here.

REFERENCE values (/work/shared/traces/REFERENCE.md, from perfetto's startups_tests.py and
androidx StartupTimingMetricTest / StartupTimingQueryTest) appear only in this file.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from perfetto.trace_builder.proto_builder import TraceProtoBuilder

from nodes.perf.analysis import analyze_file

DATA = Path(__file__).parent / "data" / "perfetto"
COLD24 = DATA / "api24_startup_cold.perfetto-trace"
WARM32 = DATA / "api32_startup_warm.perfetto-trace"
TARGET = "androidx.benchmark.integration.macrobenchmark.target"
MS = 1_000_000  # ns

#: (trace, android_startups dur, TTID, TTFD as StartupTimingMetric gives it, kind) — REFERENCE.md
REFERENCE = {
    "api24_cold": (COLD24, 269.9465, 264.869885, 715.406822, "cold"),
    "api32_warm": (WARM32, 156.515747, 154.629883, 659.641358, "warm"),
}


@pytest.fixture(scope="module")
def real():
    return {k: analyze_file(str(v[0])) for k, v in REFERENCE.items()}


# --- the real captures -------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_startup_duration_ttid_ttfd_and_kind_match_the_reference_tools_within_1_percent(real, name):
    _, dur, ttid, ttfd, kind = REFERENCE[name]
    runs = real[name].startup.runs
    assert len(runs) == 1
    run = runs[0]
    assert run.package == TARGET
    assert run.total_ms == pytest.approx(dur, rel=0.01)
    assert run.ttid_ms == pytest.approx(ttid, rel=0.01)
    assert run.ttfd_ms == pytest.approx(ttfd, rel=0.01)
    assert run.kind == kind


def test_warm_ttfd_is_macrobenchmarks_not_the_legacy_metrics(real):
    """StartupTimingLegacyMetric says fullyDrawnMs 644.6 (the reportFullyDrawn slice); the
    current metric ends at the frame drawn after it: 659.6 ms."""
    run = real["api32_warm"].startup.runs[0]
    assert abs(run.ttfd_ms - 644.613729) > 0.01 * 644.613729


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_breakdown_is_exclusive_and_sums_to_the_startup(real, name):
    run = real[name].startup.runs[0]
    assert run.breakdown
    assert sum(b.dur_ms for b in run.breakdown) == pytest.approx(run.total_ms, abs=0.001 * len(run.breakdown) + 0.001)
    assert len({b.reason for b in run.breakdown}) == len(run.breakdown)
    assert all(b.dur_ms >= 0 and b.intervals >= 1 for b in run.breakdown)


def test_cold_start_breakdown_blames_binding_the_application_and_io(real):
    reasons = {b.reason: b.dur_ms for b in real["api24_cold"].startup.runs[0].breakdown}
    # the app process did not exist at the start: the time before its main thread ran
    assert reasons["launch_delay"] > 0
    assert reasons["bind_application"] > 0 and reasons["activity_start"] > 0
    # sched_blocked_reason marked some uninterruptible sleep as IO
    assert reasons["io"] > 0


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_main_thread_states_cover_the_window(real, name):
    run = real[name].startup.runs[0]
    m = run.main_thread
    assert m is not None
    covered = m.running_ms + m.runnable_ms + m.sleeping_ms + m.uninterruptible_ms
    launch_delay = next((b.dur_ms for b in run.breakdown if b.reason == "launch_delay"), 0.0)
    assert covered + launch_delay == pytest.approx(run.total_ms, abs=0.05)
    assert m.io_wait_ms is not None and 0 <= m.io_wait_ms <= m.uninterruptible_ms


def test_phases_of_the_cold_start_are_the_target_process_sections(real):
    """TraceSectionMetric's target-process firsts (REFERENCE.md): ActivityThreadMain 12.639 ms,
    activityStart 81.979 ms, inflate 4.949 ms."""
    phases = {p.name: p for p in real["api24_cold"].startup.runs[0].phases}
    assert phases["ActivityThreadMain"].dur_ms == pytest.approx(12.639, rel=0.01)
    assert phases["activityStart"].dur_ms == pytest.approx(81.979, rel=0.01)
    assert phases["inflate"].dur_ms == pytest.approx(4.949, rel=0.01)
    assert phases["bindApplication"].start_ms < phases["activityStart"].start_ms < phases["first Choreographer#doFrame"].start_ms
    # the process did not exist when the launch began: its start is the breakdown's launch_delay
    delay = next(b.dur_ms for b in real["api24_cold"].startup.runs[0].breakdown if b.reason == "launch_delay")
    assert phases["process start"].dur_ms == pytest.approx(delay, abs=0.001)
    assert "process start" not in {p.name for p in real["api32_warm"].startup.runs[0].phases}


def test_on_a_startup_trace_the_startup_leads_the_findings(real):
    for name, result in real.items():
        first = result.findings[0]
        assert first.family == "startup", name
        assert "TTID" in first.title and "TTFD" in first.title
        startup = [f for f in result.findings if f.family == "startup"]
        assert all(f.suggestion and f.link and f.link.startswith("https://") for f in startup)


def test_analyze_json_has_the_startup_keys_named_in_the_issue():
    from app.analyze_cmd import run

    out, err = io.StringIO(), io.StringIO()
    assert run(str(COLD24), as_json=True, out=out, err=err) == 0
    data = json.loads(out.getvalue())
    run0 = data["startup"]["runs"][0]
    for key in ("package", "kind", "total_ms", "ttid_ms", "ttfd_ms", "phases", "breakdown", "main_thread", "art",
                "slow_reasons"):
        assert key in run0
    assert {"reason", "dur_ms"} <= set(run0["breakdown"][0])
    assert {"running_ms", "runnable_ms", "sleeping_ms", "uninterruptible_ms", "io_wait_ms"} <= set(run0["main_thread"])
    assert {"jit", "class_init", "verify_class"} <= set(run0["art"])
    assert {"count", "total_ms"} <= set(run0["art"]["jit"])
    assert data["findings"][0]["suggestion"] and data["findings"][0]["link"]


# --- small traces built here --------------------------------------------------------------
class _Trace:
    """A tiny Android system trace: process tree, atrace prints, scheduler events."""

    SEQ = 3

    def __init__(self, sdk: int | None = None, kernel: str = "5.10.0"):
        self.b = TraceProtoBuilder()
        p = self.b.add_packet()
        p.trusted_packet_sequence_id = self.SEQ
        p.system_info.utsname.sysname = "Linux"
        p.system_info.utsname.release = kernel
        if sdk is not None:
            p.system_info.android_sdk_version = sdk
        self.events: list = []

    def processes(self, procs: dict[int, str], threads: dict[int, tuple[int, str]]):
        pkt = self.b.add_packet()
        pkt.trusted_packet_sequence_id = self.SEQ
        for pid, name in procs.items():
            pr = pkt.process_tree.processes.add()
            pr.pid = pid
            pr.cmdline.append(name)
        for tid, (tgid, name) in threads.items():
            th = pkt.process_tree.threads.add()
            th.tid, th.tgid, th.name = tid, tgid, name
        return self

    def print(self, ts_ms: float, tid: int, line: str):
        self.events.append(("print", int(ts_ms * MS), tid, line))
        return self

    def slice(self, tid: int, pid: int, name: str, start_ms: float, dur_ms: float):
        return self.print(start_ms, tid, f"B|{pid}|{name}").print(start_ms + dur_ms, tid, "E|{pid}".format(pid=pid))

    def switch(self, ts_ms: float, prev: int, prev_state: int, nxt: int):
        self.events.append(("switch", int(ts_ms * MS), prev, prev_state, nxt))
        return self

    def wake(self, ts_ms: float, tid: int):
        self.events.append(("wake", int(ts_ms * MS), tid))
        return self

    def blocked(self, ts_ms: float, tid: int, io_wait: bool):
        self.events.append(("blocked", int(ts_ms * MS), tid, io_wait))
        return self

    def binder(self, ts_ms: float, tid: int, debug_id: int, *, reply: bool = False, oneway: bool = False,
               received: bool = False):
        self.events.append(("binder", int(ts_ms * MS), tid, debug_id, reply, oneway, received))
        return self

    def write(self, path: Path) -> str:
        pkt = self.b.add_packet()
        pkt.trusted_packet_sequence_id = self.SEQ
        pkt.ftrace_events.cpu = 0
        for ev in sorted(self.events, key=lambda e: e[1]):
            e = pkt.ftrace_events.event.add()
            e.timestamp = ev[1]
            if ev[0] == "print":
                e.pid = ev[2]
                e.print.buf = ev[3] + "\n"
            elif ev[0] == "switch":
                e.pid = ev[2] or 0
                s = e.sched_switch
                s.prev_pid, s.prev_state, s.next_pid = ev[2], ev[3], ev[4]
                s.prev_comm, s.next_comm = "t", "t"
            elif ev[0] == "wake":
                e.pid = 0
                e.sched_waking.pid = ev[2]
                e.sched_waking.comm = "t"
            elif ev[0] == "binder":
                e.pid = ev[2]
                if ev[6]:
                    e.binder_transaction_received.debug_id = ev[3]
                else:
                    bt = e.binder_transaction
                    bt.debug_id, bt.reply, bt.flags = ev[3], 1 if ev[4] else 0, 1 if ev[5] else 0
            else:
                e.pid = ev[2]
                e.sched_blocked_reason.pid = ev[2]
                e.sched_blocked_reason.io_wait = 1 if ev[3] else 0
        path.write_bytes(self.b.serialize())
        return str(path)


APP, MAIN, RT, JIT, SS, SSTID = 200, 200, 201, 202, 1000, 1001


def _app(sdk: int | None = None, kernel: str = "5.10.0") -> _Trace:
    return _Trace(sdk, kernel).processes(
        {SS: "system_server", APP: "com.example.app"},
        {MAIN: (APP, "com.example.app"), RT: (APP, "RenderThread"), JIT: (APP, "Jit thread pool"), SSTID: (SS, "binder")})


def _frames(t: _Trace, first_ms: float, *, fully_drawn_ms: float | None = None) -> _Trace:
    """Two frames from ``first_ms``: doFrame on the main thread, DrawFrame on RenderThread."""
    for k in range(2):
        f0 = first_ms + 20 * k
        t.slice(MAIN, APP, f"Choreographer#doFrame {k + 1}", f0, 8).slice(RT, APP, f"DrawFrame {k + 1}", f0 + 9, 4)
    if fully_drawn_ms is not None:
        t.slice(MAIN, APP, "reportFullyDrawn() for com.example.app.Main", fully_drawn_ms, 1)
    return t


def _cold(t: _Trace, launch=(0.0, 100.0)) -> _Trace:
    t.print(launch[0], SSTID, "S|1000|launching: com.example.app|1")
    t.print(launch[1], SSTID, "F|1000|launching: com.example.app|1")
    t.slice(MAIN, APP, "bindApplication", 10, 30).slice(MAIN, APP, "activityStart", 45, 20)
    t.slice(MAIN, APP, "activityResume", 66, 4)
    return t


def _one(path: str):
    r = analyze_file(path)
    assert r.startup is not None and len(r.startup.runs) == 1
    return r, r.startup.runs[0]


def test_maxsdk28_launch_is_the_launching_slice_and_ttid_ttfd_end_at_drawframes(tmp_path):
    t = _frames(_cold(_app()), 72, fully_drawn_ms=85)
    _, run = _one(t.write(tmp_path / "t.perfetto-trace"))
    assert run.total_ms == pytest.approx(100.0)
    assert run.kind == "cold"
    # first doFrame after the launch start at 72 ms; its DrawFrame ends at 72 + 9 + 4
    assert run.ttid_ms == pytest.approx(85.0)
    # reportFullyDrawn at 85 ms: the first doFrame ending after it starts at 92; DrawFrame ends at 105
    assert run.ttfd_ms == pytest.approx(105.0)
    assert [p.name for p in run.phases][:5] == ["startup", "process start", "bindApplication", "activityStart",
                                                "activityResume"]
    assert run.phases[1].dur_ms == pytest.approx(10.0)  # no sched here: to the main thread's first slice


def test_no_report_fully_drawn_leaves_ttfd_null_and_says_what_is_missing(tmp_path):
    t = _frames(_cold(_app()), 72)
    r, run = _one(t.write(tmp_path / "t.perfetto-trace"))
    assert run.ttid_ms == pytest.approx(85.0) and run.ttfd_ms is None
    assert any("reportFullyDrawn" in m for m in run.missing)
    lead = r.findings[0]
    assert lead.family == "startup" and "TTFD" not in lead.title
    assert "reportFullyDrawn" in (lead.suggestion or "")


def test_warm_and_hot_kinds_follow_the_main_thread_markers(tmp_path):
    warm = _app()
    warm.print(0, SSTID, "S|1000|launching: com.example.app|1").print(50, SSTID, "F|1000|launching: com.example.app|1")
    warm.slice(MAIN, APP, "activityStart", 5, 10).slice(MAIN, APP, "activityResume", 16, 4)
    assert _one(warm.write(tmp_path / "w.perfetto-trace"))[1].kind == "warm"
    hot = _app()
    hot.print(0, SSTID, "S|1000|launching: com.example.app|1").print(50, SSTID, "F|1000|launching: com.example.app|1")
    hot.slice(MAIN, APP, "activityResume", 16, 4)
    assert _one(hot.write(tmp_path / "h.perfetto-trace"))[1].kind == "hot"


def test_the_apps_process_is_any_whose_name_starts_with_the_package(tmp_path):
    """android_startup_processes joins the package to process names GLOB '<package>*' and keeps
    the one whose main thread resumed the activity. Two old copies disagreed: the reader took
    the exact name only (pid 200 here, which resumed nothing), the metric the exact name first.
    One rule now (nodes/perf/android_package.py), and the reference's answer: pid 300, warm."""
    from nodes.perf.android_package import app_pids

    procs = {SS: "system_server", APP: "com.example.app", 300: "com.example.app:ui", 400: "com.example"}
    assert app_pids(procs, "com.example.app") == [APP, 300]
    assert app_pids(procs, "") == []
    t = _Trace(None, "5.10.0").processes(
        procs, {MAIN: (APP, "com.example.app"), 300: (300, "com.example.app:ui"), SSTID: (SS, "binder")})
    t.print(0, SSTID, "S|1000|launching: com.example.app|1").print(50, SSTID, "F|1000|launching: com.example.app|1")
    t.slice(300, 300, "activityStart", 5, 10).slice(300, 300, "activityResume", 16, 4)
    _, run = _one(t.write(tmp_path / "t.perfetto-trace"))
    assert run.kind == "warm"
    resume = next(p for p in run.phases if p.name == "activityResume")
    assert resume.thread is not None and "300" in resume.thread


def test_minsdk29_startup_starts_at_the_intent_and_needs_launch_finished(tmp_path):
    t = _cold(_app(sdk=30), launch=(20.0, 100.0))
    t.slice(SSTID, SS, "MetricsLogger:launchObserverNotifyIntentStarted", 5, 1)
    t.slice(SSTID, SS, "MetricsLogger:launchObserverNotifyActivityLaunchFinished", 101, 1)
    _, run = _one(t.write(tmp_path / "t.perfetto-trace"))
    assert run.total_ms == pytest.approx(95.0)  # 5 ms (intent) → 100 ms (launching end)
    # without the launch-finished marker trace_processor reports no startup
    t2 = _cold(_app(sdk=30), launch=(20.0, 100.0))
    t2.slice(SSTID, SS, "MetricsLogger:launchObserverNotifyIntentStarted", 5, 1)
    r2 = analyze_file(t2.write(tmp_path / "t2.perfetto-trace"))
    assert not any(run.package for run in (r2.startup.runs if r2.startup else []))


def test_minsdk33_startup_is_launching_activity_with_the_kind_the_platform_wrote(tmp_path):
    t = _app(sdk=33)
    t.print(0, SSTID, "S|1000|launchingActivity#7|0").print(80, SSTID, "F|1000|launchingActivity#7|0")
    t.print(80.01, SSTID, "I|1000|launchingActivity#7:completed-hot:com.example.app")
    t.slice(MAIN, APP, "activityStart", 5, 10).slice(MAIN, APP, "activityResume", 16, 4)
    _, run = _one(t.write(tmp_path / "t.perfetto-trace"))
    assert run.total_ms == pytest.approx(80.0)
    assert run.kind == "hot"  # the platform's word beats the slices (which would say warm)


def test_breakdown_blames_io_then_the_deepest_named_slice_then_the_state(tmp_path):
    t = _cold(_app())
    t.slice(MAIN, APP, "binder transaction", 15, 10)  # inside bindApplication (10–40)
    # main thread: runnable from 5, running 6–15, blocked (D, IO) 15–25, running 25–60,
    # sleeping 60–90, running 90–100
    t.wake(5, MAIN).switch(6, 0, 0, MAIN).switch(15, MAIN, 2, 0).blocked(24, MAIN, True).wake(25, MAIN)
    t.switch(25, 0, 0, MAIN).switch(60, MAIN, 1, 0).wake(90, MAIN).switch(90, 0, 0, MAIN)
    t.switch(130, MAIN, 1, 0)
    _, run = _one(t.write(tmp_path / "t.perfetto-trace"))
    got = {b.reason: b.dur_ms for b in run.breakdown}
    assert got["launch_delay"] == pytest.approx(5.0)  # before the main thread's first state
    assert got["R"] == pytest.approx(1.0)
    assert got["Running"] == pytest.approx(4.0 + 5.0 + 10.0)  # 6–10, 40–45, 90–100: no named slice
    assert got["io"] == pytest.approx(10.0)  # 15–25 inside the binder slice, but waiting on IO
    assert got["bind_application"] == pytest.approx(5.0 + 15.0)  # 10–15 and 25–40
    assert got["activity_start"] == pytest.approx(20.0)  # 45–65, running then sleeping
    assert got["activity_resume"] == pytest.approx(4.0)  # 66–70, asleep inside it
    assert got["S"] == pytest.approx(1.0 + 20.0)  # 65–66 and 70–90
    assert sum(got.values()) == pytest.approx(run.total_ms)
    m = run.main_thread
    assert (m.running_ms, m.runnable_ms, m.uninterruptible_ms, m.io_wait_ms) == pytest.approx((54.0, 1.0, 10.0, 10.0))
    assert m.sleeping_ms == pytest.approx(30.0)


def test_without_sched_data_the_breakdown_says_so_and_names_the_config(tmp_path):
    t = _frames(_cold(_app()), 72, fully_drawn_ms=85)
    r, run = _one(t.write(tmp_path / "t.perfetto-trace"))
    assert run.main_thread is None
    assert sum(b.dur_ms for b in run.breakdown) == pytest.approx(run.total_ms)
    assert "unknown (no sched data)" in {b.reason for b in run.breakdown}
    assert any("sched/sched_switch" in m and "linux.ftrace" in m for m in run.missing)
    gaps = [f for f in r.findings if f.title == "Startup: data the trace lacks"]
    assert gaps and "sched/sched_switch" in gaps[0].detail


def test_art_counts_jit_class_init_and_verification_of_the_target_process(tmp_path):
    t = _cold(_app())
    t.slice(JIT, APP, "JIT compiling void com.example.A.run()", 20, 3).slice(JIT, APP, "JIT Compiling int B.x()", 30, 2)
    t.slice(MAIN, APP, "Lcom/example/Foo;", 12, 1).slice(MAIN, APP, "VerifyClass com.example.Bar", 50, 2)
    t.slice(SSTID, SS, "JIT compiling void Other.x()", 20, 5)  # another process: not counted
    _, run = _one(t.write(tmp_path / "t.perfetto-trace"))
    a = run.art
    assert (a.jit.count, a.jit.total_ms) == (2, pytest.approx(5.0))
    assert (a.class_init.count, a.class_init.total_ms) == (1, pytest.approx(1.0))
    assert (a.verify_class.count, a.verify_class.total_ms) == (1, pytest.approx(2.0))


def test_slow_start_reasons_fire_at_trace_processors_thresholds_with_advice(tmp_path):
    t = _app()
    t.print(0, SSTID, "S|1000|launching: com.example.app|1").print(1600, SSTID, "F|1000|launching: com.example.app|1")
    t.slice(MAIN, APP, "bindApplication", 10, 1300).slice(MAIN, APP, "activityStart", 1320, 20)
    t.slice(MAIN, APP, "activityResume", 1345, 4)
    # the JIT thread runs 150 ms during the launch (threshold 100 ms)
    t.wake(100, JIT).switch(100, 0, 0, JIT).switch(250, JIT, 1, 0)
    r, run = _one(t.write(tmp_path / "t.perfetto-trace"))
    ids = {x.id: x for x in run.slow_reasons}
    assert ids["TIME_SPENT_IN_BIND_APPLICATION"].observed_ms == pytest.approx(1300.0)
    assert "1250" in ids["TIME_SPENT_IN_BIND_APPLICATION"].expected
    assert "App Startup" in ids["TIME_SPENT_IN_BIND_APPLICATION"].suggestion
    assert ids["JIT_ACTIVITY"].observed_ms == pytest.approx(150.0)
    assert "Baseline Profile" in ids["JIT_ACTIVITY"].suggestion
    assert all(x.link and x.link.startswith("https://developer.android.com/") for x in run.slow_reasons)
    # just under the thresholds: nothing fires
    t2 = _app()
    t2.print(0, SSTID, "S|1000|launching: com.example.app|1").print(1600, SSTID, "F|1000|launching: com.example.app|1")
    t2.slice(MAIN, APP, "bindApplication", 10, 1200).slice(MAIN, APP, "activityStart", 1320, 20)
    t2.slice(MAIN, APP, "activityResume", 1345, 4)
    t2.wake(100, JIT).switch(100, 0, 0, JIT).switch(190, JIT, 1, 0)
    _, run2 = _one(t2.write(tmp_path / "t2.perfetto-trace"))
    assert not {"TIME_SPENT_IN_BIND_APPLICATION", "JIT_ACTIVITY"} & {x.id for x in run2.slow_reasons}
    # the lead finding carries the first reason's advice
    assert r.findings[0].family == "startup" and r.findings[0].suggestion == run.slow_reasons[0].suggestion


def test_the_report_headline_and_answer_lead_with_the_startup(real):
    from nodes.report.view import build_view

    for name, result in real.items():
        _, _, ttid, _, kind = REFERENCE[name]
        v = build_view(result.model_dump())
        first, *rest = v.summary_sentences()
        assert first.startswith(f"{TARGET} {kind} start: TTID ") and "TTFD" in first
        assert "the biggest part is" in first
        assert any("first suggestion:" in s and "https://developer.android.com/" in s for s in rest)
        assert v.ranked_findings()[0].family == "startup"


def test_legacy_startup_rules_carry_a_suggestion_too():
    from nodes.perf.findings.startup import first_run_slower, slow_startup
    from nodes.perf.model import StartupRun, StartupStats

    st = StartupStats(runs=[StartupRun(index=i, total_ms=t) for i, t in enumerate((9000.0, 2500.0, 2600.0))],
                      median_ms=2600.0, first_ms=9000.0, min_ms=2500.0, max_ms=9000.0, spread_ms=6500.0)
    found = slow_startup(st, None) + first_run_slower(st, None)
    assert len(found) == 2 and all(f.suggestion and f.link and f.family == "startup" for f in found)


def test_binder_calls_become_slices_the_breakdown_blames_and_a_slow_reason(tmp_path):
    t = _cold(_app())
    # main thread calls system_server inside bindApplication: 15–40 ms; the server replies after 23 ms
    t.binder(15, MAIN, 1).binder(16, SSTID, 1, received=True).binder(39, SSTID, 2, reply=True)
    t.binder(40, MAIN, 2, received=True)
    t.binder(50, MAIN, 3, oneway=True).binder(51, SSTID, 3, received=True)  # one-way: blocks no one
    t.wake(5, MAIN).switch(5, 0, 0, MAIN).switch(15, MAIN, 1, 0).wake(40, MAIN).switch(40, 0, 0, MAIN)
    t.switch(110, MAIN, 1, 0)
    r, run = _one(t.write(tmp_path / "t.perfetto-trace"))
    got = {b.reason: b.dur_ms for b in run.breakdown}
    assert got["binder"] == pytest.approx(25.0)  # asleep in the call: the slice's name wins over S
    assert sum(got.values()) == pytest.approx(run.total_ms)
    by_name = {h.name: h for h in r.hotspots if h.thread is None}
    assert by_name["binder transaction"].total_ms == pytest.approx(25.0)  # the client, blocked
    # the server's side is system_server's, not the app's: not among the app's hot spots
    # (frames-analysis scopes them), but in the all-process slice statistics
    assert "binder reply" not in by_name
    stats = {(s.scope, s.name): s for s in r.slice_stats}
    assert stats[("all", "binder reply")].sum_ms == pytest.approx(23.0)  # the server
    assert by_name.get("binder transaction async") is None or by_name["binder transaction async"].total_ms == 0.0
    blocked = [x for x in run.slow_reasons if x.id == "MAIN_THREAD_BINDER_TRANSCATIONS_BLOCKED"]
    assert blocked and blocked[0].observed_ms == pytest.approx(25.0) and blocked[0].observed == 1
    assert "background thread" in blocked[0].suggestion


def test_maxsdk28_hot_start_is_an_activity_resume_outside_any_launch_to_the_end_of_its_frame(tmp_path):
    t = _app()
    t.slice(MAIN, APP, "activityResume", 10, 5)
    t.slice(MAIN, APP, "Choreographer#doFrame", 20, 6).slice(RT, APP, "DrawFrame", 24, 5)
    t.slice(MAIN, APP, "Choreographer#doFrame", 40, 6).slice(RT, APP, "DrawFrame", 44, 5)
    _, run = _one(t.write(tmp_path / "t.perfetto-trace"))
    assert run.kind == "hot" and run.package == "com.example.app"
    assert run.total_ms == pytest.approx(19.0)  # 10 ms → the first frame's last DrawFrame ends at 29
    assert run.ttid_ms == pytest.approx(19.0)


@pytest.mark.parametrize("n,fires", [(15, False), (16, True)])
def test_broadcasts_dispatched_during_the_launch_count_above_15(tmp_path, n, fires):
    t = _cold(_app())
    for k in range(n):
        t.slice(SSTID, SS, f"Broadcast dispatched (#{k})", 1 + 5 * k, 1)
    t.slice(SSTID, SS, "Broadcast dispatched (after)", 150, 1)  # after the launch: not counted
    _, run = _one(t.write(tmp_path / "t.perfetto-trace"))
    got = [x for x in run.slow_reasons if x.id == "BROADCAST_DISPATCHED_COUNT"]
    assert bool(got) is fires
    if fires:
        assert got[0].observed == n
