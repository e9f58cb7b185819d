"""The vectorised pairing of atrace B/E into slices (nodes/perf/parsers/perfetto_slices.py)
against the per-thread stack walk it replaces, on random event sequences: the same slices per
thread in the same order, the same unmatched ends and unfinished begins."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nodes.perf.parsers.perfetto_slices import AtraceLog, _pair_reference, pair
from tests.helpers.atrace_pairing import assert_pairs_as_the_stack_walk


atrace_event = st.tuples(st.integers(1, 3), st.integers(0, 12), st.sampled_from([1, 2]), st.integers(0, 5))


@settings(max_examples=400, deadline=None)
@given(st.lists(atrace_event, max_size=40))
def test_vectorised_slice_pairing_equals_the_stack_walk(events):
    assert_pairs_as_the_stack_walk(events)


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


def test_atrace_slices_and_open_ones_at_the_event_cap():
    """FtraceState.finish stores atrace slices in one add_slice_rows call; the begins still open
    are kept for the threads add_slices reached before the cap stopped it, as when it stored
    thread after thread: not for the thread it stopped in, nor those after."""
    from nodes.perf.model import CapacityReached, PerfData
    from nodes.perf.parsers.perfetto_ftrace import FtraceState

    def filled() -> FtraceState:
        ft = FtraceState()
        a, b = ft._name_id("a"), ft._name_id("b")
        for tid, events in ((1, [(10, 1, a), (20, 2, 0), (30, 1, b), (40, 2, 0), (50, 1, a)]),  # 2 slices, 1 open
                            (2, [(15, 1, b)]),  # only an open one
                            (3, [(12, 1, a), (13, 2, 0), (14, 1, b), (16, 2, 0), (17, 1, a)]),  # 2 slices, 1 open
                            (4, [(18, 1, a)])):
            for ts, code, arg in events:
                ft.atrace.push(tid, ts, code, arg)
        return ft

    ft = filled()
    pd = PerfData("x", "x", max_events=3)
    with pytest.raises(CapacityReached):
        ft.finish(pd, {})
    assert [(k, list(c.ts)) for k, c in pd.slices.items()] == [((1, 1), [0.01, 0.03]), ((3, 3), [0.012])]
    assert pd.open_slices == [(1, 1, 0.05, "a"), (2, 2, 0.015, "b")]
    whole = PerfData("x", "x")
    filled().finish(whole, {})
    assert [t for _, _, _, t in whole.open_slices] == ["a", "b", "a", "a"]
    assert list(whole.slices) == [(1, 1), (3, 3)]


wide_event = st.tuples(st.integers(1, 6), st.sampled_from([-(1 << 61) + 1, -5, 0, 3, 1 << 40, (1 << 61) - 1]),
                       st.sampled_from([1, 2]), st.integers(0, 5))


@settings(max_examples=200, deadline=None)
@given(st.lists(wide_event, max_size=40))
def test_vectorised_pairing_of_times_too_wide_for_one_sort_key(events):
    """Threads × time span beyond int64: the pairing sorts by (tid, time) and reorders the
    threads after (perfetto_slices._thread_order), with the same result."""
    assert_pairs_as_the_stack_walk(events)


def test_pairing_of_stacks_deeper_than_the_radix_sort_key():
    """Depths beyond int16 take the int64 sort (perfetto_slices.pair_rows): same slices."""
    log = AtraceLog()
    deep = 40_000
    for i in range(deep):
        log.push(1, i, 1, i % 7)
        log.push(2, i, 1 if i % 3 else 2, 3)
    for i in range(deep - 5):
        log.push(1, deep + i, 2)
    want, w_unmatched, w_unfinished = _pair_reference(log)
    got, unmatched, unfinished = pair(log)
    assert (unmatched, unfinished) == (w_unmatched, w_unfinished)
    assert [(t, list(zip(a.tolist(), b.tolist(), c.tolist())), list(zip(d.tolist(), e.tolist())))
            for t, a, b, c, d, e in got] == want
