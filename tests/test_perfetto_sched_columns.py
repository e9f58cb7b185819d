"""The vectorised thread states (nodes/perf/parsers/perfetto_sched.py) against the per-thread
reference walk they replace (FtraceState._thread_states), on random event sequences: every
thread's totals and intervals must come out identical, for each kernel bit layout."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

import numpy as np

from nodes.perf.parsers.perfetto_ftrace import FtraceState, decode_prev_state
from nodes.perf.parsers.perfetto_sched import COARSE, SchedLog, as_arrays, decode_states, thread_states

KERNELS = [None, (3, 18), (4, 9), (4, 14), (5, 10)]
STATES = [0, 1, 2, 4, 0x10, 0x20, 0x40, 0x80, 0x82, 0x100, 0x101, 0x102, 130, 1024, 1025, 2048, 2050, 0x402, 0xFFFF]

event = st.tuples(
    st.integers(1, 4),  # tid
    st.integers(0, 30),  # ts: small, so ties are common
    st.integers(0, 5),  # code
    st.one_of(st.sampled_from(STATES), st.integers(0, 1)),
)


def _reference(log: SchedLog, kernel, end):
    out = {}
    for tid in dict.fromkeys(log.tid):
        totals, iv = FtraceState._thread_states(*log.thread_events(tid), kernel, end)
        out[tid] = ([totals[k] for k in COARSE], (list(iv.ts), list(iv.dur), list(iv.state), list(iv.io_wait)))
    return out


def test_decode_states_matches_the_scalar_decoder():
    raw = np.array(list(range(0, 5000)) + STATES + [-1, -2, 1 << 40, (1 << 62) + 3], np.int64)
    for kernel in KERNELS:
        coarse, detail = decode_states(raw, kernel)
        for r, c, d in zip(raw.tolist(), coarse.tolist(), detail.tolist()):
            state, code = decode_prev_state(r, kernel)
            assert (COARSE + (None,))[c] == state and d == code, (r, kernel)


@settings(max_examples=400, deadline=None)
@given(st.lists(event, max_size=40), st.sampled_from(KERNELS), st.one_of(st.none(), st.integers(30, 40)))
def test_vectorised_thread_states_equal_the_reference(events, kernel, end):
    log = SchedLog()
    for tid, ts, code, arg in events:
        log.push(tid, ts, code, arg if code in (1, 2, 3) else arg & 1 if code == 5 else 0)
    want = _reference(log, kernel, end)
    rows = thread_states(log, kernel, end)
    assert [r[0] for r in rows] == list(want)
    for tid, totals, iv in rows:
        wt, wiv = want[tid]
        assert totals == wt
        got = ([], [], [], []) if iv is None else tuple(list(a) for a in as_arrays(iv))
        assert got == wiv, tid


atrace_event = st.tuples(st.integers(1, 3), st.integers(0, 12), st.sampled_from([1, 2]), st.integers(0, 5))


@settings(max_examples=400, deadline=None)
@given(st.lists(atrace_event, max_size=40))
def test_vectorised_slice_pairing_equals_the_stack_walk(events):
    from nodes.perf.parsers.perfetto_slices import AtraceLog, _pair_reference, pair

    log = AtraceLog()
    for tid, ts, code, nid in events:
        log.push(tid, ts, code, nid if code == 1 else 0)
    want, w_unmatched, w_unfinished = _pair_reference(log)
    got, unmatched, unfinished = pair(log)
    assert (unmatched, unfinished) == (w_unmatched, w_unfinished)
    assert [(t, list(zip(a.tolist(), b.tolist(), c.tolist()))) for t, a, b, c in got] == want
