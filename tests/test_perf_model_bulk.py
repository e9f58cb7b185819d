"""PerfData's bulk write methods store exactly what their one-at-a-time counterparts store.

``add_slice_rows`` must equal ``add_slice`` called row by row — columns, thread order, ThreadInfo
order, interned-string order, bounds, the event count — and at the event cap keep the rows that
fit, then raise CapacityReached, as ``add_slice`` does on the row past the cap.
``add_thread_state_totals`` must equal ``add_thread_state`` called for each nonzero total.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from nodes.perf.model import CapacityReached, PerfData

NAMES = ["a", "b", "c", "binder reply", "d"]


def _store(pd: PerfData):
    """Everything the two paths may write, in stored order."""
    return (
        [(k, list(c.ts), list(c.dur), [pd.strings[i] for i in c.name]) for k, c in pd.slices.items()],
        list(pd.threads), list(pd.strings), dict(pd.strings.ids), pd.start_us, pd.end_us, pd.stored,
        pd.stopped_at_cap, list(pd.warnings), {k: dict(v) for k, v in pd.thread_states.items()},
    )


def _fresh(cap: int) -> PerfData:
    pd = PerfData("x", "x", max_events=cap)
    pd.intern("c")  # a name interned before: keeps its id
    pd.add_slice(1, 1, 5.0, 1.0, "d")  # a thread with slices before: appended to
    return pd


rows = st.lists(st.tuples(st.sampled_from([1, 2, 3]), st.sampled_from([1, 2, 7]),
                          st.floats(-1e6, 1e6, allow_nan=False), st.one_of(
                              st.floats(-10, 10, allow_nan=False), st.just(math.nan), st.just(-0.0)),
                          st.integers(0, len(NAMES) - 1)), max_size=40)


@settings(max_examples=200, deadline=None)
@given(rows, st.integers(1, 50))
@example([(1, 1, 0.0, math.nan, 0), (1, 1, -0.0, math.nan, 0)], 3)  # equal starts of two signs: the first kept
def test_add_slice_rows_is_add_slice_row_by_row(rs, cap):
    one, bulk = _fresh(cap), _fresh(cap)
    raised_one = raised_bulk = False
    try:
        for p, t, ts, dur, n in rs:
            one.add_slice(p, t, ts, dur, NAMES[n])
    except CapacityReached:
        raised_one = True
    try:
        cols = list(zip(*rs)) if rs else [[], [], [], [], []]
        bulk.add_slice_rows(np.array(cols[0], np.int64), np.array(cols[1], np.int64), np.array(cols[2], float),
                            np.array(cols[3], float), np.array(cols[4], np.int64), NAMES)
    except CapacityReached:
        raised_bulk = True
    assert raised_one == raised_bulk
    s1, s2 = _store(one), _store(bulk)
    # dur: NaN → 0.0 on both paths; compare with repr so -0.0 and 0.0 differ
    assert repr(s1) == repr(s2)


def test_add_slice_rows_keeps_the_first_rows_at_the_cap():
    pd = PerfData("x", "x", max_events=3)
    with pytest.raises(CapacityReached):
        pd.add_slice_rows(np.array([5, 5, 6, 6]), np.array([50, 50, 60, 60]), np.array([1.0, 2.0, 3.0, 4.0]),
                          np.array([1.0, -1.0, 1.0, 1.0]), np.array([0, 1, 2, 4]), NAMES)
    assert pd.stopped_at_cap and pd.partial and pd.stored == 3
    assert list(pd.slices) == [(5, 50), (6, 60)]
    assert list(pd.slices[(5, 50)].dur) == [1.0, 0.0]
    assert list(pd.slices[(6, 60)].ts) == [3.0]
    assert list(pd.strings) == ["a", "b", "c"]  # "d" was in no row kept
    assert (pd.start_us, pd.end_us) == (1.0, 4.0)


def test_add_slice_rows_with_no_room_stores_nothing():
    pd = PerfData("x", "x", max_events=1)
    pd.add_slice(1, 1, 0.0, 1.0, "a")
    with pytest.raises(CapacityReached):
        pd.add_slice_rows(np.array([2]), np.array([2]), np.array([1.0]), np.array([1.0]), np.array([1]), NAMES)
    assert list(pd.slices) == [(1, 1)] and pd.stored == 1 and list(pd.strings) == ["a"]
    pd2 = PerfData("x", "x", max_events=1)
    pd2.add_slice_rows(np.array([], np.int64), np.array([], np.int64), np.array([]), np.array([]),
                       np.array([], np.int64), NAMES)  # nothing to add: no cap reached
    assert not pd2.stopped_at_cap


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([(1, 1), (1, 2), (3, 3)]),
                          st.lists(st.integers(-5000, 10 ** 12), min_size=3, max_size=3)), max_size=10))
def test_add_thread_state_totals_is_add_thread_state(rows_):
    states = ("running", "runnable", "sleeping")
    one, bulk = PerfData("x", "x"), PerfData("x", "x")
    for pd in (one, bulk):
        pd.add_thread_state(1, 2, "running", 3.0)  # totals already there are added to
    for key, totals in rows_:
        for s, v in zip(states, totals):
            if v:
                one.add_thread_state(*key, s, v / 1000.0)
    bulk.add_thread_state_totals([k for k, _ in rows_], [t for _, t in rows_], states)
    assert repr(_store(one)) == repr(_store(bulk))


wide_rows = st.lists(st.tuples(st.sampled_from([-(1 << 62), 1, 1 << 62]), st.sampled_from([-(1 << 62), 2, 1 << 62]),
                               st.floats(-1e6, 1e6, allow_nan=False), st.floats(-10, 10, allow_nan=False),
                               st.integers(-len(NAMES), len(NAMES) - 1)), max_size=30)


@settings(max_examples=100, deadline=None)
@given(wide_rows)
def test_add_slice_rows_of_ids_too_wide_for_one_sort_key(rs):
    """pid × tid ranges beyond int64 (the rows are then ordered by a lexsort); a negative name
    id names what ``names[i]`` names."""
    one, bulk = _fresh(100), _fresh(100)
    for p, t, ts, dur, n in rs:
        one.add_slice(p, t, ts, dur, NAMES[n])
    cols = list(zip(*rs)) if rs else [[], [], [], [], []]
    bulk.add_slice_rows(np.array(cols[0], np.int64), np.array(cols[1], np.int64), np.array(cols[2], float),
                        np.array(cols[3], float), np.array(cols[4], np.int64), NAMES)
    assert repr(_store(one)) == repr(_store(bulk))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.tuples(st.integers(1, 3), st.sampled_from(["mem.rss", "mem.swap"])),
                          st.lists(st.tuples(st.floats(0, 10), st.floats(0, 10)), max_size=3)), max_size=8))
def test_add_memory_series_many_is_add_memory_series_in_turn(series):
    one, bulk = PerfData("x", "x"), PerfData("x", "x")
    one.add_memory_series(2, "mem.rss", [(0.0, 1.0)])
    bulk.add_memory_series(2, "mem.rss", [(0.0, 1.0)])
    for (pid, name), pts in series:
        one.add_memory_series(pid, name, pts)
    bulk.add_memory_series_many(series)
    assert list(one.memory.items()) == list(bulk.memory.items())


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b"]),
                          st.lists(st.tuples(st.one_of(st.floats(-10, 10), st.just(math.nan), st.just(-0.0)),
                                             st.floats(-5, 5)), max_size=6),
                          st.sampled_from([None, "", "KB"])), max_size=6),
       st.integers(0, 8), st.booleans())
def test_add_counter_points_is_add_counter_in_turn(series, full, bounded):
    import nodes.perf.model as model

    one, bulk = PerfData("x", "x"), PerfData("x", "x")
    for pd in (one, bulk):
        if bounded:
            pd.extend_bounds(0.0, 0.0)
    old = model.MAX_COUNTER_POINTS
    model.MAX_COUNTER_POINTS = full  # a small cap, so that some series fill up
    try:
        for name, pts, unit in series:
            for t, v in pts:
                one.add_counter(name, t, v, unit)
            bulk.add_counter_points(name, pts, unit)
    finally:
        model.MAX_COUNTER_POINTS = old
    assert repr((dict(one.counters), one.counter_units, one.start_us, one.end_us)) == \
        repr((dict(bulk.counters), bulk.counter_units, bulk.start_us, bulk.end_us))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 4), st.integers(1, 4), st.sampled_from([None, "", "x"]),
                          st.sampled_from([None, True, False])), max_size=12),
       st.dictionaries(st.integers(1, 5), st.sampled_from(["", "comm", "other"])))
def test_name_threads_is_set_thread_name_and_mark_main_thread_per_thread(threads, comm):
    one, bulk = PerfData("x", "x"), PerfData("x", "x")
    for pd in (one, bulk):
        for pid, tid, name, main in threads:
            if name is not None:
                pd.set_thread_name(pid, tid, name)
            else:
                pd.thread(pid, tid)
            if main:
                pd.mark_main_thread(pid, tid)
            elif main is False:
                pd.thread(pid, tid).is_main = False
    for (pid, tid), info in list(one.threads.items()):
        if not info.name and comm.get(tid):
            one.set_thread_name(pid, tid, comm[tid])
        if pid == tid and info.is_main is None:
            one.mark_main_thread(pid, tid)
    bulk.name_threads(comm)
    assert repr(list(one.threads.items())) == repr(list(bulk.threads.items()))
