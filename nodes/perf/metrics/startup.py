"""Startup: measured runs (median, min, max, spread, the first run apart), phases, the import
tree; Android app startups (one definition, trace_processor's ``android_startups``:
:mod:`.android_startup`); Chrome navigation marks.
"""

from __future__ import annotations

from nodes.perf.metrics import android_startup, startup_reasons
from nodes.perf.metrics.common import _ms
from nodes.perf.model import StartupPhase, StartupRun, StartupStats

PAGE_MARKS = (
    "fetchStart",
    "responseEnd",
    "firstPaint",
    "firstContentfulPaint",
    "firstMeaningfulPaint",
    "largestContentfulPaint::Candidate",
    "domInteractive",
    "domContentLoadedEventEnd",
    "MarkDOMContent",
    "loadEventStart",
    "loadEventEnd",
    "MarkLoad",
)


def android_runs(ctx) -> list[StartupRun]:
    """App startups of an Android system trace, per launch (:mod:`.android_startup`), each with
    its slow-start reasons (:mod:`.startup_reasons`)."""
    found = android_startup.launches(ctx)
    for launch in found:
        launch.run.slow_reasons = startup_reasons.evaluate(ctx, launch, found)
    return [launch.run for launch in found]


def startup(ctx) -> StartupStats | None:
    pd = ctx.pd
    runs = sorted(pd.startup_runs, key=lambda r: r.index)
    phases = list(pd.startup_phases)
    kind = pd.facts.startup_kind if pd.facts.startup_kind is not None else "unknown"
    # launches are marked by async spans (launching:, launchingActivity#); hot starts before
    # API 29 only by an activityResume slice
    system = android_runs(ctx) if (pd.async_slices or "activityResume" in pd.strings) else []
    if system:
        # a system trace's launches, as trace_processor defines them; the phases shown are the
        # first launch's
        runs, phases, kind = system, list(system[0].phases), "unknown"
    if not runs:
        page = page_load(ctx)
        if page:
            runs, phases, kind = page
    imports = sorted(pd.imports, key=lambda i: -i.cumulative_us)[:25]
    if not runs and not phases and not imports:
        return None
    st = StartupStats(runs=runs, phases=phases, imports=imports, kind=kind)
    if runs:
        st.fill_statistics()
        if kind == "unknown":
            kinds = {r.kind for r in runs}
            st.kind = kinds.pop() if len(kinds) == 1 else "mixed"
    return st


#: The startup kind of a web page's navigation (its marks from navigationStart to the load event).
PAGE_LOAD_KIND = "page load"


def page_load(ctx):
    pd = ctx.pd
    marks: dict[str, float] = {}
    nav = None
    for ts, pid, tid, name in pd.instants:
        if name == "navigationStart" and nav is None:
            nav = ts
        elif name in PAGE_MARKS and name not in marks:
            marks[name] = ts
    if nav is None or not marks:
        return None
    phases = [
        StartupPhase(name=n, start_ms=0.0, dur_ms=_ms(t - nav))
        for n, t in sorted(marks.items(), key=lambda kv: kv[1])
        if t >= nav
    ]
    if not phases:
        return None
    last = max(p.dur_ms for p in phases)
    runs = [StartupRun(index=0, total_ms=last, kind="unknown", ready_by=phases[-1].name, command="navigation")]
    return runs, phases, PAGE_LOAD_KIND
