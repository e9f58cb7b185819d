"""PerfData → AnalysisResult: the numbers a performance engineer checks. Deterministic.

One module per metric family, each plain functions of a shared :class:`~.common.Context`:

* :mod:`.hotspots` — self/total time per slice, sampled function, pstats row, import; stacks.
* :mod:`.threads` — busy time, scheduler states, the main thread, long tasks.
* :mod:`.frames` — frame durations, FPS, percentiles, jank against the data's budget.
* :mod:`.scroll` — Chrome scrolling: its jank verdicts (EventLatency, ScrollJankV4), input-to-frame latency.
* :mod:`.startup` — runs, phases, imports; Android launches; page-load marks.
* :mod:`.counters` — counter series with downsampled curves.
* :mod:`.blocking` — the main thread's binder calls, lock contention and D state, by startup and frame.
* :mod:`.cpu` — CPU time per process and thread (thread_state Running / runnable), per CPU frequency and idle.
* :mod:`.memory` — RSS, swap and heap per process over time, lmkd kills, ART GC.
* :mod:`.power` — energy per rail and category (ODPM rails), as Macrobenchmark's PowerMetric.
* :mod:`.web` — FCP, LCP, CLS, TBT of a DevTools trace's navigations, as Lighthouse observes them.

Findings are small rule functions over these results, in :mod:`nodes.perf.findings`.
:func:`compute` runs the families in the order their inputs need (slices and samples, then the
main thread, then everything that reads it) and the rules last.
"""

from __future__ import annotations

import os
from typing import Sequence

from nodes.perf import findings  # a module, not its names: findings imports metrics.common
from nodes.perf.gc_pause import cyclic_gc_paused
from nodes.perf.metrics import blocking, counters, cpu, frames, hotspots, memory, power, scope, scroll, slice_find, startup, threads, web
from nodes.perf.metrics.common import (
    LONG_TASK_MS,
    MAX_THREADS,
    TOP_HOTSPOTS,
    Context,
    shown_path,
)
from nodes.perf.model import DEFAULT_BUDGET_MS, AnalysisResult, PerfData
from nodes.perf.parsers.perfetto_heap import give_back

__all__ = ["compute", "shown_path", "Context", "MAX_THREADS", "LONG_TASK_MS", "DEFAULT_BUDGET_MS", "TOP_HOTSPOTS"]


def compute(pd: PerfData, top: int = TOP_HOTSPOTS, process: str | None = None, root: str | None = None,
            sections: Sequence[str] = ()) -> AnalysisResult:
    """The analysis of one reader's output; ``process`` (a name or pid) names the app the
    analysis is about, overriding the rules of :mod:`.scope`; ``root`` (the workspace) is what
    findings show file paths relative to; ``sections`` are slice names the power and CPU lenses
    measure as windows of their own (a name no slice has is named in the warnings).

    The cyclic garbage collector is paused while the metrics run, as in the readers
    (nodes/perf/gc_pause.py): the families build hundreds of thousands of small tuples, dicts
    and lists that live to the end (per-thread sums, top-level tasks, slice stats), and each
    full collection walked them and the whole PerfData again — about a quarter of the metrics'
    CPU on a 100 MB Perfetto trace, for no garbage."""
    with cyclic_gc_paused(), slice_find.indexed(pd):
        return _compute(pd, top, process, root, sections)


def _settled(ctx: Context) -> None:
    """Between families: the caches the last one kept for itself dropped (``Context.drop_caches``)
    and the heap's free pages handed back (``malloc_trim``, nodes/perf/parsers/perfetto_heap.py):
    what a family built and dropped stays resident among the live objects otherwise, and the
    next family's large columns (mmapped, past glibc's threshold) come on top of it — at 1 GB
    read whole each family's peak added to the last's. A few ms each at 1 GB."""
    ctx.drop_caches()
    give_back()


def _compute(pd: PerfData, top: int, process: str | None, root: str | None, sections: Sequence[str]) -> AnalysisResult:
    ctx = Context(pd, top)
    ctx.process = process
    ctx.root = root
    ctx.sections = tuple(dict.fromkeys(s for s in sections if s))
    res = ctx.res
    res.duration_ms = round(pd.duration_us / 1000.0, 3)
    res.stats = dict(pd.stats)
    res.meta = {k: str(v) for k, v in pd.shown_meta().items()}
    res.meta.setdefault("source", os.path.basename(pd.source))
    res.warnings = list(pd.warnings)
    if ctx.sections:
        _found, unknown = slice_find.named_sections(pd, ctx.sections)
        for name in unknown:
            res.warnings.append(f"section {name!r}: no slice of that name in the trace; no window measured for it")
    res.partial = bool(pd.partial)
    hotspots.walk_all(ctx)
    _settled(ctx)
    hotspots.samples(ctx)
    ctx.scope, scope_warnings = scope.identify(pd, process)
    res.warnings.extend(scope_warnings)
    _settled(ctx)
    threads.pick_main(ctx)
    res.hotspots = (hotspots.slice_hotspots(ctx) + hotspots.sample_hotspots(ctx)
                    + hotspots.call_hotspots(ctx) + hotspots.import_hotspots(ctx))
    res.slice_stats = hotspots.slice_stats(ctx)
    ctx.walk_groups = None  # slice_stats' alone
    _settled(ctx)
    res.app = hotspots.app_scope(ctx)
    res.threads = threads.thread_stats(ctx)
    _settled(ctx)
    res.long_tasks = threads.long_tasks(ctx)
    res.long_task_count = ctx.long_count
    res.frames = frames.frames(ctx)
    res.startup = startup.startup(ctx)
    _settled(ctx)
    res.page, res.pages = web.web(ctx)
    res.counters = counters.counters(ctx)
    res.stacks = hotspots.stacks(ctx)
    res.cpu = cpu.cpu(ctx)
    _settled(ctx)
    res.memory = memory.memory(ctx)
    _settled(ctx)
    res.blocking = blocking.blocking(ctx)
    _settled(ctx)
    res.scroll = scroll.scroll(ctx)
    res.power = power.power(ctx)
    res.findings = findings.ordered(findings.evaluate(ctx), findings.lead_family(res))
    return res
