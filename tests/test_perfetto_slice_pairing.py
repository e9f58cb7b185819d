"""The vectorised pairing of atrace B/E into slices (nodes/perf/parsers/perfetto_slices.py)
against the per-thread stack walk it replaces, on random event sequences: the same slices per
thread in the same order, the same unmatched ends and unfinished begins."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from nodes.perf.parsers.perfetto_slices import AtraceLog, _pair_reference, pair


atrace_event = st.tuples(st.integers(1, 3), st.integers(0, 12), st.sampled_from([1, 2]), st.integers(0, 5))


@settings(max_examples=400, deadline=None)
@given(st.lists(atrace_event, max_size=40))
def test_vectorised_slice_pairing_equals_the_stack_walk(events):
    log = AtraceLog()
    for tid, ts, code, nid in events:
        log.push(tid, ts, code, nid if code == 1 else 0)
    want, w_unmatched, w_unfinished = _pair_reference(log)
    got, unmatched, unfinished = pair(log)
    assert (unmatched, unfinished) == (w_unmatched, w_unfinished)
    assert [(t, list(zip(a.tolist(), b.tolist(), c.tolist()))) for t, a, b, c in got] == want
