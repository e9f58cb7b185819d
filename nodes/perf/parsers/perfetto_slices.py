"""atrace begin/end events (ftrace ``print`` B/E, ``zero`` flags 1/2) as one set of columns,
paired into per-thread slices in vectorised passes.

Each thread's events are taken in time order (ties in arrival order), an ``E`` closes the
innermost open ``B``, an ``E`` with nothing open is counted and dropped, and what is still
open at the end is counted as unfinished — the stack walk ``perfetto_ftrace`` did thread by
thread (``pair_reference``, kept for times numpy cannot hold). On columns: the depth is a
running sum clamped at zero (the running sum minus its running minimum), a ``B`` opens the
level it reaches and a matched ``E`` closes the level it leaves, so sorting by (thread, level,
time) puts every ``E`` right after its ``B``.
"""

from __future__ import annotations

from array import array
from typing import NamedTuple

import numpy as np

from nodes.perf.parsers.perfetto_heap import give_back
from nodes.perf.parsers.perfetto_wire import compiled

B, E = 1, 2
SAFE_NS = 1 << 61


class AtraceLog:
    """Every atrace B/E event in arrival order: tid, time (ns), code, name id.

    Thread ids and name ids are held as int32 (17 bytes an event, not 25: the 1 GB benchmark
    trace's ~8 M events are held to the end of the read), both as int64 once a value does not
    fit (an ftrace pid is a uint32). ``wide`` holds them as int64 from the start (the binder
    pairings' logs, whose columns go on into int64 arithmetic)."""

    def __init__(self, wide: bool = False) -> None:
        self.tid = array("q" if wide else "i")
        self.ts = array("q")
        self.code = array("b")
        self.arg = array("q" if wide else "i")

    def __len__(self) -> int:
        return len(self.code)

    def push(self, tid: int, ts: int, code: int, arg: int = 0) -> None:
        self.ts.append(ts)  # first: a time out of range fails before anything is stored
        try:
            self.tid.append(tid)
        except OverflowError:
            if self.tid.typecode == "q":
                raise
            self.ts.pop()
            self._widen()
            return self.push(tid, ts, code, arg)
        self.code.append(code)
        try:
            self.arg.append(arg)
        except OverflowError:
            if self.arg.typecode == "q":
                raise
            self.ts.pop()
            self.tid.pop()
            self.code.pop()
            self._widen()
            return self.push(tid, ts, code, arg)

    def _widen(self) -> None:
        """The thread ids and name ids as int64, for a value beyond int32."""
        self.tid, self.arg = array("q", self.tid), array("q", self.arg)

    def extend(self, tid: np.ndarray, ts: np.ndarray, code: np.ndarray, arg: np.ndarray) -> None:
        """Rows after every row so far, from numpy columns of one length (integers)."""
        if not len(ts):
            return
        if self.tid.typecode == "i" and not (_fits_int32(tid) and _fits_int32(arg)):
            self._widen()
        ints = _INTS[self.tid.typecode]
        # each column's bytes read in place (frombytes takes only a buffer of bytes), not copied twice
        for col, vals, kind in ((self.ts, ts, np.int64), (self.tid, tid, ints), (self.code, code, np.int8),
                                (self.arg, arg, ints)):
            col.frombytes(np.ascontiguousarray(vals, kind).view(np.uint8))

    def columns(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """tid, ts, code, arg as numpy views of the columns (int32 or int64, int64, int8, as tid)."""
        ints = _INTS[self.tid.typecode]
        return (np.frombuffer(self.tid, ints), np.frombuffer(self.ts, np.int64), np.frombuffer(self.code, np.int8),
                np.frombuffer(self.arg, ints))


#: numpy's type of an ``array`` column of thread ids or name ids
_INTS = {"i": np.int32, "q": np.int64}


def _fits_int32(col: np.ndarray) -> bool:
    return not len(col) or (int(col.min()) >= -(1 << 31) and int(col.max()) < 1 << 31)


def _pair_reference(log: AtraceLog):
    """The per-thread stack walk: [(tid, [(t0, t1, name id)…] in close order, [(t0, name id)…]
    still open, bottom first)], unmatched, unfinished."""
    per: dict[int, list[int]] = {}
    for i, t in enumerate(log.tid):
        per.setdefault(t, []).append(i)
    out, unmatched, unfinished = [], 0, 0
    ts, code, arg = log.ts, log.code, log.arg
    for tid, idx in per.items():
        stack: list[tuple[int, int]] = []
        rows = []
        for i in sorted(idx, key=ts.__getitem__):
            if code[i] == B:
                stack.append((ts[i], arg[i]))
            elif stack:
                t0, nid = stack.pop()
                rows.append((t0, ts[i], nid))
            else:
                unmatched += 1
        unfinished += len(stack)
        out.append((tid, rows, stack))
    return out, unmatched, unfinished


class Paired(NamedTuple):
    """Every thread's slices as columns: threads in the order their first event arrived, each
    thread's closed slices in close order (``tid``, ``t0``, ``t1``, ``nid``: start ns, end ns,
    name id) and its begins still open, bottom first (``open_tid``, ``open_t0``, ``open_nid``)."""

    threads: list[int]
    tid: np.ndarray
    t0: np.ndarray
    t1: np.ndarray
    nid: np.ndarray
    open_tid: np.ndarray
    open_t0: np.ndarray
    open_nid: np.ndarray
    unmatched: int
    unfinished: int


def pair(log: AtraceLog):
    """Every thread's slices: ([(tid, start ns, end ns, name id arrays in close order, start ns and
    name id arrays of the begins still open, bottom first)] in the order each thread's first
    event arrived, unmatched ends, unfinished begins)."""
    p = pair_rows(log)
    out = []
    u = np.array(p.threads, np.int64)
    by_tid = np.argsort(u)
    r = by_tid[np.searchsorted(u[by_tid], p.tid)]  # each row's thread, as its place in p.threads
    o = by_tid[np.searchsorted(u[by_tid], p.open_tid)]
    ks = np.arange(len(u))
    lo, hi = np.searchsorted(r, ks, side="left").tolist(), np.searchsorted(r, ks, side="right").tolist()
    olo, ohi = np.searchsorted(o, ks, side="left").tolist(), np.searchsorted(o, ks, side="right").tolist()
    for k, t in enumerate(p.threads):
        out.append((t, p.t0[lo[k]:hi[k]], p.t1[lo[k]:hi[k]], p.nid[lo[k]:hi[k]], p.open_t0[olo[k]:ohi[k]],
                    p.open_nid[olo[k]:ohi[k]]))
    return out, p.unmatched, p.unfinished


def pair_rows(log: AtraceLog, release: bool = False) -> Paired:
    """:func:`pair` as columns, rows in thread order (no numpy call per thread). With
    ``release``, ``log`` is emptied once its events are paired, before the paired columns are
    joined (the 1 GB trace's 8 M events: ~200 MB not held beside them)."""
    n = len(log)
    e = np.zeros(0, np.int64)
    if n == 0:
        return Paired([], e, e, e, e, e, e, e, 0, 0)
    tid, ts, code, arg = log.columns()
    if int(ts.max()) >= SAFE_NS or int(ts.min()) <= -SAFE_NS:
        rows, unmatched, unfinished = _pair_reference(log)
        col = lambda xs, k: np.array([x[k] for x in xs], np.int64)  # noqa: E731
        cat = lambda f: np.concatenate([e] + [f(t, rs, st) for t, rs, st in rows])  # noqa: E731
        return Paired([t for t, _, _ in rows], cat(lambda t, rs, st: np.full(len(rs), t, np.int64)),
                      cat(lambda t, rs, st: col(rs, 0)), cat(lambda t, rs, st: col(rs, 1)),
                      cat(lambda t, rs, st: col(rs, 2)), cat(lambda t, rs, st: np.full(len(st), t, np.int64)),
                      cat(lambda t, rs, st: col(st, 0)), cat(lambda t, rs, st: col(st, 1)), unmatched, unfinished)
    order, starts = thread_order(tid, ts)  # rows by thread (first arrival first), time, then arrival
    threads = tid[order[starts]].tolist()
    # whole threads at a time, about CHUNK_EVENTS events: the temporaries of the passes are
    # bounded by the chunk (~70 bytes an event, ~20 MB), not by the trace (1 GB: 8 M events)
    parts: list[tuple] = []
    unmatched = unfinished = 0
    for lo, hi in thread_blocks(starts, n, CHUNK_EVENTS):
        idx = order[lo:hi]
        *cols, u, f = _pair_sorted(tid[idx], ts[idx], code[idx] == B, arg[idx])
        parts.append(cols)
        unmatched += u
        unfinished += f
    del order, idx
    if release:
        log.__init__()  # type: ignore[misc]
        del tid, ts, code, arg
        give_back()
    out = []
    for c in range(7):  # column by column, each chunk's piece let go once joined
        out.append(np.concatenate([p[c] for p in parts]) if len(parts) > 1 else parts[0][c])
        for p in parts:
            p[c] = None
    return Paired(threads, *out, unmatched, unfinished)


#: Events paired per vectorised pass of :func:`pair_rows` (whole threads, at least one).
CHUNK_EVENTS = 1 << 18


def thread_blocks(starts: np.ndarray, n: int, size: int):
    """(lo, hi) ranges of whole threads' rows, each up to ``size`` rows (a longer thread alone):
    ``starts`` is where each thread's rows begin (ascending, the first 0), ``n`` the rows."""
    bounds = np.append(starts, n)
    lo = 0
    while lo < n:
        k = int(np.searchsorted(bounds, lo + size, side="right")) - 1
        hi = int(bounds[k]) if bounds[k] > lo else int(bounds[np.searchsorted(bounds, lo, side="right")])
        yield lo, hi
        lo = hi


def _pair_sorted(T: np.ndarray, TS: np.ndarray, is_b: np.ndarray, A: np.ndarray):
    """Whole threads' events in thread, time, arrival order → [closed rows' tid, t0, t1, name
    id, open begins' tid, t0, name id] (each thread's rows in close order, its open begins
    bottom first), unmatched ends, unfinished begins."""
    n = len(T)
    start = np.empty(n, bool)
    start[0] = True
    np.not_equal(T[1:], T[:-1], out=start[1:])
    first = np.flatnonzero(start)
    seg = np.cumsum(start, dtype=np.int64)
    seg -= 1
    del start
    # depth before each event, clamped at zero: with g the running sum of +1/-1 and g0 its value
    # before the thread's first event, the depth after an event is g - min(g0, running min of g
    # within the thread); the running min per thread is one pass over g - seg * big
    g = is_b.astype(np.int64)
    g *= 2
    g -= 1
    np.cumsum(g, out=g)
    g0 = g[first] - np.where(is_b[first], 1, -1)
    shift = seg * (2 * n + 2)
    low = g - shift
    np.minimum.accumulate(low, out=low)
    low += shift
    del shift
    np.minimum(low, g0[seg], out=low)
    del seg
    depth = np.subtract(g, low, out=g)
    del low
    before = np.empty(n, np.int64)
    before[0] = 0
    before[1:] = depth[:-1]
    before[first] = 0
    del depth
    has_open = before > 0
    matched = has_open & ~is_b
    unmatched = int(np.count_nonzero(~is_b)) - int(np.count_nonzero(matched))
    # a B opens the level it reaches, a matched E closes the level it leaves: sorted by level,
    # position breaking ties, a thread's events of one level are together (its rows are) and
    # every E follows its own B
    pos = np.flatnonzero(is_b | has_open)
    level = before[pos] + is_b[pos]
    del before, has_open
    if not len(level) or int(level.max()) < 1 << 15:
        level = level.astype(np.int16)  # the usual depths: numpy's stable sort is a radix sort
    by = pos[np.argsort(level, kind="stable")]
    del level, pos
    closes = np.flatnonzero(matched[by])
    b_of_e = np.empty(n, np.int64)
    b_of_e[by[closes]] = by[closes - 1]
    del by, closes
    e_pos = np.flatnonzero(matched)  # already by thread (that order), then close order
    b_pos = b_of_e[e_pos]
    del b_of_e
    unfinished = int(np.count_nonzero(is_b)) - len(e_pos)
    is_b = is_b.copy()
    is_b[b_pos] = False
    open_pos = np.flatnonzero(is_b)  # the begins left: bottom of each stack first
    return (T[e_pos], TS[b_pos], TS[e_pos], A[b_pos], T[open_pos], TS[open_pos], A[open_pos],
            unmatched, unfinished)


#: _schedc.c's thread_order and replay, or None (tests switch it off to run the numpy code).
NATIVE = compiled("_schedc")


def thread_order(tid: np.ndarray, ts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_thread_order`, by _schedc.thread_order when it is built: one counting pass that
    puts the rows by thread (a hash of the tids), then each thread's rows merged by time (they
    arrive in runs of time order, one per CPU bundle); no n-long temporary but the order.
    100 MB trace: scheduler rows 61 -> ~15 ms, atrace (with the block moves) 37 -> ~10 ms."""
    if NATIVE is None:
        return _thread_order(tid, ts)
    n = len(tid)
    # the order as int32 below 2^31 rows: 4 bytes a row less where it is held (with the columns)
    order, starts = np.empty(n, np.int32 if n < 1 << 31 else np.int64), np.empty(n + 1, np.int64)
    tid = np.ascontiguousarray(tid, np.int32 if tid.dtype == np.int32 else np.int64)  # int32 read as it is
    k = NATIVE.thread_order(tid, np.ascontiguousarray(ts, np.int64), order, starts)
    return order, starts[:k].copy()


def _thread_order(tid: np.ndarray, ts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The permutation that puts rows by thread — threads in the order their first row arrived —
    then by time, ties in arrival order, and where each thread's rows start in it: the rows by
    (tid, time, arrival) (:func:`by_thread_time`), then the threads' blocks moved into the order
    of their first rows."""
    n = len(tid)
    order = by_thread_time(tid, ts)
    start = np.empty(n, bool)
    start[0] = True
    t = tid[order]
    np.not_equal(t[1:], t[:-1], out=start[1:])
    del t
    first = np.flatnonzero(start)
    del start
    sizes = np.diff(np.append(first, n))
    blocks = np.argsort(np.minimum.reduceat(order, first))  # the threads (by tid) in rank order
    lens = sizes[blocks]
    starts = np.cumsum(lens) - lens
    if len(blocks) == 1:
        return order, starts
    # each rank-ordered block's offset from where it sits in ``order``, plus the position (added
    # a block at a time: no second n-long temporary)
    idx = np.repeat(first[blocks] - starts, lens)
    for i in range(0, n, BLOCK_ROWS):
        idx[i:i + BLOCK_ROWS] += np.arange(i, min(i + BLOCK_ROWS, n))
    return order[idx], starts


#: Rows per block of :func:`_thread_order`'s block offsets, added a block at a time: no second
#: n-long temporary.
BLOCK_ROWS = 1 << 18


def by_thread_time(tid: np.ndarray, ts: np.ndarray) -> np.ndarray:
    """The stable order of rows by (tid, ts), ties in row order: ``np.lexsort((ts, tid))``, as
    a stable sort by ts and then a stable sort by tid (numpy's timsort for int64). The rows come
    in long runs of time order (ftrace hands over one CPU's events at a time, in time order),
    which timsort merges rather than sorts. On the 100 MB trace's columns that is faster than
    the one unstable (SIMD) sort of a packed (tid, ts) key, its ties then put back in row order,
    that it replaces: scheduler rows 88 -> 61 ms, atrace 51 -> 22 ms; and no key to overflow."""
    order = np.argsort(ts, kind="stable")
    return order[np.argsort(tid[order], kind="stable")]
