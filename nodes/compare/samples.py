"""The numbers of one analysis under their metric keys (:mod:`nodes.compare.keys`).

``extract(analysis)`` maps every key the analysis has a number for to its *samples*: one value
for most metrics (a trace has one jank ratio), one value per launch for start-up metrics (a
trace or a measurement of N launches has N start-ups: ``startup.runs[]``), so that a side of
one analysis with ten launches already has ten runs to compare. The value a budget checks is
the median of the samples (``startup.ttid_ms`` is "the median over the runs of the trace's
startups", as issue 18 asks).

Only what the data holds is returned: a trace without frames has no ``frames.*`` key, and a
launch without reportFullyDrawn no ``startup.ttfd_ms`` — missing, never estimated.
Where issue 16's keys (``main_thread``, ``page``, ``art``, per-run ``ttid_ms``) are absent, the
older fields are used when they mean the same thing: the main thread's row of ``threads[]``.
Issue 16 puts the main-thread states and ART counts of a launch inside each ``startup.runs[]``
entry (the launch's window); those are taken per launch, and the capture-wide row of
``threads[]`` fills only the fields they lack (``busy_ms``: the whole capture).
"""

from __future__ import annotations

import math
import re
from typing import Any, Mapping

from nodes.compare.keys import (
    ART_FIELDS, ART_PARTS, BLOCKING_FIELDS, CPU_FIELDS, FRAME_FIELDS, MAIN_THREAD_FIELDS, MEMORY_FIELD, PAGE_FIELDS,
    POWER_FIELDS, SCROLL_FIELDS, SERIES_FIELDS, STARTUP_FIELDS, STARTUP_KINDS, format_key,
)

Samples = dict[str, list[float]]


def _num(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    f = float(v)
    return f if math.isfinite(f) else None


def _put(out: Samples, segs: tuple[str, ...], v: Any) -> None:
    f = _num(v)
    if f is not None:
        out.setdefault(format_key(segs), []).append(f)


def _startup(out: Samples, st: Mapping[str, Any]) -> None:
    runs = [r for r in (st.get("runs") or []) if isinstance(r, Mapping)]
    for r in runs:
        kind = str(r.get("kind") or "").lower()
        for field in STARTUP_FIELDS:
            _put(out, ("startup", field), r.get(field))
            if kind in STARTUP_KINDS:
                _put(out, ("startup", kind, field), r.get(field))
        # issue 16: the main thread's states and ART counts over each launch's window
        mt = r.get("main_thread")
        if isinstance(mt, Mapping):
            for field in MAIN_THREAD_FIELDS:
                _put(out, ("main_thread", field), mt.get(field))
        _art(out, r.get("art"))


def _art(out: Samples, art: Any) -> None:
    if isinstance(art, Mapping):
        for part in ART_PARTS:
            p = art.get(part)
            if isinstance(p, Mapping):
                for field in ART_FIELDS:
                    _put(out, ("art", part, field), p.get(field))


def _main_thread(out: Samples, a: Mapping[str, Any]) -> None:
    """The main thread's states: over each launch (startup.runs[].main_thread) where the analysis
    has launches, else over the capture (a top-level main_thread, else the main row of threads[])."""
    mt = a.get("main_thread")
    if isinstance(mt, Mapping) and not any(k.startswith("main_thread.") for k in out):
        for field in MAIN_THREAD_FIELDS:
            _put(out, ("main_thread", field), mt.get(field))
    main = next((t for t in (a.get("threads") or []) if isinstance(t, Mapping) and t.get("is_main")), None)
    if main is None:
        return
    for field in MAIN_THREAD_FIELDS:
        key = format_key(("main_thread", field))
        if key not in out:
            _put(out, ("main_thread", field), main.get(field))


#: A trailing frame or vsync number (``Choreographer#doFrame 123``, ``DrawFrame 45``) names one
#: occurrence, not a different function: the runs of two builds never share those numbers.
_TRAILING_ID = re.compile(r"\s+\d+$")


def hotspot_name(name: str) -> str:
    """The name a hot spot is matched (and budgeted) by: without a trailing occurrence number."""
    return _TRAILING_ID.sub("", name) or name


def _hotspots(out: Samples, a: Mapping[str, Any]) -> None:
    """Overall hot spots (not per thread), by name; rows of one name (several files, several
    numbered occurrences) add up."""
    acc: dict[str, dict[str, float]] = {}
    for h in a.get("hotspots") or []:
        if not isinstance(h, Mapping) or h.get("thread") is not None or h.get("process") is not None or not h.get("name"):
            continue
        d = acc.setdefault(hotspot_name(str(h["name"])), {})
        for field in ("self_ms", "self_pct", "total_ms", "total_pct", "count"):
            v = _num(h.get(field))  # each row is one function already aggregated over the run
            if v is not None:
                d[field] = d.get(field, 0.0) + v
    for name, d in acc.items():
        for field, v in d.items():
            _put(out, ("hotspots", name, field), v)


def _memory(out: Samples, a: Mapping[str, Any]) -> None:
    for k, v in (a.get("stats") or {}).items():
        if MEMORY_FIELD.match(str(k)) and k != "rss_max_mb":
            _put(out, ("memory", str(k)), v)
    for c in a.get("counters") or []:
        if isinstance(c, Mapping) and c.get("name") == "rss_bytes" and _num(c.get("max")) is not None:
            _put(out, ("memory", "rss_max_mb"), float(c["max"]) / 1e6)


def process_names(rows: list[Mapping[str, Any]]) -> list[str]:
    """A process row's key name: its name, with ``(pid)`` where two rows share a name."""
    names = [str(r.get("name") or f"pid {r.get('pid')}") for r in rows]
    seen: dict[str, int] = {}
    for n in names:
        seen[n] = seen.get(n, 0) + 1
    return [f"{n} ({r.get('pid')})" if seen[n] > 1 else n for n, r in zip(names, rows)]


#: Per-process lens keys are kept for the app and this many other processes (the busiest).
LENS_PROCESSES = 5
#: The app's memory series that get keys: Macrobenchmark MemoryUsageMetric's, and RSS / swap.
KEYED_SERIES = ("mem.rss", "mem.rss.anon", "mem.rss.file", "mem.rss.shmem", "mem.swap", "Heap size (KB)")


def _lens_rows(rows: Any, app: Any) -> list[tuple[str, Mapping[str, Any]]]:
    """(key name, row) of the app's row and the first LENS_PROCESSES others (rows come ranked)."""
    rows = [r for r in rows or [] if isinstance(r, Mapping)]
    named = list(zip(process_names(rows), rows))
    mine = [x for x in named if app is not None and x[1].get("pid") == app]
    return mine + [x for x in named if x not in mine][:LENS_PROCESSES]


def _gc(out: Samples, name: str, gc: Any) -> None:
    """memory."<process>".gc_count / gc_ms / gc_pause_ms / gc_wait_ms of one process's GcSummary."""
    if isinstance(gc, Mapping):
        for key, field in (("gc_count", "count"), ("gc_ms", "total_ms"), ("gc_pause_ms", "pause_ms"),
                           ("gc_wait_ms", "main_thread_wait_ms")):
            _put(out, ("memory", name, key), gc.get(field))


def _lenses(out: Samples, a: Mapping[str, Any]) -> None:
    """The lens fields (issue 24): cpu and memory per process (the app and the busiest others),
    power per window, the app main thread's blocking; the app's memory series one by one."""
    app = (a.get("app") or {}).get("pid") if isinstance(a.get("app"), Mapping) else None
    cpu = a.get("cpu")
    if isinstance(cpu, Mapping):
        for name, r in _lens_rows(cpu.get("processes"), app):
            for field in CPU_FIELDS:
                _put(out, ("cpu", name, field), r.get(field))
    power = a.get("power")
    if isinstance(power, Mapping):
        # each measureBlock of a trace is one sample of the same window (one per iteration)
        for w in power.get("windows") or []:
            if not isinstance(w, Mapping) or not w.get("name"):
                continue
            name = str(w["name"])
            for field in POWER_FIELDS:
                _put(out, ("power", name, field), w.get(field))
            for cat, v in (w.get("categories") or {}).items():
                _put(out, ("power", name, "categories", str(cat)), v)
    mem = a.get("memory")
    if isinstance(mem, Mapping):
        listed = _lens_rows(mem.get("processes"), app)
        for name, r in listed:
            _put(out, ("memory", name, "rss_max_mb"), r.get("rss_max_mb"))
            _gc(out, name, r.get("gc"))
            for sr in (r.get("series") or []) if r.get("pid") == app else []:
                if isinstance(sr, Mapping) and sr.get("name") in KEYED_SERIES:
                    for field in SERIES_FIELDS:
                        _put(out, ("memory", name, str(sr["name"]), field), sr.get(field))
        # the GCs of the other processes that had one too (at most the metric's MAX_PROCESSES
        # rows): the GC-heavy process is often not one of the largest by RSS
        rows = [r for r in mem.get("processes") or [] if isinstance(r, Mapping)]
        shown = {id(r) for _n, r in listed}
        for name, r in zip(process_names(rows), rows):
            if id(r) not in shown:
                _gc(out, name, r.get("gc"))
    blocking = a.get("blocking")
    if isinstance(blocking, Mapping):
        for field in BLOCKING_FIELDS:
            _put(out, ("blocking", field), blocking.get(field))
    sc = a.get("scroll")
    if isinstance(sc, Mapping) and sc.get("update_count"):
        for field in SCROLL_FIELDS:
            _put(out, ("scroll", field), sc.get(field))


def extract(a: Mapping[str, Any]) -> Samples:
    """Every metric of one analysis (AnalysisResult JSON) → its samples."""
    out: Samples = {}
    _put(out, ("duration_ms",), a.get("duration_ms"))
    st = a.get("startup")
    if isinstance(st, Mapping):
        _startup(out, st)
    fr = a.get("frames")
    if isinstance(fr, Mapping) and (fr.get("count") or 0) > 0:
        for field in FRAME_FIELDS:
            _put(out, ("frames", field), fr.get(field))
        jt = fr.get("jank_types")
        if isinstance(jt, Mapping):  # FrameTimeline's own verdicts, each component counted (issue 16)
            for name, count in jt.items():
                if str(name) != "None":
                    _put(out, ("frames", "jank_types", str(name)), count)
    _main_thread(out, a)
    page = a.get("page")
    if not isinstance(page, Mapping):
        pages = a.get("pages") or []
        page = pages[0] if pages and isinstance(pages[0], Mapping) else None
    if isinstance(page, Mapping):
        for field in PAGE_FIELDS:
            _put(out, ("page", field), page.get(field))
    if not any(k.startswith("art.") for k in out):
        _art(out, a.get("art"))
    _memory(out, a)
    _lenses(out, a)
    _hotspots(out, a)
    for k, v in (a.get("stats") or {}).items():
        _put(out, ("stats", str(k)), v)
    return out


def hotspot_places(a: Mapping[str, Any]) -> dict[str, str]:
    """Hot-spot name → "file:line" of its first overall row (the comparison shows where it is)."""
    out: dict[str, str] = {}
    for h in a.get("hotspots") or []:
        if isinstance(h, Mapping) and h.get("thread") is None and h.get("process") is None and h.get("name") and h.get("file"):
            out.setdefault(hotspot_name(str(h["name"])), f"{h['file']}:{h['line']}" if h.get("line") else str(h["file"]))
    return out


def families(s: Samples) -> set[str]:
    """Which metric families a set of samples covers (what kind of capture it is)."""
    from nodes.compare.keys import parse_key

    return {parse_key(k)[0] for k in s}
