"""Scheduler events (switches, wake-ups, blocked reasons) as one set of columns for the whole
trace, and every thread's states built from them in vectorised passes.

Why columns for the whole trace rather than per thread: a 1 GB trace holds tens of millions of
scheduler events over tens of thousands of threads. Appending each event to its thread's own
arrays, then walking each thread's events in Python, cost ~1 µs an event (issue 25); here an
event is four appends to shared arrays (or a numpy block for compact sched), and the per-thread
walk of ``perfetto_ftrace`` (``thread_states_reference``, kept as the reference and for input
numpy cannot hold) is the same state machine expressed on sorted columns.

The rules are the reference's, on each thread's events in time order (ties in arrival order):

* a switch in, a switch out (its state read from ``prev_state`` with the kernel's bit layout,
  ``perfetto_ftrace.decode_prev_state``) or a wake-up of a sleeping (or unknown) thread ends
  the open interval and starts the next; a wake-up of a running or runnable thread changes
  nothing;
* ``sched_blocked_reason`` says whether a blocked interval waited on IO: the open one when it
  comes while the thread sleeps, else the last blocked interval already closed.
"""

from __future__ import annotations

from array import array

import numpy as np

# Event codes (shared with perfetto_ftrace).
IN, OUT_RUNNABLE, OUT_SLEEPING, OUT_DEAD, WAKE, BLOCKED = 0, 1, 2, 3, 4, 5
# Interval state codes: indices into nodes.perf.model.SCHED_STATES.
S_RUNNING, S_R, S_RPLUS, S_S, S_D, S_OTHER = 0, 1, 2, 3, 4, 5
#: Coarse states, in the order thread totals are written; NONE: no interval is open.
COARSE = ("running", "runnable", "sleeping")
_C_RUNNING, _C_RUNNABLE, _C_SLEEPING, _C_NONE = 0, 1, 2, 3
_INTERRUPTIBLE, _UNINTERRUPTIBLE = 0x1, 0x2
_PREEMPT_BIT = 0x100
_DEAD_BITS = 0x10 | 0x20 | 0x80
#: Timestamps beyond this are left to the reference walk (int64 differences must not overflow).
SAFE_NS = 1 << 61


class SchedLog:
    """Every scheduler event of the trace, with its place in arrival order (``key``).

    Single events (``push``) are stored as they come. A compact-sched block (``add_compact``)
    is stored as its raw columns and turned into switch-out / switch-in / wake-up events only
    in :meth:`columns`, for all blocks at once: a bundle holds ~70 switches, too few for numpy
    to pay its per-call cost, too many for a Python loop to be cheap. Each switch reserves two
    keys (prev out, next in) and each wake-up one, so the order is the one event-by-event
    handling gives.
    """

    def __init__(self) -> None:
        self.tid = array("q")
        self.ts = array("q")
        self.code = array("b")
        self.arg = array("q")
        self.key = array("q")
        self.next_key = 0
        self.held = 0  # events the reference would have stored so far (the event cap counts them)
        # compact blocks: per switch / wake-up columns, and per block where it starts
        self.sw_ts, self.sw_next, self.sw_state = array("q"), array("q"), array("q")
        self.sw_block, self.sw_prev0, self.sw_base = array("q"), array("q"), array("q")
        self.wk_ts, self.wk_pid = array("q"), array("q")
        self.wk_block, self.wk_base = array("q"), array("q")

    def __len__(self) -> int:
        return self.held

    def push(self, tid: int, ts: int, code: int, arg: int = 0) -> None:
        self.ts.append(ts)  # first: a time out of range fails before anything is stored
        self.tid.append(tid)
        self.code.append(code)
        self.arg.append(arg)
        self.key.append(self.next_key)
        self.next_key += 1
        self.held += 1

    def add_compact(self, prev0: int, ts: list[int], nxt: list[int], states: list[int],
                    wake_ts: list[int], wake_pid: list[int]) -> None:
        """One bundle's compact sched, times already absolute: ``prev0`` ran on the CPU before
        its first switch; ``states`` has one prev_state per switch."""
        n, m = len(ts), len(wake_ts)
        if n:
            self.sw_block.append(len(self.sw_ts))
            self.sw_prev0.append(prev0)
            self.sw_base.append(self.next_key)
            self.sw_ts.extend(ts)
            self.sw_next.extend(nxt)
            self.sw_state.extend(states)
            real_next = n - nxt.count(0)
            self.held += real_next + (real_next - (1 if nxt[-1] else 0)) + (1 if prev0 else 0)
            self.next_key += 2 * n
        if m:
            self.wk_block.append(len(self.wk_ts))
            self.wk_base.append(self.next_key)
            self.wk_ts.extend(wake_ts)
            self.wk_pid.extend(wake_pid)
            self.held += m - wake_pid.count(0)
            self.next_key += m

    def columns(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(tid, ts, code, arg, key) of every event, compact blocks expanded, zeros dropped."""
        q = np.int64
        parts = [(np.frombuffer(self.tid, q), np.frombuffer(self.ts, q), np.frombuffer(self.code, np.int8),
                  np.frombuffer(self.arg, q), np.frombuffer(self.key, q))]
        n = len(self.sw_ts)
        if n:
            ts, nxt, ps = (np.frombuffer(a, q) for a in (self.sw_ts, self.sw_next, self.sw_state))
            starts = np.frombuffer(self.sw_block, q)
            first = np.zeros(n, bool)
            first[starts] = True
            prev = np.empty(n, q)
            prev[1:] = nxt[:-1]
            prev[starts] = np.frombuffer(self.sw_prev0, q)
            block = np.cumsum(first) - 1
            base = np.frombuffer(self.sw_base, q)[block] + 2 * (np.arange(n) - starts[block])
            pairs = np.stack([prev, nxt], axis=1).ravel()
            keep = pairs != 0
            codes = np.stack([switch_out_codes(ps), np.full(n, IN, np.int8)], axis=1).ravel()
            args = np.stack([ps, np.zeros(n, q)], axis=1).ravel()
            keys = np.stack([base, base + 1], axis=1).ravel()
            parts.append((pairs[keep], np.repeat(ts, 2)[keep], codes[keep], args[keep], keys[keep]))
        m = len(self.wk_ts)
        if m:
            ts, pid = np.frombuffer(self.wk_ts, q), np.frombuffer(self.wk_pid, q)
            starts = np.frombuffer(self.wk_block, q)
            first = np.zeros(m, bool)
            first[starts] = True
            block = np.cumsum(first) - 1
            keys = np.frombuffer(self.wk_base, q)[block] + (np.arange(m) - starts[block])
            keep = pid != 0
            k = int(keep.sum())
            parts.append((pid[keep], ts[keep], np.full(k, WAKE, np.int8), np.zeros(k, q), keys[keep]))
        return tuple(np.concatenate([p[i] for p in parts]) for i in range(5))  # type: ignore[return-value]

    def thread_events(self, tid: int):
        """One thread's (ts, code, arg) in arrival order (the reference walk's input)."""
        t, ts, c, a, k = self.columns()
        m = np.flatnonzero(t == tid)
        m = m[np.argsort(k[m], kind="stable")]
        return ts[m].tolist(), c[m].tolist(), a[m].tolist()

    def tids(self) -> list[int]:
        """Every tid with an event, in the order its first event arrived."""
        t, _ts, _c, _a, k = self.columns()
        order = np.argsort(k, kind="stable")
        return list(dict.fromkeys(t[order].tolist()))


def switch_out_codes(prev_state: np.ndarray) -> np.ndarray:
    """``prev_state`` → OUT_DEAD / OUT_RUNNABLE / OUT_SLEEPING, as ``_switch_pair`` codes it."""
    ps = prev_state.astype(np.int64)
    return np.where(ps & _DEAD_BITS, OUT_DEAD,
                    np.where((ps & 0xFF == 0) | (ps == _PREEMPT_BIT), OUT_RUNNABLE, OUT_SLEEPING)).astype(np.int8)


def decode_states(raw: np.ndarray, kernel: tuple[int, int] | None) -> tuple[np.ndarray, np.ndarray]:
    """``perfetto_ftrace.decode_prev_state`` over an array: (coarse code, interval state code)."""
    raw = raw.astype(np.int64)
    coarse = np.full(len(raw), _C_SLEEPING, np.int8)
    detail = np.where(raw & _UNINTERRUPTIBLE, S_D, np.where(raw & _INTERRUPTIBLE, S_S, S_OTHER)).astype(np.int8)
    if kernel is None:
        dead = (raw & _DEAD_BITS) != 0
        runnable = ~dead & ((raw & 0xFF == 0) | (raw == _PREEMPT_BIT))
        plus = (raw & (_PREEMPT_BIT | 1024 | 2048)) != 0
        detail = np.where(runnable, np.where(plus, S_RPLUS, S_R), detail)
    else:
        if kernel >= (4, 14):
            preempt, dead_bits, low = _PREEMPT_BIT, 0x10 | 0x20, 0xFF
        else:
            preempt = 1024 if kernel < (4, 0) else 2048
            dead_bits, low = 0x10 | 0x20 | 0x40, preempt - 1
        pre = (raw & preempt) != 0
        state = raw & low
        dead = ~pre & ((state & dead_bits) != 0)
        runnable = pre | (~dead & (state == 0))
        s = state  # the sleeping detail reads the masked state
        sdetail = np.where(s & _UNINTERRUPTIBLE, S_D, np.where(s & _INTERRUPTIBLE, S_S, S_OTHER))
        detail = np.where(pre, S_RPLUS, np.where(runnable, S_R, sdetail)).astype(np.int8)
    coarse[runnable] = _C_RUNNABLE
    coarse[dead] = _C_NONE
    detail = np.where(dead, S_OTHER, detail).astype(np.int8)
    return coarse, detail


def _last_marked(marked: np.ndarray, start: np.ndarray) -> np.ndarray:
    """For each position, the last position at or before it in the same run (runs begin where
    ``start`` is set) where ``marked`` holds, or -1."""
    pos = np.arange(len(marked), dtype=np.int64)
    key = np.where(marked, 2 * pos + 1, np.where(start, 2 * pos, -1))
    key = np.maximum.accumulate(key) if len(key) else key
    return np.where(key % 2 == 1, (key - 1) // 2, -1)


def _runs(t: np.ndarray) -> np.ndarray:
    start = np.ones(len(t), bool)
    start[1:] = t[1:] != t[:-1]
    return start


def thread_states(log: SchedLog, kernel: tuple[int, int] | None, end: int | None):
    """Every thread's states: [(tid, {coarse state: ns}, (ts µs, dur µs, state, io) arrays)], threads
    in the order their first event arrived; None when the times are out of the safe range."""
    tid, ts, code, arg, key = log.columns()
    n = len(tid)
    if n == 0:
        return []
    if int(ts.max()) >= SAFE_NS or int(ts.min()) <= -SAFE_NS or (end is not None and abs(end) >= SAFE_NS):
        return None
    by_key = np.argsort(key, kind="stable")
    uniq, first = np.unique(tid[by_key], return_index=True)
    thread_order = uniq[np.argsort(first, kind="stable")]
    order = np.lexsort((key, ts, tid))
    T, TS, C, A = tid[order], ts[order], code[order], arg[order]

    # Effective events: every switch, and a wake-up only of a sleeping or not-yet-seen thread.
    fi = np.flatnonzero(C != BLOCKED)
    FC, FT = C[fi], T[fi]
    fstart = _runs(FT)
    is_switch = FC != WAKE
    coarse = np.full(len(fi), _C_RUNNABLE, np.int8)
    detail = np.full(len(fi), S_R, np.int8)
    sw_in = FC == IN
    coarse[sw_in], detail[sw_in] = _C_RUNNING, S_RUNNING
    out = is_switch & ~sw_in
    coarse[out], detail[out] = decode_states(A[fi][out], kernel)
    last_sw = _last_marked(is_switch, fstart)
    prior = np.where(last_sw >= 0, coarse[np.maximum(last_sw, 0)], _C_NONE)
    prev_is_switch = np.zeros(len(fi), bool)
    prev_is_switch[1:] = is_switch[:-1] & ~fstart[1:]
    first_wake = ~is_switch & (fstart | prev_is_switch)
    effective = is_switch | (first_wake & ((prior == _C_SLEEPING) | (prior == _C_NONE)))
    ei = fi[effective]
    ET, ETS, EC, ED = T[ei], TS[ei], coarse[effective], detail[effective]
    m = len(ei)
    estart = _runs(ET)
    elast = np.ones(m, bool)
    elast[:-1] = estart[1:]
    close = np.empty(m, np.int64)
    close[:-1] = ETS[1:]
    close[elast] = end if end is not None else 0
    closes = ~elast | (end is not None)
    open_ = (EC != _C_NONE) & closes
    length = np.where(open_, close - ETS, 0)
    kept = open_ & (length > 0)

    # IO verdicts: each blocked reason names one interval (the open one if asleep, else the last
    # blocked one closed); the last reason to name an interval wins.
    io = np.full(m, -1, np.int8)
    bi = np.flatnonzero(C == BLOCKED)
    if len(bi) and m:
        is_e = np.zeros(n, bool)
        is_e[ei] = True
        e_ord = np.cumsum(is_e) - 1
        last_e = _last_marked(is_e, _runs(T))[bi]
        k = np.where(last_e >= 0, e_ord[np.maximum(last_e, 0)], -1)
        has = k >= 0
        kk = np.maximum(k, 0)
        asleep = has & (EC[kk] == _C_SLEEPING)
        last_blocked = _last_marked(kept & (EC == _C_SLEEPING), estart)
        target = np.where(asleep, np.where(kept[kk], kk, -1), np.where(has, last_blocked[kk], -1))
        ok = target >= 0
        target, value = target[ok][::-1], A[bi][ok][::-1]
        tgt, pick = np.unique(target, return_index=True)  # first in reverse = the last one
        io[tgt] = value[pick]

    # Per thread: totals by coarse state (ints, as the reference sums them) and kept intervals.
    bounds = np.flatnonzero(estart).tolist() + [m]
    per_thread = {}
    tot = np.zeros((len(bounds) - 1, 3), np.int64)
    if m:
        seg = np.cumsum(estart) - 1
        w = open_ & (EC < 3)
        np.add.at(tot, (seg[w], EC[w].astype(np.intp)), length[w])
    ts_us = ETS / 1000.0
    dur_us = length / 1000.0
    for j in range(len(bounds) - 1):
        a, b = bounds[j], bounds[j + 1]
        kj = kept[a:b]
        per_thread[int(ET[a])] = (
            tot[j].tolist(),
            (ts_us[a:b][kj], dur_us[a:b][kj], ED[a:b][kj], io[a:b][kj]),
        )
    out_rows = []
    for t in thread_order.tolist():
        got = per_thread.get(t)
        if got is None:
            out_rows.append((t, [0, 0, 0], None))
            continue
        out_rows.append((t, got[0], got[1]))
    return out_rows


def as_arrays(cols) -> tuple[array, array, array, array]:
    """numpy interval columns → the array.array columns of SchedIntervals."""
    ts, dur, state, io = cols
    return (array("d", ts.astype(np.float64).tobytes()), array("d", dur.astype(np.float64).tobytes()),
            array("b", state.astype(np.int8).tobytes()), array("b", io.astype(np.int8).tobytes()))
