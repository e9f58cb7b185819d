"""The distinct names the slice walk leaves on each thread (``_Thread.names``, set by
nodes/perf/metrics/hotspots.py, read by android_startup's index instead of a sort of its own)
are ``np.unique`` of the thread's names, for batch-walked and singly walked threads, with dense
and far-apart ids; android_startup's index is the same built from them or without them."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nodes.perf.metrics import android_startup, hotspots
from nodes.perf.metrics.common import Context
from nodes.perf.model import PerfData

DATA = Path(__file__).parent / "data" / "perfetto"
CAPTURES = sorted(p for p in DATA.iterdir() if p.name.endswith((".perfetto-trace", ".pftrace")))


def _check(pd: PerfData) -> None:
    ctx = Context(pd, 30)
    hotspots.walk_all(ctx)
    for th in ctx.threads.values():
        if len(th.ts):
            assert th.names == np.unique(th.name).tolist()
    fast = android_startup._SliceIndex(ctx)
    for th in ctx.threads.values():
        th.names = None
    slow = android_startup._SliceIndex(ctx)
    assert fast.by_name == slow.by_name and fast.by_pid == slow.by_pid
    assert fast.slices.keys() == slow.slices.keys()
    assert all(fast.slices[k].present == slow.slices[k].present for k in fast.slices)


@settings(max_examples=40, deadline=None)
@given(threads=st.lists(st.tuples(st.integers(0, 3000), st.integers(0, 40), st.booleans()), min_size=1, max_size=6),
       seed=st.integers(0, 2**32 - 1))
def test_walk_names_are_the_distinct_names(threads, seed):
    rng = np.random.default_rng(seed)
    pd = PerfData("generated", "generated")
    for t, (n, n_names, far) in enumerate(threads):
        # far: a few names among many interned strings (the walk's own dense ids, lut)
        pool = [f"s{t}_{i}" for i in range(n_names + 1)]
        if far:
            for i in range(5 * n + 100):
                pd.intern(f"filler{t}_{i}")
        ts = np.sort(rng.integers(0, 1000, n)).astype(float)
        dur = rng.integers(0, 50, n).astype(float)
        pd.add_slices(1 + t % 2, 100 + t, ts.tolist(), dur.tolist(), [pool[i] for i in rng.integers(0, len(pool), n)])
    _check(pd)


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.name)
def test_walk_names_on_real_captures(path):
    from nodes.perf.formats import load

    _check(load(str(path)))


@settings(max_examples=60, deadline=None)
@given(names=st.lists(st.integers(0, 30), max_size=200), ids=st.sets(st.integers(0, 35), max_size=12))
def test_slices_rows_are_the_isin_rows(names, ids):
    """_Slices.rows picks a few ids by comparisons, more by np.isin: the same rows either way."""
    pd = PerfData("generated", "generated")
    for i in range(40):
        pd.intern(f"n{i}")
    name = np.array(names, dtype=np.int64)
    ts = np.arange(len(name), dtype=np.float64)
    s = android_startup._Slices(ts, ts * 0.5, name)
    m = np.isin(name, list(ids)) if ids else np.zeros(len(name), dtype=bool)
    want = [(t, d, pd.strings[n]) for t, d, n in zip(ts[m].tolist(), (ts * 0.5)[m].tolist(), name[m].tolist())]
    assert s.rows(pd, ids) == want


def test_index_reads_threads_by_name_in_thread_order():
    """The index's lazy maps: threads of a name in ctx.threads' order, the same mapping as the
    per-thread loop's dict; a thread's _Slices made once."""
    from nodes.perf.formats import load

    ctx = Context(load(str(CAPTURES[1])), 30)
    hotspots.walk_all(ctx)
    idx = android_startup._SliceIndex(ctx)
    want: dict = {}
    for key, th in ctx.threads.items():
        if len(th.ts):
            for i in np.unique(th.name).tolist():
                want.setdefault(i, []).append(key)
    assert list(idx.by_name) and set(idx.by_name) == set(want)
    assert all(idx.by_name[i] == want[i] for i in want)
    key = next(iter(idx.slices))
    assert idx.slices[key] is idx.slices.get(key) and (0, 0) not in idx.slices and idx.slices.get((0, 0)) is None


def test_name_tests_are_remembered_by_code_and_values():
    """_NameTests answers a test from what it answered for the same code with the same
    defaults and closure values, and asks anew for other values or unhashable ones."""
    pd = PerfData("generated", "generated")
    for s in ("Choreographer#doFrame 1", "DrawFrame", "inflate", "inflate x", "bindApplication"):
        pd.intern(s)
    tests = android_startup._NameTests()
    ids = set(range(5))
    class Asked(list):
        __hash__ = object.__hash__  # a default value that can be part of the key

    asked = Asked()

    def prefix_test(p):
        return lambda n, seen=asked: seen.append(n) or n.startswith(p)

    assert tests.passing(pd, prefix_test("inflate"), ids) == {2, 3}
    assert tests.passing(pd, prefix_test("inflate"), {0, 3}) == {3}
    assert len(asked) == 5  # the second, same test: answered from the first
    assert tests.passing(pd, prefix_test("Draw"), ids) == {1}
    assert tests.passing(pd, lambda n, w="bind": n.startswith(w), ids) == {4}
    assert tests.passing(pd, lambda n, w="Cho": n.startswith(w), ids) == {0}
    unhashable = [["inflate"]]
    assert tests.passing(pd, lambda n: n in unhashable[0], ids) == {2}


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.name)
def test_startup_with_remembered_name_tests_is_unchanged(path, monkeypatch):
    from nodes.perf.formats import load
    from nodes.perf.metrics import compute

    new = compute(load(str(path))).model_dump()
    monkeypatch.setattr(android_startup._NameTests, "passing",
                        lambda self, pd, test, ids: {i for i in ids if test(pd.strings[i])})
    assert new == compute(load(str(path))).model_dump()
