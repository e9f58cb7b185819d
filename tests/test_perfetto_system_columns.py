"""The process trees' tid → tgid and process_stats' per-process counters as columns
(perfetto_system.py: ThreadGroups, SystemState.process) read back as the dicts they replaced
(issue 25: ~167 MB and ~75 MB at 1 GB): the reader's tid → tgid merge — the trees' last word
on each tid, then the other sources' for tids no tree names — asked about any tid, with the
repeats compacted away mid-read or not; a SeriesTable subset is its items filtered; and on the
real captures the trees and the process_stats counters as upb reads them."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

from nodes.perf import limits
from nodes.perf.model import MAX_COUNTER_POINTS, PerfData
from nodes.perf.parsers import perfetto, perfetto_system
from nodes.perf.parsers.perfetto_series import SeriesTable
from nodes.perf.parsers.perfetto_stream import StreamReport, iter_packets
from nodes.perf.parsers.perfetto_system import SystemState

DATA = Path(__file__).parent / "data" / "perfetto"
CAPTURES = ["api32_startup_warm.perfetto-trace", "api24_startup_cold.perfetto-trace",
            "ms_android12_emulator_sched_cpusampling.pftrace"]

_tid = st.integers(0, 12)
_tree = st.tuples(st.lists(_tid, max_size=5), st.lists(st.tuples(_tid, _tid), max_size=8))


def _old_known(trees, others: dict) -> dict:
    """The dict the reader built: every tree entry in turn, then the others' missing tids."""
    known: dict = {}
    for processes, threads in trees:
        for pid in processes:
            known[pid] = pid
        for tid, tgid in threads:
            known[tid] = tgid
    for tid in others.keys() - known.keys():
        known[tid] = others[tid]
    return known


@settings(max_examples=300, deadline=None)
@given(st.lists(_tree, max_size=8), st.dictionaries(_tid, _tid, max_size=6), st.sampled_from([0, 3, 1 << 16]))
def test_thread_groups_read_back_as_the_merged_dict(trees, others, compact_at):
    saved = perfetto_system._COMPACT_AT
    perfetto_system._COMPACT_AT = compact_at  # 0 and 3: compacted after (nearly) every tree
    try:
        s = SystemState()
        data = PerfData("perfetto", "x")
        for processes, threads in trees:
            tree = pb.ProcessTree(processes=[pb.ProcessTree.Process(pid=p) for p in processes],
                                  threads=[pb.ProcessTree.Thread(tid=t, tgid=g) for t, g in threads])
            s.process_tree(tree, data)
    finally:
        perfetto_system._COMPACT_AT = saved
    entries = len(s.tree_tids)
    got = s.thread_groups(dict(others))
    assert len(s.tree_tids) == entries  # compacted at the first question, not before
    want = _old_known(trees, others)
    for tid in range(-1, 14):
        assert got.get(tid) == want.get(tid)
        assert got.get(tid, "none") == want.get(tid, "none")
    assert got.get_many(list(range(-1, 14))) == [want.get(t) for t in range(-1, 14)]


_points = st.lists(st.tuples(st.integers(0, 4), st.integers(0, 9), st.floats(0, 9)), max_size=20)


@settings(max_examples=200, deadline=None)
@given(_points, st.sets(st.integers(0, 4)), st.booleans())
def test_a_subset_is_the_items_filtered(points, keys, wide):
    table = SeriesTable("d")
    for k, t, v in points:
        table.add(k, t, v, 3)
    if wide:
        table.add(9, 1 << 64, 0.0, 3)  # widens the columns to lists
    keep = lambda key: key in keys  # noqa: E731
    sub = table.subset(keep)
    assert sub.items() == [(k, p) for k, p in table.items() if keep(k)]
    assert sub.count == [len(p) for _, p in sub.items()]


def _upb(path: Path):
    """(tid → tgid of the trees, the old per-process counters) as upb reads the capture."""
    packets = []
    with open(path, "rb") as f:
        for raw in iter_packets(f, StreamReport()):
            packets.append(pb.TracePacket.FromString(raw))
    trees = [([p.pid for p in k.process_tree.processes], [(t.tid, t.tgid) for t in k.process_tree.threads])
             for k in packets if k.HasField("process_tree")]
    counters: dict = {}
    for k in packets:
        if not k.HasField("process_stats"):
            continue
        for p in k.process_stats.processes:
            for field, name in (("vm_rss_kb", "mem.rss"), ("rss_anon_kb", "mem.rss.anon")):
                if p.HasField(field):
                    pts = counters.setdefault((p.pid, name), [])
                    if len(pts) < MAX_COUNTER_POINTS:
                        pts.append((k.timestamp, getattr(p, field) / 1024.0))
    return trees, counters


@pytest.mark.parametrize("name", CAPTURES)
def test_the_readers_tree_and_process_counters_are_the_captures(name, monkeypatch):
    held = []
    finish = perfetto._TraceReader.finish

    def spy(reader, report):
        finish(reader, report)
        held.append(reader)

    monkeypatch.setattr(perfetto._TraceReader, "finish", spy)
    with limits.applied(limits.ReadLimits(max_events=60_000_000)):
        perfetto.parse(str(DATA / name))
    trees, counters = _upb(DATA / name)
    system = held[0].system
    groups = system.thread_groups({})
    want = _old_known(trees, {})
    assert want or name.endswith(".pftrace")
    for tid in want:
        assert groups.get(tid) == want[tid]
    assert system.process.items() == list(counters.items())
