"""Entry points of the analyzer: one file, or the several files of one collection.

``analyze_file(path)`` reads a file with the reader its content calls for
(:mod:`nodes.perf.formats`) and computes its metrics (:mod:`nodes.perf.metrics`).
``analyze_paths(paths)`` does that for each file of a collection — e.g. a py-spy speedscope
profile, a psutil series, an ``-X importtime`` log and a startup-runs file — and merges the
results into one :class:`AnalysisResult`: hot spots, threads, counters, stats and findings of
every file; the frames of the file that has the most; startup runs, phases and imports
combined. A file that cannot be read becomes a warning when others can; when none can, the
first file's PerfDataError is raised.
"""

from __future__ import annotations

import os
from statistics import median
from typing import Sequence

from nodes.perf.errors import PerfDataError
from nodes.perf.formats import load
from nodes.perf.metrics import compute
from nodes.perf.model import AnalysisResult, Finding, StartupStats

_SEVERITY_ORDER = {"high": 0, "medium": 1, "low": 2, "info": 3}


def analyze_file(path: str) -> AnalysisResult:
    """Read one file and compute its analysis. Raises PerfDataError on bad input."""
    return compute(load(os.fspath(path)))


def analyze_paths(paths: Sequence[str]) -> AnalysisResult:
    """Analyse the files of one collection and merge them into one result."""
    paths = [os.fspath(p) for p in paths if p]
    if not paths:
        raise PerfDataError(None, "no data files given")
    results: list[AnalysisResult] = []
    errors: list[PerfDataError] = []
    for p in dict.fromkeys(paths):  # keep order, drop duplicates
        try:
            results.append(analyze_file(p))
        except PerfDataError as e:
            errors.append(e)
    if not results:
        raise errors[0]
    if len(results) == 1 and not errors:
        return results[0]
    merged = merge(results)
    for e in errors:
        merged.warnings.append(f"skipped {e}")
        merged.findings.append(Finding(title="A data file could not be read", severity="info",
                                       detail=str(e)))
        merged.partial = True
    return merged


def merge(results: Sequence[AnalysisResult]) -> AnalysisResult:
    """One result from several (one collection): see the module docstring."""
    first = results[0]
    out = AnalysisResult(
        format="+".join(dict.fromkeys(r.format for r in results)),
        source=", ".join(r.source for r in results),
        duration_ms=max(r.duration_ms for r in results),
    )
    for r in results:
        tag = os.path.basename(r.source)
        out.hotspots.extend(r.hotspots)
        out.threads.extend(r.threads)
        out.long_tasks.extend(r.long_tasks)
        out.counters.extend(r.counters)
        out.stacks.extend(r.stacks)
        for k, v in r.stats.items():
            out.stats[k if k not in out.stats else f"{k} ({tag})"] = v
        for k, v in r.meta.items():
            out.meta[k if k not in out.meta else f"{k} ({tag})"] = v
        out.findings.extend(r.findings)
        out.warnings.extend(f"{tag}: {w}" for w in r.warnings)
        out.partial = out.partial or r.partial
    framed = [r for r in results if r.frames is not None]
    if framed:
        out.frames = max(framed, key=lambda r: r.frames.count).frames  # type: ignore[union-attr]
    out.startup = _merge_startup([r.startup for r in results if r.startup is not None])
    out.findings.sort(key=lambda f: _SEVERITY_ORDER.get(f.severity, 9))
    out.stacks.sort(key=lambda s: -s.weight_ms)
    out.stacks = out.stacks[:500]
    del first
    return out


def _merge_startup(parts: list[StartupStats]) -> StartupStats | None:
    if not parts:
        return None
    if len(parts) == 1:
        return parts[0]
    runs = [r for p in parts for r in p.runs]
    st = StartupStats(
        runs=runs,
        phases=[ph for p in parts for ph in p.phases],
        imports=[i for p in parts for i in p.imports],
        kind=next((p.kind for p in parts if p.runs and p.kind != "unknown"), next((p.kind for p in parts if p.kind != "unknown"), "unknown")),
    )
    if runs:
        totals = [r.total_ms for r in runs]
        st.median_ms = round(median(totals), 3)
        st.min_ms = round(min(totals), 3)
        st.max_ms = round(max(totals), 3)
        st.spread_ms = round(st.max_ms - st.min_ms, 3)
        st.first_ms = round(sorted(runs, key=lambda r: r.index)[0].total_ms, 3)
    return st
