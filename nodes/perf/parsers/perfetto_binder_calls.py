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

Paired on columns: which send a receipt answers, and whether it is the receipt of a reply, are
look-backs within its ``debug_id``; a client thread's open calls are a stack, matched like atrace
begins and ends (``perfetto_slices.pair``). ``_pair_calls_reference`` is the event-by-event walk,
kept for times numpy cannot hold (tests/test_perfetto_binder.py checks that they agree).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from nodes.perf.model import BinderCall, PerfData
from nodes.perf.parsers.perfetto_binder import BinderState, pids_of, previous_in_group
from nodes.perf.parsers.perfetto_slices import AtraceLog, pair_rows
from nodes.perf.units import counted

_SEND, _RECV = 0, 1
_TF_ONE_WAY = 0x01


def pair_calls(binder: BinderState, data: PerfData, pid_for: Callable[[int], int], columns=None,
               pids=None, by_key=None) -> None:
    """The events ``binder`` (``perfetto_binder.BinderState``) kept, into ``data.binder_calls``.
    ``columns``: what ``binder.columns()`` gave, when the caller has it; ``pids``: the process of
    each of their rows (``pids_of`` the tid column), likewise; ``by_key``: their
    ``debug_id_order``, likewise."""
    cols = binder.columns() if columns is None else columns
    if cols is None:
        _pair_calls_reference(binder.all_events(), data, pid_for)
        return
    ts, kind, tid, did, reply, flags = cols
    if pids is None:
        pids = pids_of(tid, pid_for)
    n = len(ts)
    send = kind == _SEND
    call = send & (reply == 0)  # every send but a reply is a call (one-way ones too)
    recv = ~send
    # a receipt names the server of the call whose send is the last send-or-receipt of its
    # debug_id before it (a send sets sync[debug_id], a receipt pops it)
    prev = previous_in_group(did, call | recv, by_key)
    named = recv & (prev >= 0)
    named[named] = call[prev[named]]
    # a receipt naming no call is a reply's receipt when a reply send of its debug_id came
    # since the last such receipt (the replies set)
    rest = recv & ~named
    prev_r = previous_in_group(did, (send & (reply != 0)) | rest, by_key)
    consumes = rest & (prev_r >= 0)
    consumes[consumes] = send[prev_r[consumes]]
    # the client's open sync calls are a stack: the sync send a begin, the reply's receipt an end
    sync = call & ((flags & _TF_ONE_WAY) == 0)
    steps = np.flatnonzero(sync | consumes)
    log = AtraceLog(wide=True)  # int64 columns: the int64 bytes below
    log.tid.frombytes(tid[steps].tobytes())
    log.ts.frombytes(steps.astype(np.int64).tobytes())  # the sorted position orders them
    log.code.frombytes(np.where(sync[steps], 1, 2).astype(np.int8).tobytes())
    log.arg.frombytes(steps.astype(np.int64).tobytes())
    paired = pair_rows(log)
    orphan_replies, unfinished = paired.unmatched, paired.unfinished
    # one BinderCall per call, in time order
    at = np.flatnonzero(call)
    slot = np.full(n, -1, np.int64)
    slot[at] = np.arange(len(at))
    m = len(at)
    ts_us = ts[at] / 1000.0
    oneway = (flags[at] & _TF_ONE_WAY) != 0
    dur = np.zeros(m, np.float64)  # read where has_dur: 0.0 for a one-way call
    has_dur = oneway.copy()
    replied = np.zeros(m, bool)
    if len(paired.nid):
        b_pos, e_pos = paired.nid, paired.t1  # the begin's arg and the end's time: their positions
        c = slot[b_pos]
        dur[c] = ts[e_pos] / 1000.0 - ts_us[c]
        has_dur[c] = True
        replied[c] = True
    server_tid = np.zeros(m, np.int64)  # read where has_server
    server_pid = np.zeros(m, np.int64)
    has_server = np.zeros(m, bool)
    r = np.flatnonzero(named)
    if len(r):
        c = slot[prev[r]]
        server_tid[c] = tid[r]
        server_pid[c] = pids[r]
        has_server[c] = True
    # as columns (PerfData.binder_calls reads them as BinderCall objects: none held per call)
    data.add_binder_call_columns(pids[at], tid[at], ts_us, dur, has_dur, server_pid, server_tid, has_server, oneway,
                                 replied)
    _store(data, [], orphan_replies, unfinished)


def _pair_calls_reference(events: list[tuple[int, int, int, int, int, int]], data: PerfData,
                          pid_for: Callable[[int], int]) -> None:
    """The event-by-event walk :func:`pair_calls` vectorises: ``events`` as
    ``BinderState.all_events()`` gives them, (ts, kind, tid, debug_id, reply, flags)."""
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
    _store(data, calls, orphan_replies, unfinished)


def _store(data: PerfData, calls: list[BinderCall], orphan_replies: int, unfinished: int) -> None:
    data.add_binder_calls(calls)
    if orphan_replies:
        data.warn(f"binder: {counted(orphan_replies, 'reply', 'replies')} arrived with no transaction open on the thread "
                  "(its start was before the trace or lost); not counted as calls")
    if unfinished:
        data.warn(f"binder: {counted(unfinished, 'call')} had no reply by the end of the trace; {'its' if unfinished == 1 else 'their'} duration is unknown")
