"""Main-thread rules: long tasks, and waiting for a CPU."""

from __future__ import annotations

from nodes.perf.findings.common import finding
from nodes.perf.metrics.common import LONG_TASK_MS, _fms, _fpct
from nodes.perf.model import Finding, LongTask

#: Long tasks are "high" from one this long, or from this much long-task time in all.
LONG_TASK_HIGH_MS = 200.0
LONG_TASKS_HIGH_TOTAL_MS = 500.0
#: Share of the main thread's scheduled time spent runnable from which it is a finding.
RUNNABLE_SHARE = 0.1


def long_tasks(tasks: list[LongTask], count: int | None, source: str | None) -> list[Finding]:
    """Long tasks on the main thread (``tasks`` longest first; ``count`` all of them)."""
    if not tasks:
        return []
    worst = tasks[0]
    total = sum(t.dur_ms for t in tasks)
    n = count if count is not None else len(tasks)
    sev = "high" if worst.dur_ms >= LONG_TASK_HIGH_MS or total >= LONG_TASKS_HIGH_TOTAL_MS else "medium"
    return [finding(
        f"{n:,} long task{'s' if n != 1 else ''} on the main thread", sev,
        f"{n:,} task{'s' if n != 1 else ''} of ≥ {_fms(LONG_TASK_MS)} on {worst.thread}; the longest is {worst.name} "
        f"({_fms(worst.dur_ms)} at {_fms(worst.start_ms)}). Long tasks block input and frames.",
        source, start_ms=worst.start_ms, end_ms=round(worst.start_ms + worst.dur_ms, 3),
        events=[t.name for t in tasks[:5]],
        metric={"count": n, "longest_ms": worst.dur_ms, "total_ms": round(total, 3)}, family="threads",
    )]


def main_thread_runnable(states: dict[str, float], label: str, source: str | None) -> list[Finding]:
    """The main thread was runnable (waiting for a CPU) for a large share of its traced time."""
    tot = sum(states.values())
    if tot <= 0 or states.get("runnable", 0.0) / tot < RUNNABLE_SHARE:
        return []
    share = states["runnable"] / tot
    return [finding("Main thread waits for a CPU", "medium",
                    f"{label} was runnable but not running {_fpct(share * 100)} of its traced time.",
                    source, metric={"runnable_share": round(share, 4)}, family="cpu")]
