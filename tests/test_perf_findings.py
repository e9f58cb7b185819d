"""Finding rules alone (nodes/perf/findings/): each fires at its named threshold and not below,
and the startup family leads a startup trace's findings."""

from __future__ import annotations

import pytest

from nodes.perf import findings
from nodes.perf.findings import counters, threads
from nodes.perf.findings.common import finding
from nodes.perf.model import CounterSummary, LongTask, PerfStatTarget, StartupRun, StartupStats


def _task(ms: float) -> LongTask:
    return LongTask(name="work", thread="main (app 1)", start_ms=10.0, dur_ms=ms)


def test_long_tasks_are_high_from_the_named_single_or_total_limit():
    assert threads.long_tasks([], None, "f") == []
    below = threads.long_tasks([_task(threads.LONG_TASK_HIGH_MS - 1)], None, "f")
    assert below[0].severity == "medium"
    assert threads.long_tasks([_task(threads.LONG_TASK_HIGH_MS)], None, "f")[0].severity == "high"
    many = [_task(100.0) for _ in range(int(threads.LONG_TASKS_HIGH_TOTAL_MS // 100))]
    assert threads.long_tasks(many, 42, "f")[0].severity == "high"
    assert threads.long_tasks(many, 42, "f")[0].metric["count"] == 42  # all of them, not only those kept


@pytest.mark.parametrize("runnable,fires", [(9.9, False), (10.0, True), (50.0, True)])
def test_main_thread_runnable_share(runnable, fires):
    got = threads.main_thread_runnable({"running": 100.0 - runnable, "runnable": runnable}, "main", "f")
    assert bool(got) is fires
    assert threads.RUNNABLE_SHARE == 0.1


def test_cpu_bound_and_memory_growth_thresholds():
    def c(name, mean=0.0, points=()):
        return CounterSummary(name=name, min=0, max=100, mean=mean, last=points[-1][1] if points else 0, points=list(points))

    assert counters.cpu_bound(c("cpu_percent", counters.CPU_BOUND_PCT), "f")
    assert not counters.cpu_bound(c("cpu_percent", counters.CPU_BOUND_PCT - 0.1), "f")
    assert not counters.cpu_bound(c("other", 99.0), "f")
    mib = 2**20
    grows = c("rss_bytes", points=[(0.0, 100 * mib), (1.0, 160 * mib)])
    assert counters.memory_grows(grows, "f")
    small = c("rss_bytes", points=[(0.0, 100 * mib), (1.0, 140 * mib)])  # +40 MiB < 50 MiB
    assert not counters.memory_grows(small, "f")
    slow_factor = c("rss_bytes", points=[(0.0, 200 * mib), (1.0, 260 * mib)])  # 1.3× < 1.5×
    assert not counters.memory_grows(slow_factor, "f")


def test_perf_stat_rules_per_run_and_only_for_perf_stat():
    stats = {"insn per cycle": 0.8, "backend bound %": 61.0, "branch-misses %": 4.9}
    got = counters.perf_stat(stats, [PerfStatTarget("command", "./a.out")], "perfstat", "f")
    titles = [f.title for f in got]
    assert titles == ["Low IPC 0.8 (./a.out)", "Backend bound 61.0 % (./a.out)"]
    assert got[1].severity == "high"
    assert counters.perf_stat(stats, [], "speedscope", "f") == []
    attached = counters.perf_stat(stats, [PerfStatTarget("pid", "4242")], "perfstat", "f")
    assert attached[0].title == "Low IPC 0.8 (pid 4242)"


def test_the_startup_family_leads_only_when_the_data_holds_an_app_startup():
    hot = finding("Hot spot: x", "high", "d", None)
    start = finding("Cold startup: TTID 1 ms", "info", "d", None, family="startup")
    st = StartupStats(runs=[StartupRun(index=0, total_ms=1.0, package="com.example")])

    class R:
        startup = st

    assert findings.lead_family(R) == "startup"
    assert findings.ordered([hot, start], "startup") == [start, hot]
    assert findings.ordered([start, hot], None) == [hot, start]  # severity alone
    R.startup = StartupStats(runs=[StartupRun(index=0, total_ms=1.0)])  # a Python startup run
    assert findings.lead_family(R) is None
