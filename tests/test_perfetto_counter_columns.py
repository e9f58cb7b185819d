"""The atrace counters as columns (``FtraceState.counters``, a perfetto_series.SeriesTable) read
back as the dict of lists of (ts, value) tuples they replaced (issue 25: ~112 MB of tuples at
1 GB): points added one by one (``FtraceState._counter``) and a run at a time
(``perfetto_atrace_columns.counters``), in any mix, give the same series in the same order with
the same points under the cap; ``items(keep=…)`` is ``items()`` filtered; and on the real
captures the reader's counters are the atrace counter events themselves, read with upb."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nodes.perf import limits
from nodes.perf.model import MAX_COUNTER_POINTS
from nodes.perf.parsers import perfetto, perfetto_atrace_columns as columns
from nodes.perf.parsers.perfetto_series import SeriesTable
from nodes.perf.parsers.perfetto_stream import StreamReport, iter_packets
from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import TracePacket

DATA = Path(__file__).parent / "data" / "perfetto"
LISTED = ["a", "b", "mem", ""]

_point = st.tuples(st.integers(0, 3), st.integers(0, 3), st.integers(-(1 << 63), (1 << 63) - 1))
# runs of points: a run through ``counters`` (True) or one by one (False), as the batch reader mixes them
_runs = st.lists(st.tuples(st.booleans(), st.lists(_point, max_size=12)), max_size=6)


def _reference(runs, cap: int) -> list:
    """The dict of lists, every point through the old ``_counter``."""
    table: dict = {}
    ts = 0
    for _, points in runs:
        for tgid, vid, value in points:
            pts = table.setdefault((tgid, LISTED[vid]), [])
            if len(pts) < cap:
                pts.append((ts, float(value)))
            ts += 1
    return list(table.items())


def _columns(runs, cap: int) -> SeriesTable:
    table = SeriesTable("d")
    ts = 0
    for batch, points in runs:
        if batch:
            cols = [np.array([p[k] for p in points], np.int64) for k in range(3)]
            t = np.arange(ts, ts + len(points), dtype=np.int64)
            columns.counters(table, LISTED, cols[0], cols[1], t, cols[2], cap)
            ts += len(points)
        else:
            for tgid, vid, value in points:
                table.add((tgid, LISTED[vid]), ts, float(value), cap)
                ts += 1
    return table


@settings(max_examples=300, deadline=None)
@given(_runs, st.integers(1, 5))
def test_counter_columns_read_back_as_the_dict_of_tuples(runs, cap):
    table = _columns(runs, cap)
    want = _reference(runs, cap)
    assert table.items() == want
    assert table.points() == sum(len(pts) for _, pts in want)


@settings(max_examples=200, deadline=None)
@given(_runs, st.integers(1, 5), st.sets(st.integers(0, 3)))
def test_items_of_some_series_are_those_of_all_filtered(runs, cap, tgids):
    table = _columns(runs, cap)
    keep = lambda key: key[0] in tgids  # noqa: E731
    assert table.items(keep=keep) == [(k, pts) for k, pts in table.items() if keep(k)]


def test_a_time_beyond_int64_keeps_the_filtered_items():
    table = SeriesTable("d")
    table.add((1, "a"), 5, 1.0, 9)
    table.add((2, "b"), 1 << 64, 2.0, 9)  # widens the columns to lists
    table.add((1, "a"), 6, 3.0, 9)
    assert table.wide
    assert table.items(keep=lambda k: k[0] == 1) == [((1, "a"), [(5, 1.0), (6, 3.0)])]


def _atrace_counters(path: Path) -> list:
    """(tgid, name) → [(ts, value)] of every atrace counter of a capture, in arrival order,
    read from upb's messages: ``C|tgid|name|value`` prints and zero events with flag C."""
    table: dict = {}
    with open(path, "rb") as f:
        for raw in iter_packets(f, StreamReport()):
            pkt = TracePacket.FromString(raw)
            for e in pkt.ftrace_events.event:
                kind = e.WhichOneof("event")
                if kind == "print":
                    p = e.print.buf.rstrip("\n\0").split("|")
                    if p[0] != "C":
                        continue
                    key, value = (int(p[1]), p[2]), float(int(p[3]))
                elif kind == "zero" and e.zero.flag & 4 and not e.zero.flag & 3:
                    key, value = (e.zero.pid or e.pid, e.zero.name), float(e.zero.value)
                else:
                    continue
                pts = table.setdefault(key, [])
                if len(pts) < MAX_COUNTER_POINTS:
                    pts.append((e.timestamp, value))
    return list(table.items())


@pytest.mark.parametrize("name", ["api32_startup_warm.perfetto-trace", "api24_startup_cold.perfetto-trace"])
def test_the_readers_counters_are_the_captures_atrace_counters(name, monkeypatch):
    held = []
    finish = perfetto._TraceReader.finish

    def spy(reader, report):
        reader.flush()
        held.append(reader.ftrace.counters.items())
        finish(reader, report)

    monkeypatch.setattr(perfetto._TraceReader, "finish", spy)
    with limits.applied(limits.ReadLimits(max_events=60_000_000)):
        perfetto.parse(str(DATA / name))
    want = _atrace_counters(DATA / name)
    assert want  # the captures hold atrace counters
    assert held[0] == want
