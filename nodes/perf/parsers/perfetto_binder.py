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
"""

from __future__ import annotations

from typing import Callable

from nodes.perf.model import PerfData

TRANSACTION = "binder transaction"
REPLY = "binder reply"
ASYNC = "binder transaction async"
ASYNC_RCV = "binder async rcv"
#: ``binder_transaction.flags`` bit of a one-way transaction (TF_ONE_WAY).
TF_ONE_WAY = 0x01
#: At most this many binder events are kept (bounded memory); the rest are counted.
MAX_BINDER_EVENTS = 400_000
_SEND, _RECV = 0, 1


class BinderState:
    def __init__(self) -> None:
        self.events: list[tuple[int, int, int, int, int, int]] = []  # ts, kind, tid, debug_id, reply, flags
        self.dropped = 0
        self.unfinished = 0

    def transaction(self, ts: int, tid: int, ev) -> None:
        self._keep((ts, _SEND, tid, ev.debug_id, 1 if ev.reply else 0, ev.flags))

    def received(self, ts: int, tid: int, ev) -> None:
        self._keep((ts, _RECV, tid, ev.debug_id, 0, 0))

    def _keep(self, e: tuple[int, int, int, int, int, int]) -> None:
        if len(self.events) < MAX_BINDER_EVENTS:
            self.events.append(e)
        else:
            self.dropped += 1

    def finish(self, data: PerfData, pid_for: Callable[[int], int]) -> None:
        """Pair the events in time order and add the slices to ``data``."""
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
