"""Hot spots: self and total time per slice name, sampled function, pstats row or import.

Nested slices: per-thread stacks rebuilt from times (sorted by start, longer first), self =
own time minus direct children. Sampled stacks: self = the leaf's weight, total = the weight of
every stack the function is on, counted once per stack (recursion does not double it). pstats
rows and ``-X importtime`` modules as they come. Also the heaviest stacks for flame graphs.
"""

from __future__ import annotations

import os
from array import array
from collections import defaultdict
from dataclasses import dataclass
from operator import attrgetter

import numpy as np

from nodes.perf.compiled_parts import compiled
from nodes.perf.containers import is_container
from nodes.perf.metrics import slice_tree
from nodes.perf.metrics.clipped_sum import sum_check_rows
from nodes.perf.metrics.common import MAX_PATHS, TOP_PER_THREAD, _ms, _pct, _Thread, joined_column, read_column, unique_inverse
from nodes.perf.model import MAX_RESULT_STACKS, AppScope, Hotspot, ScopeSummary, SliceStat, StackWeight


def walk(ctx, key: tuple[int, int]) -> None:
    """One thread's slices: self, total and count per name, busy time, top-level tasks and the
    weight of every path, from the nesting :mod:`.slice_tree` computes (with numpy; the rules
    and why they are the old per-slice stack walk's are in that module). Sums are added in the
    walk's order (pre-order for totals, closing order for self time and paths) and the dicts
    filled in the order the walk first touched each name or path, so ties rank as before."""
    cols = ctx.pd.slices[key]
    n = len(cols)
    if 0 < n <= SMALL_THREAD:
        _keep(ctx, key, *_walk_batch([key], [cols])[0])
        return
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
    present = np.flatnonzero(counts)
    th.names = present.tolist() if lut is None else ids.tolist()
    for nid, c in zip(th.names, counts[present].tolist()):
        th.count_by[nid] = c
    del local
    roots = np.flatnonzero(tree.parent < 0)
    th.busy_us = _sequential_sum(dur[roots])
    if track_paths:
        _paths(ctx, key, tree, name, post)
    del tree, post
    # the top-level slices stay columns, made into tuples only when read (_Thread.top_level);
    # threads.long_tasks reads only the long ones: a list of a tuple a task was ~400 MB for the
    # 3 M top-level slices of tests/test_reliability_hostile.py's 10^7 tiny events
    th.keep_roots(ts[roots], dur[roots], name[roots])


#: Threads with at most this many slices are walked together (:func:`_walk_batch`): for a few
#: dozen slices the fixed cost of the numpy passes is the whole cost, and a trace of many
#: short-lived threads (tens of thousands) paid it for each; up to a few thousand the batch
#: is still cheaper than a pass of its own (benchmarks/metrics_growth.py, 32 copies).
SMALL_THREAD = 2048
#: Slices walked in one batch at most: the batch's columns (a few dozen arrays of its length)
#: stay a few tens of MB however many threads a trace has.
BATCH_SLICES = 100_000


def walk_all(ctx) -> None:
    """:func:`walk` for every thread of the trace, in the order of ``pd.slices`` (the order
    ``ctx.threads`` lists them in, and the order the path cap is checked in): the threads of at
    most :data:`SMALL_THREAD` slices in batches (:func:`_walk_batch`) of up to
    :data:`BATCH_SLICES` slices, the others one by one. With the C walk (:data:`NATIVE`), every
    thread with slices in batches of up to :data:`BATCH_SLICES` slices (:func:`_native_walk`)."""
    if NATIVE is not None:
        _walk_all_native(ctx)
        return
    slices = ctx.pd.slices
    done: dict = {}
    chunk: list = []
    held = 0
    for key, cols in slices.items():
        if 0 < len(cols) <= SMALL_THREAD:
            if chunk and held + len(cols) > BATCH_SLICES:
                done.update(zip([k for k, _c in chunk], _walk_batch([k for k, _c in chunk], [c for _k, c in chunk])))
                chunk, held = [], 0
            chunk.append((key, cols))
            held += len(cols)
    if chunk:
        done.update(zip([k for k, _c in chunk], _walk_batch([k for k, _c in chunk], [c for _k, c in chunk])))
    for key in slices:
        got = done.get(key)
        if got is None:
            walk(ctx, key)
        else:
            _keep(ctx, key, *got)


def _walk_all_native(ctx) -> None:
    """:func:`walk_all` by the C walk: the same threads in the same order, the same path cap."""
    slices = ctx.pd.slices
    keys = list(slices)
    cols = list(slices.values())
    lens = list(map(len, map(attrgetter("ts"), cols)))
    batches: list[list[int]] = []  # runs of threads with slices, BATCH_SLICES at most (or one thread)
    chunk: list[int] = []
    held = most = 0
    for i, n in enumerate(lens):
        if not n:
            continue
        if chunk and held + n > BATCH_SLICES:
            batches.append(chunk)
            chunk, held = [], 0
        chunk.append(i)
        held += n
        most = max(most, held)
    if chunk:
        batches.append(chunk)
    scratch = _scratch(most)
    into = _sum_columns(sum(lens))
    results: list = [None] * len(keys)
    for chunk in batches:
        for i, got in zip(chunk, _native_walk([keys[i] for i in chunk], [cols[i] for i in chunk], scratch, into)):
            results[i] = got
    # into ctx in the order of pd.slices, paths while the cap allows (as _keep checks them)
    threads, kept = ctx.threads, ctx.slice_paths
    count, room = ctx.slice_path_count, MAX_PATHS - len(ctx.paths)
    for key, got in zip(keys, results):
        if got is None:
            threads[key] = _Thread(key)  # no slices: walk's empty thread
            continue
        th, paths = got
        threads[key] = th
        if paths is not None and count < room:
            kept.append(paths)
            count += paths.count
    ctx.slice_path_count = count
    # every thread's self time per name, and slice_stats' groups, as columns in ctx.threads'
    # order (app_scope, _walked_groups): the columns the batches wrote their sums into
    sums = [results[chunk[0]][0]._sums for chunk in batches]
    if not all(w is not None for w in sums):
        return  # a batch the numpy walk walked
    nonempty = [i for chunk in batches for i in chunk]

    def per_thread(at: str) -> np.ndarray:
        per = np.zeros(len(keys), dtype=np.int64)
        if sums:
            per[nonempty] = np.concatenate([np.diff(getattr(w, at)) for w in sums])
        return per

    at = np.zeros(len(keys) + 1, dtype=np.int64)
    np.cumsum(per_thread("self_at"), out=at[1:])
    selfs, counts = (x.columns() for x in into)
    ctx.walk_self = (selfs["self_name"], selfs["self_val"], at)
    if sums and not any(w.signed_zero for w in sums):
        ctx.walk_groups = (per_thread("cnt_at"), *(counts[f] for f in _COUNT_FIELDS))


#: The per-name columns of the C walk's batches, laid end to end (WalkSums reads its stretch):
#: self time per name; slice counts per name with slice_stats' groups beside them.
_SELF_FIELDS = {"self_name": np.int64, "self_val": np.float64}
_COUNT_FIELDS = {"cnt_name": np.int64, "cnt_val": np.int64, "g_sum": np.float64, "g_min": np.float64,
                 "g_max": np.float64, "g_ts": np.float64, "g_dur": np.float64}


class _Stretches:
    """Columns of up to ``cap`` rows that batches append their rows to, each batch's rows then
    read as views of its stretch: no per-batch copies joined at the end (at 1 GB read whole,
    ~70 MB of them twice over). The columns are made empty (``np.empty``: the pages past the
    rows written are never touched, so never resident) at the most rows there can be."""

    def __init__(self, cap: int, fields: dict):
        self._cols = {f: np.empty(cap, dtype=dt) for f, dt in fields.items()}
        self.n = 0

    def add(self, parts: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        k = len(next(iter(parts.values())))
        a = self.n
        self.n += k
        out = {}
        for f, x in parts.items():
            col = self._cols[f][a:a + k]
            col[...] = x
            out[f] = col
        return out

    def columns(self) -> dict[str, np.ndarray]:
        return {f: c[:self.n] for f, c in self._cols.items()}


def _sum_columns(cap: int) -> tuple[_Stretches, _Stretches]:
    """The per-name columns of batches of ``cap`` slices in all (a thread has a row per name
    it holds, at most one a slice)."""
    return _Stretches(cap, _SELF_FIELDS), _Stretches(cap, _COUNT_FIELDS)


def _keep(ctx, key: tuple[int, int], th: _Thread, paths: "SlicePaths | None") -> None:
    """A batch-walked thread's results into ``ctx``: its paths only while the cap allows, as
    :func:`walk` checks it before each thread."""
    ctx.threads[key] = th
    if paths is not None and ctx.path_count() < MAX_PATHS:
        ctx.slice_paths.append(paths)
        ctx.slice_path_count += len(paths.pid)


def _walk_batch(keys: list, cols: list) -> list[tuple[_Thread, "SlicePaths | None"]]:
    """:func:`walk`'s results for many threads at once, each thread's exactly as its own walk
    gives them: all threads' slices in one set of columns sorted by (thread, start, longer
    first), one :mod:`.slice_tree` nesting for all, and every per-name sum a ``bincount`` over
    (thread, name) keys in the order the walk adds it (closing order for self time and paths,
    start order for totals and busy time; dicts filled in the order of first touch, counts by
    name id).

    The nesting of threads laid end to end is each thread's own only if no slice of one thread
    can seem open when the next thread's begin; times are therefore replaced by their ranks,
    thread ``s``'s shifted past every rank of the threads before it. The walk compares times and
    never adds them, so ranks give the same tree; the cut durations (``cut end - start``) are
    then computed from the real times, as :func:`.slice_tree.build` does."""
    if not keys:
        return []
    counts = np.array([len(c) for c in cols], dtype=np.int64)
    ts = joined_column(cols, "ts", np.float64)
    dur = joined_column(cols, "dur", np.float64)
    name = joined_column(cols, "name", np.int64)
    seg = np.repeat(np.arange(len(keys), dtype=np.int64), counts)
    ok = np.isfinite(ts) & np.isfinite(dur)
    if not ok.all():
        ts, dur, name, seg = ts[ok], dur[ok], name[ok], seg[ok]
    dur = np.maximum(dur, 0.0)
    nseg = len(keys)
    n = len(ts)
    out: list[tuple[_Thread, SlicePaths | None]] = []
    if not n:
        for s, key in enumerate(keys):
            th = _Thread(key)
            th.ts, th.dur, th.name = ts, dur, name
            out.append((th, None))
        return out
    # the ranks first (they do not depend on the order): they make the sort one int64 key
    e = ts + dur
    uniq, inv = unique_inverse(np.concatenate([ts, e]))
    order = _batch_order(seg, inv[:n], ts, dur, len(uniq))
    ts, dur, name, seg, e = ts[order], dur[order], name[order], seg[order], e[order]
    inv = np.concatenate([inv[:n][order], inv[n:][order]]).astype(np.float64)
    del order, ok
    bounds = np.searchsorted(seg, np.arange(nseg + 1, dtype=np.int64))  # thread s: [bounds[s], bounds[s + 1])
    shift = seg.astype(np.float64) * float(len(uniq))
    rts = inv[:n] + shift
    tree = slice_tree.build(rts, (inv[n:] + shift) - rts)
    del inv
    c = uniq[(tree.end - shift).astype(np.int64)]  # the cut ends, as times
    del uniq, shift, rts
    cut = np.where(c < e, c - ts, dur)
    del c, e
    parent = tree.parent
    has = parent >= 0
    children = np.bincount(parent[has], weights=cut[has], minlength=n)
    own = cut - children
    del children
    post = tree.post_order()
    span = int(name.max()) + 1
    pair, dense = unique_inverse(seg * span + name)
    pair_seg, pair_name = pair // span, pair % span
    # self time: closing order
    kpost = dense[post]
    self_sum = np.bincount(kpost, weights=np.where(own > 0.0, own, 0.0)[post], minlength=len(pair))
    self_keys = _first_seen(kpost)
    del kpost
    # totals: outermost occurrences, start order
    outer = np.flatnonzero(tree.outermost(name))
    kout = dense[outer]
    total_sum = np.bincount(kout, weights=cut[outer], minlength=len(pair))
    total_keys = _first_seen(kout)
    del kout, outer
    count_of = np.bincount(dense, minlength=len(pair))
    roots = np.flatnonzero(parent < 0)
    busy = np.bincount(seg[roots], weights=dur[roots], minlength=nseg).tolist()
    root_bounds = np.searchsorted(seg[roots], np.arange(nseg + 1, dtype=np.int64)).tolist()
    top_ts, top_dur, top_name = ts[roots], dur[roots], name[roots]
    paths = _batch_paths(keys, tree, name, seg, own, post)
    del tree, post, own, dense

    def split(keys_: np.ndarray, vals: np.ndarray):
        sk = pair_seg[keys_]
        at = np.searchsorted(sk, np.arange(nseg + 1, dtype=np.int64)).tolist()
        return at, pair_name[keys_].tolist(), vals[keys_].tolist()

    s_at, s_name, s_val = split(self_keys, self_sum)
    t_at, t_name, t_val = split(total_keys, total_sum)
    c_at, c_name, c_val = split(np.arange(len(pair)), count_of)
    b = bounds.tolist()
    for s, key in enumerate(keys):
        lo, hi = b[s], b[s + 1]
        sa, sb, ta, tb, ca, cb = s_at[s], s_at[s + 1], t_at[s], t_at[s + 1], c_at[s], c_at[s + 1]
        th = _Thread.of(key, ts[lo:hi], dur[lo:hi], name[lo:hi], busy[s],
                        defaultdict(float, zip(s_name[sa:sb], s_val[sa:sb])),
                        defaultdict(float, zip(t_name[ta:tb], t_val[ta:tb])),
                        defaultdict(int, zip(c_name[ca:cb], c_val[ca:cb])),
                        (top_ts[root_bounds[s]:root_bounds[s + 1]], top_dur[root_bounds[s]:root_bounds[s + 1]],
                         top_name[root_bounds[s]:root_bounds[s + 1]]))
        th.names = c_name[ca:cb]  # the thread's pairs come sorted by name: its distinct names, ascending
        out.append((th, paths[s]))
    return out


#: The C slice walk (nodes/perf/metrics/_metricsc.c), or None: the numpy walk above.
NATIVE = compiled("nodes.perf.metrics._metricsc")


class WalkSums:
    """The per-thread sums of one :func:`_native_walk` as its columns, thread ``s``'s made into
    the dicts :class:`.common._Thread` lists on first read (most threads are only summed over);
    its rows ``[bounds[s], bounds[s + 1])``. ``at``: where each slice in walk order lies in its
    thread's input columns (``_Thread.ts`` and the others gather by it), None when the batch
    keeps its sorted columns instead; ``root``: the top-level slices' positions in the batch's
    walk order."""

    __slots__ = ("self_name", "self_val", "self_at", "tot_name", "tot_val", "tot_at", "cnt_name", "cnt_val",
                 "cnt_at", "root", "root_at", "at", "bounds", "signed_zero")

    def self_by(self, s: int) -> dict:
        a, b = self.self_at[s], self.self_at[s + 1]
        return defaultdict(float, zip(self.self_name[a:b].tolist(), self.self_val[a:b].tolist()))

    def total_by(self, s: int) -> dict:
        a, b = self.tot_at[s], self.tot_at[s + 1]
        return defaultdict(float, zip(self.tot_name[a:b].tolist(), self.tot_val[a:b].tolist()))

    def count_by(self, s: int) -> dict:
        a, b = self.cnt_at[s], self.cnt_at[s + 1]
        return defaultdict(int, zip(self.cnt_name[a:b].tolist(), self.cnt_val[a:b].tolist()))

    def names(self, s: int) -> list[int]:
        """Thread ``s``'s distinct name ids, ascending (its count pairs come sorted by name)."""
        return self.cnt_name[self.cnt_at[s]:self.cnt_at[s + 1]].tolist()

    def roots(self, s: int) -> np.ndarray:
        """Thread ``s``'s top-level slices: their positions in its slices in walk order."""
        return self.root[self.root_at[s]:self.root_at[s + 1]] - self.bounds[s]

    def gathered(self, s: int, col, dtype) -> np.ndarray:
        """Thread ``s``'s column ``col`` (of its ``pd.slices`` columns) in walk order."""
        x = np.frombuffer(col, dtype=np.dtype(col.typecode)) if isinstance(col, array) else np.asarray(col)
        return x[self.at[self.bounds[s]:self.bounds[s + 1]]].astype(dtype, copy=False)


def _scratch(n: int) -> list[np.ndarray]:
    """The C walk's per-batch output columns that :func:`_native_walk` copies out at their
    length (or not at all): roots, self (name, value), total (name, value), count (name,
    value), listed path, path (up, name), listed weight, slice_stats' groups (sum, min, max,
    first start, first duration), the sorted columns (start, duration, name) and each slice's
    place in its thread's input."""
    return [np.empty(n, dtype=np.float64 if k in (2, 4, 10, 11, 12, 13, 14, 15, 16, 17) else np.int64)
            for k in range(20)]


#: Name ids beyond this many times a batch's slice count are renumbered densely before the C
#: walk, whose per-name tables are as long as the largest id.
_DENSE_NAMES = 4


def _positions(x: np.ndarray, n: int) -> np.ndarray:
    """Positions among ``n`` rows, as int32 when they fit (4 bytes a slice held, not 8)."""
    return x.astype(np.int32) if n < 2**31 else x.copy()


def _native_walk(keys: list, cols: list, scratch: list | None = None,
                 into: tuple[_Stretches, _Stretches] | None = None) -> list[tuple[_Thread, "SlicePaths | None"]]:
    """:func:`_walk_batch`'s results (the reference walk's, thread by thread) from the C walk
    (:data:`NATIVE`): the same columns joined, non-finite slices dropped and durations clipped
    at 0 here as there, then one pass per thread in C. ``scratch``: :func:`_scratch` columns
    of at least the batch's length, reused batch after batch; ``into``: the :func:`_sum_columns`
    the per-name sums are written into (made for the batch alone when None).

    When nothing was dropped or clipped (no time not finite, no duration below 0 or -0.0: a
    Perfetto trace's slices never have one), the threads keep only each sorted slice's place
    in their own columns (``WalkSums.at``) and read their slices from ``pd.slices`` again: the
    same values, bit for bit; otherwise their sorted columns, as the numpy walk keeps them."""
    counts = np.fromiter(map(len, cols), dtype=np.int64, count=len(cols))
    ts = read_column(cols, "ts", np.float64)
    dur = read_column(cols, "dur", np.float64)
    name = read_column(cols, "name", np.int64)
    ok = np.isfinite(ts) & np.isfinite(dur)
    exact = bool(ok.all())
    if not exact:
        seg = np.repeat(np.arange(len(keys), dtype=np.int64), counts)
        ts, dur, name = ts[ok], dur[ok], name[ok]
        counts = np.bincount(seg[ok], minlength=len(keys))
    n = len(ts)
    if not n or int(name.min()) < 0:
        return _walk_batch(keys, cols)  # nothing to walk; or ids the numpy walk refuses as it does
    exact = exact and not np.signbit(dur).any()
    if not exact:  # otherwise every duration is finite and >= +0.0: the clip would copy them unchanged
        dur = np.maximum(dur, 0.0)
    lut = None
    span = int(name.max()) + 1
    if span > _DENSE_NAMES * n + 65536:
        lut, name = unique_inverse(name)
        span = len(lut)
    bounds = np.zeros(len(keys) + 1, dtype=np.int64)
    np.cumsum(counts, out=bounds[1:])
    nseg = len(keys)
    busy = np.empty(nseg)
    at = [np.empty(nseg + 1, dtype=np.int64) for _ in range(6)]
    root_at, self_at, tot_at, cnt_at, listed_at, path_at = at
    # the per-name and per-path columns fill a fraction of their n rows: written into scratch
    # columns kept for the next batch, and copied out at their length (fresh columns of n rows
    # for each batch cost more in page faults than the walk itself)
    if scratch is None or len(scratch[0]) < n:
        scratch = _scratch(n)
    (roots, self_name, self_val, tot_name, tot_val, cnt_name, cnt_val, listed_pid, path_up, path_name, listed_w,
     g_sum, g_min, g_max, g_ts, g_dur, o_ts, o_dur, o_name, o_at) = (x[:n] for x in scratch)
    if exact:  # the threads read their slices again by o_at: the sorted copies are not written
        o_ts = o_dur = o_name = None
    NATIVE.walk(ts, dur, name, bounds, span, MAX_PATH_DEPTH,
                (o_ts, o_dur, o_name, busy, roots, root_at, self_name, self_val, self_at, tot_name, tot_val, tot_at,
                 cnt_name, cnt_val, cnt_at, listed_pid, listed_w, listed_at, path_up, path_name, path_at,
                 g_sum, g_min, g_max, g_ts, g_dur, o_at))
    sums = WalkSums()
    sums.self_at, sums.tot_at, sums.cnt_at, sums.root_at, sums.bounds = self_at, tot_at, cnt_at, root_at, bounds

    def kept(col: np.ndarray, k: int, names: bool = False) -> np.ndarray:
        return lut[col[:k]] if names and lut is not None else col[:k].copy()

    def named(col: np.ndarray, k: int) -> np.ndarray:
        return lut[col[:k]] if lut is not None else col[:k]

    if into is None:
        into = _sum_columns(n)
    got = into[0].add({"self_name": named(self_name, self_at[-1]), "self_val": self_val[:self_at[-1]]})
    sums.self_name, sums.self_val = got["self_name"], got["self_val"]
    sums.tot_name, sums.tot_val = kept(tot_name, tot_at[-1], True), kept(tot_val, tot_at[-1])
    k = cnt_at[-1]
    got = into[1].add({"cnt_name": named(cnt_name, k), "cnt_val": cnt_val[:k], "g_sum": g_sum[:k], "g_min": g_min[:k],
                       "g_max": g_max[:k], "g_ts": g_ts[:k], "g_dur": g_dur[:k]})
    sums.cnt_name, sums.cnt_val = got["cnt_name"], got["cnt_val"]
    sums.signed_zero = bool(np.signbit(dur[dur == 0.0]).any())  # min/max of -0.0 and 0.0: numpy's choice
    listed_pid, listed_w = kept(listed_pid, listed_at[-1]), kept(listed_w, listed_at[-1])
    path_up, path_name = kept(path_up, path_at[-1]), kept(path_name, path_at[-1], True)
    sums.root = _positions(roots[:root_at[-1]], n)
    if exact:
        sums.at, sorted_cols = _positions(o_at, n), None
    else:
        sums.at, sorted_cols = None, (o_ts.copy(), o_dur.copy(), lut[o_name] if lut is not None else o_name.copy())
    b, busy_l, la = bounds.tolist(), busy.tolist(), listed_at.tolist()
    walked = (listed_pid, listed_w, listed_at, path_up, path_name, path_at)
    out: list[tuple[_Thread, SlicePaths | None]] = []
    thread = _Thread.walked
    for s, key, src, lo, hi, p, q in zip(range(nseg), keys, cols, b, b[1:], la, la[1:]):
        th = (thread(key, hi - lo, busy_l[s], sums, s, src=src) if sorted_cols is None else
              thread(key, hi - lo, busy_l[s], sums, s, cols=tuple(c[lo:hi] for c in sorted_cols)))
        out.append((th, None if p == q else WalkedPaths(key, walked, s, q - p)))
    return out


class WalkedPaths:
    """A :class:`SlicePaths` of the C walk: the thread's stretch of its batch's path columns,
    sliced out when read (:func:`stacks` reads every thread's weights, the few heaviest paths'
    names)."""

    __slots__ = ("key", "_cols", "_s", "count")

    def __init__(self, key: tuple[int, int], cols: tuple, s: int, count: int):
        self.key, self._cols, self._s, self.count = key, cols, s, count

    @property
    def pid(self) -> np.ndarray:
        listed_pid, _w, la, _up, _names, _pa = self._cols
        return listed_pid[la[self._s]:la[self._s + 1]]

    @property
    def weight(self) -> np.ndarray:
        _pid, listed_w, la, _up, _names, _pa = self._cols
        return listed_w[la[self._s]:la[self._s + 1]]

    @property
    def up(self) -> np.ndarray:
        _pid, _w, _la, path_up, _names, pa = self._cols
        return path_up[pa[self._s]:pa[self._s + 1]]

    @property
    def names(self) -> np.ndarray:
        _pid, _w, _la, _up, path_name, pa = self._cols
        return path_name[pa[self._s]:pa[self._s + 1]]

    def path(self, p: int) -> tuple[int, ...]:
        up, names = self.up, self.names
        out = []
        while p >= 0:
            out.append(int(names[p]))
            p = int(up[p])
        return tuple(reversed(out))


def _batch_paths(keys: list, tree, name: np.ndarray, seg: np.ndarray, own: np.ndarray,
                 post: np.ndarray) -> list["SlicePaths | None"]:
    """:func:`_paths` for :func:`_walk_batch`'s threads: per thread, the same paths and weights
    in the same order (paths numbered per thread, level by level)."""
    n = len(name)
    nseg = len(keys)
    pid = np.empty(n, dtype=np.int64)
    ups: list[np.ndarray] = []
    names: list[np.ndarray] = []
    segs: list[np.ndarray] = []
    count = 0
    span = int(name.max()) + 1
    by_depth, bounds = tree.by_depth, tree.depth_bounds
    parent = tree.parent
    level_start = 0
    for d in range(len(bounds) - 1):
        ids = by_depth[bounds[d]:bounds[d + 1]]
        if d >= MAX_PATH_DEPTH:
            pid[ids] = pid[parent[ids]]
            continue
        # a root's path is its thread's and its name; a deeper one its parent's path and its name
        up = pid[parent[ids]] if d else seg[ids]
        uniq, inv = unique_inverse(up * span + name[ids])
        pid[ids] = inv + count
        # a path's thread: a root path's is in its key, a deeper one's is its parent path's
        # (on the level before, numbered from level_start)
        segs.append(segs[-1][uniq // span - level_start] if d else uniq // span)
        level_start = count
        count += len(uniq)
        ups.append(uniq // span if d else np.full(len(uniq), -1, dtype=np.int64))
        names.append(uniq % span)
    up_all, name_all, seg_all = np.concatenate(ups), np.concatenate(names), np.concatenate(segs)
    # per thread, its paths renumbered from 0 in the global order (levels ascending)
    by_thread = np.argsort(seg_all, kind="stable")
    path_bounds = np.searchsorted(seg_all[by_thread], np.arange(nseg + 1, dtype=np.int64))
    local = np.empty(count, dtype=np.int64)
    local[by_thread] = np.arange(count, dtype=np.int64) - np.repeat(path_bounds[:-1], np.diff(path_bounds))
    up_local = np.where(up_all >= 0, local[np.maximum(up_all, 0)], -1)
    o = own[post]
    pos = o > 0.0
    keys_ = pid[post][pos]
    weights = o[pos]
    del pid, o
    listed = _first_seen(keys_) if len(keys_) else np.zeros(0, dtype=np.int64)
    sums = np.bincount(keys_, weights=weights, minlength=count) if len(keys_) else np.zeros(count)
    listed_seg = seg_all[listed]
    at = np.searchsorted(listed_seg, np.arange(nseg + 1, dtype=np.int64)).tolist()
    pb = path_bounds.tolist()
    up_t, name_t = up_local[by_thread], name_all[by_thread]
    out: list[SlicePaths | None] = []
    for s, key in enumerate(keys):
        if at[s] == at[s + 1]:
            out.append(None)
            continue
        mine = listed[at[s]:at[s + 1]]
        out.append(SlicePaths(key=key, pid=local[mine], weight=sums[mine],
                              up=up_t[pb[s]:pb[s + 1]], names=name_t[pb[s]:pb[s + 1]]))
    return out


def _batch_order(seg: np.ndarray, rank: np.ndarray, ts: np.ndarray, dur: np.ndarray, ranks: int) -> np.ndarray:
    """``np.lexsort((-dur, ts, seg))`` from the starts' ranks among ``ranks`` distinct times:
    one stable sort of ``seg * ranks + rank`` (~30× faster than the three-key sort on 100,000
    slices), which is the same order when equal starts of a thread already come longer first
    (as :func:`_start_order` checks for one thread); else the three-key sort."""
    key = seg * ranks + rank
    order = np.argsort(key, kind="stable")
    k, d = key[order], dur[order]
    if np.any((k[1:] == k[:-1]) & (d[1:] > d[:-1])):
        order = np.lexsort((-dur, ts, seg))
    return order


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

    @property
    def count(self) -> int:
        """Paths listed (with self time): what the path cap counts."""
        return len(self.pid)

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

    _thread_groups(ctx, add, acc)
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


def _thread_groups(ctx, add, acc: dict) -> None:
    """slice_stats' per-thread groups of every thread at once: all threads' slices in one set
    of columns sorted by (thread, name, start) — what each thread's own sort by name gave, as
    its slices come sorted by start — and per-group count, sum, min and max by ``reduceat``
    over the same runs of values; ``add`` called thread by thread, names ascending, as the
    per-thread pass did (a trace of 11,000 short-lived threads paid its numpy passes for each)."""
    sc = ctx.scope
    threads = [(key[0], th) for key, th in ctx.threads.items() if th.count]
    if not threads:
        return
    if getattr(ctx, "walk_groups", None) is not None and _native_reduceat_is_numpys():
        _walked_groups(ctx, threads, add, acc)
        return
    ts = np.concatenate([th.ts for _, th in threads])
    dur = np.concatenate([th.dur for _, th in threads])
    name = np.concatenate([th.name for _, th in threads]).astype(np.int64, copy=False)
    which = np.repeat(np.arange(len(threads)), [len(th.ts) for _, th in threads])
    order = _thread_name_order(ts, name, which)
    ts, dur, name, which = ts[order], dur[order], name[order], which[order]
    del order
    new = np.ones(len(ts), dtype=bool)
    new[1:] = (which[1:] != which[:-1]) | (name[1:] != name[:-1])
    first = np.flatnonzero(new)
    counts = np.diff(np.append(first, len(ts)))
    sums = np.add.reduceat(dur, first)
    mins = np.minimum.reduceat(dur, first)
    maxs = np.maximum.reduceat(dur, first)
    app = sc.app_pids if sc is not None else frozenset()
    t_first, d_first, w_first, n_first = ts[first], dur[first], which[first], name[first]
    _add_groups(threads, add, acc, app, (counts, sums, mins, maxs, t_first, d_first), w_first, n_first)


def _walked_groups(ctx, threads: list, add, acc: dict) -> None:
    """:func:`_thread_groups` from the groups the C walk left (``ctx.walk_groups``: per thread in
    ``ctx.threads``' order its names ascending, each with count, sum, min, max and first slice,
    as the sort and ``reduceat`` passes give them), folded as there."""
    per, n_first, counts, sums, mins, maxs, t_first, d_first = ctx.walk_groups
    sc = ctx.scope
    app = sc.app_pids if sc is not None else frozenset()
    per = per[per > 0]  # the threads with slices: ``threads``, in order
    w_first = np.repeat(np.arange(len(per), dtype=np.int64), per)
    _add_groups(threads, add, acc, app, (counts, sums, mins, maxs, t_first, d_first), w_first, n_first)


def _add_groups(threads: list, add, acc: dict, app, stats: tuple, w_first, n_first) -> None:
    """The groups of :func:`_thread_groups` or :func:`_walked_groups` (``stats``: count, sum,
    min, max, first start, first duration; ``w_first`` the thread, ``n_first`` the name) into
    ``acc``: folded per name with numpy, or one ``add`` per group where a value the fold could
    not order as the loop does (NaN, -0.0) is among them. Each column checked on its own, none
    joined into a copy."""
    counts, sums, mins, maxs, t_first, d_first = stats
    if not all(map(_foldable, (sums, mins, maxs, t_first, d_first))):
        _thread_groups_loop(threads, add, app, counts.tolist(), sums.tolist(), mins.tolist(), maxs.tolist(),
                            t_first.tolist(), d_first.tolist(), w_first.tolist(), n_first.tolist())
        return
    pids = np.fromiter((p for p, _th in threads), dtype=np.int64, count=len(threads))[w_first]
    cols = (counts, sums, mins, maxs, t_first, d_first, pids)
    _fold(acc, "all", n_first, cols)
    if app:
        in_app = np.isin(pids, np.fromiter(app, dtype=np.int64, count=len(app)))
        if in_app.any():
            _fold(acc, "app", n_first[in_app], tuple(c[in_app] for c in cols))


_REDUCEAT_OK: list[bool] = []


def _native_reduceat_is_numpys() -> bool:
    """Whether the C walk adds a group's durations as ``np.add.reduceat`` does here (the first
    value, then numpy's pairwise sum of the others; checked once on
    :func:`.clipped_sum.sum_check_rows`); when not, :func:`_thread_groups` sorts and sums with
    numpy itself."""
    if not _REDUCEAT_OK:
        values, offsets = sum_check_rows()
        got = np.zeros(len(offsets) - 1)
        NATIVE.pairwise_sums(values, offsets, got, True)
        _REDUCEAT_OK.append(bool(np.array_equal(got, np.add.reduceat(values, offsets[:-1]))))
    return _REDUCEAT_OK[0]


def _thread_name_order(ts: np.ndarray, name: np.ndarray, which: np.ndarray) -> np.ndarray:
    """``np.lexsort((ts, name, which))`` of threads' slices laid end to end: each thread's come
    sorted by start (the walk's order), so a stable sort by name, then a stable sort by thread,
    keep start order within a (thread, name) group, ties as given — two 16-bit radix sorts
    (:func:`.slice_tree.stable_argsort`) when the ids fit, instead of the three-key sort."""
    if len(which) and int(which[-1]) < 1 << 16 and int(name.max()) < 1 << 16 and int(name.min()) >= 0:
        same = which[1:] == which[:-1]
        if not np.any(same & (ts[1:] < ts[:-1])):
            order = slice_tree.stable_argsort(name)
            return order[slice_tree.stable_argsort(which[order])]
    return np.lexsort((ts, name, which))


def _foldable(values: np.ndarray) -> bool:
    """No NaN and no -0.0: with either, ``np.minimum``/``np.maximum``/``0.0 + x`` would not give
    what ``min()``/``max()``/``+=`` give one group at a time."""
    return not (np.isnan(values).any() or ((values == 0.0) & np.signbit(values)).any())


def _fold(acc: dict, scope: str, nid: np.ndarray, cols: tuple) -> None:
    """One scope's thread groups (in thread order, names ascending) folded into ``acc`` per
    name as slice_stats' ``add`` folds them one by one: counts and sums added in that order
    (``np.add.at`` is sequential; 0.0 + x is x without -0.0), min and max, the earliest first
    slice (the first group of the earliest start), entries in the order of each name's first group."""
    counts, sums, mins, maxs, t0, d0, pids = cols
    keys, at, inv = np.unique(nid, return_index=True, return_inverse=True)
    k = len(keys)
    n = np.zeros(k, dtype=np.int64)
    np.add.at(n, inv, counts)
    tot = np.zeros(k)
    np.add.at(tot, inv, sums)
    lo = np.full(k, np.inf)
    np.minimum.at(lo, inv, mins)
    hi = np.full(k, -np.inf)
    np.maximum.at(hi, inv, maxs)
    order = np.lexsort((np.arange(len(nid)), t0, inv))
    pick = order[np.searchsorted(inv[order], np.arange(k))]
    seen = np.argsort(at, kind="stable")
    for key, row in zip(keys[seen].tolist(), zip(n[seen].tolist(), tot[seen].tolist(), lo[seen].tolist(),
                                                 hi[seen].tolist(), t0[pick][seen].tolist(),
                                                 d0[pick][seen].tolist(), pids[pick][seen].tolist())):
        acc[(scope, "thread", key)] = list(row)


def _thread_groups_loop(threads, add, app, counts, sums, mins, maxs, ts, durs, which, names) -> None:
    """The groups one ``add`` at a time (the reference of :func:`_fold`)."""
    for j, (t, d0, w, nid) in enumerate(zip(ts, durs, which, names)):
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
    group_of = [sc.group(k[0]) for k in ctx.threads]
    summaries = []
    for g in ("app", "harness", "system"):
        keys = [k for k, of in zip(ctx.threads, group_of) if of == g]
        if not keys:
            continue
        top = _top_self(ctx, [of == g for of in group_of], keys)
        pids = sorted({k[0] for k in keys})
        summaries.append(ScopeSummary(
            scope=g,
            processes=[pd.processes.get(p) or str(p) for p in pids][:20],
            busy_ms=_ms(sum(ctx.threads[k].busy_us for k in keys)),
            slice_count=sum(ctx.threads[k].count for k in keys),
            top=[f"{pd.strings[n]} ({_ms(v):g} ms)" for n, v in top],
        ))
    return AppScope(pid=sc.pid, process=sc.process, chosen_by=sc.chosen_by, summaries=summaries,
                    harness=[pd.processes.get(p) or str(p) for p in sorted(sc.harness_pids)])


def _top_self(ctx, member: list[bool], keys: list[tuple[int, int]]) -> list[tuple[int, float]]:
    """The :data:`SCOPE_TOP_NAMES` names of most self time over the threads ``keys`` (``member``:
    which of ``ctx.threads`` they are), with that time: the threads' ``self_by`` added per name in
    thread order, names ranked by a stable sort in the order they were first added. From the C
    walk's columns (``ctx.walk_self``) when it walked every thread, without a dict per thread."""
    if ctx.walk_self is not None:
        names, vals, at = ctx.walk_self
        pick = np.repeat(np.array(member, dtype=bool), np.diff(at))
        nid, v = names[pick], vals[pick]
        if not len(nid):
            return []
        sums = np.bincount(nid, weights=v)  # in order from 0.0, as ``+=`` into a defaultdict
        seen = _first_seen(nid)
        if not np.isnan(sums[seen]).any():
            top = seen[np.argsort(-sums[seen], kind="stable")][:SCOPE_TOP_NAMES].tolist()
            return list(zip(top, sums[top].tolist()))
    self_by: dict[int, float] = defaultdict(float)
    for k in keys:
        for nid, v in ctx.threads[k].self_by.items():
            self_by[nid] += v
    return [(n, self_by[n]) for n in sorted(self_by, key=lambda n: -self_by[n])[:SCOPE_TOP_NAMES]]


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
    bounds = np.cumsum([0] + [len(x) for x in weights])
    starts = bounds.tolist()
    out = []
    for i, j in zip(top, (np.searchsorted(bounds, top, side="right") - 1).tolist()):
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
