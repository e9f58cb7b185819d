"""cpu._ranked (numpy: the CPU lens's threads and processes, whole trace and per section,
nodes/perf/metrics/cpu.py) gives what cpu._ranked_loop (a row per thread, sorted; the loop of
06ffed0) gives: the same rows in the same order, the same process sums bit for bit; and the
whole CPU answer of real captures is the loop's."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nodes.perf.formats import load
from nodes.perf.metrics import compute, cpu

DATA = Path(__file__).resolve().parent / "data"
CAPTURES = sorted((DATA / "perfetto").glob("*trace"))

_time = st.one_of(st.sampled_from([0.0, -0.0, 1.0, 1000.0, float("inf")]), st.floats(0, 1e9, allow_nan=False),
                  st.floats(0, 1, allow_nan=False).map(lambda x: x * 1e-7))
_rows = st.lists(st.tuples(st.integers(0, 6), st.integers(0, 40), _time, _time), max_size=80,
                 unique_by=lambda r: (r[0], r[1]))


def _both(rows, top: int = 10, procs: int = 5):
    keys = [(p, t) for p, t, _r, _w in rows]
    runs, waits = [r for *_k, r, _w in rows], [w for *_k, _r, w in rows]
    return cpu._ranked(keys, runs, waits, top, procs), cpu._ranked_loop(keys, runs, waits, top, procs)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(_rows, st.integers(1, 90), st.integers(1, 10))
def test_ranked_is_the_loop(rows, top, procs):
    got, want = _both(rows, top, procs)
    assert repr(got) == repr(want)  # repr: -0.0 and the order of the additions show


def test_nan_and_ids_beyond_int64_take_the_loop():
    nan = float("nan")
    got, want = _both([(1, 2, nan, 1.0), (1, 3, 2.0, 0.0), (2, 4, 2.0, nan)])
    assert repr(got) == repr(want)
    got, want = _both([(1 << 70, 2, 1.0, 1.0), (1, 3, 2.0, 0.0)])
    assert got == want and got[0][1][2] == 1 << 70


def test_process_sums_add_in_the_threads_order():
    rows = [(1, 1, 1e16, 0.0), (1, 2, 1.0, 0.0), (1, 3, 1.0, 0.0), (1, 4, -1e16, 0.0)]
    got, _want = _both(rows)
    assert got[1][0] == (1, (((1e16 + 1.0) + 1.0) - 1e16, 0.0))


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.name)
def test_real_captures_answer_as_the_loop(path, monkeypatch):
    pd = load(str(path))
    got = compute(pd).cpu
    monkeypatch.setattr(cpu, "_ranked", cpu._ranked_loop)
    want = compute(pd).cpu
    assert msgspec.json.encode(got) == msgspec.json.encode(want)
    if pd.sched_intervals:
        assert got.threads and got.processes
