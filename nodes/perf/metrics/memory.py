"""Memory per process: RSS (anon / file / shmem), swap and heap counters over the trace,
lmkd kills, and ART garbage collections.

* Per counter (``process_stats``, ``rss_stat``, the app's atrace heap counters as
  ``nodes/perf/parsers/perfetto_memory.py`` names them): start, peak (and when), end and
  growth. ``peak`` is Macrobenchmark's ``MemoryUsageMetric`` Mode.Max and ``end`` its Mode.Last
  (``benchmark/benchmark-macro/src/main/java/androidx/benchmark/macro/perfetto/
  MemoryUsageQuery.kt``: the max / last value of ``mem.rss.anon``, ``mem.rss.file``,
  ``mem.rss.shmem``, ``Heap size (KB)`` … of the target process); ``mem.*`` in MiB here where
  it says KB, atrace counters in their own unit.
* ``rss_max_mb``: the peak of ``mem.rss``; where only the parts were recorded (``rss_stat``),
  the peak of anon + file + shmem, each part holding its last value between events.
* Kills: ``android_lmk_events`` (``stdlib/android/memory/lmk.sql``): lmkd's ``lmk,<pid>,<reason>,
  <oom_score_adj>`` instants, else its legacy ``lmk,…`` slices, else ``kill_one_process``.
* GC: nodes/perf/metrics/gc.py — trace_processor's ``android_garbage_collection_events``
  (count, durations, type, thread states, reclaimed), ART's pauses and the main thread's waits.
"""

from __future__ import annotations

from collections import defaultdict
import numpy as np

from nodes.perf.metrics.gc import gc_events, open_gcs, summarize_gcs
from nodes.perf.metrics.slice_find import find_slices, name_ids
from nodes.perf.model import (MAX_MEMORY_SAMPLES, LmkKill, MemoryProcess, MemorySeries, MemoryStats, MissingData, PerfData,
                              PointSeries)
from nodes.perf.units import counted

MAX_PROCESSES = 20
#: Beyond the largest processes, the ones that grew the most are kept too: "is memory growing"
#: is about growth, and a small process can grow the most (ms_android12: partnersetup +23.5 MB).
MAX_GROWERS = 5
#: lmkd's kill_reason enum (lmkd/statslog.h), as android_lmk_events names it.
KILL_REASONS = ("PRESSURE_AFTER_KILL", "NOT_RESPONDING", "LOW_SWAP_AND_THRASHING", "LOW_MEM_AND_SWAP",
                "LOW_MEM_AND_THRASHING", "DIRECT_RECL_AND_THRASHING", "LOW_MEM_AND_SWAP_UTIL",
                "LOW_FILECACHE_AFTER_THRASHING", "LOW_MEM", "DIRECT_RECL_STUCK")
_PARTS = ("mem.rss.anon", "mem.rss.file", "mem.rss.shmem")
_ORDER = ("mem.rss", "mem.rss.anon", "mem.rss.file", "mem.rss.shmem", "mem.swap", "mem.rss.watermark")
CAPTURE = """data_sources { config { name: "linux.process_stats"
  process_stats_config { proc_stats_poll_ms: 100 } } }
data_sources { config { name: "linux.ftrace" ftrace_config { ftrace_events: "kmem/rss_stat"
  atrace_categories: "dalvik" atrace_apps: "*" } } }"""


def _kill_reason(raw: int | None) -> str | None:
    if raw is None:
        return None
    if 0 <= raw < len(KILL_REASONS):
        return KILL_REASONS[raw]
    return "VENDOR_REASON" if 1000 <= raw < 2000 else "UNKNOWN"


def lmk_kills(pd: PerfData) -> list[tuple[float, int, int | None, int | None]]:
    """(ts µs, pid, kill_reason, oom_score_adj) as ``android_lmk_events`` (stdlib
    ``android/memory/lmk.sql``) picks them: lmkd's ``lmk,<pid>,<reason>,<adj>`` instants, else its
    legacy ``lmk,…`` slices, else the old ``kill_one_process`` counter (value > 0)."""
    instants, slices = [], []

    def parse(name: str):
        parts = name.split(",")
        try:
            return int(parts[1]), (int(parts[2]) if len(parts) > 2 else None), (int(parts[3]) if len(parts) > 3 else None)
        except (IndexError, ValueError):
            return None

    for ts, _pid, _tid, name in pd.instants:
        if name.startswith("lmk,") and (got := parse(name)):
            instants.append((ts, *got))
    for _key, ts, dur, nid in find_slices(pd, name_ids(pd, lambda s: s.startswith("lmk,")), async_=True):
        if got := parse(pd.strings[nid]):
            (slices if dur > 0 else instants).append((ts, *got))
    chosen = instants or slices or [(ts, pid, None, None) for ts, pid in pd.lmk_kills if pid > 0]
    return sorted(chosen)


def _series(label: str, name: str, pts: list[tuple[float, float]], ctx) -> MemorySeries:
    vals = [v for _, v in pts]
    peak = max(vals)
    peak_ts = next(t for t, v in pts if v == peak)
    unit = "MB" if name.startswith("mem.") else "KB" if "(KB)" in name else ""
    step = max(1, -(-len(pts) // (MAX_MEMORY_SAMPLES - 2)))
    kept = sorted(set(pts[::step]) | {(peak_ts, peak), pts[-1]})
    return MemorySeries(
        name=name, label=label, unit=unit, start=round(vals[0], 3), peak=round(peak, 3), end=round(vals[-1], 3),
        growth=round(vals[-1] - vals[0], 3), peak_ms=ctx.rel(peak_ts), points=len(pts),
        samples=[(ctx.rel(t), round(v, 3)) for t, v in kept],
    )


def _parts_total(by_name: dict[str, list[tuple[float, float]]]) -> float | None:
    """The largest anon + file + shmem over time: at each sample of any part, the sum of each
    part's latest value (once all three have one), summed in the order the parts first appear,
    as :func:`_parts_total_loop` walks it; with numpy (a trace has thousands of processes)."""
    if not all(p in by_name for p in _PARTS):
        return None
    cols = [PointSeries.of(by_name[p]) for p in _PARTS]
    t = np.concatenate([c.ts for c in cols])
    v = np.concatenate([c.value for c in cols])
    if not (np.isfinite(t).all() and np.isfinite(v).all()):
        return _parts_total_loop(by_name)
    part = np.repeat(np.arange(len(_PARTS)), [len(c) for c in cols])
    order = np.lexsort((v, part, t))  # sorted((t, p, v)): _PARTS is in name order
    part, v = part[order], v[order]
    at = np.arange(len(v))
    latest = [np.maximum.accumulate(np.where(part == k, at, -1)) for k in range(len(_PARTS))]
    ready = np.flatnonzero(np.minimum.reduce(latest) >= 0)
    if not len(ready):
        return None
    first = sorted(range(len(_PARTS)), key=lambda k: int(np.argmax(part == k)))
    total = 0.0 + v[latest[first[0]][ready]]
    for k in first[1:]:
        total = total + v[latest[k][ready]]
    return float(total[int(np.argmax(total))])  # the first of equal maxima, as the loop keeps


def _parts_total_loop(by_name: dict[str, list[tuple[float, float]]]) -> float | None:
    events = sorted((t, p, v) for p in _PARTS for t, v in by_name[p])
    last: dict[str, float] = {}
    best = None
    for _t, p, v in events:
        last[p] = v
        if len(last) == len(_PARTS):
            total = sum(last.values())
            best = total if best is None or total > best else best
    return best


def memory(ctx) -> MemoryStats | None:
    pd: PerfData = ctx.pd
    unended = open_gcs(pd)
    gcs = gc_events(pd) + unended
    if unended:
        names = ", ".join(sorted({f"{pd.processes.get(p, p)}: {n}" for p, _t, _ts, _d, n in unended})[:3])
        ctx.res.warnings.append(f"{counted(len(unended), 'GC slice')} had no end ({names}): counted to the end of the "
                                "trace, as trace_processor does")
    if not pd.memory and not pd.lmk_kills and not gcs and not any(n.startswith("lmk,") for n in pd.strings):
        if pd.format != "perfetto":
            return None
        return MemoryStats(missing=[MissingData(
            what="memory per process", why="the trace has no process_stats, rss_stat or heap counters",
            capture=CAPTURE)])
    # name → the series' number in pd.memory (model.py SeriesMap), read only for the processes
    # shown: a 1 GB trace has ~500 k series
    by_pid: dict[int, dict[str, int]] = defaultdict(dict)
    lengths = {}
    for (pid, name), n, length in pd.memory.numbered():
        if length:
            by_pid[pid][name] = n
            lengths[n] = length
    at = pd.memory.at
    gc_by_pid = summarize_gcs(pd, gcs, ctx.rel)
    kills = lmk_kills(pd)
    killed = {k[1] for k in kills}
    rows: list[MemoryProcess] = []
    for pid in set(by_pid) | {p for p, g in gc_by_pid.items() if g.count} | killed:
        pname = pd.processes.get(pid) or f"pid {pid}"
        series_map = by_pid.get(pid, {})
        proc = MemoryProcess(pid=pid, name=pname, killed=pid in killed)
        if "mem.rss" in series_map:
            proc.rss_max_mb = round(max(at(series_map["mem.rss"]).value.tolist()), 3)
        else:
            total = _parts_total({p: at(series_map[p]) for p in _PARTS}) if all(
                p in series_map for p in _PARTS) else None
            proc.rss_max_mb = round(total, 3) if total is not None else None
        proc.gc = gc_by_pid.get(pid)
        rows.append(proc)
    app = ctx.scope.pid if ctx.scope is not None else None
    rows.sort(key=lambda r: (r.pid != app, -(r.rss_max_mb or 0.0), -(r.gc.total_ms if r.gc else 0.0), r.pid))

    def growth(r: MemoryProcess) -> float:
        s = by_pid.get(r.pid, {})
        n = s.get("mem.rss") if lengths.get(s.get("mem.rss"), 0) >= 2 else s.get("mem.rss.anon")
        if n is None or lengths[n] < 2:
            return float("-inf")
        pts = at(n)
        return pts[-1][1] - pts[0][1]

    growers = sorted((r for r in rows[MAX_PROCESSES:] if growth(r) > 0), key=lambda r: (-growth(r), r.pid))
    rows = rows[:MAX_PROCESSES] + growers[:MAX_GROWERS]
    for proc in rows:  # the series only for the processes kept (a trace can have thousands)
        series_map = by_pid.get(proc.pid, {})
        names = sorted(series_map, key=lambda n: (_ORDER.index(n) if n in _ORDER else len(_ORDER), n))
        proc.series = [_series(f"{proc.name} ({proc.pid}): {n}", n, at(series_map[n]), ctx) for n in names]
    out = MemoryStats(processes=rows, app_pid=app)
    out.lmk_kills = [LmkKill(ts_ms=ctx.rel(ts), pid=pid, process=pd.processes.get(pid), kill_reason=_kill_reason(reason),
                             oom_score_adj=adj) for ts, pid, reason, adj in kills]
    if not pd.memory:
        out.missing.append(MissingData(what="memory counters per process",
                                       why="the trace has no process_stats, rss_stat or heap counters", capture=CAPTURE))
    return out


def _main_series(p):
    """The series a process's growth is read from. Growth needs two readings: a lone
    process_stats scan of mem.rss says nothing about it, while rss_stat may have followed
    mem.rss.anon all along (api32_startup_warm: 1 vs 43 points)."""
    ordered = ([s for s in p.series if s.name == "mem.rss"] + [s for s in p.series if s.name == "mem.rss.anon"]
               + list(p.series))
    return next((s for s in ordered if s.points >= 2), None) or (ordered[0] if ordered else None)


def _growth_mb(p) -> float:
    s = _main_series(p)
    if s is None or s.points < 2:
        return float("-inf")  # growth unknown: after every process whose growth is known
    return s.growth / 1024.0 if s.unit == "KB" else s.growth


def summarize_memory(m: MemoryStats | None, top: int = 3) -> str:
    """One sentence with the numbers: peak and growth per process — the app first (``m.app_pid``),
    then the processes that grew the most: "is memory growing" is about growth, and the
    largest process is not the one that grew (ms_android12: systemui +0.6 MB, chrome +10 MB)."""
    if m is None or not m.processes:
        return "No memory data: the trace has no process_stats, rss_stat or heap counters."
    parts = []
    procs = sorted(m.processes, key=lambda p: (p.pid != m.app_pid, -_growth_mb(p), -(p.rss_max_mb or 0.0), p.pid))
    for p in procs[:top]:
        main = _main_series(p)
        bit = f"{p.name}"
        if p.rss_max_mb is not None:
            bit += f" RSS peak {p.rss_max_mb:.1f} MB"
        if main is not None and main.points >= 2:
            bit += f", {main.name} {main.start:.1f} → {main.end:.1f} {main.unit} ({main.growth:+.1f} {main.unit})"
        elif main is not None:
            bit += f", {main.name} {main.start:.1f} {main.unit} (one reading: growth unknown)"
        if p.gc and p.gc.count:
            bit += ", " + gc_words(p.gc)
        parts.append(bit)
    shown = {p.pid for p in procs[:top] if p.gc and p.gc.count}
    other = [p for p in m.processes if p.gc and (p.gc.count or p.gc.main_thread_waits) and p.pid not in shown]
    if other:  # GC elsewhere is named too, the heaviest in pause and wait first
        other.sort(key=lambda p: (-(p.gc.pause_ms + p.gc.main_thread_wait_ms), -p.gc.total_ms, p.pid))
        parts.append("GC: " + ", ".join(f"{p.name} {gc_words(p.gc)}" for p in other[:top]))
    kills = f"; {counted(len(m.lmk_kills), 'low-memory kill')}" if m.lmk_kills else ""
    return "; ".join(parts) + kills + "."


def gc_words(g) -> str:
    """"2 GC (31 ms, the longest 25 ms; its threads paused 0.62 ms; main thread waited 0.03 ms
    for GC, 2 time(s); 4.1 MB reclaimed)" — the numbers of one process's GcSummary."""
    inner = []
    if g.count:
        inner.append(f"{g.total_ms:,.1f} ms" + (f", the longest {g.max_ms:,.1f} ms" if g.count > 1 else ""))
        inner.append(f"its threads paused {g.pause_ms:,.2f} ms" + (f" (longest {g.pause_max_ms:,.2f} ms)" if g.count > 1 else ""))
    if g.main_thread_waits:
        inner.append(f"main thread waited {g.main_thread_wait_ms:,.2f} ms for GC, {counted(g.main_thread_waits, 'time')}")
    if g.reclaimed_mb is not None:
        inner.append(f"{g.reclaimed_mb:,.1f} MB reclaimed")
    return f"{g.count} GC ({'; '.join(inner)})"
