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

B, E = 1, 2
SAFE_NS = 1 << 61


class AtraceLog:
    """Every atrace B/E event in arrival order: tid, time (ns), code, name id."""

    def __init__(self) -> None:
        self.tid = array("q")
        self.ts = array("q")
        self.code = array("b")
        self.arg = array("q")

    def __len__(self) -> int:
        return len(self.code)

    def push(self, tid: int, ts: int, code: int, arg: int = 0) -> None:
        self.ts.append(ts)  # first: a time out of range fails before anything is stored
        self.tid.append(tid)
        self.code.append(code)
        self.arg.append(arg)


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


def pair_rows(log: AtraceLog) -> Paired:
    """:func:`pair` as columns, rows in thread order (no numpy call per thread)."""
    n = len(log)
    e = np.zeros(0, np.int64)
    if n == 0:
        return Paired([], e, e, e, e, e, e, e, 0, 0)
    tid = np.frombuffer(log.tid, np.int64)
    ts = np.frombuffer(log.ts, np.int64)
    if int(ts.max()) >= SAFE_NS or int(ts.min()) <= -SAFE_NS:
        rows, unmatched, unfinished = _pair_reference(log)
        col = lambda xs, k: np.array([x[k] for x in xs], np.int64)  # noqa: E731
        cat = lambda f: np.concatenate([e] + [f(t, rs, st) for t, rs, st in rows])  # noqa: E731
        return Paired([t for t, _, _ in rows], cat(lambda t, rs, st: np.full(len(rs), t, np.int64)),
                      cat(lambda t, rs, st: col(rs, 0)), cat(lambda t, rs, st: col(rs, 1)),
                      cat(lambda t, rs, st: col(rs, 2)), cat(lambda t, rs, st: np.full(len(st), t, np.int64)),
                      cat(lambda t, rs, st: col(st, 0)), cat(lambda t, rs, st: col(st, 1)), unmatched, unfinished)
    code = np.frombuffer(log.code, np.int8)
    arg = np.frombuffer(log.arg, np.int64)
    order = np.lexsort((ts, tid))  # by thread, time, then arrival (lexsort is stable)
    T, TS, C, A = tid[order], ts[order], code[order], arg[order]
    start = np.ones(n, bool)
    start[1:] = T[1:] != T[:-1]
    seg = np.cumsum(start) - 1
    x = np.where(C == B, 1, -1).astype(np.int64)
    c = np.cumsum(x)
    first = np.flatnonzero(start)
    c = c - (c[first] - x[first])[seg]  # running sum within the thread
    big = 2 * n + 2
    low = np.minimum.accumulate(c - seg * big) + seg * big
    depth = c - np.minimum(low, 0)  # after each event, clamped at zero
    before = np.where(start, 0, np.concatenate(([0], depth[:-1])))
    is_b = x == 1
    matched = ~is_b & (before > 0)
    unmatched = int((~is_b & (before == 0)).sum())
    level = np.where(is_b, depth, before)
    pos = np.flatnonzero(is_b | matched)
    by = pos[np.lexsort((level[pos], seg[pos]))]  # pos ascending: stable keeps it within a level
    closes = np.flatnonzero(matched[by])  # an E in this order follows its own B
    e_pos, b_pos = by[closes], by[closes - 1]
    unfinished = int(is_b.sum()) - len(e_pos)
    closed_b = np.zeros(n, bool)
    closed_b[b_pos] = True
    open_pos = np.flatnonzero(is_b & ~closed_b)  # in sorted order: bottom of each stack first
    # threads in the order their first event arrived; rows by thread (that order), then as sorted
    first_at = np.minimum.reduceat(order, first)
    rank = np.empty(len(first), np.int64)
    rank[np.argsort(first_at, kind="stable")] = np.arange(len(first))
    b_of_e = np.empty(n, np.int64)
    b_of_e[e_pos] = b_pos
    e_pos = np.sort(e_pos)  # close order within a thread
    e_pos = e_pos[np.argsort(rank[seg[e_pos]], kind="stable")]
    open_pos = open_pos[np.argsort(rank[seg[open_pos]], kind="stable")]
    b_pos = b_of_e[e_pos]
    threads = T[first][np.argsort(first_at, kind="stable")].tolist()
    return Paired(threads, T[e_pos], TS[b_pos], TS[e_pos], A[b_pos], T[open_pos], TS[open_pos], A[open_pos],
                  unmatched, unfinished)
