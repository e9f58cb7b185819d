"""common.unique_inverse (a stable sort, nodes/perf/metrics/common.py) is ``np.unique(x,
return_inverse=True)``: the same distinct values (bit for bit: -0.0 and 0.0 as unique keeps
them) and the same inverse, on floats with repeats, infinities, NaN and both zeros, and on the
int64 keys the slice walk ranks; and the walk it serves ranks real captures' slices as before."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from nodes.perf.formats import load
from nodes.perf.metrics import compute, hotspots
from nodes.perf.metrics.common import unique_inverse

DATA = Path(__file__).resolve().parent / "data" / "perfetto"

_floats = st.one_of(st.sampled_from([0.0, -0.0, 1.0, -1.0, 5e-324, float("inf"), float("-inf"), float("nan")]),
                    st.floats(-1e3, 1e3).map(lambda x: round(x, 1)), st.floats(allow_nan=True))


def _same(x: np.ndarray) -> None:
    want_u, want_i = np.unique(x, return_inverse=True)
    got_u, got_i = unique_inverse(x)
    assert got_u.dtype == want_u.dtype and got_i.shape == x.shape
    assert got_u.tobytes() == want_u.tobytes()  # bit for bit: the sign of a zero, NaN
    assert np.array_equal(got_i, want_i.reshape(-1))


@settings(max_examples=400, deadline=None, derandomize=True)
@given(hnp.arrays(np.float64, st.integers(0, 60), elements=_floats))
def test_floats_are_unique(x):
    _same(x)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(hnp.arrays(np.float64, st.integers(1, 300), elements=st.sampled_from([0.0, 1.5, 2.0, 7.25, 1e9])))
def test_floats_of_few_values_are_unique(x):
    _same(np.sort(x) if x[0] > 1.0 else x)  # sorted runs too: timsort's case


@settings(max_examples=200, deadline=None, derandomize=True)
@given(hnp.arrays(np.int64, st.integers(0, 200), elements=st.integers(-(1 << 62), 1 << 62) | st.integers(0, 20)))
def test_int_keys_are_unique(x):
    _same(x)


@pytest.mark.parametrize("path", sorted(DATA.glob("*trace")), ids=lambda p: p.name)
def test_the_slice_walk_is_np_uniques(path, monkeypatch):
    pd = load(str(path))
    got = compute(pd)

    def plain(x):
        u, i = np.unique(x, return_inverse=True)
        return u, i.reshape(-1)

    monkeypatch.setattr(hotspots, "unique_inverse", plain)
    want = compute(pd)
    assert got.hotspots == want.hotspots and got.slice_stats == want.slice_stats and got.stacks == want.stacks
    assert got.threads == want.threads and got.app == want.app
