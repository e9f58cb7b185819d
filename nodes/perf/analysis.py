"""Entry points of the analyzer: one file, or the several files of one collection.

``analyze_file(path)`` reads a file with the reader its content calls for
(:mod:`nodes.perf.formats`) and computes its metrics (:mod:`nodes.perf.metrics`).
``analyze_paths(paths)`` does that for each file of a collection — e.g. a py-spy speedscope
profile, a psutil series, an ``-X importtime`` log and a startup-runs file — and merges the
results into one :class:`AnalysisResult`: hot spots, threads, counters, stats and findings of
every file; the frames of the file that has the most; startup runs, phases and imports
combined. A file that cannot be read becomes a warning when others can; when none can, the
first file's PerfDataError is raised.

The files of one collection describe the same run, so the same thread seen by two tools is one
thread: rows with the same real (pid, tid) are merged into one ThreadStat (busy time from the
profile or trace, CPU time from psutil), and exactly one of them stays the main thread. Each
section's files are named in ``meta["source: <section>"]``; a finding keeps the file that
produced it in ``evidence.source``.
"""

from __future__ import annotations

import os
import re
import sys
from typing import Sequence

from nodes.perf.errors import PerfDataError
from nodes.perf.formats import load
from nodes.perf.limits import ReadLimits, applied
from nodes.perf.metrics import MAX_THREADS, compute
from nodes.perf.model import MAX_RESULT_STACKS, AnalysisResult, Evidence, Finding, StartupStats, ThreadStat

from nodes.perf.units import SEVERITY_ORDER as _SEVERITY_ORDER


def module_search_path(root: str | None) -> list[str]:
    """Where an ``-X importtime`` log's modules are looked up when the caller does not know the
    profiled interpreter's own path: the workspace, then the module path of the interpreter
    running PerfScout (the one its collector runs Python programs with, unless told otherwise).
    Callers pass it in explicitly (parsers/importtime.py reads no global state)."""
    return ([os.path.abspath(root)] if root else []) + [p for p in sys.path if p]


def analyze_file(path: str, process: str | None = None, root: str | None = None,
                 search_path: Sequence[str] | None = None, limits: ReadLimits | None = None,
                 sections: Sequence[str] = ()) -> AnalysisResult:
    """Read one file and compute its analysis. Raises PerfDataError on bad input.
    ``process`` (a name or pid) names the app the analysis is about (metrics/scope.py);
    ``root`` (the workspace) is what findings show paths relative to; ``search_path`` is where
    an importtime log's modules are looked up (:func:`module_search_path`); ``limits`` bound
    the read (``Settings.read_limits()``; None: the ones in force); ``sections`` are slice
    names the power and CPU lenses measure as windows of their own."""
    with applied(limits):
        return compute(load(os.fspath(path), search_path=search_path), process=process, root=root, sections=sections)


def analyze_paths(paths: Sequence[str], process: str | None = None, root: str | None = None,
                  search_path: Sequence[str] | None = None, limits: ReadLimits | None = None,
                  sections: Sequence[str] = ()) -> AnalysisResult:
    """Analyse the files of one collection and merge them into one result; ``process``,
    ``root``, ``search_path``, ``limits`` and ``sections`` as for :func:`analyze_file`."""
    with applied(limits):
        return _analyze_paths(paths, process, root, search_path, sections)


def _analyze_paths(paths: Sequence[str], process: str | None, root: str | None,
                   search_path: Sequence[str] | None, sections: Sequence[str] = ()) -> AnalysisResult:
    paths = [os.fspath(p) for p in paths if p]
    if not paths:
        raise PerfDataError(None, "no data files given")
    results: list[AnalysisResult] = []
    errors: list[PerfDataError] = []
    for p in dict.fromkeys(paths):  # keep order, drop duplicates
        try:
            results.append(analyze_file(p, process=process, root=root, search_path=search_path, sections=sections))
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
                                       detail=str(e), evidence=Evidence(source=e.path)))
        merged.partial = True
    return merged


def merge(results: Sequence[AnalysisResult]) -> AnalysisResult:
    """One result from several (one collection): see the module docstring."""
    out = AnalysisResult(
        format="+".join(dict.fromkeys(r.format for r in results)),
        source=", ".join(r.source for r in results),
        duration_ms=max(r.duration_ms for r in results),
    )
    overall, per_thread = [], []
    for r in results:
        tag = os.path.basename(r.source)
        for h in r.hotspots:
            (overall if h.overall else per_thread).append(h)
        out.long_tasks.extend(r.long_tasks)
        out.counters.extend(r.counters)
        out.stacks.extend(r.stacks)
        for k, v in r.stats.items():
            out.stats[k if k not in out.stats else f"{k} ({tag})"] = v
        for k, v in r.meta.items():
            if k == "source" or out.meta.get(k) == v:
                continue  # the file is named per section below; a fact two files agree on once
            out.meta[k if k not in out.meta else f"{k} ({tag})"] = v
        for f in r.findings:
            if f.evidence.source is None:
                f = f.model_copy(update={"evidence": f.evidence.model_copy(update={"source": r.source})})
            out.findings.append(f)
        out.warnings.extend(f"{tag}: {w}" for w in r.warnings)
        out.partial = out.partial or r.partial
    # overall hot spots of every file ranked together, as each file ranks its own: self time,
    # then total (callers without self time after everything that has some); per thread after
    overall.sort(key=lambda h: (-h.self_ms, -h.total_ms))
    out.hotspots = overall + per_thread
    out.threads = merge_threads(results)
    # the app scope and slice statistics of the files that have them (traces of one run)
    out.app = next((r.app for r in results if r.app is not None), None)
    out.slice_stats = [s for r in results for s in r.slice_stats]
    framed = [r for r in results if r.frames is not None]
    if framed:
        best = max(framed, key=lambda r: r.frames.count)  # type: ignore[union-attr]
        out.frames = best.frames
    out.startup = _merge_startup([r.startup for r in results if r.startup is not None])
    # the lens fields of the file that has each (a collection's trace): not added up across files
    for lens in ("cpu", "power", "memory", "blocking"):
        setattr(out, lens, next((getattr(r, lens) for r in results if getattr(r, lens) is not None), None))
    out.findings.sort(key=lambda f: _SEVERITY_ORDER.get(f.severity, 9))
    out.stacks.sort(key=lambda s: -s.weight_ms)
    out.stacks = out.stacks[:MAX_RESULT_STACKS]
    for section, has in (
        ("hot spots", lambda r: r.hotspots), ("threads", lambda r: r.threads),
        ("long tasks", lambda r: r.long_tasks), ("counters", lambda r: r.counters),
        ("stats", lambda r: r.stats), ("startup", lambda r: r.startup),
        ("stacks", lambda r: r.stacks),
    ):
        names = [os.path.basename(r.source) for r in results if has(r)]
        if names:
            out.meta[f"source: {section}"] = ", ".join(dict.fromkeys(names))
    if framed:
        out.meta["source: frames"] = os.path.basename(best.source)
    return out


_GENERIC_NAME = re.compile(r"^(?:tid \d+|main thread)$")


def merge_threads(results: Sequence[AnalysisResult]) -> list[ThreadStat]:
    """The threads of several files of one run, one row per thread.

    Rows with the same (pid, tid) — both real ids, > 0 — are one thread seen by several tools
    (py-spy's sampled busy time, psutil's CPU time, a trace's slices): their facts are combined.
    Busy time comes from the rows that measured it (slices, samples) before rows that only know
    CPU time; scheduler times take the largest of what the files say (the same time measured
    twice is not added up); slice counts add up (different files hold different slices). The
    main thread is the one the most files call main (then the busiest): exactly one.
    """
    groups: dict[object, list[tuple[ThreadStat, bool]]] = {}
    for i, r in enumerate(results):
        for t in r.threads:
            key: object = (t.pid, t.tid) if t.pid > 0 and t.tid > 0 else (i, t.pid, t.tid)
            groups.setdefault(key, []).append((t, t.is_main))
    rows: list[tuple[ThreadStat, int]] = []
    for parts in groups.values():
        ts = [t for t, _ in parts]
        if len(ts) == 1:
            row = ts[0].model_copy()
        else:
            timed = [t for t in ts if t.slice_count or t.running_ms is None or t.busy_ms != t.running_ms]
            names = [t.name for t in ts if t.name and not _GENERIC_NAME.match(t.name)] or [t.name for t in ts]

            def most(field: str) -> float | None:
                vals = [getattr(t, field) for t in ts if getattr(t, field) is not None]
                return max(vals) if vals else None

            row = ThreadStat(
                pid=ts[0].pid, tid=ts[0].tid, name=names[0],
                process=next((t.process for t in ts if t.process), None),
                busy_ms=max(t.busy_ms for t in (timed or ts)),
                slice_count=sum(t.slice_count for t in ts),
                running_ms=most("running_ms"), runnable_ms=most("runnable_ms"), sleeping_ms=most("sleeping_ms"),
            )
        row.is_main = False
        rows.append((row, sum(1 for _, m in parts if m)))
    votes = [(n, r.busy_ms, idx) for idx, (r, n) in enumerate(rows) if n]
    if votes:
        rows[max(votes, key=lambda v: (v[0], v[1], -v[2]))[2]][0].is_main = True
    out = [r for r, _ in rows]
    out.sort(key=lambda r: (not r.is_main, -r.busy_ms, -(r.running_ms or 0.0)))
    return out[:MAX_THREADS]


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
    st.fill_statistics()
    return st
