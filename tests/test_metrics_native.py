"""The C slice walk (nodes/perf/metrics/_metricsc.c, hotspots.NATIVE) gives what the numpy walk
gives (hotspots._walk_batch and walk, themselves checked against the old stack walk by
tests/test_slice_tree.py): per thread the sums and the order of their dicts, top-level slices,
busy time, sorted columns, distinct names and path weights; the per-name self-time columns
app_scope sums from (ctx.walk_self); and every number of the analysis of the real captures.
Generated threads cover equal starts, zero and negative durations, -0.0, NaN and infinite
times, slices running past their parent, recursion deeper than the 64-name paths, name ids far
beyond the slice count (the walk's dense renumbering), several batches and a path cap."""

from __future__ import annotations

from array import array
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nodes.perf.formats import load
from nodes.perf.metrics import compute, hotspots
from nodes.perf.metrics.common import Context
from nodes.perf.model import PerfData, SliceColumns

pytestmark = pytest.mark.skipif(hotspots.NATIVE is None, reason="the C walk is not built")

ROOT = Path(__file__).resolve().parents[1]
CAPTURES = sorted(str(p) for p in (ROOT / "tests" / "data").glob("*/*")
                  if (p.suffix in (".json", ".gz", ".pftrace", ".perfetto-trace", ".pstats", ".log")
                  or p.name.endswith("systrace.txt"))
                  and "devtoolslog" not in p.name)


def _walked(pd: PerfData, native: bool, monkeypatch) -> Context:
    ctx = Context(pd, 30)
    with monkeypatch.context() as m:
        if not native:
            m.setattr(hotspots, "NATIVE", None)
        hotspots.walk_all(ctx)
    return ctx


def _same(a: Context, b: Context) -> None:
    assert list(a.threads) == list(b.threads)
    for key, ta in a.threads.items():
        tb = b.threads[key]
        assert list(tb.self_by.items()) == list(ta.self_by.items()), key
        assert list(tb.total_by.items()) == list(ta.total_by.items()), key
        assert list(tb.count_by.items()) == list(ta.count_by.items()), key
        assert tb.top_level == ta.top_level
        assert tb.busy_us == ta.busy_us and tb.count == ta.count
        if len(ta.ts):
            assert tb.names == ta.names
        for f in ("ts", "dur", "name"):
            x, y = getattr(ta, f), getattr(tb, f)
            assert x.dtype == y.dtype and np.array_equal(x, y)
            assert np.signbit(x).tolist() == np.signbit(y).tolist()  # -0.0 stays -0.0
    assert a.slice_path_count == b.slice_path_count
    assert len(a.slice_paths) == len(b.slice_paths)
    for pa, pb in zip(a.slice_paths, b.slice_paths):
        assert pa.key == pb.key
        assert pa.weight.tolist() == pb.weight.tolist()
        assert [pa.path(int(p)) for p in pa.pid] == [pb.path(int(p)) for p in pb.pid]
        for f in ("pid", "up", "names"):  # the same numbering too, not only the same paths
            assert getattr(pa, f).tolist() == getattr(pb, f).tolist()


def _walk_self_is_the_dicts(ctx: Context) -> None:
    names, vals, at = ctx.walk_self
    for i, th in enumerate(ctx.threads.values()):
        rows = list(zip(names[at[i]:at[i + 1]].tolist(), vals[at[i]:at[i + 1]].tolist()))
        assert rows == list(th.self_by.items())


_TIMES = st.one_of(st.integers(0, 40).map(float), st.sampled_from([0.0, -0.0, 1e15, 0.5, 2.5]),
                   st.floats(0, 100, allow_nan=False))
_ODD = st.sampled_from([float("nan"), float("inf"), -float("inf"), -3.0, -0.0])


@st.composite
def _thread(draw):
    n = draw(st.integers(0, 60))
    ts = draw(st.lists(st.one_of(_TIMES, _TIMES, _TIMES, _ODD), min_size=n, max_size=n))
    dur = draw(st.lists(st.one_of(_TIMES, _TIMES, _TIMES, _ODD), min_size=n, max_size=n))
    name = draw(st.lists(st.integers(0, draw(st.sampled_from([0, 2, 9]))), min_size=n, max_size=n))
    return ts, dur, name


def _data(threads, far: bool) -> PerfData:
    pd = PerfData("generated", "generated")
    for i in range(50):  # names for the ids below (far ones have none: no slice_stats rows then)
        pd.intern(f"n{i}")
    for tid, (ts, dur, name) in enumerate(threads):
        if far:  # ids far beyond the slice count: the walk renumbers them densely
            name = [n * 1_000_003 for n in name]
        pd.thread(7 + tid % 3, tid)
        pd.slices[(7 + tid % 3, tid)] = SliceColumns(array("d", ts), array("d", dur), array("q", name))
    return pd


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(threads=st.lists(_thread(), min_size=1, max_size=8), far=st.booleans(),
       batch=st.sampled_from([10**9, 7, 40]), cap=st.sampled_from([10**9, 5, 30]))
def test_the_c_walk_is_the_numpy_walk_on_generated_threads(threads, far, batch, cap):
    with pytest.MonkeyPatch.context() as m:
        m.setattr(hotspots, "BATCH_SLICES", batch)
        m.setattr(hotspots, "SMALL_THREAD", min(batch, 2048))
        m.setattr(hotspots, "MAX_PATHS", cap)
        a = _walked(_data(threads, far), False, m)
        b = _walked(_data(threads, far), True, m)
    _same(a, b)
    if b.walk_self is not None:
        _walk_self_is_the_dicts(b)
    assert a.walk_groups is None
    if not far:
        assert hotspots.slice_stats(b) == hotspots.slice_stats(a)  # slice_stats from the walk's groups


_LONG = st.sampled_from([0.0, 1.0, 2.5, 20.0, 50_000.0, 1e15, float("inf")])


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(threads=st.lists(_thread(), min_size=1, max_size=6), batch=st.sampled_from([10**9, 7, 40]),
       small=st.sampled_from([2048, 5]), min_dur=_LONG)
def test_top_level_at_least_is_the_filtered_top_level(threads, batch, small, min_dur):
    """_Thread.top_level_at_least (threads.long_tasks' lean read: tuples only for the slices it
    keeps) is ``[x for x in top_level if x[1] >= min_dur]`` for every kind of thread: the C
    walk's (columns gathered again, or kept when a batch has odd slices), the numpy batch's
    (top-level columns) and the numpy walk's of a large thread (a list of tuples)."""
    for native in (False, True):
        with pytest.MonkeyPatch.context() as m:
            m.setattr(hotspots, "BATCH_SLICES", batch)
            m.setattr(hotspots, "SMALL_THREAD", min(batch, small))
            lean = _walked(_data(threads, False), native, m)
            whole = _walked(_data(threads, False), native, m)
        for key, th in lean.threads.items():
            got = th.top_level_at_least(min_dur)  # before top_level is read (and kept)
            assert got == [x for x in whole.threads[key].top_level if x[1] >= min_dur], (native, key)
            assert got == th.top_level_at_least(min_dur) == [x for x in th.top_level if x[1] >= min_dur]


@pytest.mark.parametrize("depth", [63, 64, 65, 200])
def test_recursion_deeper_than_the_paths(depth, monkeypatch):
    """Paths stop at 64 names; the deeper slices add to their 64th ancestor's path."""
    n = depth + 3
    ts = [float(i) for i in range(n)]
    dur = [float(3 * (n - i)) for i in range(n)]
    name = [i % 4 for i in range(n)]
    a = _walked(_data([(ts, dur, name)], False), False, monkeypatch)
    b = _walked(_data([(ts, dur, name)], False), True, monkeypatch)
    _same(a, b)


def _many_paths(parents: int, children: int, rounds: int) -> tuple[list, list, list]:
    """One thread of ``parents * children`` two-name paths (each parent name with each child
    name), walked ``rounds`` times over: the paths made again find the ones made before."""
    ts, dur, name = [], [], []
    t = 0.0
    for _ in range(rounds):
        for a in range(parents):
            ts.append(t), dur.append(float(children + 2)), name.append(a)
            for b in range(children):
                ts.append(t + 1 + b), dur.append(1.0), name.append(parents + b)
            t += children + 3
    return ts, dur, name


def test_the_path_table_grows_with_the_paths(monkeypatch):
    """_metricsc.c's path table starts at 1,024 slots and doubles at half full (grow_table):
    threads of thousands of paths (the table grown several times, then emptied for the next
    thread) number and weigh them as the numpy walk does."""
    threads = [_many_paths(40, 130, 2), _many_paths(3, 5, 1), _many_paths(45, 120, 1)]
    a = _walked(_data(threads, False), False, monkeypatch)
    b = _walked(_data(threads, False), True, monkeypatch)
    _same(a, b)
    assert max(p.count for p in b.slice_paths) > 4 * 1024


def test_many_threads_in_several_batches(monkeypatch):
    rng = np.random.default_rng(5)
    threads = []
    for _ in range(300):
        n = int(rng.integers(0, 300))
        ts = np.sort(rng.integers(0, 2000, n)).astype(float)
        threads.append((ts.tolist(), rng.integers(0, 400, n).astype(float).tolist(),
                        rng.integers(0, 50, n).tolist()))
    monkeypatch.setattr(hotspots, "BATCH_SLICES", 5000)
    a = _walked(_data(threads, False), False, monkeypatch)
    b = _walked(_data(threads, False), True, monkeypatch)
    _same(a, b)
    _walk_self_is_the_dicts(b)


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.split("/")[-1])
def test_real_captures(path, monkeypatch):
    """Thread by thread, and then every number of the analysis."""
    _same(_walked(load(path), False, monkeypatch), _walked(load(path), True, monkeypatch))
    new = compute(load(path)).model_dump()
    monkeypatch.setattr(hotspots, "NATIVE", None)
    old = compute(load(path)).model_dump()
    assert new == old


def test_app_scope_from_the_columns_is_the_dicts(monkeypatch):
    """app_scope's top names from ctx.walk_self, against the same sums from the threads' dicts."""
    path = str(ROOT / "tests" / "data" / "perfetto" / "api32_startup_warm.perfetto-trace")
    from nodes.perf.metrics import scope, threads

    def scoped(columns: bool):
        ctx = Context(load(path), 30)
        hotspots.walk_all(ctx)
        if not columns:
            ctx.walk_self = None
        ctx.scope, _w = scope.identify(ctx.pd, None)
        threads.pick_main(ctx)
        return hotspots.app_scope(ctx)

    assert scoped(True) == scoped(False)
    assert scoped(True).summaries[0].top


def test_children_longer_than_their_parent_by_rounding(monkeypatch):
    """Two children that fill their parent add up to 2.8e-17 µs more than it: the parent's own
    time is negative, and adds 0.0 to its name (the walk's rule), not the negative value."""
    ts, dur = [0.1, 0.1, 0.17221149479672146], [0.2, 0.07221149479672145, 0.12778850520327859]
    a = _walked(_data([(ts, dur, [0, 1, 1])], False), False, monkeypatch)
    b = _walked(_data([(ts, dur, [0, 1, 1])], False), True, monkeypatch)
    _same(a, b)
    assert dur[0] - (dur[1] + dur[2]) < 0 and b.threads[(7, 0)].self_by[0] == 0.0


def test_slice_stats_groups_of_the_c_walk(monkeypatch):
    """The walk's slice_stats groups (count, sum as np.add.reduceat adds, min, max, first) are
    used, and give the numpy passes' rows, on many threads of rounding sums; a -0.0 duration
    (whose min and max are numpy's choice) leaves them unused."""
    rng = np.random.default_rng(9)
    threads = []
    for _ in range(200):
        n = int(rng.integers(1, 300))
        ts = np.sort(rng.integers(0, 5000, n)).astype(float)
        dur = rng.exponential(30.0, n) * 10.0 ** rng.uniform(-5, 5, n)
        threads.append((ts.tolist(), dur.tolist(), rng.integers(0, 20, n).tolist()))
    a = _walked(_data(threads, False), False, monkeypatch)
    b = _walked(_data(threads, False), True, monkeypatch)
    assert b.walk_groups is not None and hotspots._native_reduceat_is_numpys()
    assert hotspots.slice_stats(b) == hotspots.slice_stats(a)
    threads[3][1][0] = -0.0
    c = _walked(_data(threads, False), True, monkeypatch)
    assert c.walk_groups is None or not np.signbit(c.threads[next(iter(c.threads))].dur).any()


def test_the_reduceat_self_check_refuses_another_sum(monkeypatch):
    class Sequential:
        @staticmethod
        def pairwise_sums(values, offsets, out, reduceat=False):
            for i in range(len(out)):
                out[i] = sum(values[offsets[i]:offsets[i + 1]].tolist())

    monkeypatch.setattr(hotspots, "NATIVE", Sequential)
    monkeypatch.setattr(hotspots, "_REDUCEAT_OK", [])
    assert not hotspots._native_reduceat_is_numpys()


@pytest.mark.parametrize("path", [p for p in CAPTURES if p.endswith((".perfetto-trace", ".pftrace"))],
                         ids=lambda p: p.split("/")[-1])
def test_walked_threads_read_their_slices_again(path, monkeypatch):
    """A batch with nothing dropped or clipped (a Perfetto trace's) keeps no sorted copy of its
    slices: each thread gathers them from its pd.slices columns by the walk's positions
    (WalkSums.at), the numpy walk's sorted columns bit for bit, read after read; the sums
    columns are ctx.walk_self's and ctx.walk_groups' own (views, not copies)."""
    pd = load(path)
    a, b = _walked(pd, False, monkeypatch), _walked(load(path), True, monkeypatch)
    walked = [th for th in b.threads.values() if th.count]
    if not walked:  # a trace without thread slices: both walks agree there is nothing to read
        assert not any(th.count for th in a.threads.values())
        return
    assert all(th._ts is None and th._dur is None and th._name is None for th in walked)
    assert all(th._sums.at is not None and th._sums.at.dtype == np.int32 for th in walked)
    for key, th in b.threads.items():
        for f in ("ts", "dur", "name"):
            x, y = getattr(a.threads[key], f), getattr(th, f)
            assert x.dtype == y.dtype and x.tobytes() == y.tobytes() == getattr(th, f).tobytes()
    names, vals, _at = b.walk_self
    assert all(np.shares_memory(th._sums.self_name, names) and np.shares_memory(th._sums.self_val, vals)
               for th in walked if len(th._sums.self_name))
    if b.walk_groups is not None:
        assert all(np.shares_memory(th._sums.cnt_name, b.walk_groups[1]) for th in walked if len(th._sums.cnt_name))


def test_batches_with_odd_slices_keep_their_sorted_columns(monkeypatch):
    """A batch with a time that is not finite, a negative duration or -0.0 keeps its sorted
    (dropped, clipped) columns, as the numpy walk has them; its neighbours in other batches
    still read theirs again."""
    threads = [([1.0, 0.0, 2.0], [1.0, 3.0, 0.5], [0, 1, 2]), ([0.0, 1.0], [-0.0, 2.0], [1, 1]),
               ([0.0, float("nan"), 3.0], [1.0, 1.0, -2.0], [2, 0, 1]), ([5.0, 4.0], [1.0, 1.0], [0, 2])]
    monkeypatch.setattr(hotspots, "BATCH_SLICES", 3)
    a = _walked(_data(threads, False), False, monkeypatch)
    b = _walked(_data(threads, False), True, monkeypatch)
    _same(a, b)
    kept = [th._ts is not None for th in b.threads.values()]
    assert kept == [False, True, True, False]


def test_one_tracks_column_is_read_in_place():
    """common.read_column, which _native_walk reads its batch with: joined_column's values and
    dtype always; for one track whose column is of the type already, a read-only view of it
    (no copy), else a copy as joined_column makes."""
    from nodes.perf.metrics.common import joined_column, read_column
    one = [SliceColumns(array("d", [2.0, -0.0, 1.5]), array("d", [1.0, 0.0, 3.0]), array("q", [3, 1, 2]))]
    two = one + [SliceColumns(array("d", [7.0]), array("d", [1.0]), array("q", [0]))]
    narrow = [SliceColumns(np.array([1.0, 2.0]), np.array([0.5, 0.5]), array("i", [4, 5]))]
    for cols in (one, two, narrow):
        for field, dt in (("ts", np.float64), ("dur", np.float64), ("name", np.int64)):
            got, want = read_column(cols, field, dt), joined_column(cols, field, dt)
            assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
            src = getattr(cols[0], field)
            if len(cols) == 1 and np.dtype(getattr(src, "typecode", None) or src.dtype) == np.dtype(dt):
                assert np.shares_memory(got, np.asarray(src)) and not got.flags.writeable
            else:
                assert not np.shares_memory(got, np.asarray(src))


def test_a_one_thread_batch_leaves_its_columns_as_they_were(monkeypatch):
    """The walk of a thread in a batch of its own reads pd.slices in place: the columns are
    unchanged after it and free again (an array cannot grow while a view of it is held)."""
    threads = [([3.0, 0.0, 1.0, 1.0], [1.0, 9.0, 2.0, 2.0], [0, 1, 2, 1]), ([0.0, 1.0], [-0.0, -2.0], [1, 1])]
    pd = _data(threads, False)
    before = {k: (c.ts.tobytes(), c.dur.tobytes(), c.name.tobytes()) for k, c in pd.slices.items()}
    monkeypatch.setattr(hotspots, "BATCH_SLICES", 4)
    b = _walked(pd, True, monkeypatch)
    _same(_walked(_data(threads, False), False, monkeypatch), b)
    assert {k: (c.ts.tobytes(), c.dur.tobytes(), c.name.tobytes()) for k, c in pd.slices.items()} == before
    for c in pd.slices.values():
        c.ts.append(0.0)  # no view of it is left


def test_the_walk_without_its_sorted_columns_is_the_same_walk():
    """_metricsc.c's walk given None for o_ts, o_dur and o_name (what _native_walk passes when
    the threads read their slices again by o_at) writes every other output as it does with
    them: slice_stats' groups read the input through o_at instead of the sorted copies."""
    rng = np.random.default_rng(11)
    counts = [0, 1, 500, 37, 2000]
    n = sum(counts)
    ts = rng.integers(0, 300, n).astype(np.float64)
    dur = rng.integers(0, 40, n).astype(np.float64)
    name = rng.integers(0, 9, n).astype(np.int64)
    bounds = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)

    def walk(sorted_out: bool) -> list:
        outs = [np.full(n, -7.5) if k in (2, 4, 10, 11, 12, 13, 14, 15, 16, 17) else np.full(n, -7, dtype=np.int64)
                for k in range(20)]
        (roots, self_name, self_val, tot_name, tot_val, cnt_name, cnt_val, listed_pid, path_up, path_name, listed_w,
         g_sum, g_min, g_max, g_ts, g_dur, o_ts, o_dur, o_name, o_at) = outs
        busy = np.full(len(counts), -1.0)
        at = [np.full(len(counts) + 1, -7, dtype=np.int64) for _ in range(6)]
        root_at, self_at, tot_at, cnt_at, listed_at, path_at = at
        sorted_cols = (o_ts, o_dur, o_name) if sorted_out else (None, None, None)
        hotspots.NATIVE.walk(ts, dur, name, bounds, 9, hotspots.MAX_PATH_DEPTH,
                             (*sorted_cols, busy, roots, root_at, self_name, self_val, self_at, tot_name, tot_val,
                              tot_at, cnt_name, cnt_val, cnt_at, listed_pid, listed_w, listed_at, path_up, path_name,
                              path_at, g_sum, g_min, g_max, g_ts, g_dur, o_at))
        if sorted_out:  # the sorted copies are the input gathered by o_at
            at_in = o_at + np.repeat(bounds[:-1], counts)
            assert np.array_equal(o_ts, ts[at_in]) and np.array_equal(o_dur, dur[at_in])
            assert np.array_equal(o_name, name[at_in])
        return [x.tobytes() for x in (busy, *at, *outs[:16], o_at)]

    assert walk(False) == walk(True)
    with pytest.raises(ValueError, match="all three or none"):
        hotspots.NATIVE.walk(ts, dur, name, bounds, 9, 64, (None,) + (np.zeros(1),) * 26)
