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


def pair(log: AtraceLog):
    """Every thread's slices: ([(tid, start ns, end ns, name id arrays in close order, start ns and
    name id arrays of the begins still open, bottom first)] in the order each thread's first
    event arrived, unmatched ends, unfinished begins)."""
    n = len(log)
    if n == 0:
        return [], 0, 0
    tid = np.frombuffer(log.tid, np.int64)
    ts = np.frombuffer(log.ts, np.int64)
    if int(ts.max()) >= SAFE_NS or int(ts.min()) <= -SAFE_NS:
        rows, unmatched, unfinished = _pair_reference(log)
        col = lambda xs, k: np.array([x[k] for x in xs], np.int64)  # noqa: E731
        return [(t, col(rs, 0), col(rs, 1), col(rs, 2), col(st, 0), col(st, 1)) for t, rs, st in rows], \
            unmatched, unfinished
    code = np.frombuffer(log.code, np.int8)
    arg = np.frombuffer(log.arg, np.int64)
    order = np.lexsort((np.arange(n), ts, tid))
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
    by = pos[np.lexsort((pos, level[pos], seg[pos]))]
    closes = np.flatnonzero(matched[by])  # an E in this order follows its own B
    e_pos, b_pos = by[closes], by[closes - 1]
    unfinished = int(is_b.sum()) - len(e_pos)
    closed_b = np.zeros(n, bool)
    closed_b[b_pos] = True
    open_pos = np.flatnonzero(is_b & ~closed_b)  # in sorted order: bottom of each stack first
    e_order = np.argsort(e_pos, kind="stable")
    e_pos, b_pos = e_pos[e_order], b_pos[e_order]
    # threads in the order their first event arrived
    uniq, first_at = np.unique(tid, return_index=True)
    thread_order = uniq[np.argsort(first_at, kind="stable")].tolist()
    e_tid = T[e_pos]
    bounds = np.searchsorted(e_tid, uniq, side="left"), np.searchsorted(e_tid, uniq, side="right")
    where = {t: (int(a), int(b)) for t, a, b in zip(uniq.tolist(), bounds[0].tolist(), bounds[1].tolist())}
    o_tid = T[open_pos]
    o_bounds = np.searchsorted(o_tid, uniq, side="left"), np.searchsorted(o_tid, uniq, side="right")
    o_where = {t: (int(a), int(b)) for t, a, b in zip(uniq.tolist(), o_bounds[0].tolist(), o_bounds[1].tolist())}
    t0, t1, nid = TS[b_pos], TS[e_pos], A[b_pos]
    o_t0, o_nid = TS[open_pos], A[open_pos]
    out = []
    for t in thread_order:
        a, b = where[t]
        oa, ob = o_where[t]
        out.append((t, t0[a:b], t1[a:b], nid[a:b], o_t0[oa:ob], o_nid[oa:ob]))
    return out, unmatched, unfinished
