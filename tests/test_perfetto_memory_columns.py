"""The memory series the Perfetto reader merges and sorts on columns equal the point-by-point
merge they replaced: ``MemoryState.finish`` against ``_finish_reference`` (sources merged in
turn under each series' cap, then sorted by time and value) — same series, same order, same
points, same count of points dropped."""

from __future__ import annotations

import copy

from hypothesis import given, settings
from hypothesis import strategies as st

from nodes.perf.model import PerfData
from nodes.perf.parsers import perfetto_memory
from nodes.perf.parsers.perfetto_memory import MemoryState

PIDS = {11: 1, 12: 1, 21: 2}
points = st.lists(st.tuples(st.integers(0, 20), st.sampled_from([0.0, 1.5, 2.0, 1024.0])), max_size=6)
names = st.sampled_from(["mem.rss", "mem.rss.anon", "mem.swap"])


def _memory_state(series, rss):
    m = MemoryState()
    for key, pts in series:
        m.series.setdefault(key, []).extend(pts)
    for key, pts in rss:
        m.rss_by_tid.setdefault(key, []).extend(pts)
    m.rss_unowned = 2
    return m


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.tuples(st.sampled_from([1, 2, 3]), names), points), max_size=5),
       st.lists(st.tuples(st.tuples(st.sampled_from([1, 11, 12, 21, 4]), names), points), max_size=6),
       st.lists(st.tuples(st.tuples(st.sampled_from([1, 2]), st.sampled_from(
           ["Heap size (KB)", "kill_one_process", "GC heap: 3 objects moved", "cpu"])), points), max_size=4),
       st.integers(1, 8))
def test_memory_columns_equal_the_point_by_point_merge(series, rss, counters, cap):
    ftrace_counters: dict = {}
    for key, pts in counters:
        ftrace_counters.setdefault(key, []).extend(pts)
    out = []
    saved = perfetto_memory.MAX_POINTS
    perfetto_memory.MAX_POINTS = cap
    try:
        for vectorised in (True, False):
            m = _memory_state(copy.deepcopy(series), copy.deepcopy(rss))
            pd = PerfData("x", "x")
            fc = copy.deepcopy(ftrace_counters)
            pid_for = lambda t: PIDS.get(t, t)  # noqa: E731
            (m.finish if vectorised else m._finish_reference)(pd, fc, pid_for)
            out.append((repr(list(pd.memory.items())), repr(pd.lmk_kills), list(pd.warnings), m.dropped, fc))
    finally:
        perfetto_memory.MAX_POINTS = saved
    assert out[0] == out[1]


def test_a_thread_rss_goes_under_its_process_after_process_stats():
    m = _memory_state([((1, "mem.rss"), [(5, 3.0), (1, 2.0)])], [((11, "mem.rss"), [(3, 9.0)])])
    pd = PerfData("x", "x")
    m.finish(pd, {}, lambda t: PIDS.get(t, t))
    assert pd.memory == {(1, "mem.rss"): [(0.001, 2.0), (0.003, 9.0), (0.005, 3.0)]}
