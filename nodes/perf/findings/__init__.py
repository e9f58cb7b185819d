"""Findings: small rule functions over the computed metric families, with named thresholds.

One module per family (:mod:`.hotspots`, :mod:`.threads`, :mod:`.frames`, :mod:`.startup`,
:mod:`.counters`); each rule takes the family's result (and the file it came from, for the
evidence) and returns a list of :class:`~nodes.perf.model.Finding` — empty when the rule does
not fire — so each can be tested alone. :func:`evaluate` runs them in the order the report has
always listed them; :func:`nodes.perf.metrics.compute` then sorts by severity (stable).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nodes.perf.findings import counters, frames, hotspots, startup, threads, web
from nodes.perf.findings.common import SEVERITY_ORDER, finding
from nodes.perf.model import Finding
from nodes.perf.units import counted

if TYPE_CHECKING:
    from nodes.perf.metrics.common import Context

__all__ = ["evaluate", "incomplete_data", "lead_family", "look_first", "ordered", "SERIOUS", "SEVERITY_ORDER", "to_act_on"]


def lead_family(res) -> str | None:
    """The family the answer leads with: "startup" when the data holds an app startup read
    from a system trace (the question such a trace answers), "frames" when the app's frames
    are janky (findings/frames.py ``is_jank_trace``), else None (severity alone)."""
    st = getattr(res, "startup", None)
    if st is not None and any(r.package for r in st.runs):
        return "startup"
    if frames.is_jank_trace(getattr(res, "frames", None)):
        return "frames"  # a jank trace: the jank and its causes lead
    return None


def ordered(findings: list[Finding], lead: str | None) -> list[Finding]:
    """The answer's order: the lead family's findings first, then by severity; stable otherwise.
    (The lead family's first finding may be an ``info`` fact — "Cold startup: TTID 265 ms" — the
    answer to the question a startup trace is about; what to *act on* is :func:`to_act_on`.)"""
    return sorted(findings, key=lambda f: (lead is not None and f.family != lead, SEVERITY_ORDER.get(f.severity, 9)))


#: The severities that call for action and count as "serious" in a report's verdict.
SERIOUS = ("high", "medium")


def _size(f: Finding) -> float:
    """The largest number of a finding's metric: the tie-break among equally severe ones."""
    return max((float(v) for v in f.metric.values() if isinstance(v, (int, float)) and not isinstance(v, bool)),
               default=0.0)


def to_act_on(findings: list[Finding], lead: str | None = None) -> list[Finding]:
    """What to look at first: by severity (high, medium, low, then info — facts and missing data
    last, never above a problem), the lead family first among equally severe ones, then the
    larger metric; stable otherwise. The one order the report's "What to look at first", its
    verdict and ``perfscout analyze``'s findings table use."""
    return [f for _, f in sorted(enumerate(findings), key=lambda item: (
        SEVERITY_ORDER.get(item[1].severity, 9), lead is not None and item[1].family != lead, -_size(item[1]), item[0]))]


def look_first(findings: list[Finding], lead: str | None = None) -> Finding | None:
    """The finding a verdict names as the one to look at first: the first serious one of
    :func:`to_act_on`, or None when none is serious (an ``info`` item is never announced)."""
    return next((f for f in to_act_on(findings, lead) if f.severity in SERIOUS), None)


def incomplete_data(pd, source: str | None) -> list[Finding]:
    """The reader skipped events or stopped early: say so, with its first warnings."""
    if not (pd.partial or pd.skipped_events):
        return []
    # A trace cut short or stopped at the event cap skipped nothing it read: no "0 events".
    lead = (f"{counted(pd.skipped_events, 'event')} could not be read; results cover the rest. "
            if pd.skipped_events else "The data is partial; the results cover what was read. ")
    return [finding("Incomplete data", "info", lead + "; ".join(pd.warnings[:3]), source)]


def evaluate(ctx: "Context") -> list[Finding]:
    """Every rule over one analysis, in report order (before the severity sort)."""
    res, pd = ctx.res, ctx.pd
    src = pd.source
    out: list[Finding] = []
    out += hotspots.hot_spots(res.hotspots, res.duration_ms, src, ctx.root)
    out += threads.long_tasks(res.long_tasks, ctx.long_count, src)
    out += frames.janky_frames(res.frames, src)
    out += frames.frame_causes(res.frames, src)
    out += frames.missing_frame_data(res.frames, src)
    out += frames.reported_jank(res.frames, pd.format, src)
    out += startup.android_startup(res.startup, src)
    out += startup.slow_start_reasons(res.startup, src)
    out += startup.startup_data_missing(res.startup, src)
    out += startup.slow_startup(res.startup, src)
    out += startup.startup_varies(res.startup, src)
    out += startup.first_run_slower(res.startup, src)
    out += startup.slow_imports(res.startup, pd.imports, src)
    for rule in (web.slow_fcp, web.slow_lcp, web.layout_shifts, web.blocking_time):
        out += rule(res.page, src)
    for c in res.counters:
        out += counters.cpu_bound(c, src)
        out += counters.memory_grows(c, src)
    out += counters.perf_stat(pd.stats, pd.facts.perf_stat, pd.format, src)
    if ctx.main is not None:
        out += threads.main_thread_runnable(pd.thread_states.get(ctx.main, {}), pd.thread_label(*ctx.main), src)
    out += incomplete_data(pd, src)
    return out
