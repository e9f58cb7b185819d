"""Thread states as trace_processor's ``thread_state`` defines them, on the real captures.

The reference is tests/thread_state_reference.py: trace_processor's ThreadStateTracker replayed
over the whole trace in one time-sorted list (compact sched's first switch per CPU skipped and
its early waking records dropped, ``sched_waking`` and compact waking records opening R,
``task_newtask`` opening R, ``sched_wakeup`` ignored, R+ blocked-then-runnable). The reader
builds the same intervals per thread from its own columns; every interval must agree.

The captures (tests/data/perfetto/SOURCES.md): api32 warm start — compact sched with 6,857
waking records on a 5.10 kernel; the Android 12 emulator — plain sched_switch with
sched_waking *and* sched_wakeup on 5.10; api24 cold start — sched_switch only on 3.10, where
preemption is 0x400 (docs/perfetto.md: the one place we read prev_state differently).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from nodes.perf.parsers import perfetto
from nodes.perf.sched_state import SchedState
from tests.thread_state_reference import thread_states, time_in_states

DATA = Path(__file__).parent / "data" / "perfetto"
WARM32 = DATA / "api32_startup_warm.perfetto-trace"
COLD24 = DATA / "api24_startup_cold.perfetto-trace"
EMULATOR = DATA / "ms_android12_emulator_sched_cpusampling.pftrace"
PACKAGE = "androidx.benchmark.integration.macrobenchmark.target"
#: The startup windows (ns, the captures' own ftrace clock). api32: android_startups ts, ts_end
#: as perfetto startups_tests.py publishes them (REFERENCE.md). api24: the `launching:` S/F
#: prints themselves (startups_maxsdk28.sql's definition) — REFERENCE.md's ts for it is 44.29 ms
#: earlier, on the clock trace_processor moved these events to; the duration is the same.
STARTUPS = {
    WARM32: (157479786566030, 157479943081777),
    COLD24: (791275404393, 791545349030),
}


def _ours_code(state: str) -> str:
    """The reference's trace_processor string → the reader's interval code name."""
    if state in ("Running", "R", "R+"):
        return state
    if any(c in state for c in "XZx"):
        return "other"  # the task died
    if "D" in state:
        return "D"
    if "S" in state:
        return "S"
    return "other"


def _compare(path: Path, layout_3x: bool = False) -> tuple[int, int, int]:
    """Every closed reference row equals one reader interval, its IO verdict
    (sched_blocked_reason) included; returns (rows, threads, rows with an IO verdict)."""
    ref = thread_states(str(path))
    data = perfetto.parse(str(path))
    ours = {tid: iv for (_pid, tid), iv in data.sched_intervals.items()}
    rows = io_rows = 0
    for tid, trows in ref.items():
        closed = [r for r in trows if r[1] > 0]
        if not closed:
            continue
        iv = ours[tid]
        got = [(round(t * 1000), round(d * 1000), SchedState(s).label, io)
               for t, d, s, io in zip(iv.ts, iv.dur, iv.state, iv.io_wait)]
        want = []
        for ts, dur, state, io in closed:
            if layout_3x and state == "N":
                state = "R+"  # 3.x preempts with 0x400, which trace_processor reads as N
            want.append((ts, dur, _ours_code(state), -1 if io is None else int(io)))
        # The reader also closes the last state at the end of the sched data; the reference
        # leaves it open (dur -1) as trace_processor does, so compare the closed ones.
        got = got[:len(want)]
        assert len(got) == len(want), tid
        for g, w in zip(got, want):
            assert g[2:] == w[2:] and abs(g[0] - w[0]) <= 1 and abs(g[1] - w[1]) <= 1, (tid, g, w)
            io_rows += w[3] != -1
        rows += len(want)
    return rows, len(ref), io_rows


def test_compact_sched_waking_records_open_runnable_as_in_trace_processor():
    rows, threads, io = _compare(WARM32)
    assert rows > 20_000 and threads > 300 and io > 1_000


def test_plain_sched_waking_opens_runnable_and_sched_wakeup_does_not():
    rows, threads, _ = _compare(EMULATOR)
    assert rows > 50_000 and threads > 300


def test_a_3x_kernel_preempts_with_0x400_and_the_rest_is_trace_processors():
    rows, _, io = _compare(COLD24, layout_3x=True)
    assert rows > 30_000 and io > 1_000


@pytest.mark.parametrize("path", [WARM32, COLD24], ids=["api32_warm", "api24_cold"])
def test_main_thread_runnable_in_the_startup_is_r_plus_r_plus(path):
    """The CPU-contention figure (slow_start_reasons' runnable share): R and R+ of the app's
    main thread over android_startups [ts, ts_end], from the reference rows."""
    from nodes.perf.analysis import analyze_file

    data = perfetto.parse(str(path))
    pid = next(p for p, name in data.processes.items() if name == PACKAGE)
    start, end = STARTUPS[path]
    ref = time_in_states(thread_states(str(path))[pid], start, end)
    runnable = ref.get("R", 0) + ref.get("R+", 0) + (ref.get("N", 0) if path == COLD24 else 0)
    run = analyze_file(str(path)).startup.runs[0]
    assert runnable > 1 * 1_000_000  # ns: both captures have some
    assert run.main_thread.runnable_ms == pytest.approx(runnable / 1e6, abs=0.002)
    assert run.main_thread.running_ms == pytest.approx(ref.get("Running", 0) / 1e6, abs=0.002)
