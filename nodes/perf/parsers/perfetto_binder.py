"""Binder transactions (ftrace ``binder_transaction`` / ``binder_transaction_received``) →
thread slices named as trace_processor's BinderTracker names them
(src/trace_processor/importers/ftrace/binder_tracker.cc):

* ``binder transaction`` on the client thread, from sending a synchronous transaction until
  the reply is received — the time the client was blocked in binder;
* ``binder reply`` on the server thread, from receiving the transaction until it sends the
  reply;
* ``binder transaction async`` (sender) and ``binder async rcv`` (receiver), zero-length, for
  one-way transactions — the sender does not block.

Events are buffered and paired in time order at the end: ftrace arrives one bundle per CPU,
so a server's reply (one CPU) can be read before the client's transaction (another CPU).
The pairing runs on columns (:func:`sorted_columns`): which transaction a receipt answers is a
look-back within its ``debug_id`` in numpy, and only the per-thread stacks of open slices are
walked in Python, one step per push or close; the slices go into the model in one call
(``PerfData.add_slice_rows``). ``_finish_reference`` is the event-by-event walk it replaces,
kept for times numpy cannot hold (tests/test_perfetto_binder.py checks that they agree).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from nodes.perf.model import PerfData
from nodes.perf.parsers.perfetto_slices import AtraceLog, pair_rows

TRANSACTION = "binder transaction"
REPLY = "binder reply"
ASYNC = "binder transaction async"
ASYNC_RCV = "binder async rcv"
#: ``binder_transaction.flags`` bit of a one-way transaction (TF_ONE_WAY).
TF_ONE_WAY = 0x01
#: At most this many binder events are kept (bounded memory); the rest are counted.
MAX_BINDER_EVENTS = 400_000
_SEND, _RECV = 0, 1
#: Times (ns) at and beyond this magnitude are paired by the reference walk (int64 headroom).
SAFE_NS = 1 << 61
#: Slice names by code, as the vectorised pairing emits them.
_NAMES = (TRANSACTION, REPLY, ASYNC, ASYNC_RCV)
_T, _R, _A, _AR = 0, 1, 2, 3
#: What a send leaves for its debug_id (``kinds`` of the reference walk).
_K_REPLY, _K_ASYNC, _K_SYNC = 1, 2, 3


def sorted_columns(events: list[tuple[int, int, int, int, int, int]]):
    """``events`` as six int64 columns (ts, kind, tid, debug_id, reply, flags) in the order
    ``sorted(events)`` puts the tuples; None when a value is beyond what numpy pairs safely."""
    if not events:
        e = np.zeros(0, np.int64)
        return e, e, e, e, e, e
    try:
        a = np.array(events, np.int64)
    except OverflowError:
        return None
    if a.ndim != 2 or a.shape[1] != 6:
        return None
    ts = a[:, 0]
    if int(ts.max()) >= SAFE_NS or int(ts.min()) <= -SAFE_NS:
        return None
    order = tuple_order(a)
    return tuple(np.ascontiguousarray(a[order, c]) for c in range(6))


def tuple_order(a: np.ndarray) -> np.ndarray:
    """The stable order of the rows of ``a`` (n × 6 int64) as ``sorted`` orders them as tuples:
    ``np.lexsort(a.T[::-1])``, in one stable sort by time — the other fields only decide among
    rows of the same time, so only those rows are sorted by them."""
    order = np.argsort(a[:, 0], kind="stable")
    t = a[order, 0]
    tie = np.flatnonzero(t[1:] == t[:-1])
    if len(tie):
        rows = np.union1d(tie, tie + 1)  # positions in ``order`` within a run of equal times
        sub = a[order[rows]]
        # the runs stay where they are (time first); within each, the rows by every field
        order[rows] = order[rows][np.lexsort(sub.T[::-1])]
    return order


def previous_in_group(key: np.ndarray, among: np.ndarray, by_key: np.ndarray | None = None) -> np.ndarray:
    """For each row, the index of the row before it (in row order) with the same ``key`` among
    the rows where ``among`` is set; -1 where there is none. ``by_key``: every row's
    ``np.argsort(key, kind="stable")`` when the caller has it (the binder passes ask three
    times about one key): the rows of ``among`` in it are in the order sorting them would give."""
    if by_key is not None:
        g = by_key[among[by_key]]
    else:
        idx = np.flatnonzero(among)
        g = idx[np.argsort(key[idx], kind="stable")]  # by key, then row order (idx ascends)
    prev = np.full(len(key), -1, np.int64)
    same = key[g[1:]] == key[g[:-1]]
    prev[g[1:][same]] = g[:-1][same]
    return prev


def debug_id_order(columns) -> np.ndarray | None:
    """The rows of :func:`sorted_columns`' result by debug_id, stably (``previous_in_group``'s
    ``by_key``), or None without columns."""
    return None if columns is None else np.argsort(columns[3], kind="stable")


def pids_of(tids: np.ndarray, pid_for: Callable[[int], int], pids_for=None) -> np.ndarray:
    """``pid_for`` of every tid, asked once per distinct tid (``pids_for``: the same for a list
    of tids at once, when the caller has it)."""
    u, inv = np.unique(tids, return_inverse=True)
    ul = u.tolist()
    got = pids_for(ul) if pids_for is not None else [pid_for(t) for t in ul]
    return np.array(got, np.int64)[inv].reshape(-1)


def _closes_on_top(step, code, tid, ts):
    """The stack steps (codes 0/1 push a transaction/reply, 2/3 close a reply/transaction) when
    every close finds its name on top of its thread's stack — the usual case: then it is
    begin/end pairing (``perfetto_slices.pair_rows``). None when some close does not."""
    log = AtraceLog(wide=True)  # int64 columns: the int64 bytes below
    log.tid.frombytes(tid[step].tobytes())
    log.ts.frombytes(step.astype(np.int64).tobytes())  # the sorted position orders them
    log.code.frombytes(np.where(code < 2, 1, 2).astype(np.int8).tobytes())
    log.arg.frombytes(np.arange(len(step), dtype=np.int64).tobytes())
    p = pair_rows(log)
    b = p.nid  # step index of each closed push
    e = np.searchsorted(step, p.t1)  # step index of its close
    name_b = np.where(code[b] == 0, _T, _R)
    name_e = np.where(code[e] == 2, _R, _T)
    if not np.array_equal(name_b, name_e):
        return None
    # a close with an empty stack closes nothing here as in the walk; one with a non-empty
    # stack always closed the top (checked above)
    return p.t1, p.tid, name_e, ts[p.t0], ts[p.t1], p.unfinished


def _closes_walked(step, code, tid, ts):
    """The stack steps walked one by one: a close ends the innermost open slice of its name
    and, first, the ones left open inside it."""
    stacks: dict[int, list[tuple[int, int]]] = {}
    e_pos: list[int] = []
    e_tid: list[int] = []
    e_name: list[int] = []
    e_t0: list[int] = []
    e_t1: list[int] = []
    for i, c, t, now in zip(step.tolist(), code.tolist(), tid[step].tolist(), ts[step].tolist()):
        if c < 2:
            stacks.setdefault(t, []).append((_T if c == 0 else _R, now))
            continue
        stack = stacks.get(t)
        if not stack:
            continue
        name = _R if c == 2 else _T
        for j in range(len(stack) - 1, -1, -1):
            if stack[j][0] == name:
                for inner, t0 in stack[j + 1:] + [stack[j]]:  # the ones left open inside it, then it
                    e_pos.append(i)
                    e_tid.append(t)
                    e_name.append(inner)
                    e_t0.append(t0)
                    e_t1.append(now)
                del stack[j:]
                break
    col = lambda xs: np.array(xs, np.int64)  # noqa: E731
    return col(e_pos), col(e_tid), col(e_name), col(e_t0), col(e_t1), sum(len(s) for s in stacks.values())


class BinderState:
    def __init__(self) -> None:
        self.events: list[tuple[int, int, int, int, int, int]] = []  # ts, kind, tid, debug_id, reply, flags
        #: Whole batches of events (perfetto_ftrace_batch.py), as (n, 6) int64 rows like ``events``.
        self.chunks: list[np.ndarray] = []
        self.chunk_rows = 0
        self.dropped = 0
        self.unfinished = 0

    def kept(self) -> int:
        return len(self.events) + self.chunk_rows

    def extend_columns(self, ts, kind, tid, debug_id, reply, flags) -> None:
        """Events as int64 columns in arrival order: the first that fit under
        :data:`MAX_BINDER_EVENTS` are kept, the rest counted."""
        room = max(MAX_BINDER_EVENTS - self.kept(), 0)
        n = len(ts)
        k = min(n, room)
        if k:
            self.chunks.append(np.stack([np.asarray(c, np.int64)[:k] for c in (ts, kind, tid, debug_id, reply, flags)], 1))
            self.chunk_rows += k
        self.dropped += n - k

    def all_events(self) -> list[tuple[int, int, int, int, int, int]]:
        """Every event kept, as tuples (for the reference walks)."""
        return self.events + [tuple(r) for c in self.chunks for r in c.tolist()]

    def columns(self):
        """:func:`sorted_columns` of every event kept, batches included."""
        if not self.chunks:
            return sorted_columns(self.events)
        if self.events:
            cols = sorted_columns(self.events)
            if cols is None:
                return None
            parts = [np.stack(cols, 1)] + self.chunks
        else:
            parts = self.chunks
        a = np.concatenate(parts)
        ts = a[:, 0]
        if int(ts.max()) >= SAFE_NS or int(ts.min()) <= -SAFE_NS:
            return None
        order = tuple_order(a)
        return tuple(np.ascontiguousarray(a[order, c]) for c in range(6))

    def transaction(self, ts: int, tid: int, ev) -> None:
        self._keep((ts, _SEND, tid, ev.debug_id, 1 if ev.reply else 0, ev.flags))

    def received(self, ts: int, tid: int, ev) -> None:
        self._keep((ts, _RECV, tid, ev.debug_id, 0, 0))

    def _keep(self, e: tuple[int, int, int, int, int, int]) -> None:
        if self.kept() < MAX_BINDER_EVENTS:
            self.events.append(e)
        else:
            self.dropped += 1

    def finish(self, data: PerfData, pid_for: Callable[[int], int], columns=None, pids=None,
               by_key: np.ndarray | None = None) -> None:
        """Pair the events in time order and add the slices to ``data`` (``columns``: what
        :func:`sorted_columns` made of the events, when the caller has them; ``pids``: the
        process of each of their rows, :func:`pids_of` the tid column, likewise; ``by_key``:
        :func:`debug_id_order` of them, likewise)."""
        cols = self.columns() if columns is None else columns
        if cols is None:
            self.events = self.all_events()
            self.chunks, self.chunk_rows = [], 0
            self._finish_reference(data, pid_for)
            return
        ts, kind, tid, did, reply, flags = cols
        if pids is None:
            pids = pids_of(tid, pid_for)
        send = kind == _SEND
        left = np.where(reply != 0, _K_REPLY, np.where(flags & TF_ONE_WAY, _K_ASYNC, _K_SYNC))
        # a receipt takes what the event before it of its debug_id left, if that was a send
        # (every send sets kinds[debug_id], every receipt pops it)
        prev = previous_in_group(did, np.ones(len(ts), bool), by_key)
        got = np.where(~send & (prev >= 0), np.where(send[np.maximum(prev, 0)], left[np.maximum(prev, 0)], 0), 0)
        got[send] = 0
        # zero-length slices: one-way sends and their receipts
        a_pos = np.flatnonzero((send & (left == _K_ASYNC)) | (~send & (got == _K_ASYNC)))
        a_name = np.where(send[a_pos], _A, _AR)
        # stack steps: push a transaction (sync send) or a reply (receipt of a sync send);
        # close a reply (reply send) or a transaction (receipt of a reply)
        push_t = send & (left == _K_SYNC)
        push_r = ~send & (got == _K_SYNC)
        close_r = send & (left == _K_REPLY)
        close_t = ~send & (got == _K_REPLY)
        step = np.flatnonzero(push_t | push_r | close_r | close_t)
        code = np.select([push_t[step], push_r[step], close_r[step]], [0, 1, 2], 3)
        closed = _closes_on_top(step, code, tid, ts)
        if closed is None:
            closed = _closes_walked(step, code, tid, ts)
        e_pos, e_tid, e_name, e_t0, e_t1, self.unfinished = closed
        pos = np.concatenate([e_pos, a_pos])
        order = np.argsort(pos, kind="stable")  # emission order: by event, a close's slices as made
        s_pid = pids[pos[order]]  # a slice is on the thread of the event that made it
        s_tid = np.concatenate([e_tid, tid[a_pos]])[order]
        s_name = np.concatenate([e_name, a_name])[order]
        t0 = np.concatenate([e_t0, ts[a_pos]])[order]
        t1 = np.concatenate([e_t1, ts[a_pos]])[order]
        self.events.clear()
        self.chunks, self.chunk_rows = [], 0
        data.add_slice_rows(s_pid, s_tid, t0 / 1000.0, (t1 - t0) / 1000.0, s_name, _NAMES)

    def _finish_reference(self, data: PerfData, pid_for: Callable[[int], int]) -> None:
        """The event-by-event walk :meth:`finish` vectorises."""
        open_: dict[int, list[tuple[str, int]]] = {}  # tid → stack of (name, start ts)
        kinds: dict[int, str] = {}  # debug_id → "sync" | "reply" | "async"

        def emit(tid: int, name: str, t0: int, t1: int) -> None:
            data.add_slice(pid_for(tid), tid, t0 / 1000.0, (t1 - t0) / 1000.0, name)

        def close(tid: int, name: str, ts: int) -> None:
            stack = open_.get(tid) or []
            for i in range(len(stack) - 1, -1, -1):
                if stack[i][0] == name:
                    for inner_name, t0 in stack[i + 1:]:  # left open inside it: end them here
                        emit(tid, inner_name, t0, ts)
                    emit(tid, name, stack[i][1], ts)
                    del stack[i:]
                    return

        for ts, kind, tid, debug_id, reply, flags in sorted(self.events):
            if kind == _SEND:
                if reply:
                    close(tid, REPLY, ts)
                    kinds[debug_id] = "reply"
                elif flags & TF_ONE_WAY:
                    emit(tid, ASYNC, ts, ts)
                    kinds[debug_id] = "async"
                else:
                    open_.setdefault(tid, []).append((TRANSACTION, ts))
                    kinds[debug_id] = "sync"
            else:
                k = kinds.pop(debug_id, None)
                if k == "reply":
                    close(tid, TRANSACTION, ts)
                elif k == "async":
                    emit(tid, ASYNC_RCV, ts, ts)
                elif k == "sync":
                    open_.setdefault(tid, []).append((REPLY, ts))
        self.unfinished = sum(len(s) for s in open_.values())
        self.events.clear()
