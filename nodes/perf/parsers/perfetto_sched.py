"""Scheduler events as columns → per-thread running/runnable/sleeping totals and intervals.

Every scheduler event the ftrace reader sees (switch in/out, waking, new task, blocked
reason) is one row of four columns — thread id, time (ns), event code, argument — kept in
arrival order (:class:`SchedLog`, 17 bytes a row where ids fit int32). :func:`thread_states`
replays them all at once — in one C pass over the rows (_schedc.c) when it is built, else in
vectorised numpy passes (:func:`_replay`, its reference), never one Python loop per thread; it
implements the same state machine as trace_processor's ThreadStateTracker
(src/trace_processor/importers/common/thread_state_tracker.cc), thread by thread:

* a switch-in closes whatever was open and opens Running;
* a switch-out opens the state ``prev_state`` names (R+ — preempted — is runnable). If the
  thread was not Running (an event was lost), the open state is left without an end and is
  not counted, as trace_processor leaves its ``dur`` at -1;
* a ``sched_waking`` (compact sched's waking records included) closes a blocked state —
  anything but Running and R, so R+ too — and opens R; one for a thread with no state yet
  opens R; one for a thread Running or in R changes nothing;
* ``task_newtask`` opens R for the new thread (trace_processor gives it a new thread id, so
  whatever was open for the old one is not counted);
* ``sched_blocked_reason`` says whether the last blocked interval waited on IO, as long as the
  thread has not run since.

An interval is [since, ts). The last state runs to the end of the scheduler data
(trace_processor leaves it open); time before a thread's first event is not counted. Events
of one thread are taken in time order, ties in arrival order (ftrace arrives one bundle per
CPU, so per thread the arrival order is not the time order). tests/thread_state_reference.py
is an independent event-by-event model of the same rules.
"""

from __future__ import annotations

from array import array
from functools import cache

import numpy as np

from nodes.perf.model import SchedIntervals
from nodes.perf.parsers.perfetto_heap import give_back
from nodes.perf.parsers.perfetto_wire import compiled
from nodes.perf.parsers.perfetto_slices import by_thread_time, thread_order
from nodes.perf.sched_state import SchedState, classify, from_raw

# Event codes (a switch-out's arg is its raw prev_state, decoded at the end with the kernel's
# bit layout; a blocked reason's arg is 1 for IO wait, 0 for not).
IN, OUT, WAKE, BLOCKED, NEW = 0, 1, 4, 5, 6
#: Coarse states, in the order of the totals.
COARSE = ("running", "runnable", "sleeping")
_DEAD = 3  # a dead task's time is in no total
_RUNNING, _R = int(SchedState.RUNNING), int(SchedState.R)
_COARSE_CODE = {"running": 0, "runnable": 1, "sleeping": 2, None: _DEAD}


@cache
def _decoded(raw: int, kernel: tuple[int, int] | None) -> tuple[int, int]:
    """(coarse code, interval code) of a raw prev_state: a trace holds a handful of values."""
    coarse, code = classify(from_raw(raw, kernel))
    return _COARSE_CODE[coarse], int(code)


class SchedLog:
    """Scheduler events in arrival order, as columns: small appends go to ``array`` buffers,
    whole bundles (compact sched) arrive as numpy chunks; both keep the one arrival order.

    Thread ids are held as int32 and arguments as int16 (15 bytes a row, not 25: a 1 GB trace's
    ~13 M rows held to the end of the read; its raw ``prev_state``s are 0 to 256), a chunk's
    column wider when one of its values does not fit (a pid beyond int32, a wild
    ``prev_state``): the joined column is as wide as its widest chunk."""

    def __init__(self) -> None:
        self._chunks: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
        self._tid, self._ts, self._code, self._arg = array("i"), array("q"), array("b"), array("i")
        self.rows = 0

    def push(self, tid: int, ts: int, code: int, arg: int = 0) -> None:
        self._ts.append(ts)  # first: a time out of range fails before anything is stored
        try:
            self._tid.append(tid)
        except OverflowError:
            if self._tid.typecode == "q":
                raise
            self._ts.pop()
            self._widen()
            return self.push(tid, ts, code, arg)
        self._code.append(code)
        try:
            self._arg.append(arg)
        except OverflowError:
            if self._arg.typecode == "q":
                raise
            self._ts.pop()
            self._tid.pop()
            self._code.pop()
            self._widen()
            return self.push(tid, ts, code, arg)
        self.rows += 1

    def _widen(self) -> None:
        """The buffered thread ids and arguments as int64, for a value beyond int32."""
        self._tid, self._arg = array("q", self._tid), array("q", self._arg)

    def _flush(self) -> None:
        if len(self._code):
            self._chunks.append((np.frombuffer(self._tid, _INTS[self._tid.typecode]).copy(),
                                 np.frombuffer(self._ts, np.int64).copy(), np.frombuffer(self._code, np.int8).copy(),
                                 _narrow(np.frombuffer(self._arg, _INTS[self._arg.typecode]), np.int16).copy()))
            self._tid, self._ts, self._code, self._arg = array("i"), array("q"), array("b"), array("i")

    def extend(self, tid: np.ndarray, ts: np.ndarray, code: np.ndarray, arg: np.ndarray) -> None:
        """Rows after every row pushed so far."""
        if not len(tid):
            return
        self._flush()
        self._chunks.append((_narrow(tid), ts.astype(np.int64, copy=False), code.astype(np.int8, copy=False),
                             _narrow(arg, np.int16)))
        self.rows += len(tid)

    def columns(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        self._flush()
        if not self._chunks:
            e = np.zeros(0, np.int64)
            return e, e, np.zeros(0, np.int8), e
        cols = tuple(np.concatenate([c[k] for c in self._chunks]) for k in range(4))
        self._chunks = [cols]
        return cols  # type: ignore[return-value]

    def clear(self) -> None:
        self.__init__()  # type: ignore[misc]

    def drain(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`columns`, the log emptied as they are joined: each column copied chunk by
        chunk into its whole, each chunk let go once copied and the freed memory given back
        every :data:`DRAIN_GIVE_BACK` bytes, so the copy never holds much more than the log
        (:meth:`columns` holds every chunk until all four are joined: 34 bytes a row at its
        peak; a column joined at once held it twice: the 1 GB trace's times, +104 MB)."""
        self._flush()
        chunks = [list(c) for c in self._chunks]
        self.clear()
        if not chunks:
            e = np.zeros(0, np.int64)
            return e, e, np.zeros(0, np.int8), e
        cols = []
        for k in range(4):
            parts = [c[k] for c in chunks]
            for c in chunks:
                c[k] = None
            out = np.empty(sum(len(p) for p in parts), np.result_type(*parts))
            at = freed = 0
            for i in range(len(parts)):
                p, parts[i] = parts[i], None
                out[at:at + len(p)] = p
                at += len(p)
                freed += p.nbytes
                del p
                if freed >= DRAIN_GIVE_BACK:
                    give_back()  # the copied chunks (small: in the heap, among live objects)
                    freed = 0
            cols.append(out)
            if freed and len(chunks) > 1:
                give_back()
        return tuple(cols)  # type: ignore[return-value]


#: Bytes of copied chunks :meth:`SchedLog.drain` lets go before it gives the freed memory back.
DRAIN_GIVE_BACK = 32 << 20


#: numpy's type of an ``array`` buffer of thread ids or arguments
_INTS = {"i": np.int32, "q": np.int64}


def _narrow(col: np.ndarray, least=np.int32) -> np.ndarray:
    """An integer column as ``least`` (int16 or int32) when every value fits, else as int32
    when they fit that, else as int64."""
    if col.dtype == least:
        return col
    col = col.astype(np.int64, copy=False)
    if not len(col):
        return col.astype(least)
    lo, hi = int(col.min()), int(col.max())
    for kind in (least, np.int32):
        info = np.iinfo(kind)
        if lo >= info.min and hi <= info.max:
            return col.astype(kind)
    return col


#: The C pass of :func:`thread_states` (_schedc.c), or None (tests switch it off to run the numpy code).
NATIVE = compiled("_schedc")

#: Rows replayed per vectorised pass (whole threads, at least one): _replay's temporaries are
#: ~280 bytes a row, ~18 MB a pass (2^18 rows made them 73 MB on the 100 MB trace; the passes
#: cost the same CPU down to 2^16).
CHUNK_ROWS = 1 << 16


class StateColumns:
    """Every thread's replay, as columns: ``tids`` (in the order each thread's first event
    arrived), ``totals`` (ns as [running, runnable, sleeping], an (m, 3) int64 array),
    ``counts`` (each thread's intervals, kept or not) and ``held`` (whether they were kept:
    False for a thread the cap cut), the kept intervals being rows ``lo[i]:hi[i]`` of the
    shared columns ``cols`` (ts, dur, state, io_wait), or the SchedIntervals of ``objects``.
    No Python object per thread but its tid: :meth:`rows` makes the tuples
    :func:`thread_states` hands back (the 1 GB trace's ~190 k threads: a tuple, a list of
    three ints and a SchedIntervals each, ~60 MB of objects for a moment)."""

    __slots__ = ("tids", "totals", "counts", "held", "lo", "hi", "cols", "objects")

    def __init__(self, tids, totals, counts, held, lo=None, hi=None, cols=None, objects=None) -> None:
        self.tids, self.totals, self.counts, self.held = tids, totals, counts, held
        self.lo, self.hi, self.cols, self.objects = lo, hi, cols, objects

    def kept(self) -> list[int]:
        """The threads with intervals kept (some, and not cut)."""
        return np.flatnonzero((self.counts > 0) & self.held).tolist()

    def dropped(self) -> int:
        """Intervals of the threads the cap cut."""
        return int(self.counts[~self.held].sum())

    def intervals(self, which: list[int]) -> list:
        """The SchedIntervals of threads ``which`` (None for a thread the cap cut)."""
        if self.objects is not None:
            return [self.objects[i] for i in which]
        which = np.asarray(which, np.int64)
        cols = tuple(memoryview(c) for c in self.cols)  # shared by every thread's rows
        rows = SchedIntervals.rows
        return [rows(cols, a, b) if h else None
                for a, b, h in zip(self.lo[which].tolist(), self.hi[which].tolist(), self.held[which].tolist())]

    def rows(self) -> list[tuple]:
        """[(tid, totals, SchedIntervals or None, how many intervals)]: :func:`thread_states`."""
        ivs = self.objects if self.objects is not None else self.intervals(range(len(self.tids)))
        return list(zip(self.tids, self.totals.tolist(), ivs, self.counts.tolist()))


def thread_states(log: SchedLog, kernel: tuple[int, int] | None, end: int | None, cap: int | None = None):
    """Every thread's (tid, totals ns as [running, runnable, sleeping], SchedIntervals, how many
    intervals), in the order each thread's first event arrived; threads with no state left out.
    With ``cap``, intervals are kept for at most that many, thread by thread in that order: a
    thread whose intervals do not fit with those kept before it has None for its SchedIntervals.
    ``log`` is emptied. :func:`thread_state_columns`' rows."""
    return thread_state_columns(log, kernel, end, cap).rows()


def thread_state_columns(log: SchedLog, kernel: tuple[int, int] | None, end: int | None,
                         cap: int | None = None) -> StateColumns:
    """:func:`thread_states` as :class:`StateColumns`. By the C pass (_schedc.c) when it is
    built (which does not keep the intervals of a thread the cap cuts: a 1 GB trace has ~12 M
    intervals, ~4 M of them kept), else by the numpy passes (:func:`_replay`)."""
    tid, ts, code, arg = log.drain()
    n = len(tid)
    if n == 0:
        return StateColumns([], np.zeros((0, 3), np.int64), np.zeros(0, np.int64), np.zeros(0, bool), objects=[])
    give_back()  # the log's chunks, freed as they were joined
    if NATIVE is not None:
        cols = [tid, ts, code, arg]
        del tid, ts, code, arg
        return _states_native(cols, kernel, end, cap)
    out = _states_numpy(tid, ts, code, arg, kernel, end, cap)
    return StateColumns([t for t, _, _, _ in out], np.array([tot for _, tot, _, _ in out], np.int64).reshape(-1, 3),
                        np.array([size for *_, size in out], np.int64),
                        np.array([iv is not None for _, _, iv, _ in out], bool), objects=[iv for _, _, iv, _ in out])


def _states_numpy(tid, ts, code, arg, kernel, end, cap):
    """The numpy passes of :func:`thread_states` over the log's columns."""
    n = len(tid)
    order = by_thread_time(tid, ts)
    # the sorted columns one at a time, each let go once gathered (41 bytes a row at the peak)
    T = tid[order]
    del tid
    TS = ts[order]
    del ts
    C = code[order]
    del code
    A = arg[order]
    del arg
    starts = np.flatnonzero(np.concatenate(([True], T[1:] != T[:-1])))
    uniq = T[starts]  # every thread once, ascending
    first_at = np.minimum.reduceat(order, starts)  # where each thread's first event arrived
    del order
    rank = np.empty(len(uniq), np.int64)
    rank[np.argsort(first_at, kind="stable")] = np.arange(len(uniq))
    out = []
    lo = 0
    while lo < n:
        # whole threads, at least one, about CHUNK_ROWS rows
        k = int(np.searchsorted(starts, lo + CHUNK_ROWS, side="right"))
        hi = int(starts[k]) if k < len(starts) and starts[k] > lo else n
        out += _replay(T[lo:hi], TS[lo:hi], C[lo:hi], A[lo:hi], kernel, end)  # codes stay int8: only compared
        lo = hi
    ranks = np.searchsorted(uniq, np.array([t for t, _, _, _ in out], np.int64))
    out = [out[i] for i in np.argsort(rank[ranks], kind="stable").tolist()]
    if cap is not None:
        kept = 0
        for i, (t, tot, iv, size) in enumerate(out):
            if size and kept + size > cap:
                out[i] = (t, tot, None, size)
            else:
                kept += size
    return out


def _states_native(cols: list[np.ndarray], kernel, end, cap):
    """:func:`thread_states` by _schedc.replay: one pass over the columns ``cols`` (tid, ts,
    code, arg; emptied) read through the sort order — no sorted copies, no per-pass
    temporaries, threads already in the order of their first rows. The thread ids and the
    arguments are let go before the pass (it reads the threads' bounds in the order, and a
    blocked reason's io_wait from its ``detail``): ~8 bytes a row less at its peak. The interval
    outputs are allocated for the most there can be (an interval a row), then cut to what was
    written; the threads' intervals are rows of them (:func:`_threads`)."""
    tid, ts, code, arg = cols
    cols.clear()
    n = len(tid)
    order, starts = thread_order(tid, ts)
    first_tid = tid[order[starts]]  # each thread's tid
    del tid
    detail, coarse = _after_states(code, arg, kernel)
    blocked = np.flatnonzero(code == BLOCKED)
    detail[blocked] = arg[blocked].astype(np.int8)  # io_wait as the pass reads it: (int8) of the arg
    del arg, blocked
    m = len(starts)
    starts = np.append(starts, n)
    out_thr, out_bounds, out_tot = np.empty(m, np.int64), np.empty(m + 1, np.int64), np.empty(4 * m, np.int64)
    out_count = np.empty(m, np.int64)
    iv_ts, iv_dur = np.empty(n, np.float64), np.empty(n, np.float64)
    iv_state, iv_io = np.empty(n, np.int8), np.empty(n, np.int8)
    k, niv = NATIVE.replay(order, starts, ts, code, detail, coarse, 0 if end is None else end, end is not None,
                           -1 if cap is None else cap, _RUNNING, _R, _DEAD, BLOCKED, IN, OUT, WAKE, NEW,
                           out_thr, out_bounds, out_count, out_tot, iv_ts, iv_dur, iv_state, iv_io)
    del ts, code, order, starts, detail, coarse
    for c in (iv_ts, iv_dur, iv_state, iv_io):
        c.resize(niv, refcheck=False)  # the rows written (realloc: the rest given back, not copied)
    lo, hi, counts = out_bounds[:k], out_bounds[1:k + 1], out_count[:k]
    return StateColumns(first_tid[out_thr[:k]].tolist(), out_tot.reshape(-1, 4)[:k, :3], counts,
                        (hi > lo) | (counts == 0), lo, hi, (iv_ts, iv_dur, iv_state, iv_io))


def _after_states(code: np.ndarray, arg: np.ndarray, kernel) -> tuple[np.ndarray, np.ndarray]:
    """The state each event leaves its thread in, as (interval code, coarse total code) int8
    columns: Running after a switch-in, the decoded ``prev_state`` after a switch-out, R after
    the rest (a blocked reason's row is never read). A block of rows at a time: the
    temporaries (switch-outs' positions and raw values, ~20 bytes a row) are the block's, not
    the whole log's (the 1 GB trace's 13 M rows: ~85 MB at the scheduler replay's peak)."""
    n = len(code)
    detail = np.full(n, _R, np.int8)
    coarse = np.full(n, 1, np.int8)
    for lo in range(0, n, AFTER_BLOCK):
        c, d, k = code[lo:lo + AFTER_BLOCK], detail[lo:lo + AFTER_BLOCK], coarse[lo:lo + AFTER_BLOCK]
        ins = c == IN
        d[ins] = _RUNNING
        k[ins] = 0
        del ins
        outs = np.flatnonzero(c == OUT)
        if len(outs):
            raws, inv = _distinct(arg[lo:lo + AFTER_BLOCK][outs])
            dec = np.array([_decoded(int(r), kernel) for r in raws.tolist()], np.int8).reshape(-1, 2)
            k[outs] = dec[inv, 0]
            d[outs] = dec[inv, 1]
    return detail, coarse


#: Rows per block of :func:`_after_states`.
AFTER_BLOCK = 1 << 18


def _replay(T, TS, C, A, kernel, end):
    """The state machine over whole threads' sorted rows: [(tid, totals, SchedIntervals, size)]."""
    blocked = C == BLOCKED
    s = np.flatnonzero(~blocked)  # positions of the state events, in sorted order
    sT, sC = T[s], C[s]
    # where each thread's run of state events starts
    s_start = np.ones(len(s), bool)
    s_start[1:] = sT[1:] != sT[:-1]
    # after-state of the anchors (in, out, new): interval code and coarse total
    is_anchor = sC != WAKE
    detail, coarse = _after_states(sC, A[s], kernel)
    # a waking is effective when it is the first of its group (the events since the last anchor
    # of its thread, or since the thread's first event) and the anchor left the thread neither
    # Running nor R (no anchor: no state yet)
    group_start = is_anchor | s_start
    gid = np.cumsum(group_start) - 1
    gpos = np.flatnonzero(group_start)
    first_wake = np.zeros(len(s), bool)
    wake = ~is_anchor
    prev_is_start = np.zeros(len(s), bool)
    prev_is_start[1:] = group_start[:-1] & ~s_start[1:]
    first_wake[wake & s_start] = True  # no anchor before it in its thread
    anchor_detail = detail[gpos][gid]
    first_wake |= wake & prev_is_start & is_anchor[gpos][gid] & (anchor_detail != _RUNNING) & (anchor_detail != _R)
    eff = is_anchor | first_wake
    e = np.flatnonzero(eff)  # effective events, indices into s
    eT, eC, eTS = sT[e], sC[e], TS[s[e]]
    eD, eK = detail[e], coarse[e]
    m = len(e)
    e_start = np.ones(m, bool)
    e_start[1:] = eT[1:] != eT[:-1]
    e_last = np.ones(m, bool)
    e_last[:-1] = e_start[1:]
    # the interval each effective event opens: closed by the next one of its thread, or the end
    nxt_ts = np.zeros(m, np.int64)
    nxt_ts[:-1] = eTS[1:]
    nxt_C = np.full(m, -1, np.int64)
    nxt_C[:-1] = eC[1:]
    closes = ~e_last & (nxt_C != NEW) & ~((nxt_C == OUT) & (eD != _RUNNING))
    if end is not None:
        nxt_ts[e_last] = end
        closes |= e_last
    dur = np.where(closes, nxt_ts - eTS, 0)
    emitted = closes & (dur > 0)  # a zero-length interval is counted in no list
    iv_index = np.cumsum(emitted) - 1  # interval index of what k opens, where emitted
    open_blocked = (eD != _RUNNING) & (eD != _R)
    # io: the blocked reason's target interval. Last-blocked after each effective event:
    # forward-filled index of the last emitted blocked interval, reset by a switch-in.
    io = np.full(int(emitted.sum()), -1, np.int64)
    b = np.flatnonzero(blocked)
    if len(b):
        closes_blocked = np.zeros(m, bool)
        closes_blocked[1:] = emitted[:-1] & open_blocked[:-1] & ~e_start[1:]  # event k+1 closed a blocked interval
        setv = np.full(m, -1, np.int64)
        setv[1:] = np.where(closes_blocked[1:], iv_index[:-1], -1)
        defines = closes_blocked | (eC == IN) | e_start
        setv[(eC == IN)] = -1
        setv[e_start & ~closes_blocked] = -1
        last_def = np.maximum.accumulate(np.where(defines, np.arange(m), 0))
        lb = setv[last_def]
        # each blocked reason's context: the last effective event before it, same thread
        k = np.searchsorted(s[e], b, side="right") - 1  # s[e]: the effective events' sorted positions
        ok = k >= 0
        ok[ok] = eT[k[ok]] == T[b[ok]]
        kb, bb = k[ok], b[ok]
        target = np.where(open_blocked[kb], np.where(emitted[kb], iv_index[kb], -1), lb[kb])
        keep = target >= 0
        target, val = target[keep], A[bb[keep]]
        if len(target):
            # the last assignment to each interval wins (bb is in sorted, i.e. replay, order)
            last, at = np.unique(target[::-1], return_index=True)
            io[last] = val[::-1][at]
    # totals by thread and coarse state
    thr_id = np.cumsum(e_start) - 1
    counted = closes & (eK != _DEAD)
    tot = np.zeros((int(e_start.sum()), 4), np.int64)
    np.add.at(tot.reshape(-1), thr_id[counted] * 4 + eK[counted], (nxt_ts - eTS)[counted])  # flat: ufunc.at's fast path
    em = np.flatnonzero(emitted)
    iv_ts = eTS[em] / 1000.0
    iv_dur = (nxt_ts[em] - eTS[em]) / 1000.0
    iv_state = eD[em].astype(np.int8)
    iv_io = io.astype(np.int8)
    iv_thr = thr_id[em]
    bounds_lo = np.searchsorted(iv_thr, np.arange(len(tot)), side="left")
    bounds_hi = np.searchsorted(iv_thr, np.arange(len(tot)), side="right")
    return _threads(eT[e_start].tolist(), bounds_lo.tolist(), bounds_hi.tolist(), tot[:, :3].tolist(), iv_ts,
                    iv_dur, iv_state, iv_io)


def _threads(tids, lo, hi, totals, iv_ts, iv_dur, iv_state, iv_io):
    """[(tid, totals, SchedIntervals, size)]: thread k's intervals are rows lo[k]:hi[k] of the
    interval columns, which the threads share (:meth:`SchedIntervals.rows`: no copy, no arrays
    of their own — the intervals were held twice while each thread's were copied out)."""
    cols = (memoryview(iv_ts), memoryview(iv_dur), memoryview(iv_state), memoryview(iv_io))
    rows = SchedIntervals.rows
    return [(t, tot, rows(cols, a, b), b - a) for t, a, b, tot in zip(tids, lo, hi, totals)]


def _distinct(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(values, return_inverse=True)``; by counting when the values are small
    non-negative ints (raw prev_states: a handful of bit patterns), which needs no sort."""
    if len(values) and int(values.min()) >= 0 and int(values.max()) < 1 << 16:
        seen = np.flatnonzero(np.bincount(values))
        lut = np.zeros(int(seen[-1]) + 1, np.int64)
        lut[seen] = np.arange(len(seen))
        return seen, lut[values]
    raws, inv = np.unique(values, return_inverse=True)
    return raws, inv.reshape(-1)
