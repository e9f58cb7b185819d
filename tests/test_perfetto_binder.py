"""Binder pairing on columns equals the event-by-event walks it replaced.

``BinderState.finish`` (the ``binder transaction`` / ``binder reply`` / async slices) and
``pair_calls`` (``PerfData.binder_calls``) run in numpy, with Python only for the per-thread
stacks; ``_finish_reference`` / ``_pair_calls_reference`` are the walks trace_processor's
BinderTracker describes (nodes/perf/parsers/perfetto_binder.py). On any events — lost halves,
reused debug_ids, replies with no call, ties in time, calls left open, the event cap mid-way —
both must leave the same PerfData, in the same order.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nodes.perf.model import CapacityReached, PerfData
from nodes.perf.parsers import perfetto_binder
from nodes.perf.parsers.perfetto_binder import _RECV, _SEND, SAFE_NS, BinderState, sorted_columns
from nodes.perf.parsers.perfetto_binder_calls import _pair_calls_reference, pair_calls

PIDS = {1: 10, 2: 10, 3: 30}


def pid_for(tid: int) -> int:
    return PIDS.get(tid, tid)


events = st.lists(st.tuples(st.integers(0, 30), st.sampled_from([_SEND, _RECV]), st.integers(1, 4),
                            st.integers(0, 5), st.integers(0, 1), st.sampled_from([0, 1, 0x10, 0x11])),
                  max_size=60)


def _state(pd: PerfData):
    return (
        [(k, list(c.ts), list(c.dur), [pd.strings[i] for i in c.name]) for k, c in pd.slices.items()],
        list(pd.threads), list(pd.strings), pd.start_us, pd.end_us, pd.stored, pd.stopped_at_cap,
        repr(pd.binder_calls), list(pd.warnings),
    )


def _run(evs, cap: int, vectorised: bool):
    pd = PerfData("x", "x", max_events=cap)
    pd.add_slice(10, 1, 0.0, 1.0, "earlier")  # a thread that has slices already
    b = BinderState()
    half = len(evs) // 2
    b.events.extend(evs[:half])  # as the per-event path keeps them
    if evs[half:]:  # as the batch reader hands them over
        b.extend_columns(*(np.array(c, np.int64) for c in zip(*evs[half:])))
    raised = False
    if vectorised:
        pair_calls(b, pd, pid_for)
    else:
        _pair_calls_reference(b.all_events(), pd, pid_for)
    try:
        if vectorised:
            b.finish(pd, pid_for)
        else:
            b.events = b.all_events()
            b._finish_reference(pd, pid_for)
    except CapacityReached:
        raised = True
        return _state(pd), raised, None
    return _state(pd), raised, b.unfinished


@settings(max_examples=400, deadline=None)
@given(events, st.integers(1, 80))
def test_columns_equal_the_event_walk(evs, cap):
    assert _run(evs, cap, True) == _run(evs, cap, False)


def test_a_call_and_its_reply():
    # client 1 calls (debug 7), server 3 receives, replies (debug 8), client receives the reply
    evs = [(1000, _SEND, 1, 7, 0, 0), (2000, _RECV, 3, 7, 0, 0), (5000, _SEND, 3, 8, 1, 0),
           (6000, _RECV, 1, 8, 0, 0), (7000, _SEND, 2, 9, 0, 1), (7500, _RECV, 3, 9, 0, 0)]
    pd = PerfData("x", "x")
    b = BinderState()
    b.events.extend(evs)
    pair_calls(b, pd, pid_for)
    b.finish(pd, pid_for)
    slices = {k: [(t, d, pd.strings[n]) for t, d, n in zip(c.ts, c.dur, c.name)] for k, c in pd.slices.items()}
    assert slices == {
        (10, 2): [(7.0, 0.0, "binder transaction async")],
        (30, 3): [(2.0, 3.0, "binder reply"), (7.5, 0.0, "binder async rcv")],
        (10, 1): [(1.0, 5.0, "binder transaction")],
    }
    sync, oneway = pd.binder_calls
    assert (sync.client_tid, sync.server_pid, sync.server_tid, sync.dur_us, sync.replied) == (1, 30, 3, 5.0, True)
    assert (oneway.client_tid, oneway.server_tid, oneway.dur_us, oneway.oneway) == (2, 3, 0.0, True)
    assert b.unfinished == 0 and not pd.warnings


def test_times_beyond_int64_headroom_take_the_walk():
    evs = [(SAFE_NS, _SEND, 1, 7, 0, 0), (SAFE_NS + 10, _RECV, 3, 7, 0, 0)]
    assert sorted_columns(evs) is None
    assert _run(evs, 100, True) == _run(evs, 100, False)


@pytest.mark.parametrize("evs", [[], [(5, _RECV, 1, 1, 0, 0)]])
def test_nothing_to_pair(evs):
    assert _run(evs, 100, True) == _run(evs, 100, False)



def test_the_first_events_are_kept_under_the_cap(monkeypatch):
    monkeypatch.setattr(perfetto_binder, "MAX_BINDER_EVENTS", 3)
    b = BinderState()
    b.transaction(1, 1, type("E", (), {"debug_id": 1, "reply": 0, "flags": 0})())
    b.extend_columns(*(np.array(c, np.int64) for c in zip((2, _RECV, 3, 1, 0, 0), (3, _SEND, 3, 2, 1, 0),
                                                            (4, _RECV, 1, 2, 0, 0))))
    b.received(5, 1, type("E", (), {"debug_id": 9})())
    assert b.all_events() == [(1, _SEND, 1, 1, 0, 0), (2, _RECV, 3, 1, 0, 0), (3, _SEND, 3, 2, 1, 0)]
    assert b.dropped == 2


def test_binder_call_columns_read_as_the_list_of_calls():
    """PerfData.binder_calls as columns (model.BinderCalls) reads as the list of BinderCall it
    stands for: items, negative indices, slices, equality, repr, and calls added after."""
    from nodes.perf.model import BinderCall, BinderCalls

    want = [BinderCall(1, 2, 3.5, None, None, None, False, False), BinderCall(1, 3, 4.0, 0.0, 7, 8, True, False),
            BinderCall(5, 5, 6.25, 1.5, 9, 10, False, True)]
    pd = PerfData("x", "x")
    pd.add_binder_call_columns(np.array([1, 1, 5]), np.array([2, 3, 5]), np.array([3.5, 4.0, 6.25]),
                               np.array([9.0, 0.0, 1.5]), np.array([False, True, True]), np.array([0, 7, 9]),
                               np.array([0, 8, 10]), np.array([False, True, True]), np.array([False, True, False]),
                               np.array([False, False, True]))
    calls = pd.binder_calls
    assert type(calls) is BinderCalls and len(calls) == 3 and calls == want and repr(calls) == repr(want)
    assert [calls[i] for i in range(-3, 3)] == want + want and calls[1:] == want[1:] and calls[::-1] == want[::-1]
    assert [type(getattr(calls[1], f)) for f in ("client_pid", "ts_us", "dur_us", "server_tid", "oneway")] == [
        int, float, float, int, bool]
    pd.add_binder_calls([])
    assert type(pd.binder_calls) is BinderCalls  # nothing added: still the columns
    pd.add_binder_calls([BinderCall(6, 6, 7.0)])
    assert type(pd.binder_calls) is list and pd.binder_calls == want + [BinderCall(6, 6, 7.0)]
