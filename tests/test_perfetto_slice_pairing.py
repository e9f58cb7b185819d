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
    assert [(t, list(zip(a.tolist(), b.tolist(), c.tolist())), list(zip(d.tolist(), e.tolist())))
            for t, a, b, c, d, e in got] == want


def test_every_kind_the_bundle_reads_is_in_the_skip_set():
    """FtraceState.bundle skips kinds outside _HANDLED before its chain of kind tests: a kind
    added to the chain but not to the set would silently never be read."""
    import inspect
    import re

    from nodes.perf.parsers import perfetto_ftrace

    source = inspect.getsource(perfetto_ftrace.FtraceState.bundle)
    read = set(re.findall(r'kind == "([a-z_0-9]+)"', source))
    assert read and read <= perfetto_ftrace._HANDLED, read - perfetto_ftrace._HANDLED


def test_the_batch_reader_reads_or_hands_back_every_kind_the_bundle_reads():
    """perfetto_ftrace_batch reads the FAST kinds itself and sends bundles holding a SLOW kind
    to FtraceState.bundle: a kind the event-by-event reader handles but the batch reader
    neither reads nor hands back would be dropped on the fast path only."""
    from nodes.perf.parsers import perfetto_ftrace, perfetto_ftrace_batch

    assert perfetto_ftrace_batch.FAST | perfetto_ftrace_batch.SLOW == perfetto_ftrace._HANDLED
    assert not perfetto_ftrace_batch.FAST & perfetto_ftrace_batch.SLOW
