"""Binder transactions from the ``binder_transaction`` / ``binder_transaction_received`` ftrace
events, as the slices trace_processor's binder tracker makes of them.

A synchronous call is a ``binder transaction`` slice on the client thread, from its
``binder_transaction`` (reply = 0, not one-way) to the ``binder_transaction_received`` of the
reply on that thread; the server thread has a ``binder reply`` slice from receiving the request
to sending the reply (``binder_transaction`` with reply = 1). One-way calls (flag 0x01) block no
one and make no slice here. Each client slice keeps the duration of the server's reply slice:
trace_processor's slow-start rule ``MAIN_THREAD_BINDER_TRANSCATIONS_BLOCKED`` needs both.

The events arrive per CPU, so they are buffered (a few ints each) and paired in time order at
the end. The slices go to ``PerfData.binder_slices``, apart from the atrace slices (hot spots
stay what the app traced); the startup breakdown reads them.
"""

from __future__ import annotations

from nodes.perf.model import PerfData

TRANSACTION = "binder transaction"
REPLY = "binder reply"
_ONE_WAY = 0x01
#: Binder events kept; beyond this the rest is dropped (and counted).
MAX_EVENTS = 2_000_000


class BinderState:
    def __init__(self) -> None:
        #: (ts ns, kind 0 = transaction / 1 = received, tid, debug_id, reply, flags)
        self.events: list[tuple[int, int, int, int, int, int]] = []
        self.dropped = 0

    def transaction(self, ts: int, tid: int, ev) -> None:
        self._keep((ts, 0, tid, ev.debug_id, 1 if ev.reply else 0, ev.flags))

    def received(self, ts: int, tid: int, ev) -> None:
        self._keep((ts, 1, tid, ev.debug_id, 0, 0))

    def _keep(self, e) -> None:
        if len(self.events) < MAX_EVENTS:
            self.events.append(e)
        else:
            self.dropped += 1

    def finish(self, data: PerfData, pid_for) -> int:
        """Pair the events into slices in ``data.binder_slices``; return how many were made."""
        requests: dict[int, tuple[int, int]] = {}  # request debug_id → (client tid, flags)
        replies: set[int] = set()  # debug_ids that are replies
        client_open: dict[int, list[int]] = {}  # client tid → start ts stack
        server_open: dict[int, list[tuple[int, int]]] = {}  # server tid → [(start ts, client tid)]
        last_reply: dict[int, int] = {}  # client tid → duration of the reply slice that served it
        made = 0
        for ts, kind, tid, debug_id, reply, flags in sorted(self.events):
            if kind == 0 and reply:
                replies.add(debug_id)
                stack = server_open.get(tid)
                if stack:
                    start, client = stack.pop()
                    self._add(data, pid_for(tid), tid, start, ts, REPLY, None)
                    last_reply[client] = ts - start
                    made += 1
            elif kind == 0:
                requests[debug_id] = (tid, flags)
                if not flags & _ONE_WAY:
                    client_open.setdefault(tid, []).append(ts)
            elif debug_id in replies:
                stack = client_open.get(tid)
                if stack:
                    start = stack.pop()
                    self._add(data, pid_for(tid), tid, start, ts, TRANSACTION, last_reply.pop(tid, None))
                    made += 1
            else:
                client, flags = requests.get(debug_id, (None, _ONE_WAY))
                if client is not None and not flags & _ONE_WAY:
                    server_open.setdefault(tid, []).append((ts, client))
        self.events.clear()
        return made

    @staticmethod
    def _add(data: PerfData, pid: int, tid: int, start: int, end: int, name: str, reply_ns: int | None) -> None:
        data.binder_slices.setdefault((pid, tid), []).append(
            (start / 1000.0, (end - start) / 1000.0, name, None if reply_ns is None else reply_ns / 1000.0))
