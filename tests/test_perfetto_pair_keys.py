"""SeriesTable(pairs=True) keeps its (pid, name) keys as columns (perfetto_series.PairKeys):
whatever is asked of it — one key at a time, many at once (series_ids, pair_series: the
process_stats rows), look-ups of equal keys of other types, subsets — it numbers, finds and
reads back its series as the table of a plain dict does, and becomes that dict when a key is
not an (int, str) pair."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from nodes.perf.parsers import perfetto_series
from nodes.perf.parsers.perfetto_series import PairKeys, SeriesTable

NAMES = ("mem.rss", "mem.rss.anon", "mem.swap", "Heap size (KB)")
pid = st.one_of(st.integers(-3, 6), st.sampled_from([1 << 40, -(1 << 45), (1 << 46) - 1]))
key = st.tuples(pid, st.sampled_from(NAMES))
odd = st.one_of(st.tuples(st.sampled_from([1 << 46, -(1 << 46) - 1, 1 << 70]), st.sampled_from(NAMES)),
                st.tuples(st.sampled_from([None, "7"]), st.sampled_from(NAMES)), st.just((3, 4)), st.just("x"))
step = st.one_of(
    st.tuples(st.just("one"), key),
    st.tuples(st.just("many"), st.lists(key, max_size=8)),
    st.tuples(st.just("rows"), st.lists(st.tuples(pid, st.integers(0, len(NAMES) - 1)), max_size=8)),
    st.tuples(st.just("odd"), odd),
)


def _apply(table: SeriesTable, steps, pending: int) -> list:
    out = []
    saved = perfetto_series._PENDING
    perfetto_series._PENDING = pending
    try:
        for what, arg in steps:
            if what == "one":
                out.append(table.series_id(arg))
            elif what == "many":
                out.append(table.series_ids(arg))
            elif what == "rows":
                if type(table.ids) is PairKeys and arg:
                    p = np.array([r[0] for r in arg], np.int64)
                    out.append(table.pair_series(p, np.array([r[1] for r in arg], np.int64), NAMES).tolist())
                else:
                    out.append([table.series_id((p, NAMES[k])) for p, k in arg])
            else:
                out.append(table.series_id(arg))
            for i in range(len(table.count)):
                table.count[i] += 1
                table.ts.append(len(table.ts))
                table.sid.append(i)
                table.value.append(float(i))
    finally:
        perfetto_series._PENDING = saved
    return out


@settings(max_examples=300, deadline=None)
@given(st.lists(step, max_size=10), st.sampled_from([1, 2, 4096]))
def test_pair_keys_number_and_read_as_a_dict(steps, pending):
    want, got = SeriesTable("d"), SeriesTable("d", pairs=True)
    assert _apply(got, steps, pending) == _apply(want, steps, 1)
    assert list(got.ids) == list(want.ids) and list(got.ids.items()) == list(want.ids.items())
    assert len(got) == len(want) and list(got.ids.values()) == list(want.ids.values())
    if any(what == "odd" for what, _ in steps):
        assert type(got.ids) is dict
    else:  # the names coded in the order their first key came (SeriesMap's name codes)
        assert got.ids.names == list(dict.fromkeys(name for _, name in want.ids))
    for k in list(want.ids) + [(0, "nope"), (1.0, "mem.rss"), (True, "mem.swap"), (2, 5), ("a",), (1 << 80, "mem.rss")]:
        assert got.ids.get(k) == want.ids.get(k) and (k in got.ids) == (k in want.ids)
    assert got.items() == want.items()
    pairs = all(type(k) is tuple and len(k) == 2 for k in want.ids)  # what a name subset reads
    for names in (("mem.rss", "mem.rss.anon"), ("mem.swap",), ()) if pairs else ():
        a, b = got.subset_names(names), want.subset_names(names)
        assert list(a.ids.items()) == list(b.ids.items()) and a.count == b.count
        assert a.items() == b.items()
        assert [c.tolist() for c in a.columns()] == [c.tolist() for c in b.columns()]


def test_a_pair_keys_lookup_of_an_unhashable_key_fails_as_a_dicts():
    table = SeriesTable("d", pairs=True)
    table.series_id((1, "mem.rss"))
    for ids in (table.ids, {(1, "mem.rss"): 0}):
        try:
            ids.get(([1], "mem.rss"))
        except TypeError:
            pass
        else:
            raise AssertionError("an unhashable key was looked up")


def test_memory_key_columns_read_as_the_keys_made_into_columns():
    """PerfData.add_memory_key_columns keeps the keys as add_memory_columns makes them."""
    from nodes.perf.model import PerfData

    keys = [(5, "b"), (3, "a"), (5, "a"), (1 << 40, "c")]
    bounds = [0, 1, 3, 3, 4]
    ts, value = np.arange(4, dtype=np.float64), np.arange(4, dtype=np.float64) * 2
    a, b = PerfData("x", "x"), PerfData("x", "x")
    a.add_memory_columns(keys, bounds, ts, value)
    b.add_memory_key_columns(np.array([k[0] for k in keys]), np.array([0, 1, 1, 2], np.int32), ["b", "a", "c"],
                             bounds, ts, value)
    ka, kb = a.memory.key_columns(), b.memory.key_columns()
    assert [c.tolist() if hasattr(c, "tolist") else c for c in ka] == [c.tolist() if hasattr(c, "tolist") else c for c in kb]
    assert [c.dtype for c in ka[:2]] == [c.dtype for c in kb[:2]]
    assert repr(list(a.memory.items())) == repr(list(b.memory.items()))
    assert b.memory[(3, "a")].ts.tolist() == [1.0, 2.0]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(key, st.integers(-5, 5), st.floats(-3, 3, allow_nan=False)), max_size=30),
       st.sets(st.sampled_from(NAMES)))
def test_point_columns_are_the_items_as_columns(points, kept_names):
    """SeriesTable.point_columns(keep) holds what dict(items(keep)) holds: the kept series in
    order, each one's points in arrival order (as Points: columns read as the tuples)."""
    table = SeriesTable("d")
    for k, t, v in points:
        table.add(k, t, v, cap=1 << 30)
    keep = lambda k: k[1] in kept_names  # noqa: E731
    got, want = table.point_columns(keep), dict(table.items(keep=keep))
    assert list(got) == list(want) and {k: list(v) for k, v in got.items()} == want
    assert all(len(got[k]) == len(want[k]) and got[k][1:] == want[k][1:] for k in want)
