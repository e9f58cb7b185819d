"""Small exact shortcuts of the Perfetto read against the plain forms they replace: a stable
sort of CPU numbers as uint16 (perfetto_ftrace_batch._stable_order), the rss_stat owners'
dict update with one pair per mm_id (``_last_words``), and the binder passes' debug_id order
sorted once (perfetto_binder.previous_in_group's ``by_key``)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from nodes.perf.parsers.perfetto_binder import previous_in_group
from nodes.perf.parsers.perfetto_ftrace_batch import _last_words, _stable_order

_keys = st.lists(st.one_of(st.integers(0, 7), st.integers(0, (1 << 16) + 3), st.integers(-3, 1 << 40)), max_size=60)


@settings(max_examples=300, deadline=None)
@given(_keys)
def test_stable_order_is_a_stable_argsort(keys):
    a = np.array(keys, np.int64)
    assert np.array_equal(_stable_order(a), np.argsort(a, kind="stable"))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 99)), max_size=40),
       st.dictionaries(st.integers(0, 9), st.integers(0, 99), max_size=5))
def test_last_words_update_the_dict_as_every_pair_does(pairs, before):
    keys = np.array([k for k, _ in pairs], np.int64)
    values = np.array([v for _, v in pairs], np.int64)
    want, got = dict(before), dict(before)
    want.update(zip(keys.tolist(), values.tolist()))
    got.update(_last_words(keys, values))
    assert list(got.items()) == list(want.items())


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.booleans()), max_size=50))
def test_previous_in_group_with_the_key_order_given(rows):
    key = np.array([k for k, _ in rows], np.int64)
    among = np.array([m for _, m in rows], bool)
    by_key = np.argsort(key, kind="stable")
    assert np.array_equal(previous_in_group(key, among, by_key), previous_in_group(key, among))


_tids = st.lists(st.one_of(st.integers(-2, 14), st.just(1 << 63), st.just(-(1 << 63) - 1)), max_size=30)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 12), st.integers(0, 12)), max_size=12),
       st.dictionaries(st.integers(0, 14), st.integers(0, 14), max_size=6), _tids,
       st.dictionaries(st.integers(0, 14), st.integers(0, 3), max_size=6))
def test_pids_for_is_pid_for_each(tree, others, tids, tgid_of):
    """ThreadGroups.get_many == get per tid; FtraceState.pids_for == pid_for per tid (a tree's
    or a tgid_of's 0 falls through, as ``or`` does); binder's pids_of alike with it."""
    from array import array

    from nodes.perf.parsers.perfetto_binder import pids_of
    from nodes.perf.parsers.perfetto_ftrace import FtraceState
    from nodes.perf.parsers.perfetto_system import ThreadGroups, last_word

    known = ThreadGroups(*last_word(array("q", [t for t, _ in tree]), array("q", [g for _, g in tree])), others)
    assert known.get_many(tids) == [known.get(t) for t in tids]
    state = FtraceState()
    state.tgid_of.update(tgid_of)
    assert state.pids_for(tids, known) == [state.pid_for(t, known) for t in tids]
    assert state.pids_for(tids, dict(others)) == [state.pid_for(t, dict(others)) for t in tids]
    col = np.array([t for t in tids if -(1 << 63) <= t < 1 << 63], np.int64)
    assert np.array_equal(pids_of(col, lambda t: state.pid_for(t, known), lambda ts: state.pids_for(ts, known)),
                          pids_of(col, lambda t: state.pid_for(t, known)))
