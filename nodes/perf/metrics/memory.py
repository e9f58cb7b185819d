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

from nodes.perf.compiled_parts import compiled
from nodes.perf.metrics.gc import gc_events, open_gcs, summarize_gcs
from nodes.perf.metrics.slice_find import find_slices, name_ids
from nodes.perf.model import (MAX_MEMORY_SAMPLES, LmkKill, MemoryProcess, MemorySeries, MemoryStats, MissingData, PerfData,
                              SeriesMap)
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
#: The C part (nodes/perf/metrics/_metricsc.c: parts_totals), or None: the numpy passes.
NATIVE = compiled("nodes.perf.metrics._metricsc")
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
    as :func:`_parts_total_loop` walks it (:func:`_parts_totals` of one process)."""
    if not all(p in by_name for p in _PARTS):
        return None
    series = SeriesMap()
    series.add_points((p, by_name[p]) for p in _PARTS)
    return _parts_totals(series, [(0, 1, 2)])[0]


def _parts_totals(series: SeriesMap, triples: list[tuple[int, int, int]]) -> list[float | None]:
    """:func:`_parts_total` of many processes at once, each given by the numbers in ``series``
    of its anon, file and shmem series (each non-empty): all processes' points in one sort by
    (process, time, part, value), each part's latest value by a running maximum of positions
    that restarts with each process, each process's parts added in the order they first appear
    in it, and the first of equal maxima per process, as the walk keeps — a 1 GB trace has
    thousands of such processes, each a dozen numpy calls of its own before. A process with a
    time or value that is not finite takes :func:`_parts_total_loop`."""
    out: list[float | None] = [None] * len(triples)
    if not triples:
        return out
    nums = np.array(triples, dtype=np.int64).reshape(-1)  # process g, part k: row 3g + k
    if NATIVE is not None:  # each process's rows merged and walked in C (nodes/perf/metrics/_metricsc.c)
        best, kind = np.zeros(len(triples)), np.zeros(len(triples), dtype=np.int8)
        NATIVE.parts_totals(np.ascontiguousarray(series.ts, np.float64), np.ascontiguousarray(series.value, np.float64),
                            np.ascontiguousarray(series.lo, np.int64), np.ascontiguousarray(series.hi, np.int64),
                            nums, best, kind)
        for gi in np.flatnonzero(kind == 1).tolist():
            out[gi] = best[gi].item()
        for gi in np.flatnonzero(kind == 2).tolist():
            out[gi] = _parts_total_loop({p: series.at(int(nums[3 * gi + k])) for k, p in enumerate(_PARTS)})
        return out
    rows, lens = _rows(series, nums)
    seg = np.repeat(np.arange(len(nums), dtype=np.int64), lens)
    t, v = series.ts[rows], series.value[rows]
    group, part = seg // 3, seg % 3
    bad = ~(np.isfinite(t) & np.isfinite(v))
    loop = np.zeros(len(triples), dtype=bool)
    if bad.any():
        loop[group[bad]] = True
        keep = ~loop[group]
        t, v, group, part = t[keep], v[keep], group[keep], part[keep]
    # sorted((t, p, v)) per process (_PARTS is in name order): the rows come process by process,
    # part after part, so a stable sort by (process, time) puts equal times in part order; the
    # value decides only between equal times of one part, and then only when they come down
    order = np.lexsort((t, group))  # ~10x faster than the four keys
    a, b = order[:-1], order[1:]
    if np.any((group[a] == group[b]) & (t[a] == t[b]) & (part[a] == part[b]) & (v[b] < v[a])):
        order = np.lexsort((v, part, t, group))
    group, part, v = group[order], part[order], v[order]
    n = len(v)
    at = np.arange(n, dtype=np.int64)
    heads = np.flatnonzero(np.r_[True, group[1:] != group[:-1]]) if n else at
    begin = np.repeat(heads, np.diff(np.r_[heads, n]))  # each row's process's first row
    # a part's latest row so far; one before ``begin`` is another process's: none yet
    latest = [np.maximum.accumulate(np.where(part == k, at, -1)) if n else at for k in range(len(_PARTS))]
    ready = np.flatnonzero(np.minimum.reduce([x >= begin for x in latest])) if n else at
    if len(ready):
        # each process's parts in the order they first appear among its rows
        first = np.full(len(triples) * 3, n, dtype=np.int64)
        np.minimum.at(first, group * 3 + part, at)
        rank = np.argsort(first.reshape(-1, 3), axis=1, kind="stable")
        g = group[ready]
        vals = np.stack([v[x[ready]] for x in latest], axis=1)
        r = np.arange(len(ready))
        total = 0.0 + vals[r, rank[g, 0]]
        total = total + vals[r, rank[g, 1]]
        total = total + vals[r, rank[g, 2]]
        # the largest per process: finite values sum to no NaN, so any of equal maxima is the first
        starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
        for gi, best in zip(g[starts].tolist(), np.maximum.reduceat(total, starts).tolist()):
            out[gi] = best
    for gi in np.flatnonzero(loop).tolist():
        out[gi] = _parts_total_loop({p: series.at(int(nums[3 * gi + k])) for k, p in enumerate(_PARTS)})
    return out


def _rows(series: SeriesMap, nums: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rows of ``series``' columns that series ``nums`` hold, one series after another, and
    each one's length."""
    lo = series.lo[nums]
    lens = series.hi[nums] - lo
    return np.arange(int(lens.sum()), dtype=np.int64) + np.repeat(lo - (np.cumsum(lens) - lens), lens), lens


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


def _rss_max(series: SeriesMap, maps: list[dict[str, int]]) -> list[float | None]:
    """Per process (its series numbers by name): the largest ``mem.rss``, else the largest
    anon + file + shmem (:func:`_parts_totals`), else None (:func:`_rss_max_of`)."""
    return _rss_max_of(series, _numbers(maps, "mem.rss"), np.stack([_numbers(maps, p) for p in _PARTS], axis=1))


def _numbers(maps: list[dict[str, int]], name: str) -> np.ndarray:
    """Each process's series number of ``name``, -1 where it has none."""
    return np.fromiter((m.get(name, -1) for m in maps), dtype=np.int64, count=len(maps))


def _rss_max_of(series: SeriesMap, rss: np.ndarray, parts: np.ndarray) -> list[float | None]:
    """:func:`_rss_max` of processes given by series numbers (-1: none): ``rss[i]`` process i's
    ``mem.rss``, ``parts[i]`` its anon, file and shmem — ``max`` of the series' values in one
    ``maximum.reduceat`` for all; a series whose largest value is NaN or 0 (``max`` keeps the
    first of ``0.0`` and ``-0.0``, and passes NaN by order) takes ``max`` itself."""
    out: list[float | None] = [None] * len(rss)
    whole = np.flatnonzero(rss >= 0)
    if len(whole):
        nums = rss[whole]
        rows, lens = _rows(series, nums)
        peaks = np.maximum.reduceat(series.value[rows], np.cumsum(lens) - lens)
        for i, n, peak in zip(whole.tolist(), nums.tolist(), peaks.tolist()):
            out[i] = peak if peak == peak and peak != 0.0 else max(series.at(n).value.tolist())
    split = np.flatnonzero((rss < 0) & (parts >= 0).all(axis=1))
    for i, total in zip(split.tolist(), _parts_totals(series, list(map(tuple, parts[split].tolist())))):
        out[i] = total
    return out


def _growth(series: SeriesMap, maps: list[dict[str, int]]) -> list[float]:
    """Per process: the last minus the first value of ``mem.rss`` when it has two or more
    points, else of ``mem.rss.anon``; ``-inf`` when neither has two (:func:`_growth_of`)."""
    return _growth_of(series, _numbers(maps, "mem.rss"), _numbers(maps, "mem.rss.anon"))


def _growth_of(series: SeriesMap, rss: np.ndarray, anon: np.ndarray) -> list[float]:
    """:func:`_growth` of processes given by the series numbers of their ``mem.rss`` and
    ``mem.rss.anon`` (-1: none)."""
    out = [float("-inf")] * len(rss)
    lens = series.hi - series.lo
    n = np.where((rss >= 0) & (lens[np.maximum(rss, 0)] >= 2), rss, anon) if len(lens) else rss
    which = np.flatnonzero(n >= 0)
    which = which[lens[n[which]] >= 2]
    if len(which):
        nums = n[which]
        with np.errstate(invalid="ignore"):  # inf - inf: NaN, as the float subtraction gives it
            grew = series.value[series.hi[nums] - 1] - series.value[series.lo[nums]]
        for i, g in zip(which.tolist(), grew.tolist()):
            out[i] = g
    return out


class _ByProcess:
    """The series of ``PerfData.memory`` with points, by process: the pids in the order of their
    first such series, and per process the number of a named series — from the map's key columns
    (``SeriesMap.key_columns``: a pid and a name code a series) for every process at once, or from
    one dict of names a process when the keys are a dict. At 1 GB read whole (~570 k series,
    ~100 k processes) the dicts of every process, and the key tuples and lists made to fill them,
    were ~75 MB at the memory lens's peak."""

    def __init__(self, memory: SeriesMap):
        self._memory = memory
        cols = memory.key_columns()
        self._maps: dict | None = None
        if cols is None:
            by_pid: dict = defaultdict(dict)
            for (pid, name), n, length in memory.numbered():
                if length:
                    by_pid[pid][name] = n
            self._maps = by_pid
            self.pids = list(by_pid)
            return
        pid, code, self._names = cols
        self._n = np.flatnonzero(memory.hi > memory.lo)  # the series with points, in order
        self._pid, self._code = pid[self._n], code[self._n]
        _u, first = np.unique(self._pid, return_index=True)
        self.pids = self._pid[np.sort(first)].tolist()

    def numbers(self, pids: list, name: str) -> np.ndarray:
        """The series number of ``name`` of each of ``pids`` (-1: none)."""
        if self._maps is not None:
            return np.fromiter((self._maps.get(p, {}).get(name, -1) for p in pids), dtype=np.int64, count=len(pids))
        out = np.full(len(pids), -1, dtype=np.int64)
        if name not in self._names or not pids:
            return out
        rows = np.flatnonzero(self._code == self._names.index(name))
        # the pids as int64 (a killed pid read from a slice name may not fit: it has no series)
        fit = [i for i, p in enumerate(pids) if -(1 << 63) <= p < 1 << 63]
        want = np.array([pids[i] for i in fit], dtype=np.int64)
        order = np.argsort(want, kind="stable")
        at = np.searchsorted(want[order], self._pid[rows])
        found = at < len(want)
        found[found] = want[order[at[found]]] == self._pid[rows[found]]
        # a (pid, name) has one series (the keys differ), a pid one place in ``pids``
        out[np.array(fit, dtype=np.int64)[order[at[found]]]] = self._n[rows[found]]
        return out

    def of(self, pid) -> dict[str, int]:
        """Name → series number of one process's series with points."""
        if self._maps is not None:
            return self._maps.get(pid, {})
        rows = np.flatnonzero(self._pid == pid)
        return dict(zip([self._names[c] for c in self._code[rows].tolist()], self._n[rows].tolist()))


def _ranked(pids: list[int], rss: list[float | None], gc_ms: list[float], app: int | None) -> list[int]:
    """The positions of ``pids`` by (not the app, largest RSS, longest GC, pid): one
    ``lexsort`` (a 1 GB trace has ~100 k processes; the sort of key tuples took ~0.3 s), the
    sort of the key tuples itself when a key is NaN (the order then depends on the comparisons)
    or a pid is beyond int64. The pids differ, so either sort has one answer."""
    rss_key = [-(r or 0.0) for r in rss]
    gc_key = [-g for g in gc_ms]
    try:
        pid = np.array(pids, dtype=np.int64)
    except OverflowError:
        pid = None
    by_rss, by_gc = np.array(rss_key, dtype=np.float64), np.array(gc_key, dtype=np.float64)
    if pid is None or np.isnan(by_rss).any() or np.isnan(by_gc).any():
        keys = list(zip([p != app for p in pids], rss_key, gc_key, pids))
        return sorted(range(len(pids)), key=keys.__getitem__)
    not_app = np.fromiter((p != app for p in pids), dtype=bool, count=len(pids))
    return np.lexsort((pid, by_gc, by_rss, not_app)).tolist()


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
    # the series' numbers in pd.memory (model.py SeriesMap) by process and name, named series
    # read for all processes, every series only for the processes shown: a 1 GB trace has ~570 k
    by_pid = _ByProcess(pd.memory)
    at = pd.memory.at
    gc_by_pid = summarize_gcs(pd, gcs, ctx.rel)
    kills = lmk_kills(pd)
    killed = {k[1] for k in kills}
    # (the set made from the same pids in the same order, one by one as from the dict of
    # processes before: the order the rows are ranked from is the same)
    pids = list(set(by_pid.pids) | {p for p, g in gc_by_pid.items() if g.count} | killed)
    rss_n = by_pid.numbers(pids, "mem.rss")
    rss = [round(x, 3) if x is not None else None
           for x in _rss_max_of(pd.memory, rss_n, np.stack([by_pid.numbers(pids, p) for p in _PARTS], axis=1))]
    gc_of = [gc_by_pid.get(pid) for pid in pids]
    app = ctx.scope.pid if ctx.scope is not None else None
    ranked = _ranked(pids, rss, [g.total_ms if g else 0.0 for g in gc_of], app)
    grew = _growth_of(pd.memory, rss_n, by_pid.numbers(pids, "mem.rss.anon"))
    rest = [i for i in ranked[MAX_PROCESSES:] if grew[i] > 0]
    growers = sorted(rest, key=lambda i: (-grew[i], pids[i]))
    # MemoryProcess only for the processes kept (a 1 GB trace has ~100 k)
    rows = [MemoryProcess(pid=pids[i], name=pd.processes.get(pids[i]) or f"pid {pids[i]}", killed=pids[i] in killed,
                          rss_max_mb=rss[i], gc=gc_of[i])
            for i in ranked[:MAX_PROCESSES] + growers[:MAX_GROWERS]]
    for proc in rows:  # the series only for the processes kept (a trace can have thousands)
        series_map = by_pid.of(proc.pid)
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
