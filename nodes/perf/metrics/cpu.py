"""CPU time per process and thread, and per CPU frequency and idle residency.

Per thread, as trace_processor's ``thread_state`` table has it (``src/trace_processor/
perfetto_sql/stdlib/linux/cpu/`` and the ``thread_state`` docs): the time it was ``Running``
(on a CPU) and runnable (``R`` / ``R+``: woken or preempted, waiting for a CPU), from
``sched_switch`` / compact sched and the wake-ups, summed over the trace. A process is the sum
of its threads. ``share_of_window`` = running / the trace's length; ``share_of_cpus`` =
running / (length × CPUs), the CPU count being the CPUs the ftrace data covers. ``sections``
repeat this inside each launch of the app and each Macrobenchmark ``measureBlock``, from the
scheduler intervals clipped to the section.

Per CPU: the frequency weighted by the time each ``cpu_frequency`` value held (from the first
event to the end of the trace: before it the frequency is unknown), and the time in idle states
(``cpu_idle`` enter → the following exit, 4294967295), per state.
"""

from __future__ import annotations

from collections import defaultdict
from operator import attrgetter

import numpy as np

from nodes.perf.metrics import cpu_shares
from nodes.perf.metrics.clipped_sum import NATIVE, Intervals
from nodes.perf.metrics.slice_find import find_slices, name_ids, named_sections
from nodes.perf.model import CpuCore, CpuSection, CpuStats, CpuUse, MissingData, PerfData, PointSeries
from nodes.perf.parsers.perfetto_cpu import IDLE_EXIT
from nodes.perf.sched_state import SchedState

MAX_PROCESSES = 32
MAX_THREADS = 64
#: Per section, the busiest processes and threads kept.
SECTION_TOP = 10
#: Sections measured besides the whole trace: Macrobenchmark's measure section.
SECTION_NAMES = ("measureBlock",)
_RUNNING = int(SchedState.RUNNING)
_RUNNABLE = (int(SchedState.R), int(SchedState.R_PREEMPTED))

CAPTURE = """data_sources { config { name: "linux.ftrace" ftrace_config {
  ftrace_events: "sched/sched_switch" ftrace_events: "sched/sched_waking"
  ftrace_events: "power/cpu_frequency" ftrace_events: "power/cpu_idle" } } }"""


def _r(x: float, digits: int = 3) -> float:
    return round(x, digits)


def cpu(ctx) -> CpuStats | None:
    pd: PerfData = ctx.pd
    if not pd.thread_states and not pd.cpu_frequency and not pd.cpu_idle:
        # Files that measure CPU use another way (dumpsys cpuinfo, top, perf stat): metrics/cpu_shares.py.
        other = cpu_shares.other_sources(pd)
        if other is not None:
            return other
        if pd.format != "perfetto":
            return None
        return CpuStats(window_ms=_r(pd.duration_us / 1000.0), cpu_count=pd.cpu_count, missing=[MissingData(
            what="CPU time per process and thread", why="the trace has no scheduler events", capture=CAPTURE)])
    window_us = pd.duration_us
    ncpu = pd.cpu_count
    out = CpuStats(window_ms=_r(window_us / 1000.0), cpu_count=ncpu)

    def shares(running_us: float) -> tuple[float, float | None]:
        if window_us <= 0:
            return 0.0, None
        return _r(running_us / window_us, 4), (_r(running_us / (window_us * ncpu), 4) if ncpu else None)

    keys = list(pd.thread_states)
    states = list(pd.thread_states.values())
    run_of, wait_of = [st.get("running", 0.0) for st in states], [st.get("runnable", 0.0) for st in states]
    rows, procs = _ranked(keys, run_of, wait_of, MAX_THREADS, MAX_PROCESSES)
    for run, wait, pid, tid in rows:
        info = pd.threads.get((pid, tid))
        sw, sc = shares(run)
        out.threads.append(CpuUse(
            pid=pid, tid=tid, name=(info.name if info and info.name else f"tid {tid}"),
            process=pd.processes.get(pid), running_ms=_r(run / 1000.0), runnable_ms=_r(wait / 1000.0),
            share_of_window=sw, share_of_cpus=sc,
        ))
    for pid, (run, wait) in procs:
        sw, sc = shares(run)
        out.processes.append(CpuUse(
            pid=pid, name=pd.processes.get(pid) or _main_thread_name(pd, pid),
            running_ms=_r(run / 1000.0), runnable_ms=_r(wait / 1000.0), share_of_window=sw, share_of_cpus=sc,
        ))
    end = pd.end_us if pd.end_us is not None else 0.0
    for c in sorted(set(pd.cpu_frequency) | set(pd.cpu_idle)):
        out.cpus.append(_core(c, pd.cpu_frequency.get(c, []), pd.cpu_idle.get(c, []), end, window_us))
    if not pd.thread_states:
        out.missing.append(MissingData(what="CPU time per process and thread",
                                       why="the trace has no scheduler events", capture=CAPTURE))
    elif pd.sched_intervals:
        out.sections = _all_sections(ctx, _sections(ctx))
    return out


def _sections(ctx) -> list[tuple[str, float, float]]:
    """(name, start µs, end µs): each launch of the app, each measureBlock, then each slice the
    user named (``--section NAME``)."""
    out = []
    st = ctx.res.startup
    if st is not None:
        for r in st.runs:
            if r.start_ms is not None and r.total_ms:
                a = ctx.t0 + r.start_ms * 1000.0
                out.append(("startup", a, a + r.total_ms * 1000.0))
    pd = ctx.pd
    for _k, ts, dur, _n in find_slices(pd, name_ids(pd, lambda s: s in SECTION_NAMES), async_=True):
        out.append((pd.strings[_n], ts, ts + dur))
    named, _unknown = named_sections(pd, [n for n in ctx.sections if n not in SECTION_NAMES])
    return out + named


def _near(idx: "_SchedIndex", start: float, end: float) -> np.ndarray:
    """The threads with a Running or runnable interval that can overlap [start, end]."""
    run_iv, wait_iv = idx.running, idx.runnable
    return np.flatnonzero(((run_iv.first < end) & (run_iv.last > start))
                          | ((wait_iv.first < end) & (wait_iv.last > start)))


#: Scheduler intervals :func:`_all_sections` indexes at a time (a thread with more is indexed
#: alone): the index of every thread at once was ~200 MB at 1 GB read whole (4 M intervals: the
#: joined columns and both states' starts and ends), on top of everything the analysis holds.
INDEX_INTERVALS = 1 << 18


def _all_sections(ctx, windows: list[tuple[str, float, float]]) -> list[CpuSection]:
    """:func:`section` of each window, the clipped sums of every section's threads asked in
    one :meth:`.clipped_sum.Intervals.clipped_sums` call per state (a trace of many launches
    paid that call's fixed cost per section) for each run of threads of up to
    :data:`INDEX_INTERVALS` intervals, indexed (:class:`_SchedIndex`) and dropped in turn: a
    thread's sums are its own intervals' whatever threads are indexed beside it, and each
    window's threads come out in the order of ``pd.sched_intervals``, as from one index."""
    if not windows:
        return []
    pd: PerfData = ctx.pd
    keys = list(pd.sched_intervals)
    ivs = list(pd.sched_intervals.values())
    lens = list(map(len, ivs))
    a_of = np.array([a for _n, a, _b in windows], dtype=np.float64)
    b_of = np.array([b for _n, _a, b in windows], dtype=np.float64)
    # per window its threads' positions and sums, a part per run of threads; the sums as float64
    # columns (the floats themselves: a 1 GB trace asks ~1.3 M (thread, window) pairs a state)
    nears: list[list[np.ndarray]] = [[] for _w in windows]
    runs: list[list[np.ndarray]] = [[] for _w in windows]
    waits: list[list[np.ndarray]] = [[] for _w in windows]
    lo = 0
    while lo < len(keys):
        hi, held = lo + 1, lens[lo]
        while hi < len(keys) and held + lens[hi] <= INDEX_INTERVALS:
            held += lens[hi]
            hi += 1
        idx = _SchedIndex(pd, keys[lo:hi], ivs[lo:hi])
        part = [_near(idx, a, b) for _name, a, b in windows]
        sizes = [len(x) for x in part]
        which = np.concatenate(part)
        starts, ends = np.repeat(a_of, sizes), np.repeat(b_of, sizes)
        run = np.array(idx.running.clipped_sums(which, starts, ends), dtype=np.float64)
        wait = np.array(idx.runnable.clipped_sums(which, starts, ends), dtype=np.float64)
        del idx
        at = 0
        for w, (near, k) in enumerate(zip(part, sizes)):
            nears[w].append(near + lo)
            runs[w].append(run[at:at + k])
            waits[w].append(wait[at:at + k])
            at += k
        lo = hi
    return [section(ctx, name, a, b, tuple(map(np.concatenate, (nears[w], runs[w], waits[w]))), keys)
            for w, (name, a, b) in enumerate(windows)]


def section(ctx, name: str, start: float, end: float, sums: tuple | None = None,
            keys: list[tuple[int, int]] | None = None) -> CpuSection:
    """CPU time per thread and process inside [start, end] µs, from the scheduler intervals
    clipped to the section: each thread's Running and runnable intervals summed as
    :func:`.clipped_sum.clipped_sum` does, only for threads with such an interval there;
    ``sums`` (those threads, as positions in ``keys`` — ``pd.sched_intervals``' keys — and
    their sums) when :func:`_all_sections` computed them."""
    pd: PerfData = ctx.pd
    length = max(0.0, end - start)
    ncpu = pd.cpu_count
    if sums is None:
        idx = _index(ctx)
        near = _near(idx, start, end)
        sums = (near, idx.running.clipped_sums(near, start, end), idx.runnable.clipped_sums(near, start, end))
        keys = idx.keys
    elif keys is None:
        keys = list(pd.sched_intervals)
    near, runs, waits = np.asarray(sums[0], dtype=np.int64), np.asarray(sums[1]), np.asarray(sums[2])
    has = np.flatnonzero((runs != 0.0) | (waits != 0.0) | (runs != runs) | (waits != waits))  # `if run or wait`
    # in the order of pd.sched_intervals: the process sums add up alike
    per_thread, procs = _ranked([keys[i] for i in near[has].tolist()], runs[has].tolist(), waits[has].tolist(),
                                SECTION_TOP, SECTION_TOP)

    def use(run: float, wait: float, pid: int, tid: int | None) -> CpuUse:
        info = pd.threads.get((pid, tid)) if tid is not None else None
        name = (info.name if info and info.name else f"tid {tid}") if tid is not None else (
            pd.processes.get(pid) or _main_thread_name(pd, pid))
        return CpuUse(pid=pid, tid=tid, name=name, process=pd.processes.get(pid) if tid is not None else None,
                      running_ms=_r(run / 1000.0), runnable_ms=_r(wait / 1000.0),
                      share_of_window=_r(run / length, 4) if length else 0.0,
                      share_of_cpus=_r(run / (length * ncpu), 4) if length and ncpu else None)

    return CpuSection(
        name=name, start_ms=ctx.rel(start), dur_ms=_r(length / 1000.0),
        threads=[use(r, w, p, t) for r, w, p, t in per_thread],
        processes=[use(r, w, p, None) for p, (r, w) in procs],
    )


def _ranked(keys: list[tuple[int, int]], runs: list[float], waits: list[float], threads_top: int,
            procs_top: int) -> tuple[list[tuple[float, float, int, int]], list[tuple[int, tuple[float, float]]]]:
    """The ``threads_top`` threads ``keys`` (pid, tid) by (-running, -runnable, pid, tid) as
    (running, runnable, pid, tid), and the ``procs_top`` processes by (-running, pid) as (pid,
    (running, runnable)), each process's sums added from 0.0 in the order of ``keys``. With
    numpy (``lexsort``; ``bincount`` adds in order, as ``+=`` over the threads): a trace has
    ~20 k threads and a section asks for a few thousand; with NaN, or ids beyond int64, by
    :func:`_ranked_loop` (NaN makes the order the one the sort compares in)."""
    try:
        run, wait = np.array(runs, dtype=np.float64), np.array(waits, dtype=np.float64)
        pid = np.array([k[0] for k in keys], dtype=np.int64)
        tid = np.array([k[1] for k in keys], dtype=np.int64)
    except (OverflowError, TypeError, ValueError):
        return _ranked_loop(keys, runs, waits, threads_top, procs_top)
    if np.isnan(run).any() or np.isnan(wait).any():
        return _ranked_loop(keys, runs, waits, threads_top, procs_top)
    order = np.lexsort((tid, pid, -wait, -run))[:threads_top]  # (pid, tid) unique: sorted()'s order
    threads = list(zip(run[order].tolist(), wait[order].tolist(), pid[order].tolist(), tid[order].tolist()))
    pids, inv = np.unique(pid, return_inverse=True)
    inv = inv.reshape(-1)
    prun = np.bincount(inv, weights=run, minlength=len(pids))
    pwait = np.bincount(inv, weights=wait, minlength=len(pids))
    porder = np.lexsort((pids, -prun))[:procs_top]
    return threads, [(p, (r, w)) for p, r, w in zip(pids[porder].tolist(), prun[porder].tolist(), pwait[porder].tolist())]


def _ranked_loop(keys: list[tuple[int, int]], runs: list[float], waits: list[float], threads_top: int,
                 procs_top: int) -> tuple[list[tuple[float, float, int, int]], list[tuple[int, tuple[float, float]]]]:
    """:func:`_ranked` one thread at a time (NaN; and the reference of tests/test_cpu_ranked.py)."""
    per_proc: dict[int, list[float]] = defaultdict(lambda: [0.0, 0.0])
    rows = []
    for (pid, tid), run, wait in zip(keys, runs, waits):
        per_proc[pid][0] += run
        per_proc[pid][1] += wait
        rows.append((run, wait, pid, tid))
    rows.sort(key=lambda r: (-r[0], -r[1], r[2], r[3]))
    procs = sorted(per_proc.items(), key=lambda kv: (-kv[1][0], kv[0]))
    return rows[:threads_top], [(p, (r, w)) for p, (r, w) in procs[:procs_top]]


class _SchedIndex:
    """Every thread's Running and runnable intervals apart, each state's in one set of columns
    (:class:`.clipped_sum.Intervals`), built once per analysis: a trace with many launches asks
    per launch, and a section looks only at the threads with such an interval inside it (a
    thread's last interval often lasts to the end of the trace, but it is mostly a sleep)."""

    def __init__(self, pd: PerfData, keys: list[tuple[int, int]] | None = None, ivs: list | None = None):
        """Every thread of ``pd.sched_intervals``, or the threads ``keys`` with their intervals ``ivs``."""
        if keys is None:
            keys, ivs = list(pd.sched_intervals), list(pd.sched_intervals.values())
        self.keys: list[tuple[int, int]] = keys
        tss = list(map(attrgetter("ts"), ivs))
        ts = np.frombuffer(b"".join(tss), dtype=np.float64)
        dur = np.frombuffer(b"".join(map(attrgetter("dur"), ivs)), dtype=np.float64)
        st = np.frombuffer(b"".join(map(attrgetter("state"), ivs)), dtype=np.int8)
        # thread i's intervals: [bounds[i], bounds[i + 1]); per state, how many of them it has
        bounds = np.zeros(len(ivs) + 1, dtype=np.int64)
        np.cumsum(np.fromiter(map(len, tss), dtype=np.int64, count=len(tss)), out=bounds[1:])
        if NATIVE is not None:  # both states' columns in one pass (nodes/perf/metrics/_metricsc.c)
            n, k = len(ts), len(ivs)
            cols = [(np.empty(n), np.empty(n), np.empty(k + 1, dtype=np.int64), np.empty(k), np.empty(k),
                     np.empty(k, dtype=np.uint8), np.empty(k, dtype=np.uint8)) for _state in range(2)]
            NATIVE.split_states(ts, dur, st, bounds, _RUNNING, _RUNNABLE[0], _RUNNABLE[1], *cols)
            self.running, self.runnable = (
                Intervals.from_columns(s[:o[-1]], e[:o[-1]], o, *rest) for s, e, o, *rest in cols)
            return
        ends = ts + dur
        run = st == _RUNNING
        wait = (st == _RUNNABLE[0]) | (st == _RUNNABLE[1])
        self.running = Intervals(ts[run], ends[run], np.diff(np.r_[0, np.cumsum(run)][bounds]))
        self.runnable = Intervals(ts[wait], ends[wait], np.diff(np.r_[0, np.cumsum(wait)][bounds]))


def _index(ctx) -> _SchedIndex:
    idx = ctx.__dict__.get("_sched_index")
    if idx is None:
        idx = ctx.__dict__["_sched_index"] = _SchedIndex(ctx.pd)
    return idx


def _main_thread_name(pd: PerfData, pid: int) -> str:
    info = pd.threads.get((pid, pid))
    return info.name if info and info.name else f"pid {pid}"


def _core(cpu: int, freq: PointSeries | list[tuple[float, float]], idle: PointSeries | list[tuple[float, int]],
          end: float, window_us: float) -> CpuCore:
    """One CPU's frequency (time-weighted) and idle residency per state. With numpy: the
    100 MB trace's cores hold ~100 k points; the sums are the loop's own (cumsum and add.at
    add in the loop's order from 0.0). NaN times or values take :func:`_core_loop`, whose
    ``min``/``max`` over NaN depend on order."""
    freq, idle = PointSeries.of(freq), PointSeries.of(idle, "int64")
    i = idle.ts
    if np.isnan(freq.ts).any() or np.isnan(freq.value).any() or np.isnan(i).any() or end != end:
        return _core_loop(cpu, freq, idle, end, window_us)
    core = CpuCore(cpu=cpu)
    if freq:
        ts, khz = freq.ts, freq.value
        d = np.append(ts[1:], end) - ts
        d = np.where(d > 0.0, d, 0.0)  # max(0.0, d)
        weighted = float(np.cumsum(np.append(0.0, khz * d))[-1])
        known = float(np.cumsum(np.append(0.0, d))[-1])
        lo, hi = float(khz.min()), float(khz.max())
        core.freq_min_mhz, core.freq_max_mhz = _r(lo / 1000.0), _r(hi / 1000.0)
        core.freq_avg_mhz = _r(weighted / known / 1000.0) if known > 0 else core.freq_max_mhz
    if idle:
        # the state entered at each point is the point before, when that one is not an exit
        st = idle.value
        held = st != IDLE_EXIT
        spans = i[1:] - i[:-1]
        states = st[:-1][held[:-1]]
        spans = spans[held[:-1]]
        if held[-1] and end > i[-1]:
            states = np.append(states, st[-1])
            spans = np.append(spans, end - i[-1])
        keys, at, inv = np.unique(states, return_index=True, return_inverse=True)
        sums = np.zeros(len(keys))
        np.add.at(sums, inv, spans)
        seen = np.argsort(at, kind="stable")
        by_state = {str(k): v for k, v in zip(keys[seen].tolist(), sums[seen].tolist())}
        total = sum(by_state.values())
        core.idle_ms = _r(total / 1000.0)
        core.idle_share = _r(total / window_us, 4) if window_us > 0 else None
        core.idle_states = {k: _r(v / 1000.0) for k, v in sorted(by_state.items())}
    return core


def _core_loop(cpu: int, freq: list[tuple[float, float]], idle: list[tuple[float, int]], end: float,
          window_us: float) -> CpuCore:
    """:func:`_core` one point at a time (NaN; and the reference of tests/test_cpu_core.py)."""
    core = CpuCore(cpu=cpu)
    if freq:
        weighted = known = 0.0
        for (ts, khz), nxt in zip(freq, freq[1:] + [(end, 0.0)]):
            d = max(0.0, nxt[0] - ts)
            weighted += khz * d
            known += d
        vals = [k for _, k in freq]
        core.freq_min_mhz, core.freq_max_mhz = _r(min(vals) / 1000.0), _r(max(vals) / 1000.0)
        core.freq_avg_mhz = _r(weighted / known / 1000.0) if known > 0 else core.freq_max_mhz
    if idle:
        by_state: dict[str, float] = defaultdict(float)
        entered: tuple[float, int] | None = None
        for ts, state in idle:
            if state == IDLE_EXIT:
                if entered is not None:
                    by_state[str(entered[1])] += ts - entered[0]
                entered = None
            elif entered is None:
                entered = (ts, state)
            else:  # a deeper state without an exit between: the first one ends here
                by_state[str(entered[1])] += ts - entered[0]
                entered = (ts, state)
        if entered is not None and end > entered[0]:
            by_state[str(entered[1])] += end - entered[0]
        total = sum(by_state.values())
        core.idle_ms = _r(total / 1000.0)
        core.idle_share = _r(total / window_us, 4) if window_us > 0 else None
        core.idle_states = {k: _r(v / 1000.0) for k, v in sorted(by_state.items())}
    return core


def summarize_cpu(c: CpuStats | None, top: int = 3) -> str:
    """One sentence with the numbers: the processes and threads that used the CPU."""
    if c is None or not (c.processes or c.threads):
        return "No CPU data: the trace has no scheduler events."
    if c.measure != "sched":
        return _summarize_shares(c, top)
    procs = ", ".join(f"{p.name} {p.running_ms:.0f} ms ({p.share_of_cpus if p.share_of_cpus is not None else p.share_of_window:.0%})"
                      for p in c.processes[:top])
    threads = ", ".join(f"{t.name} ({t.process or t.pid}) {t.running_ms:.0f} ms running, {t.runnable_ms:.0f} ms runnable"
                        for t in c.threads[:top])
    cpus = f" of {c.cpu_count} CPUs" if c.cpu_count else ""
    return f"Over {c.window_ms / 1000:.2f} s{cpus}: {procs}; busiest threads {threads}."


def _summarize_shares(c: CpuStats, top: int) -> str:
    """The sentence for a source that is not the scheduler (metrics/cpu_shares.py): its measure named."""
    def one(p: CpuUse) -> str:
        if p.running_ms is not None:
            return f"{p.name} {p.running_ms:.0f} ms"
        return f"{p.name} {p.cpu_pct:g}%" if p.cpu_pct is not None else p.name
    over = f"over {c.window_ms / 1000:.2f} s" if c.window_ms else "in one snapshot"
    total = f"; {c.total_pct:g}% in all" if c.total_pct is not None else ""
    return f"CPU ({c.measure}, {c.window}) {over}: " + ", ".join(one(p) for p in c.processes[:top]) + total + "."
