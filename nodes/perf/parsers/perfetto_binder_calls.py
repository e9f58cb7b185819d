"""Binder calls with both ends: which client thread called which server process and thread,
for how long, and whether the reply came — the blocking lens's input, beside the
``binder transaction`` / ``binder reply`` slices ``perfetto_binder`` makes of the same events.

Paired as trace_processor's BinderTracker pairs them (``src/trace_processor/importers/ftrace/
binder_tracker.cc``): a synchronous ``binder_transaction`` (``reply`` 0, not one-way) opens a
call on the client thread; ``binder_transaction_received`` of its ``debug_id`` names the server
thread; the server's reply transaction, received back on the client thread, ends the call.
A one-way transaction is a call of no duration (the sender does not wait).

Bad input, counted (and named in a warning): a reply received on a thread with no open call
(a reply without its transaction), a call still open at the end of the trace.
"""

from __future__ import annotations

from typing import Callable

from nodes.perf.model import BinderCall, PerfData
from nodes.perf.units import counted

_SEND, _RECV = 0, 1
_TF_ONE_WAY = 0x01


def pair_calls(events: list[tuple[int, int, int, int, int, int]], data: PerfData,
               pid_for: Callable[[int], int]) -> None:
    """``events`` as ``perfetto_binder.BinderState`` buffers them: (ts, kind, tid, debug_id,
    reply, flags). Adds them to ``data.binder_calls``."""
    sync: dict[int, BinderCall] = {}  # debug_id of an outstanding sync transaction → call
    replies: set[int] = set()  # debug_ids of reply transactions sent, not yet received
    open_by_client: dict[int, list[BinderCall]] = {}
    orphan_replies = 0
    calls: list[BinderCall] = []
    for ts, kind, tid, debug_id, reply, flags in sorted(events):
        if kind == _SEND:
            if reply:
                replies.add(debug_id)
                continue
            call = BinderCall(client_pid=pid_for(tid), client_tid=tid, ts_us=ts / 1000.0,
                              oneway=bool(flags & _TF_ONE_WAY))
            calls.append(call)
            if not call.oneway:
                sync[debug_id] = call
                open_by_client.setdefault(tid, []).append(call)
            else:
                call.dur_us = 0.0
                sync[debug_id] = call  # the receiver still names the server
        else:
            call = sync.pop(debug_id, None)
            if call is not None:
                call.server_tid = tid
                call.server_pid = pid_for(tid)
            elif debug_id in replies:
                replies.discard(debug_id)
                stack = open_by_client.get(tid)
                if stack:
                    done = stack.pop()
                    done.dur_us = ts / 1000.0 - done.ts_us
                    done.replied = True
                else:
                    orphan_replies += 1
    unfinished = sum(len(s) for s in open_by_client.values())
    data.add_binder_calls(calls)
    if orphan_replies:
        data.warn(f"binder: {counted(orphan_replies, 'reply', 'replies')} arrived with no transaction open on the thread "
                  "(its start was before the trace or lost); not counted as calls")
    if unfinished:
        data.warn(f"binder: {counted(unfinished, 'call')} had no reply by the end of the trace; {'its' if unfinished == 1 else 'their'} duration is unknown")
