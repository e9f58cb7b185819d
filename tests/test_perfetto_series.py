"""The series kept as columns (nodes/perf/parsers/perfetto_series.py while reading, model.py
``PointSeries`` / ``SeriesMap`` in PerfData) hold what the lists of (ts, value) tuples they
replaced held: the same points per series, in the same order, the same series in the same
order, the same points dropped past the cap, and sorted by (time, value) as ``sorted`` sorted
the tuples; read back, the same tuples, the same ``repr``. On the cpu_frequency, cpu_idle and
rss_stat events of real captures (tests/data/perfetto), fed point by point and in batches as
perfetto_ftrace_batch.py feeds them."""

from __future__ import annotations

import os
from functools import cache

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

from nodes.perf.model import PointSeries, SeriesMap
from nodes.perf.parsers.perfetto_series import SeriesTable, sort_series, sort_series_python

DATA = os.path.join(os.path.dirname(__file__), "data", "perfetto")
CAPTURES = ("api32_startup_warm.perfetto-trace", "ms_android12_emulator_sched_cpusampling.pftrace",
            "api24_startup_cold.perfetto-trace")
KINDS = ("cpu_frequency", "cpu_idle", "rss_stat")


@cache
def _events(capture: str, kind: str) -> list[tuple[object, int, float]]:
    """(series key, ts ns, value) of one kind of ftrace event of a capture, in arrival order."""
    t = pb.Trace()
    with open(os.path.join(DATA, capture), "rb") as f:
        t.ParseFromString(f.read())
    out = []
    for p in t.packet:
        if p.HasField("ftrace_events"):
            for e in p.ftrace_events.event:
                if e.HasField(kind):
                    x = getattr(e, kind)
                    if kind == "rss_stat":
                        out.append(((e.pid, x.member), e.timestamp, x.size / 1048576.0))
                    else:
                        out.append((x.cpu_id, e.timestamp, x.state))
    return out


def _lists_add(table: dict, key, ts: int, value, cap: int) -> bool:
    """The list representation's add: setdefault, then append while under the cap."""
    pts = table.setdefault(key, [])
    if len(pts) < cap:
        pts.append((ts, value))
        return True
    return False


def _runs(table: SeriesTable, chunk: list, cap: int) -> int:
    """``chunk`` into ``table`` as perfetto_ftrace_batch.py adds a batch: points sorted by
    series (stable), one run per series, series made in order of their first point."""
    codes = {}
    for key, _t, _v in chunk:
        codes.setdefault(key, len(codes))
    code = np.array([codes[k] for k, _t, _v in chunk], np.int64)
    order = np.argsort(code, kind="stable")
    s = code[order]
    cut = np.flatnonzero(s[1:] != s[:-1]) + 1
    lo, hi = np.concatenate(([0], cut)).astype(np.int64), np.concatenate((cut, [len(s)])).astype(np.int64)
    keys = [chunk[i][0] for i in order[lo].tolist()]
    ts = np.array([t for _k, t, _v in chunk], np.int64)[order]
    value = np.array([v for _k, _t, v in chunk], table._dtype)[order]
    return table.extend_runs(cap, keys, order[lo], lo, hi, ts, value)


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(CAPTURES), st.sampled_from(KINDS), st.integers(0, 4000), st.integers(0, 600),
       st.sampled_from([1, 2, 7, 50, 1 << 40]), st.lists(st.integers(0, 600), max_size=6), st.booleans(),
       st.sampled_from([1, 10**6, 10**9]))
def test_series_table_holds_what_the_lists_held(capture, kind, start, size, cap, cuts, batched, grain):
    """``grain``: times rounded down to it, so that a series has equal times (the values then
    order its points)."""
    events = [(k, t - t % grain, v) for k, t, v in _events(capture, kind)[start:start + size]]
    code = "d" if kind == "rss_stat" else "I"  # as MemoryState and CpuState keep them
    table, lists = SeriesTable(code), {}
    dropped = want_dropped = 0
    bounds = sorted({0, len(events), *(c for c in cuts if c < len(events))})
    for k, (a, b) in enumerate(zip(bounds, bounds[1:])):
        chunk = events[a:b]
        for key, ts, v in chunk:
            want_dropped += not _lists_add(lists, key, ts, v, cap)
        if batched and k % 2 == 0:
            dropped += _runs(table, chunk, cap)
        else:
            dropped += sum(not table.add(key, ts, v, cap) for key, ts, v in chunk)
    assert table.items() == list(lists.items())
    assert dropped == want_dropped
    # sorted per series as sorted() sorted the tuples, numpy and the list fallback alike
    got = sort_series(len(table), *table.columns())
    slow = sort_series_python(len(table), list(table.sid), list(table.ts), list(table.value))
    for i, (key, pts) in enumerate(lists.items()):
        want = sorted(pts)
        b0, b1 = int(got[0][i]), int(got[0][i + 1])
        assert list(zip(got[1][b0:b1].tolist(), got[2][b0:b1].tolist())) == want
        assert list(zip(slow[1][slow[0][i]:slow[0][i + 1]], slow[2][slow[0][i]:slow[0][i + 1]])) == want
        # in PerfData: (ts µs, value) as the readers made the tuples
        us = [(t / 1000.0, v) for t, v in want]
        ps = PointSeries(got[1][b0:b1] / 1000.0, got[2][b0:b1])
        assert repr(ps) == repr(us) and ps == us and len(ps) == len(us) and list(ps) == us
        if us:
            assert ps[0] == us[0] and ps[-1] == us[-1] and ps[::3] == us[::3] and ps[1:] == us[1:]
            assert repr(PointSeries.of(us, got[2].dtype.name)) == repr(us)
    assert len(table) == len(lists)


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(CAPTURES), st.integers(0, 4000),
       st.lists(st.tuples(st.integers(0, 5), st.integers(0, 40), st.integers(0, 30)), max_size=12))
def test_series_map_is_the_dict_of_lists(capture, start, picks):
    """SeriesMap as ``dict.update`` of (key, points) lists: a key set again keeps its place
    and takes its new points; rss_stat values of a real capture as the points."""
    events = _events(capture, "rss_stat")[start:]
    series = [((k, "mem.rss"), [(t / 1000.0, v) for _key, t, v in events[a:a + n]]) for k, a, n in picks]
    store, want = SeriesMap(), {}
    half = len(series) // 2
    store.add_points(series[:half])
    store.add_points(series[half:])
    want.update(series)
    assert repr(store) == repr(want)
    assert list(store) == list(want) and len(store) == len(want)
    assert {k: list(v) for k, v in store.items()} == want and store == want
    assert [(k, n) for k, _i, n in store.numbered()] == [(k, len(v)) for k, v in want.items()]
    assert store.get((99, "mem.rss")) is None and ((99, "mem.rss") in store) is False
    for k, v in want.items():
        assert store[k] == v and store.get(k) == v and repr(store[k]) == repr(v)


_pid = st.one_of(st.integers(-3, 6), st.sampled_from([1 << 40, -(1 << 63), (1 << 63) - 1, 1 << 63, True]))
_name = st.sampled_from(["mem.rss", "mem.rss.anon", "mem.swap", "Heap size (KB)", ""])
_key = st.one_of(st.tuples(_pid, _name), st.tuples(_pid, _name), st.tuples(_pid, _name),
                 st.tuples(st.sampled_from([1.0, 2.5, None]), _name), st.tuples(_pid, _name, _name), _name)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.tuples(_key, st.integers(0, 3)), max_size=8), max_size=3),
       st.lists(st.one_of(_key, st.tuples(st.sampled_from([1.0, 2.0, -1.5, np.int64(2), float("nan"), "2"]), _name),
                          st.just([1, "mem.rss"]), st.tuples(st.lists(st.integers(0, 2), max_size=2), _name)),
                max_size=12))
def test_series_map_keys_as_columns_read_as_the_dict(calls, probes):
    """The first add_columns' keys kept as columns (distinct (int, str) pairs) or as the dict
    (any other keys, a key twice, a second call): read back alike — order, len, iteration,
    look-ups by equal keys of other types (1.0, True, numpy ints), misses, unhashable keys."""
    store, want = SeriesMap(), {}
    at = 0.0
    for series in calls:
        keys, bounds, ts = [], [0], []
        for key, n in series:
            keys.append(key)
            ts += [at + j for j in range(n)]
            at += n
            bounds.append(len(ts))
        store.add_columns(keys, bounds, np.array(ts, np.float64), np.array(ts, np.float64) * 2)
        for key, a, b in zip(keys, bounds, bounds[1:]):
            want[key] = [(t, t * 2) for t in ts[a:b]]
    assert list(store) == list(want) and len(store) == len(want) and bool(store) == bool(want)
    assert repr(store) == repr({k: v for k, v in want.items()})
    assert [(k, n) for k, _i, n in store.numbered()] == [(k, len(v)) for k, v in want.items()]
    assert {k: list(v) for k, v in store.items()} == want
    for key in list(want) + probes:
        try:
            expected = want[key]
        except TypeError:
            with pytest.raises(TypeError):
                store[key]
            with pytest.raises(TypeError):
                key in store  # noqa: B015
            continue
        except KeyError:
            assert key not in store and store.get(key) is None
            with pytest.raises(KeyError):
                store[key]
            continue
        assert key in store and list(store[key]) == expected and list(store.get(key)) == expected


def test_series_map_holds_distinct_pid_name_keys_as_columns():
    store = SeriesMap()
    store.add_columns([(5, "mem.rss"), (1 << 40, "mem.rss"), (5, "mem.swap")], [0, 1, 1, 3],
                      np.arange(3, dtype=np.float64), np.zeros(3))
    assert store._n is None and store._pid.tolist() == [5, 1 << 40, 5]
    assert list(store[(5, "mem.swap")]) == [(1.0, 0.0), (2.0, 0.0)] and len(store[(1 << 40, "mem.rss")]) == 0
    pid, code, names = store.key_columns()
    assert [(p, names[c]) for p, c in zip(pid.tolist(), code.tolist())] == list(store)
    assert (5.0, "mem.swap") in store and (np.int64(5), "mem.swap") in store and (5, "mem.pss") not in store
    for near in ((5.5, "mem.swap"), ("5", "mem.swap"), (6, "mem.swap"), (5, "mem.swap", 0), (5,)):
        assert near not in store and store.get(near) is None
    store.add_columns([(5, "mem.rss")], [0, 1], np.array([9.0]), np.array([1.0]))  # set again: the dict
    assert store._n is not None and list(store) == [(5, "mem.rss"), (1 << 40, "mem.rss"), (5, "mem.swap")]
    assert store.key_columns() is None
    assert list(store[(5, "mem.rss")]) == [(9.0, 1.0)]


@cache
def _process_stats(capture: str) -> list:
    t = pb.Trace()
    with open(os.path.join(DATA, capture), "rb") as f:
        t.ParseFromString(f.read())
    return [(p.process_stats, p.timestamp) for p in t.packet if p.HasField("process_stats")]


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(CAPTURES), st.sampled_from([1, 2, 5, 1 << 40]))
def test_process_stats_keeps_what_the_lists_kept(capture, cap):
    """MemoryState.process_rows (one append per snapshot) as ``_add`` of each field in turn."""
    from unittest import mock

    from nodes.perf.parsers import perfetto_memory, perfetto_process_stats

    packets = _process_stats(capture)
    lists, want_dropped = {}, 0
    for stats, ts in packets:
        for p in stats.processes:
            for field, name in perfetto_process_stats.FIELDS:
                if p.HasField(field):
                    want_dropped += not _lists_add(lists, (p.pid, name), ts, getattr(p, field) / 1024.0, cap)
    with mock.patch.object(perfetto_memory, "MAX_POINTS", cap):
        m = perfetto_memory.MemoryState()
        for stats, ts in packets:
            m.process_rows(perfetto_process_stats.rows_upb(stats), ts)
    assert packets and m.series.items() == list(lists.items()) and m.dropped == want_dropped
