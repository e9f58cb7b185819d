"""Threads: busy time (top-level slices, or sampled weight), scheduler states, the main/UI
thread (reader's mark; CrRendererMain/CrBrowserMain; "MainThread"; pid == tid on Android; else
the busiest), and long tasks (≥ 50 ms top-level slices) on it.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np

from nodes.perf.android_package import app_pids, launched_package
from nodes.perf.metrics.common import ANDROID_FRAME, LONG_TASK_MS, MAX_THREADS, _ms
from nodes.perf.model import MAIN_THREAD_NAMES, LongTask, ThreadStat


def thread_busy_us(ctx, key: tuple[int, int]) -> float:
    """Busy time: top-level slices, else sampled weight, else scheduler running time."""
    th = ctx.threads.get(key)
    b = (th.busy_us if th else 0.0) + ctx.sampled_busy.get(key, 0.0)
    if b <= 0.0:
        b = ctx.pd.thread_states.get(key, {}).get("running", 0.0)
    return b


def pick_main(ctx) -> None:
    pd = ctx.pd
    cands = list(pd.threads)
    if not cands:
        return

    def busiest(keys: Iterable[tuple[int, int]]) -> tuple[int, int] | None:
        keys = list(keys)
        return max(keys, key=lambda k: (thread_busy_us(ctx, k), -k[1])) if keys else None

    # The app the analysis is scoped to (metrics/scope.py): its main thread is pid == tid.
    sc = ctx.scope
    if sc is not None and (sc.pid, sc.pid) in pd.threads:
        ctx.main = (sc.pid, sc.pid)
        return
    # Android: the app whose frames were measured (frame timeline / gfxinfo pid), or the
    # app being launched; its main thread is the thread whose tid is the pid
    for (pid, _track), cols in pd.async_slices.items():
        names = {pd.strings[n] for n in set(cols.name)}
        for nm in names:
            pkg = launched_package(nm)
            if pkg:
                # the package's processes (one rule, android_package.py), its own name first
                for ppid in sorted(app_pids(pd.processes, pkg), key=lambda p: pd.processes[p] != pkg):
                    if (ppid, ppid) in pd.threads:
                        ctx.main = (ppid, ppid)
                        return
    pids = [f.pid for f in pd.frames if f.pid]
    if pids:
        top_pid = max(set(pids), key=pids.count)
        if (top_pid, top_pid) in pd.threads:
            ctx.main = (top_pid, top_pid)
            return
    # the thread that draws the most Android frames is the UI thread of the app of interest
    fid = [i for i, s in enumerate(pd.strings) if s.startswith(ANDROID_FRAME)]
    if fid:
        counts = {}
        for k, th in ctx.threads.items():
            if th.count:
                c = int(np.isin(th.name, fid).sum())
                if c:
                    counts[k] = c
        if counts:
            apps = {k: c for k, c in counts.items() if k[0] == k[1]} or counts
            ctx.main = max(apps, key=lambda k: (apps[k], thread_busy_us(ctx, k)))
            return
    marked = [k for k in cands if pd.threads[k].is_main]
    for pool in (
        marked if len(marked) == 1 else [],
        [k for k in cands if (pd.threads[k].name or "") == "CrRendererMain"],
        [k for k in cands if (pd.threads[k].name or "") == "CrBrowserMain"],
        [k for k in cands if (pd.threads[k].name or "") in MAIN_THREAD_NAMES],
        marked,
    ):
        b = busiest(pool)
        if b is not None and thread_busy_us(ctx, b) > 0:
            ctx.main = b
            return
    ctx.main = busiest(cands)


def thread_stats(ctx) -> list[ThreadStat]:
    """The main thread, then the busiest, :data:`MAX_THREADS` at most: ranked on their numbers
    first and only the rows kept built (a trace can have tens of thousands of threads)."""
    pd = ctx.pd
    keys = set(pd.threads) | set(ctx.threads) | set(ctx.sampled_busy) | set(pd.thread_states)
    listed = []
    # thread_busy_us inlined: this loop runs over every thread of the trace (~20 k at 100 MB)
    states_of, thread_of, sampled_of = pd.thread_states.get, ctx.threads.get, ctx.sampled_busy.get
    none: dict = {}
    for k in keys:
        states = states_of(k, none)
        th = thread_of(k)
        busy = (th.busy_us if th else 0.0) + sampled_of(k, 0.0)
        if busy <= 0.0:
            busy = states.get("running", 0.0)
        if not busy and not states and not (th and th.count):
            continue
        listed.append((k, busy, states, th))
    rows = []
    for k, busy, states, th in ranked(listed, ctx.main, MAX_THREADS):
        info = pd.threads.get(k)
        rows.append(ThreadStat(
            pid=k[0], tid=k[1],
            name=(info.name if info and info.name else f"tid {k[1]}"),
            process=pd.processes.get(k[0]),
            busy_ms=_ms(busy),
            slice_count=th.count if th else 0,
            is_main=(k == ctx.main),
            running_ms=_ms(states["running"]) if "running" in states else None,
            runnable_ms=_ms(states["runnable"]) if "runnable" in states else None,
            sleeping_ms=_ms(states["sleeping"]) if "sleeping" in states else None,
        ))
    return rows


def _rank(row: tuple, main: tuple[int, int] | None) -> tuple:
    """thread_stats' order: the main thread, then by busy time, then Running time, as shown (ms)."""
    k, busy, states, _th = row
    running = _ms(states["running"]) if "running" in states else None
    return (k != main, -_ms(busy), -(running or 0.0))


def ranked(listed: list[tuple], main: tuple[int, int] | None, keep: int) -> list[tuple]:
    """The first ``keep`` of ``listed`` ((key, busy µs, states, thread) rows) in a stable sort by
    :func:`_rank`, ranking only the rows that can be among them: beside the main thread, those
    whose busy time is within 2 µs of the ``keep``-th largest — every row further below rounds
    to fewer ms than at least ``keep`` others (``_ms`` rounds to 1 µs), so it is never shown.
    A trace of 20,000 threads ranked all of them to show 64. The candidates keep their order
    in ``listed``, so ties fall as in the sort of all rows."""
    if keep > 0 and len(listed) > 4 * keep:
        busy = np.array([r[1] for r in listed], dtype=np.float64)
        if np.isfinite(busy).all():
            is_main = np.zeros(len(listed), dtype=bool)
            keys = [r[0] for r in listed]
            if main in keys:  # the keys differ: at most one is the main thread
                is_main[keys.index(main)] = True
            others = busy[~is_main]
            kth = float(np.partition(others, len(others) - keep)[len(others) - keep])
            near = (busy >= kth - 2.0 - abs(kth) * 1e-9) | is_main
            listed = [listed[i] for i in np.flatnonzero(near).tolist()]
    return sorted(listed, key=lambda r: _rank(r, main))[:keep]


def long_tasks(ctx) -> list[LongTask]:
    if ctx.main is None or ctx.main not in ctx.threads:
        return []
    th = ctx.threads[ctx.main]
    label = ctx.pd.thread_label(*ctx.main)
    tasks = th.top_level_at_least(LONG_TASK_MS * 1000.0)
    tasks.sort(key=lambda x: -x[1])
    ctx.long_count = len(tasks)
    return [LongTask(name=ctx.pd.strings[n], thread=label, start_ms=ctx.rel(t), dur_ms=_ms(d)) for t, d, n in tasks[:20]]
