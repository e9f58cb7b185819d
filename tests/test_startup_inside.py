"""Inside the largest part of a launch's breakdown (nodes/perf/metrics/android_startup.py
``inside_part``): a warm start whose activityResume (103 ms of 157) is a 100 ms ``sleep`` under
performResume hears "sleep", not only "activityResume" — in the startup answer and in the
blocking lens.

The reference is a direct protobuf decode of the capture, independent of the reader: the app's
main thread's atrace ``B|pid|name`` / ``E|pid`` prints paired with a stack, the launch window of
trace_processor's ``android_startups`` (../shared/traces/REFERENCE.md), and the thread states
of tests/thread_state_reference.py (trace_processor's thread_state, written from its sources).
"""

from __future__ import annotations

import os

import pytest
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

from nodes.perf.analysis import analyze_file
from nodes.perf.findings.startup import biggest_part_words
from nodes.perf.lens_readers import blocking
from nodes.perf.model import BreakdownItem, MainThreadState, PartInside, StartupRun
from nodes.perf.units import ms, pct
from nodes.report.view import build_view
from tests.thread_state_reference import thread_states, time_in_states

WARM = os.path.join(os.path.dirname(__file__), "data", "perfetto", "api32_startup_warm.perfetto-trace")
PACKAGE = "androidx.benchmark.integration.macrobenchmark.target"
#: trace_processor's android_startups row of this capture, ns (REFERENCE.md).
LAUNCH = (157479786566030, 157479943081777)


def _main_thread_slices() -> tuple[int, list[tuple[int, int, str]]]:
    """(main thread tid, its atrace slices (start ns, end ns, name)) from the raw prints."""
    t = pb.Trace()
    t.ParseFromString(open(WARM, "rb").read())
    pid = next(p.pid for pk in t.packet if pk.HasField("process_tree") for p in pk.process_tree.processes
               if p.cmdline and p.cmdline[0] == PACKAGE)
    prints = sorted((e.timestamp, e.print.buf) for pk in t.packet if pk.HasField("ftrace_events")
                    for e in pk.ftrace_events.event if e.HasField("print") and e.pid == pid)
    out, stack = [], []
    for ts, buf in prints:
        parts = buf.rstrip("\n").split("|")
        if parts[0] == "B":
            stack.append((ts, parts[2]))
        elif parts[0] == "E" and stack:
            b, name = stack.pop()
            out.append((b, ts, name))
    return pid, out


def _inside(spans, outer):
    return [s for s in spans if s is not outer and outer[0] <= s[0] and s[1] <= outer[1]]


@pytest.fixture(scope="module")
def warm():
    return analyze_file(WARM)


def test_the_startup_answer_names_what_the_biggest_part_was_made_of(warm):
    tid, spans = _main_thread_slices()
    a, b = LAUNCH
    resume = max((s for s in spans if s[2] == "activityResume" and s[0] < b and s[1] > a), key=lambda s: s[1] - s[0])
    # down the longest direct child while it is at least half of its parent
    chain = [resume]
    while kids := [k for k in _inside(spans, chain[-1]) if not any(k in _inside(spans, o) for o in _inside(spans, chain[-1]))]:
        kid = max(kids, key=lambda s: s[1] - s[0])
        if kid[1] - kid[0] < 0.5 * (chain[-1][1] - chain[-1][0]):
            break
        chain.append(kid)
    assert [s[2] for s in chain[::2]] == ["activityResume", "sleep"] and chain[1][2].startswith("performResume:")
    sleep = chain[-1]
    states = time_in_states(thread_states(WARM)[tid], sleep[0], sleep[1])
    assert max(states, key=states.get) == "S"
    run = warm.startup.runs[0]
    part = run.breakdown[0]
    want = (f"{PACKAGE} warm start: TTID {ms(run.ttid_ms)}, TTFD {ms(run.ttfd_ms)}; the launch took "
            f"{ms((b - a) / 1e6)} (fast: under Android vitals' 2.0 s for a warm start); the biggest part is "
            f"activityResume ({ms(part.dur_ms)}, {pct(100 * part.dur_ms / run.total_ms)}); inside it sleep takes "
            f"{ms((sleep[1] - sleep[0]) / 1e6)}, the main thread was sleeping for {ms(states['S'] / 1e6)} of that.")
    assert build_view(warm.model_dump()).summary_sentences()[0] == want
    assert run.inside_biggest.path == [s[2] for s in chain]
    assert run.inside_biggest.path_ms[-1] == pytest.approx((sleep[1] - sleep[0]) / 1e6, abs=1e-3)
    assert run.inside_biggest.states.sleeping_ms == pytest.approx(states["S"] / 1e6, abs=1e-3)


def test_the_blocking_lens_says_the_main_thread_slept_through_the_launch(warm):
    tid, spans = _main_thread_slices()
    a, b = LAUNCH
    rows = thread_states(WARM)[tid]
    slept = time_in_states(rows, a, b)["S"]
    sleep = max((s for s in spans if s[2] == "sleep" and a <= s[0] < b), key=lambda s: s[1] - s[0])
    in_sleep = time_in_states(rows, sleep[0], sleep[1])["S"]
    lead = blocking(warm).lead
    # sleeping outweighs the binder waits, so it comes first
    assert lead.startswith(f"Main thread ({PACKAGE} {tid}): during the launch it slept {ms(slept / 1e6)} of {ms((b - a) / 1e6)}, "
                           f"{ms(in_sleep / 1e6)} of that in sleep (inside activityResume); ")
    assert "binder call" in lead


def _run(inside: PartInside | None) -> StartupRun:
    return StartupRun(index=0, total_ms=400.0, kind="cold", package="com.demo.shop", inside_biggest=inside,
                      breakdown=[BreakdownItem(reason="bind_application", dur_ms=200.0)])


def _states(**kw) -> MainThreadState:
    return MainThreadState(**({"running_ms": 0.0, "runnable_ms": 0.0, "sleeping_ms": 0.0, "uninterruptible_ms": 0.0} | kw))


def test_the_words_say_dominant_longest_or_only_the_state():
    head = "the biggest part is bindApplication (200 ms, 50.0 %)"
    assert biggest_part_words(_run(None)) == head
    dominant = PartInside(reason="bind_application", path=["bindApplication", "inflate"], path_ms=[200.0, 150.0],
                          states=_states(running_ms=140.0, sleeping_ms=10.0))
    assert biggest_part_words(_run(dominant)) == head + "; inside it inflate takes 150 ms, the main thread was running for 140 ms of that"
    minor = PartInside(reason="bind_application", path=["bindApplication", "Foo.init"], path_ms=[200.0, 60.0],
                       states=_states(uninterruptible_ms=50.0))
    assert biggest_part_words(_run(minor)) == (head + "; inside it its longest slice is Foo.init (60.0 ms), the main "
                                               "thread was in uninterruptible sleep (D) for 50.0 ms of that")
    alone = PartInside(reason="bind_application", path=["bindApplication"], path_ms=[200.0],
                       states=_states(runnable_ms=120.0, running_ms=80.0))
    assert biggest_part_words(_run(alone)) == head + "; inside it the main thread was runnable (waiting for a CPU) for 120 ms of it"
