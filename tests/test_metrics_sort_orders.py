"""The one-key sorts of the metrics (nodes/perf/metrics/hotspots.py) give the order of the
multi-key ``np.lexsort`` they replace: the batch walk's (thread, start, longer first) from the
starts' ranks (``_batch_order``), slice_stats' (thread, name, start) from two 16-bit radix sorts
(``_thread_name_order``) — on generated columns with many equal starts, durations and names,
and on the real captures' slices."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nodes.perf.metrics import hotspots
from nodes.perf.metrics.common import joined_column

DATA = Path(__file__).parent / "data" / "perfetto"
CAPTURES = sorted(p for p in DATA.iterdir() if p.name.endswith((".perfetto-trace", ".pftrace")))


def _batch_order(seg, ts, dur):
    n = len(ts)
    uniq, inv = np.unique(np.concatenate([ts, ts + dur]), return_inverse=True)
    return hotspots._batch_order(seg, inv.reshape(-1)[:n], ts, dur, len(uniq))


def _columns(draw_sizes, starts, durs):
    seg = np.repeat(np.arange(len(draw_sizes), dtype=np.int64), draw_sizes)
    return seg, np.array(starts[: len(seg)], dtype=np.float64), np.array(durs[: len(seg)], dtype=np.float64)


_times = st.sampled_from([0.0, -0.0, 1.0, 2.5, 3.0, 1e12, 1e12 + 0.125])
_durs = st.sampled_from([0.0, 0.5, 1.0, 2.0, 1e-9, 1e6])


@settings(max_examples=300, deadline=None)
@given(sizes=st.lists(st.integers(0, 12), min_size=1, max_size=8),
       starts=st.lists(_times, min_size=96, max_size=96), durs=st.lists(_durs, min_size=96, max_size=96))
def test_batch_order_is_the_three_key_lexsort(sizes, starts, durs):
    seg, ts, dur = _columns(sizes, starts, durs)
    assert np.array_equal(_batch_order(seg, ts, dur), np.lexsort((-dur, ts, seg)))


@settings(max_examples=300, deadline=None)
@given(sizes=st.lists(st.integers(0, 12), min_size=1, max_size=8),
       starts=st.lists(_times, min_size=96, max_size=96), names=st.lists(st.integers(0, 5), min_size=96, max_size=96),
       big=st.sampled_from([0, 1 << 16, 1 << 20]))
def test_thread_name_order_is_the_three_key_lexsort(sizes, starts, names, big):
    seg, ts, _dur = _columns(sizes, starts, [0.0] * 96)
    # the walk hands each thread's slices sorted by start; unsorted ones take the lexsort too
    ts = np.concatenate([np.sort(ts[seg == s]) for s in range(len(sizes))]) if len(sizes) % 3 else ts
    name = np.array(names[: len(seg)], dtype=np.int64) + big
    assert np.array_equal(hotspots._thread_name_order(ts, name, seg), np.lexsort((ts, name, seg)))


def _thread_columns(path: Path):
    from nodes.perf.formats import load

    pd = load(str(path))
    cols = [c for c in pd.slices.values() if len(c)]
    counts = [len(c) for c in cols]
    seg = np.repeat(np.arange(len(cols), dtype=np.int64), counts)
    ts = joined_column(cols, "ts", np.float64)
    dur = np.maximum(joined_column(cols, "dur", np.float64), 0.0)
    name = joined_column(cols, "name", np.int64)
    return seg, ts, dur, name


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.name)
def test_orders_on_real_captures(path):
    seg, ts, dur, name = _thread_columns(path)
    # a capture without thread slices checks the empty columns: both orders empty
    order = np.lexsort((-dur, ts, seg))
    assert np.array_equal(_batch_order(seg, ts, dur), order)
    ts, name, seg = ts[order], name[order], seg[order]
    assert np.array_equal(hotspots._thread_name_order(ts, name, seg), np.lexsort((ts, name, seg)))
