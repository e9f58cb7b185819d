"""``MemoryState.finish`` adds each source series in one step, as columns
(nodes/perf/parsers/perfetto_series.py); it must equal the point-by-point merge of lists of
tuples it replaced (``_reference`` below: every point through ``_add``, each series then
sorted by time and value) — same series, same order, same points, same count of points
dropped."""

from __future__ import annotations

import copy

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from nodes.perf.model import PerfData
from nodes.perf.parsers import perfetto_memory
from nodes.perf.parsers.perfetto_memory import MemoryState
from nodes.perf.parsers.perfetto_series import Points

PIDS = {11: 1, 12: 1, 21: 2}
points = st.lists(st.tuples(st.integers(0, 20), st.sampled_from([0.0, 1.5, 2.0, 1024.0])), max_size=6)
names = st.sampled_from(["mem.rss", "mem.rss.anon", "mem.swap"])


class _Lists:
    """MemoryState's old representation: dicts of lists of (ts, value) tuples, ``_add`` its
    point-by-point append under the cap."""

    def __init__(self, series, rss) -> None:
        self.series: dict = {}
        self.rss_by_tid: dict = {}
        for key, pts in series:
            self.series.setdefault(key, []).extend(pts)
        for key, pts in rss:
            self.rss_by_tid.setdefault(key, []).extend(pts)
        self.rss_unowned = 2
        self.dropped = 0

    def _add(self, table, key, ts: int, value: float) -> None:
        pts = table.setdefault(key, [])
        if len(pts) < perfetto_memory.MAX_POINTS:
            pts.append((ts, value))
        else:
            self.dropped += 1


def _reference(m: _Lists, data: PerfData, ftrace_counters: dict, pid_for) -> None:
    """The merge as it was, point by point, on lists of tuples."""
    for (tid, name), pts in m.rss_by_tid.items():
        for ts, v in pts:
            m._add(m.series, (pid_for(tid), name), ts, v)
    skipped_names = 0
    kills = []
    for (tgid, name), pts in ftrace_counters.items():
        if name == "kill_one_process":
            kills += [(ts / 1000.0, int(v)) for ts, v in pts]
            continue
        if not perfetto_memory._MEMORY_NAME.search(name):
            continue
        if not perfetto_memory.is_counter_name(name):
            skipped_names += 1
            continue
        for ts, v in pts:
            m._add(m.series, (tgid, name), ts, v)
    for (pid, name), pts in m.series.items():
        data.add_memory_series(pid, name, [(ts / 1000.0, v) for ts, v in sorted(pts)])
    data.add_lmk_kills(kills)
    data.warn_counts(
        (m.rss_unowned, "rss_stat: {n:,} events of another process's mm_id never tied to a process, dropped"),
        (skipped_names, "{n} atrace counter(s) named like log lines, not memory counters, were left out"),
        (m.dropped, f"memory counters: {{n:,}} points beyond {perfetto_memory.MAX_POINTS:,} per series were not kept"),
    )


def _memory_state(series, rss):
    """A MemoryState holding ``series`` and ``rss`` (uncapped, as the lists were filled)."""
    m = MemoryState()
    for table, src in ((m.series, series), (m.rss_by_tid, rss)):
        for key, pts in src:
            table.series_id(key)  # a series made, even with no points, as setdefault made it
            for ts, v in pts:
                table.add(key, ts, v, cap=1 << 60)
    m.rss_unowned = 2
    return m


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.tuples(st.sampled_from([1, 2, 3]), names), points), max_size=5),
       st.lists(st.tuples(st.tuples(st.sampled_from([1, 11, 12, 21, 4]), names), points), max_size=6),
       st.lists(st.tuples(st.tuples(st.sampled_from([1, 2]), st.sampled_from(
           ["Heap size (KB)", "kill_one_process", "GC heap: 3 objects moved", "cpu"])), points), max_size=4),
       st.integers(1, 8), st.sampled_from([1, 2, 1 << 20]), st.booleans())
def test_memory_merge_equals_the_point_by_point_merge(series, rss, counters, cap, block, as_columns):
    """The vectorised merge equals the point-by-point merge of lists of tuples, with _merged's
    passes over the rss rows a block of 1, 2 or 2^20 rows at a time, and the atrace counters
    handed over as lists of tuples or as columns (perfetto_series.Points, what the reader
    hands it: SeriesTable.point_columns)."""
    ftrace_counters: dict = {}
    for key, pts in counters:
        ftrace_counters.setdefault(key, []).extend(pts)
    out = []
    saved = perfetto_memory.MAX_POINTS, perfetto_memory._MERGE_BLOCK
    perfetto_memory.MAX_POINTS, perfetto_memory._MERGE_BLOCK = cap, block
    try:
        for vectorised in (True, False):
            m = _memory_state(series, rss) if vectorised else _Lists(copy.deepcopy(series), copy.deepcopy(rss))
            pd = PerfData("x", "x")
            fc = copy.deepcopy(ftrace_counters)
            if vectorised and as_columns:
                fc = {k: Points(np.array([t for t, _ in pts], np.int64), np.array([v for _, v in pts], np.float64))
                      for k, pts in fc.items()}
            pid_for = lambda t: PIDS.get(t, t)  # noqa: E731
            m.finish(pd, fc, pid_for) if vectorised else _reference(m, pd, fc, pid_for)
            out.append((repr(list(pd.memory.items())), repr(pd.lmk_kills), list(pd.warnings), m.dropped,
                        {k: list(v) for k, v in fc.items()}))
    finally:
        perfetto_memory.MAX_POINTS, perfetto_memory._MERGE_BLOCK = saved
    assert out[0] == out[1]


def test_a_thread_rss_goes_under_its_process_after_process_stats():
    m = _memory_state([((1, "mem.rss"), [(5, 3.0), (1, 2.0)])], [((11, "mem.rss"), [(3, 9.0)])])
    pd = PerfData("x", "x")
    m.finish(pd, {}, lambda t: PIDS.get(t, t))
    assert pd.memory == {(1, "mem.rss"): [(0.001, 2.0), (0.003, 9.0), (0.005, 3.0)]}
