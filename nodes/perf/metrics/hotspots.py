"""Hot spots: self and total time per slice name, sampled function, pstats row or import.

Nested slices: per-thread stacks rebuilt from times (sorted by start, longer first), self =
own time minus direct children. Sampled stacks: self = the leaf's weight, total = the weight of
every stack the function is on, counted once per stack (recursion does not double it). pstats
rows and ``-X importtime`` modules as they come. Also the heaviest stacks for flame graphs.
"""

from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from nodes.perf.containers import is_container
from nodes.perf.metrics import slice_tree
from nodes.perf.metrics.common import MAX_PATHS, TOP_PER_THREAD, _ms, _pct, _Thread
from nodes.perf.model import MAX_RESULT_STACKS, AppScope, Hotspot, ScopeSummary, SliceStat, StackWeight


def walk(ctx, key: tuple[int, int]) -> None:
    """One thread's slices: self, total and count per name, busy time, top-level tasks and the
    weight of every path, from the nesting :mod:`.slice_tree` computes (with numpy; the rules
    and why they are the old per-slice stack walk's are in that module). Sums are added in the
    walk's order (pre-order for totals, closing order for self time and paths) and the dicts
    filled in the order the walk first touched each name or path, so ties rank as before."""
    cols = ctx.pd.slices[key]
    n = len(cols)
    th = ctx.threads[key] = _Thread(key)
    if not n:
        return
    ts = np.frombuffer(cols.ts, dtype=np.float64).copy()
    dur = np.frombuffer(cols.dur, dtype=np.float64).copy()
    name = np.frombuffer(cols.name, dtype=np.dtype(cols.name.typecode)).astype(np.int64)
    ok = np.isfinite(ts) & np.isfinite(dur)
    if not ok.all():
        ts, dur, name = ts[ok], dur[ok], name[ok]
    dur = np.maximum(dur, 0.0)
    order = _start_order(ts, dur)
    ts, dur, name = ts[order], dur[order], name[order]
    th.ts, th.dur, th.name = ts, dur, name
    th.count = n = len(ts)
    if not n:
        return
    del order, ok
    track_paths = ctx.path_count() < MAX_PATHS
    if n <= SMALL_THREAD:
        _walk_small(ctx, th, ts.tolist(), dur.tolist(), name.tolist(), track_paths)
        return
    tree = slice_tree.build(ts, dur)
    post = tree.post_order()
    # Per-name sums are bincounts: over the trace's name ids they would cost the size of the
    # whole string table for every thread (a trace of many threads grew quadratically), so a
    # thread whose ids run far beyond its slice count works on its own dense ids (same order).
    if int(name.max()) >= 4 * n + 64:
        ids, local = np.unique(name, return_inverse=True)
        local = local.reshape(-1)
        lut: list[int] | None = ids.tolist()
    else:
        local, lut = name, None
    own = np.where(tree.own > 0.0, tree.own, 0.0)[post]
    _fill(th.self_by, local[post], own, lut)
    del own
    outer = tree.outermost(local)
    _fill(th.total_by, local[outer], tree.dur[outer], lut)
    del outer
    counts = np.bincount(local)
    for nid in np.flatnonzero(counts).tolist():
        th.count_by[nid if lut is None else lut[nid]] = int(counts[nid])
    del local
    roots = np.flatnonzero(tree.parent < 0)
    th.busy_us = _sequential_sum(dur[roots])
    if track_paths:
        _paths(ctx, key, tree, name, post)
    # the tree's arrays go before the (large: a tuple a task) top-level list is built, which
    # keeps the peak of a one-thread trace of millions of slices low (tests/test_reliability_hostile.py)
    del tree, post
    th.top_level.extend(zip(ts[roots].tolist(), dur[roots].tolist(), name[roots].tolist()))


#: Threads with at most this many slices are walked in plain Python (:func:`_walk_small`): for
#: a few dozen slices the fixed cost of the numpy passes is the whole cost, and a trace of many
#: short-lived threads (tens of thousands) paid it for each.
SMALL_THREAD = 256


def _walk_small(ctx, th, ts: list[float], dur: list[float], name: list[int], track_paths: bool) -> None:
    """:func:`walk`'s results for one thread's slices (sorted by start, longer first) from the
    stack walk itself, as :mod:`.slice_tree` defines the nesting (an end is cut to the end of
    the slice it starts in) and with every sum added in the order :func:`walk` adds it:
    children's time in index order, self time and path weights in closing order, totals and
    busy time in start order; dicts filled in the order of first touch, counts by name id."""
    n = len(ts)
    parent = [-1] * n
    cut = [0.0] * n  # the cut durations (tree.dur)
    outer = [True] * n
    post: list[int] = []
    stack: list[int] = []  # open slices; their cut ends never grow towards the top
    ends: list[float] = []
    active: dict[int, int] = defaultdict(int)  # names on the stack
    for i in range(n):
        t = ts[i]
        while ends and ends[-1] <= t:
            j = stack.pop()
            ends.pop()
            active[name[j]] -= 1
            post.append(j)
        e = t + dur[i]
        if ends and e > ends[-1]:
            cut[i] = ends[-1] - t  # runs past the slice it starts in: cut at that end
            e = ends[-1]
        else:
            cut[i] = dur[i]
        if stack:
            parent[i] = stack[-1]
        if active[name[i]]:
            outer[i] = False
        active[name[i]] += 1
        stack.append(i)
        ends.append(e)
    post.extend(reversed(stack))
    children = [0.0] * n
    for i in range(n):
        if parent[i] >= 0:
            children[parent[i]] += cut[i]
    own = [cut[i] - children[i] for i in range(n)]
    self_sums: dict[int, float] = {}
    for i in post:
        o = own[i]
        self_sums[name[i]] = self_sums.get(name[i], 0.0) + (o if o > 0.0 else 0.0)
    for k, v in self_sums.items():
        th.self_by[k] += v
    total_sums: dict[int, float] = {}
    for i in range(n):
        if outer[i]:
            total_sums[name[i]] = total_sums.get(name[i], 0.0) + cut[i]
    for k, v in total_sums.items():
        th.total_by[k] += v
    counts: dict[int, int] = defaultdict(int)
    for nid in name:
        counts[nid] += 1
    for nid in sorted(counts):
        th.count_by[nid] = counts[nid]
    busy = 0.0
    for i in range(n):
        if parent[i] < 0:
            busy += dur[i]
            th.top_level.append((ts[i], dur[i], name[i]))
    th.busy_us = busy
    if track_paths:
        _paths_small(ctx, th.key, parent, name, own, post)


def _paths_small(ctx, key: tuple[int, int], parent: list[int], name: list[int], own: list[float],
                 post: list[int]) -> None:
    """:func:`_paths` for :func:`_walk_small`: the same paths and weights, in the same order."""
    pid = [0] * len(name)
    depth = [0] * len(name)
    made: dict[tuple[int, int], int] = {}
    for i, (p, nid) in enumerate(zip(parent, name)):  # parents come first
        depth[i] = depth[p] + 1 if p >= 0 else 0
        if depth[i] >= MAX_PATH_DEPTH:
            pid[i] = pid[p]
            continue
        k = (pid[p] if p >= 0 else -1, nid)
        got = made.get(k)
        if got is None:
            got = made[k] = len(made)
        pid[i] = got
    weights: dict[int, float] = {}
    for i in post:
        if own[i] > 0.0:
            weights[pid[i]] = weights.get(pid[i], 0.0) + own[i]
    if not weights:
        return
    ctx.slice_paths.append(SlicePaths(
        key=key, pid=np.array(list(weights), dtype=np.int64), weight=np.array(list(weights.values()), dtype=np.float64),
        up=np.array([u for u, _ in made], dtype=np.int64), names=np.array([m for _, m in made], dtype=np.int64)))
    ctx.slice_path_count += len(weights)


def _sequential_sum(v: np.ndarray) -> float:
    """Left-to-right float sum (as ``+=`` in a loop; ``np.sum`` adds pairwise)."""
    return float(np.bincount(np.zeros(len(v), dtype=np.int64), weights=v, minlength=1)[0])


def _start_order(ts: np.ndarray, dur: np.ndarray) -> np.ndarray:
    """``np.lexsort((-dur, ts))``: by start, longer first, else as given. A stable sort by start
    alone is the same order when equal starts already come longer first, as they do when a
    tracer writes a parent before its children; it is ~40× faster on the almost sorted starts
    of a trace file (timsort runs), so the two-key sort only runs when needed."""
    order = np.argsort(ts, kind="stable")
    t, d = ts[order], dur[order]
    if np.any((t[1:] == t[:-1]) & (d[1:] > d[:-1])):
        order = np.lexsort((-dur, ts))
    return order


def _first_seen(keys: np.ndarray) -> np.ndarray:
    """The distinct non-negative ``keys`` in the order of their first appearance."""
    n = len(keys)
    first = np.full(int(keys.max()) + 1, n, dtype=np.int64)
    np.minimum.at(first, keys, np.arange(n, dtype=np.int64))
    present = np.flatnonzero(first < n)
    return present[np.argsort(first[present])]


def _fill(out: dict, keys: np.ndarray, weights: np.ndarray, lut: list[int] | None = None) -> None:
    """``out[k] += w`` for each pair in order, without the loop: per-key sums (bincount adds
    left to right) written in the order of each key's first appearance; ``lut`` maps dense
    keys back to name ids."""
    if not len(keys):
        return
    sums = np.bincount(keys, weights=weights)
    for k in _first_seen(keys).tolist():
        out[k if lut is None else lut[k]] += float(sums[k])


#: Names a path keeps: deeper slices add their time to the path of their 64th ancestor.
MAX_PATH_DEPTH = 64


@dataclass
class SlicePaths:
    """One thread's path weights: ``weight[i]`` is the self time of path ``pid[i]``, listed in
    the order the walk first closed a slice on it; a path is its last name ``names[p]`` under
    path ``up[p]`` (-1: a root)."""

    key: tuple[int, int]
    pid: np.ndarray
    weight: np.ndarray
    up: np.ndarray
    names: np.ndarray

    def path(self, p: int) -> tuple[int, ...]:
        out = []
        while p >= 0:
            out.append(int(self.names[p]))
            p = int(self.up[p])
        return tuple(reversed(out))


def _paths(ctx, key: tuple[int, int], tree, name: np.ndarray, post: np.ndarray) -> None:
    """Self time per root-to-slice path of names (the flame graph), as ids per depth level."""
    n = len(name)
    pid = np.empty(n, dtype=np.int64)
    ups: list[np.ndarray] = []
    names: list[np.ndarray] = []
    count = 0
    span = int(name.max()) + 1
    by_depth, bounds = tree.by_depth, tree.depth_bounds
    for d in range(len(bounds) - 1):
        ids = by_depth[bounds[d]:bounds[d + 1]]
        if d >= MAX_PATH_DEPTH:
            pid[ids] = pid[tree.parent[ids]]
            continue
        up = pid[tree.parent[ids]] if d else np.full(len(ids), -1, dtype=np.int64)
        uniq, inv = np.unique((up + 1) * span + name[ids], return_inverse=True)
        pid[ids] = inv.reshape(-1) + count
        count += len(uniq)
        ups.append(uniq // span - 1)
        names.append(uniq % span)
    own = tree.own[post]
    pos = own > 0.0
    keys = pid[post][pos]
    del pid
    if not len(keys):
        return
    sums = np.bincount(keys, weights=own[pos])
    listed = _first_seen(keys)
    ctx.slice_paths.append(SlicePaths(key=key, pid=listed, weight=sums[listed],
                                      up=np.concatenate(ups), names=np.concatenate(names)))
    ctx.slice_path_count += len(listed)


def _in_scope(ctx, key: tuple[int, int]) -> bool:
    sc = ctx.scope
    return sc is None or key[0] in sc.app_pids


def slice_hotspots(ctx) -> list[Hotspot]:
    """Self/total time per slice name over the app's threads when an app is identified
    (``ctx.scope``; rows marked scope="app"), else over every thread; then per thread. Only
    thread slices count: async spans (``PerfData.async_slices``: network requests,
    ``launching:``) are not time a thread spent."""
    if not ctx.threads:
        return []
    pd = ctx.pd
    mine = {k: th for k, th in ctx.threads.items() if _in_scope(ctx, k)}
    scope = "app" if ctx.scope is not None else None
    total_busy = sum(t.busy_us for t in mine.values())
    agg_self: dict[int, float] = defaultdict(float)
    agg_total: dict[int, float] = defaultdict(float)
    agg_count: dict[int, int] = defaultdict(int)
    for th in mine.values():
        for nid, v in th.self_by.items():
            agg_self[nid] += v
        for nid, v in th.total_by.items():
            agg_total[nid] += v
        for nid, v in th.count_by.items():
            agg_count[nid] += v
    out: list[Hotspot] = []
    # task runners (nodes/perf/containers.py) are not ranked: their self time is untraced time
    # inside tasks, kept apart in ``untraced_in_tasks``
    runners = {n for n in agg_self if is_container(pd.strings[n])}
    ctx.res.untraced_in_tasks = [
        slice_hotspot(ctx, nid, agg_self[nid], agg_total[nid], agg_count[nid], total_busy, None, scope)
        for nid in sorted(runners, key=lambda n: -agg_self[n]) if agg_self[nid] > 0]
    ranked = sorted((n for n in agg_self if n not in runners), key=lambda n: (-agg_self[n], -agg_total[n]))[: ctx.top]
    for nid in ranked:
        out.append(slice_hotspot(ctx, nid, agg_self[nid], agg_total[nid], agg_count[nid], total_busy, None, scope))
    # per thread: the main thread and the busiest others (of the app, when there is one)
    keys = sorted(mine, key=lambda k: -mine[k].busy_us)[:8]
    if ctx.main in mine and ctx.main not in keys:
        keys.insert(0, ctx.main)
    if len(ctx.threads) > 1:
        for k in keys:
            th = ctx.threads[k]
            if th.busy_us <= 0:
                continue
            label = pd.thread_label(*k)
            own = (n for n in th.self_by if not is_container(pd.strings[n]))
            for nid in sorted(own, key=lambda n: (-th.self_by[n], -th.total_by[n]))[:TOP_PER_THREAD]:
                out.append(slice_hotspot(ctx, nid, th.self_by[nid], th.total_by[nid], th.count_by[nid], th.busy_us,
                                         label, scope))
    return out


#: Rows of ``slice_stats`` kept per scope (by summed duration): bounded JSON.
MAX_SLICE_STATS = 1500
#: Names the summaries of the other scopes list.
SCOPE_TOP_NAMES = 5


def slice_stats(ctx) -> list[SliceStat]:
    """Per-name statistics of every slice, for the app ("app") and for all processes ("all"),
    as androidx TraceSectionMetric computes them: every slice with that name counts (nested
    ones too), ``sum`` adds their durations, ``first`` is the earliest by start time; thread
    slices and process-scoped async spans (kind "async") each get their own row."""
    pd = ctx.pd
    sc = ctx.scope
    acc: dict[tuple[str, str, int], list] = {}  # (scope, kind, nid) → [count, sum, min, max, first_ts, first_dur, pid]

    def add(scope: str, kind: str, nid: int, n: int, tot: float, lo: float, hi: float, t0: float, d0: float, pid: int):
        a = acc.get((scope, kind, nid))
        if a is None:
            acc[(scope, kind, nid)] = [n, tot, lo, hi, t0, d0, pid]
            return
        a[0] += n
        a[1] += tot
        a[2] = min(a[2], lo)
        a[3] = max(a[3], hi)
        if t0 < a[4]:
            a[4], a[5], a[6] = t0, d0, pid

    def group(kind: str, pid: int, ts: np.ndarray, dur: np.ndarray, name: np.ndarray) -> None:
        if not len(ts):
            return
        # by name, then start: thread slices come sorted by start, so a stable sort by name
        # alone gives that order (16-bit radix when the ids fit: the two-key sort is ~20× slower)
        order = slice_tree.stable_argsort(name) if np.all(ts[1:] >= ts[:-1]) else np.lexsort((ts, name))
        ts, dur, name = ts[order], dur[order], name[order]
        uniq, first, counts = np.unique(name, return_index=True, return_counts=True)
        sums = np.add.reduceat(dur, first)
        mins = np.minimum.reduceat(dur, first)
        maxs = np.maximum.reduceat(dur, first)
        scopes = ["all"] + (["app"] if sc is not None and pid in sc.app_pids else [])
        for j, nid in enumerate(uniq.tolist()):
            i = int(first[j])
            for scope in scopes:
                add(scope, kind, nid, int(counts[j]), float(sums[j]), float(mins[j]), float(maxs[j]),
                    float(ts[i]), float(dur[i]), pid)

    _thread_groups(ctx, add)
    for (pid, _track), cols in pd.async_slices.items():
        group("async", pid, np.frombuffer(cols.ts, dtype=np.float64), np.frombuffer(cols.dur, dtype=np.float64),
              np.frombuffer(cols.name, dtype=np.dtype(cols.name.typecode)).astype(np.int64))
    out: list[SliceStat] = []
    for scope in ("app", "all"):
        rows = sorted(((k, v) for k, v in acc.items() if k[0] == scope), key=lambda kv: -kv[1][1])[:MAX_SLICE_STATS]
        for (_, kind, nid), (n, tot, lo, hi, t0, d0, pid) in rows:
            out.append(SliceStat(
                name=pd.strings[nid], scope=scope, kind=kind, count=n, sum_ms=_ms(tot), min_ms=_ms(lo),
                max_ms=_ms(hi), first_ms=_ms(d0), first_start_ms=ctx.rel(t0), first_process=pd.processes.get(pid),
            ))
    return out


def _thread_groups(ctx, add) -> None:
    """slice_stats' per-thread groups of every thread at once: all threads' slices in one set
    of columns sorted by (thread, name, start) — what each thread's own sort by name gave, as
    its slices come sorted by start — and per-group count, sum, min and max by ``reduceat``
    over the same runs of values; ``add`` called thread by thread, names ascending, as the
    per-thread pass did (a trace of 11,000 short-lived threads paid its numpy passes for each)."""
    sc = ctx.scope
    threads = [(key[0], th) for key, th in ctx.threads.items() if len(th.ts)]
    if not threads:
        return
    ts = np.concatenate([th.ts for _, th in threads])
    dur = np.concatenate([th.dur for _, th in threads])
    name = np.concatenate([th.name for _, th in threads]).astype(np.int64, copy=False)
    which = np.repeat(np.arange(len(threads)), [len(th.ts) for _, th in threads])
    order = np.lexsort((ts, name, which))
    ts, dur, name, which = ts[order], dur[order], name[order], which[order]
    del order
    new = np.ones(len(ts), dtype=bool)
    new[1:] = (which[1:] != which[:-1]) | (name[1:] != name[:-1])
    first = np.flatnonzero(new)
    counts = np.diff(np.append(first, len(ts))).tolist()
    sums = np.add.reduceat(dur, first).tolist()
    mins = np.minimum.reduceat(dur, first).tolist()
    maxs = np.maximum.reduceat(dur, first).tolist()
    app = sc.app_pids if sc is not None else frozenset()
    for j, (t, d0, w, nid) in enumerate(zip(ts[first].tolist(), dur[first].tolist(), which[first].tolist(),
                                            name[first].tolist())):
        pid = threads[w][0]
        add("all", "thread", nid, counts[j], sums[j], mins[j], maxs[j], t, d0, pid)
        if pid in app:
            add("app", "thread", nid, counts[j], sums[j], mins[j], maxs[j], t, d0, pid)


def app_scope(ctx) -> AppScope | None:
    """The app process and, apart, what the harness and the system processes did."""
    sc = ctx.scope
    if sc is None:
        return None
    pd = ctx.pd
    groups: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for k in ctx.threads:
        groups[sc.group(k[0])].append(k)
    summaries = []
    for g in ("app", "harness", "system"):
        keys = groups.get(g, [])
        if not keys:
            continue
        self_by: dict[int, float] = defaultdict(float)
        for k in keys:
            for nid, v in ctx.threads[k].self_by.items():
                self_by[nid] += v
        top = sorted(self_by, key=lambda n: -self_by[n])[:SCOPE_TOP_NAMES]
        pids = sorted({k[0] for k in keys})
        summaries.append(ScopeSummary(
            scope=g,
            processes=[pd.processes.get(p) or str(p) for p in pids][:20],
            busy_ms=_ms(sum(ctx.threads[k].busy_us for k in keys)),
            slice_count=sum(ctx.threads[k].count for k in keys),
            top=[f"{pd.strings[n]} ({_ms(self_by[n]):g} ms)" for n in top],
        ))
    return AppScope(pid=sc.pid, process=sc.process, chosen_by=sc.chosen_by, summaries=summaries,
                    harness=[pd.processes.get(p) or str(p) for p in sorted(sc.harness_pids)])


def slice_hotspot(ctx, nid: int, s: float, t: float, c: int, whole: float, thread: str | None,
                  scope: str | None = None) -> Hotspot:
    name = ctx.pd.strings[nid]
    file, line = ctx.pd.locations.get(nid, (None, None))
    if file is not None and name.endswith(f" ({file}:{line})"):
        name = name[: -len(f" ({file}:{line})")]  # viztracer's "func (file:line)"
    return Hotspot(
        name=name,
        file=file,
        line=line,
        self_ms=_ms(s),
        total_ms=_ms(t),
        self_pct=_pct(s, whole),
        total_pct=_pct(t, whole),
        count=c,
        thread=thread,
        kind="slice",
        scope=scope,
    )


def samples(ctx) -> None:
    """Aggregate sampled stacks per function (name, file): self, total, hottest line, and how
    many samples the function was on (anywhere in the stack, once per sample)."""
    pd = ctx.pd
    if not pd.stacks:
        ctx.sample_rows: list = []
        return
    refs = pd.frame_refs
    fkey = [(r.name, r.file) for r in refs]
    self_w: dict = defaultdict(float)
    total_w: dict = defaultdict(float)
    count: dict = defaultdict(int)
    line_w: dict = defaultdict(lambda: defaultdict(float))
    per_thread_self: dict = defaultdict(lambda: defaultdict(float))
    per_thread_total: dict = defaultdict(lambda: defaultdict(float))
    per_thread_count: dict = defaultdict(lambda: defaultdict(int))
    per_proc_self: dict = defaultdict(lambda: defaultdict(float))
    per_proc_total: dict = defaultdict(lambda: defaultdict(float))
    per_proc_count: dict = defaultdict(lambda: defaultdict(int))
    n_samples = pd.stack_samples
    grand = 0.0
    for key, w in pd.stacks.items():
        track, ids = key
        if not ids:
            continue
        grand += w
        ctx.sampled_busy[track] += w
        n = n_samples.get(key, 1)
        leaf = ids[-1]
        lk = fkey[leaf]
        self_w[lk] += w
        per_thread_self[track][lk] += w
        per_proc_self[track[0]][lk] += w
        if refs[leaf].line is not None:
            line_w[lk][refs[leaf].line] += w
        seen = set()
        for i in ids:
            k = fkey[i]
            if k in seen:
                continue
            seen.add(k)
            total_w[k] += w
            count[k] += n
            per_thread_total[track][k] += w
            per_thread_count[track][k] += n
            per_proc_total[track[0]][k] += w
            per_proc_count[track[0]][k] += n
            if k != lk and refs[i].line is not None and k not in line_w:
                line_w[k][refs[i].line] += 0.0
        if ctx.path_count() < MAX_PATHS:
            ctx.paths[(track, ("s",) + tuple(fkey[i] for i in ids[-64:]))] += w
    ctx.sample_rows = [self_w, total_w, count, line_w, per_thread_self, per_thread_total, per_thread_count, grand,
                       (per_proc_self, per_proc_total, per_proc_count)]


def sample_hotspots(ctx) -> list[Hotspot]:
    if not ctx.pd.stacks or not ctx.sample_rows:
        return []
    self_w, total_w, count, line_w, pts, ptt, ptc, grand, (pps, ppt, ppc) = ctx.sample_rows

    def line_of(k) -> int | None:
        lines = line_w.get(k)
        if not lines:
            return None
        return max(lines.items(), key=lambda kv: (kv[1], -kv[0]))[0]

    out: list[Hotspot] = []
    # by self time, then total: callers with no self time of their own (main, <module>) come
    # after every function that has some, ordered by the time spent under them
    keys = sorted(total_w, key=lambda k: (-self_w.get(k, 0.0), -total_w[k], k[0], k[1] or ""))[: ctx.top]
    for k in keys:
        out.append(Hotspot(
            name=k[0], file=k[1], line=line_of(k),
            self_ms=_ms(self_w.get(k, 0.0)), total_ms=_ms(total_w[k]),
            self_pct=_pct(self_w.get(k, 0.0), grand), total_pct=_pct(total_w[k], grand),
            count=count.get(k, 0), thread=None, kind="sample",
        ))
    if len(pts) > 1:
        tracks = sorted(pts, key=lambda tr: -ctx.sampled_busy[tr])[:8]
        for tr in tracks:
            whole = ctx.sampled_busy[tr]
            label = ctx.pd.thread_label(*tr)
            out += _top_sampled(pts[tr], ptt[tr], ptc[tr], whole, line_of, thread=label)
    # per process, over its threads: only a process with more than one sampled thread (one
    # thread's process rows would repeat its thread's)
    threads_of: dict[int, list] = defaultdict(list)
    for tr in pts:
        threads_of[tr[0]].append(tr)
    if len(threads_of) > 1:
        weight = {pid: sum(ctx.sampled_busy[tr] for tr in trs) for pid, trs in threads_of.items()
                  if len(trs) > 1 and ctx.pd.process_label(pid) is not None}
        for pid in sorted(weight, key=lambda p: (-weight[p], p))[:8]:
            whole = weight[pid]
            label = ctx.pd.process_label(pid)
            out += _top_sampled(pps[pid], ppt[pid], ppc[pid], whole, line_of, process=label)
    return out


def _top_sampled(self_w: dict, total_w: dict, count: dict, whole: float, line_of, **who) -> list[Hotspot]:
    """The :data:`TOP_PER_THREAD` functions of one thread's or one process's samples (``who``:
    ``thread=`` or ``process=`` its label), self/total as shares of its own sampled weight;
    ties by total, then name and file, so the order never depends on dict order."""
    keys = sorted(self_w, key=lambda k: (-self_w[k], -total_w.get(k, 0.0), k[0], k[1] or ""))[:TOP_PER_THREAD]
    return [Hotspot(name=k[0], file=k[1], line=line_of(k), self_ms=_ms(self_w[k]), total_ms=_ms(total_w.get(k, 0.0)),
                    self_pct=_pct(self_w[k], whole), total_pct=_pct(total_w.get(k, 0.0), whole),
                    count=count.get(k, 0), kind="sample", **who)
            for k in keys]


def call_hotspots(ctx) -> list[Hotspot]:
    calls = ctx.pd.calls
    if not calls:
        return []
    whole = sum(c.self_us for c in calls) or 1.0
    ranked = sorted(calls, key=lambda c: (-c.self_us, -c.total_us))[: ctx.top]
    return [
        Hotspot(
            name=c.name, file=c.file, line=c.line,
            self_ms=_ms(c.self_us), total_ms=_ms(c.total_us),
            self_pct=_pct(c.self_us, whole), total_pct=_pct(c.total_us, whole),
            count=c.calls, thread=None, kind="call",
        )
        for c in ranked
    ]


def import_hotspots(ctx) -> list[Hotspot]:
    imps = ctx.pd.imports
    if not imps:
        return []
    whole = sum(i.cumulative_us for i in imps if i.depth == 0) or sum(i.self_us for i in imps) or 1.0
    ranked = sorted(imps, key=lambda i: (-i.self_us, -i.cumulative_us))[: ctx.top]
    return [
        Hotspot(
            name=i.module, file=i.file, line=1 if i.file else None,
            self_ms=_ms(i.self_us), total_ms=_ms(i.cumulative_us),
            self_pct=_pct(i.self_us, whole), total_pct=_pct(i.cumulative_us, whole),
            count=1, thread=None, kind="import",
        )
        for i in ranked
    ]


def stacks(ctx) -> list[StackWeight]:
    """The heaviest paths, slices' and samples', in the order a stable sort by weight gives
    (ties: slice paths thread by thread as walked, then sampled stacks): the top ones are
    picked with ``np.partition`` and only those sorted and turned into names."""
    pd = ctx.pd
    sampled = list(ctx.paths.items())
    weights = [sp.weight for sp in ctx.slice_paths] + [np.array([w for _, w in sampled], dtype=np.float64)]
    w = np.concatenate(weights)
    if not len(w):
        return []
    k = min(MAX_RESULT_STACKS, len(w))
    if k < len(w):
        kth = np.partition(w, len(w) - k)[len(w) - k]  # the k-th largest weight
        cand = np.flatnonzero(w >= kth)
    else:
        cand = np.arange(len(w))
    top = cand[np.lexsort((cand, -w[cand]))][:k].tolist()
    starts = np.cumsum([0] + [len(x) for x in weights]).tolist()
    out = []
    for i in top:
        j = int(np.searchsorted(starts, i, side="right")) - 1
        is_sample = j >= len(ctx.slice_paths)
        if not is_sample:
            sp = ctx.slice_paths[j]
            track = sp.key
            frames = [pd.strings[n] for n in sp.path(int(sp.pid[i - starts[j]]))]
        else:
            (track, path), _ = sampled[i - starts[j]]
            frames = [f"{n} ({os.path.basename(f)})" if f else n for n, f in path[1:]]
        if is_sample:  # only CPU samples say so: a traced stack stays as it was
            out.append(StackWeight(frames=frames, weight_ms=_ms(float(w[i])), thread=pd.thread_label(*track),
                                   process=pd.process_label(track[0]), sampled=True))
        else:
            out.append(StackWeight(frames=frames, weight_ms=_ms(float(w[i])), thread=pd.thread_label(*track)))
    return out
