"""find_slices inside ``slice_find.indexed`` (the names laid end to end once an analysis,
nodes/perf/metrics/slice_find.py) answers as it does without the index, for any names, tables
and track keys asked, on the real captures; the index lives only as long as its block."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nodes.perf.metrics import slice_find

DATA = Path(__file__).parent / "data" / "perfetto"
CAPTURES = sorted(p.name for p in DATA.iterdir() if p.name.endswith((".perfetto-trace", ".pftrace")))


@lru_cache(maxsize=None)
def _pd(name: str):
    from nodes.perf.formats import load

    return load(str(DATA / name))


def _one_by_one(pd, ids, thread, async_, only):
    """The reference: every slice of every asked track, one at a time, stably by (start, longer first)."""
    out = [(key, cols.ts[i], cols.dur[i], int(cols.name[i]))
           for table in ([pd.slices] if thread else []) + ([pd.async_slices] if async_ else [])
           for key, cols in table.items() if only is None or key in only
           for i in range(len(cols)) if int(cols.name[i]) in ids]
    return sorted(out, key=lambda r: (r[1], -r[2]))


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(CAPTURES), data=st.data())
def test_indexed_answers_as_unindexed(name, data):
    pd = _pd(name)
    n_strings = len(pd.strings)
    ids = data.draw(st.sets(st.integers(0, max(0, n_strings - 1)), max_size=12))
    thread, async_ = data.draw(st.sampled_from([(True, False), (True, True), (False, True)]))
    keys = list(pd.slices)
    only = data.draw(st.one_of(st.none(), st.lists(st.sampled_from(keys), max_size=6) if keys else st.none()))
    want = slice_find.find_slices(pd, ids, thread=thread, async_=async_, keys=only)
    assert want == _one_by_one(pd, ids, thread, async_, only)
    with slice_find.indexed(pd):
        first = slice_find.find_slices(pd, ids, thread=thread, async_=async_, keys=only)
        again = slice_find.find_slices(pd, ids, thread=thread, async_=async_, keys=only)  # from the index
    assert first == want and again == want


@pytest.mark.parametrize("name", CAPTURES)
def test_every_name_found_as_unindexed(name):
    pd = _pd(name)
    ids = range(len(pd.strings))
    want = slice_find.find_slices(pd, ids, async_=True)
    assert len(want) == sum(len(c) for c in pd.slices.values()) + sum(len(c) for c in pd.async_slices.values())
    with slice_find.indexed(pd):
        assert slice_find.find_slices(pd, ids, async_=True) == want


def test_index_lives_only_in_its_block():
    pd = _pd(CAPTURES[0])
    with slice_find.indexed(pd):
        with slice_find.indexed(pd):  # nested: the outer block's index is kept
            slice_find.find_slices(pd, [0], async_=True)
        assert slice_find._INDEXES[id(pd)]
    assert id(pd) not in slice_find._INDEXES
    slice_find.find_slices(pd, [0])
    assert id(pd) not in slice_find._INDEXES


@pytest.mark.parametrize("at_once", [1, 3, 1 << 20])
@pytest.mark.parametrize("name", CAPTURES)
def test_the_index_names_are_int32_and_answer_alike(name, at_once, monkeypatch):
    """The index's names are every track's ids end to end (int32: held through the analysis),
    joined a run of tracks at a time; find_slices answers from them as without the index."""
    pd = _pd(name)
    monkeypatch.setattr(slice_find, "_NAMES_AT_ONCE", at_once)
    tracks, names, offsets = slice_find.thread_names(pd)
    assert names.dtype == np.int32
    assert names.tolist() == [int(n) for _k, cols in tracks for n in cols.name]
    assert offsets.tolist() == np.cumsum([0] + [len(c) for _k, c in tracks]).tolist()
    ids = range(0, len(pd.strings), 3)
    want = slice_find.find_slices(pd, ids, async_=True)
    with slice_find.indexed(pd):
        assert slice_find.find_slices(pd, ids, async_=True) == want


def test_ids_beyond_int32_keep_int64_names(monkeypatch):
    """A hand-made PerfData's ids past int32 (or below it) keep the int64 column, found alike."""
    from array import array

    from nodes.perf.model import PerfData, SliceColumns

    pd = PerfData("generated", "generated")
    pd.intern("a")
    for tid, ids in enumerate([[0, 0], [2**31, 0], [-2**31 - 1]]):
        pd.slices[(1, tid)] = SliceColumns(array("d", [float(i) for i in range(len(ids))]),
                                           array("d", [1.0] * len(ids)), array("q", ids))
    monkeypatch.setattr(slice_find, "_NAMES_AT_ONCE", 2)
    _tracks, names, _offsets = slice_find.thread_names(pd)
    assert names.dtype == np.int64 and names.tolist() == [0, 0, 2**31, 0, -2**31 - 1]
    assert [r[0] for r in slice_find.find_slices(pd, [2**31])] == [(1, 1)]
