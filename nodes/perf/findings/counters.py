"""Counter and scalar-statistic rules: CPU saturation, memory growth, ``perf stat`` figures."""

from __future__ import annotations

from nodes.perf.findings.common import finding
from nodes.perf.metrics.common import _fpct
from nodes.perf.model import CounterSummary, Finding, PerfStatTarget

#: Mean CPU % of the process from which one core is saturated.
CPU_BOUND_PCT = 90.0
#: RSS growth from which memory "grows": this many bytes, and this factor over the first point.
MEMORY_GROWTH_BYTES = 50 * 2**20
MEMORY_GROWTH_FACTOR = 1.5
#: perf stat: instructions per cycle under this is a finding.
LOW_IPC = 1.0
#: perf stat top-down shares (%) from which they are findings; 2× is "high".
TOPDOWN_LIMITS = (
    ("backend bound %", "Backend bound", 30.0),
    ("frontend bound %", "Frontend bound", 30.0),
    ("bad speculation %", "Bad speculation", 10.0),
    ("tma_backend_bound %", "Backend bound", 30.0),
    ("tma_frontend_bound %", "Frontend bound", 30.0),
    ("tma_bad_speculation %", "Bad speculation", 10.0),
)
BRANCH_MISS_PCT = 5.0


def cpu_bound(c: CounterSummary, source: str | None) -> list[Finding]:
    if c.name != "cpu_percent" or c.mean < CPU_BOUND_PCT:
        return []
    return [finding("CPU bound", "medium",
                    f"the process used {_fpct(c.mean)} CPU on average (max {_fpct(c.max)}): one core saturated.",
                    source, metric={"cpu_mean": c.mean}, family="cpu")]


def memory_grows(c: CounterSummary, source: str | None) -> list[Finding]:
    if c.name != "rss_bytes" or not c.points:
        return []
    first, last = c.points[0][1], c.last
    if last - first >= MEMORY_GROWTH_BYTES and (first <= 0 or last / first >= MEMORY_GROWTH_FACTOR):
        return [finding("Memory grows", "medium",
                        f"RSS grew from {first / 2**20:,.0f} MiB to {last / 2**20:,.0f} MiB.",
                        source, start_ms=c.points[0][0], end_ms=c.points[-1][0],
                        metric={"rss_growth_bytes": last - first}, family="memory")]
    return []


def perf_stat(stats: dict[str, float], runs: list[PerfStatTarget], fmt: str, source: str | None) -> list[Finding]:
    """``perf stat`` figures out of the healthy range, per run when the file has several
    (``runs``: what each counted, ``TraceFacts.perf_stat``)."""
    if not stats or fmt != "perfstat":
        return []
    out: list[Finding] = []
    labels = [""] if len(runs) <= 1 else [f" [run {i}]" for i in range(1, len(runs) + 1)]
    for i, lab in enumerate(labels, 1):
        kind, what = (runs[i - 1].kind, runs[i - 1].what) if runs else ("", "")
        cmd = what if kind == "command" else ""
        # perf attached to a process/thread (-p/-t) or counted system-wide: name that instead
        who = (f" ({what})" if what and kind in ("command", "target")
               else f" ({kind} {what})" if what and kind in ("pid", "tid") else "")
        ipc = stats.get(f"insn per cycle{lab}")
        if ipc is not None and ipc < LOW_IPC:
            out.append(finding(f"Low IPC {ipc:g}{who}", "medium",
                               f"{ipc:g} instructions per cycle: the CPU mostly waits (memory, branches).",
                               source, command=cmd or None, family="cpu", metric={"ipc": ipc}))
        for key, title, lim in TOPDOWN_LIMITS:
            v = stats.get(f"{key}{lab}")
            if v is not None and v >= lim:
                out.append(finding(f"{title} {_fpct(v)}{who}", "high" if v >= 2 * lim else "medium",
                                   f"top-down analysis: {_fpct(v)} of pipeline slots are {title.lower()}.",
                                   source, command=cmd or None, family="cpu", metric={key: v}))
        bm = stats.get(f"branch-misses %{lab}")
        if bm is not None and bm >= BRANCH_MISS_PCT:
            out.append(finding(f"Branch misses {_fpct(bm)}{who}", "medium",
                               f"{_fpct(bm)} of branches mispredicted.", source, command=cmd or None,
                               metric={"branch_miss_pct": bm}))
    return out
