"""The vectorised nesting walk (nodes/perf/metrics/hotspots.walk on nodes/perf/metrics/slice_tree)
gives exactly what the old per-slice stack walk gave (tests/slice_walk_reference.py) — self,
total and count per name, busy time, top-level tasks, path weights, and the order the dicts list
names and paths in (ties in the rankings follow it) — on generated slice sets: properly nested,
overlapping their parents' ends, equal starts, zero durations, deep recursion, NaNs."""

from __future__ import annotations

import random
from pathlib import Path
from array import array

import numpy as np
import pytest

from nodes.perf.metrics import hotspots, slice_tree
from nodes.perf.formats import load
from nodes.perf.metrics import compute
from nodes.perf.metrics.common import Context
from nodes.perf.model import PerfData, SliceColumns
from tests.slice_walk_reference import reference_stacks, reference_walk

KEY = (1, 2)
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True, params=["numpy", "batch", "native"])
def _walk_path(request, monkeypatch):
    """Every comparison runs three times: all threads through the per-thread numpy passes, all
    through the batch that hotspots.walk_all walks small threads in (hotspots.SMALL_THREAD), and
    all through the C walk (hotspots.NATIVE, nodes/perf/metrics/_metricsc.c)."""
    if request.param == "native":
        if hotspots.NATIVE is None:
            pytest.skip("the C walk is not built")
    else:
        monkeypatch.setattr(hotspots, "NATIVE", None)
    monkeypatch.setattr(hotspots, "SMALL_THREAD", 0 if request.param == "numpy" else 10**9)
    return request.param


def _reference_walk_all(ctx) -> None:
    for key in ctx.pd.slices:
        reference_walk(ctx, key)


def _ctx(ts, dur, name):
    pd = PerfData("test", "generated")
    pd.slices[KEY] = SliceColumns(array("d", ts), array("d", dur), array("l", name))
    return Context(pd, 30)


def _both(ts, dur, name):
    a, b = _ctx(ts, dur, name), _ctx(ts, dur, name)
    reference_walk(a, KEY)
    if hotspots.NATIVE is not None:
        hotspots.walk_all(b)  # the C walk walks every thread through walk_all
    else:
        hotspots.walk(b, KEY)
    return a, b


def _same(ts, dur, name):
    a, b = _both(ts, dur, name)
    ta, tb = a.threads[KEY], b.threads[KEY]
    assert list(tb.self_by.items()) == list(ta.self_by.items())
    assert list(tb.total_by.items()) == list(ta.total_by.items())
    assert list(tb.count_by.items()) == list(ta.count_by.items())
    assert tb.top_level == ta.top_level
    assert tb.busy_us == ta.busy_us
    assert tb.count == ta.count
    assert _slice_paths(b) == list(a.paths.items())
    for f in ("ts", "dur", "name"):
        assert np.array_equal(getattr(tb, f), getattr(ta, f))
    return ta


def _slice_paths(ctx) -> list:
    return [((sp.key, sp.path(p)), w) for sp in ctx.slice_paths for p, w in zip(sp.pid.tolist(), sp.weight.tolist())]


def _nested(rnd: random.Random, n: int, overhang: float, ints: bool, names: int) -> tuple[list, list, list]:
    """Slices as a program's calls make them: children inside their parent, some running past
    its end by up to ``overhang`` of their length, some of zero length, some starting together."""
    ts, dur, name = [], [], []
    t = 0.0

    def emit(start: float, length: float, depth: int) -> None:
        if len(ts) >= n:
            return
        if ints:
            start, length = float(round(start)), float(round(length))
        ts.append(start)
        dur.append(length)
        name.append(rnd.randrange(names))
        if depth > 70 or length <= 0:
            return
        inner = start + (0 if rnd.random() < 0.3 else rnd.uniform(0, length * 0.2))
        for _ in range(rnd.randrange(0, 4)):
            d = rnd.uniform(0, length * 0.6)
            if rnd.random() < overhang:
                d *= 1 + rnd.uniform(0, 3)  # runs past the parent's end
            if rnd.random() < 0.05:
                d = 0.0
            emit(inner, d, depth + 1)
            inner += d * rnd.uniform(0.3, 1.2)
            if inner >= start + length:
                break

    while len(ts) < n:
        emit(t, rnd.uniform(1, 5000), 0)
        t += rnd.uniform(-500, 6000)  # sometimes the next task starts inside the last one
    idx = list(range(len(ts)))
    rnd.shuffle(idx)  # files are not in time order
    return [ts[i] for i in idx], [dur[i] for i in idx], [name[i] for i in idx]


@pytest.mark.parametrize("seed", range(60))
def test_matches_the_stack_walk_on_generated_slices(seed):
    rnd = random.Random(seed)
    ts, dur, name = _nested(rnd, rnd.randrange(1, 3000), overhang=[0.0, 0.05, 0.3, 0.8][seed % 4],
                            ints=seed % 3 != 0, names=[2, 5, 40][seed % 3])
    _same(ts, dur, name)


@pytest.mark.parametrize("seed", range(40))
def test_matches_on_arbitrary_intervals(seed):
    """No nesting at all: random overlapping intervals, many equal starts and ends."""
    rnd = random.Random(1000 + seed)
    n = rnd.randrange(1, 400)
    grid = rnd.choice([3, 10, 1000])
    ts = [float(rnd.randrange(grid)) for _ in range(n)]
    dur = [float(rnd.randrange(grid)) * rnd.choice([0, 1, 1, 0.5]) for _ in range(n)]
    name = [rnd.randrange(3) for _ in range(n)]
    _same(ts, dur, name)


def test_deep_recursion_and_long_paths():
    """A 300-deep recursion of one name: totals count the outermost call only, paths stop
    growing at 64 names, and the deepest slices add to that 64-name path."""
    n = 300
    ts = [float(i) for i in range(n)]
    dur = [float(2 * (n - i)) for i in range(n)]
    name = [7 if i % 3 else 8 for i in range(n)]
    th = _same(ts, dur, name)
    assert th.total_by[7] == dur[1] and th.total_by[8] == dur[0]


def test_nan_negative_and_empty():
    nan, inf = float("nan"), float("inf")
    _same([0.0, 1.0, nan, 2.0, 3.0], [10.0, -4.0, 1.0, inf, 0.0], [0, 1, 2, 3, 4])
    _same([nan], [1.0], [0])
    _same([], [], [])


def test_iteration_settles_or_falls_back_to_the_exact_loop(monkeypatch):
    """A child running 5 µs past its parent's end hides, on the first round, that [102, 110]
    starts after the cut child has closed: the iteration needs more rounds; with rounds capped
    at one the stack loop takes over. Both give the reference's answer; heavily overlapping
    slices (the generated sets above) take the loop too."""
    ts = [0.0, 10.0, 20.0, 102.0, 104.0, 200.0]
    dur = [100.0, 95.0, 5.0, 8.0, 1.0, 3.0]
    name = [0, 1, 2, 3, 1, 0]
    a, d = np.array(ts), np.array(dur)
    tree = slice_tree.build(a, d)
    assert tree.rounds > 1
    assert tree.parent.tolist() == [-1, 0, 1, -1, 3, -1]
    assert tree.end.tolist() == [100.0, 100.0, 25.0, 110.0, 105.0, 203.0]
    _same(ts, dur, name)
    monkeypatch.setattr(slice_tree, "MAX_ROUNDS", 1)
    assert slice_tree.build(a, d).rounds == 0
    _same(ts, dur, name)
    rnd = random.Random(3)
    ts, dur, name = _nested(rnd, 3000, overhang=0.8, ints=True, names=5)
    _same(ts, dur, name)


CAPTURES = sorted(str(p) for p in (ROOT / "tests" / "data").glob("*/*")
                  if (p.suffix in (".json", ".gz", ".pftrace", ".perfetto-trace", ".pstats", ".log")
                  or p.name.endswith("systrace.txt"))
                  and "devtoolslog" not in p.name)  # a network log, not a trace


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.split("/")[-1])
def test_whole_analysis_of_real_captures_is_unchanged(path, monkeypatch):
    """Every number of the analysis (hot spots and their order, slice stats, threads, long
    tasks, frames, startup, stacks, findings) is what the old walk and stacks gave."""
    pd = load(path)
    new = compute(pd).model_dump()
    monkeypatch.setattr(hotspots, "walk_all", _reference_walk_all)
    monkeypatch.setattr(hotspots, "stacks", reference_stacks)
    old = compute(load(path)).model_dump()
    assert new == old
    assert new["stacks"] or not pd.slices and not pd.stacks


def test_path_cap_across_threads_and_samples(monkeypatch):
    """With few paths allowed, which threads' paths are kept (the cap is checked per thread and
    per sampled stack, counting both kinds) and the heaviest stacks are as before."""
    import tests.slice_walk_reference as ref

    def data() -> PerfData:
        pd = PerfData("test", "generated")
        rnd = random.Random(11)
        for tid in (1, 2, 3, 4):
            ts, dur, name = _nested(rnd, 400, overhang=0.1, ints=True, names=6)
            pd.thread(7, tid)
            pd.slices[(7, tid)] = SliceColumns(array("d", ts), array("d", dur),
                                               array("l", [pd.intern(f"f{n}") for n in name]))
        return pd

    monkeypatch.setattr(hotspots, "MAX_PATHS", 150)
    monkeypatch.setattr(ref, "MAX_PATHS", 150)
    new = compute(data()).model_dump()
    monkeypatch.setattr(hotspots, "walk_all", _reference_walk_all)
    monkeypatch.setattr(hotspots, "stacks", reference_stacks)
    old = compute(data()).model_dump()
    assert new == old
    assert len({s["thread"] for s in new["stacks"]}) < 4  # the cap did cut some threads' paths


def _same_threads(ctx_a, ctx_b) -> None:
    assert list(ctx_b.threads) == list(ctx_a.threads)
    for key, ta in ctx_a.threads.items():
        tb = ctx_b.threads[key]
        assert list(tb.self_by.items()) == list(ta.self_by.items())
        assert list(tb.total_by.items()) == list(ta.total_by.items())
        assert list(tb.count_by.items()) == list(ta.count_by.items())
        assert tb.top_level == ta.top_level
        assert tb.busy_us == ta.busy_us and tb.count == ta.count
        for f in ("ts", "dur", "name"):
            assert np.array_equal(getattr(tb, f), getattr(ta, f))
    assert _slice_paths(ctx_b) == list(ctx_a.paths.items())


@pytest.mark.parametrize("seed", range(12))
def test_many_threads_walked_together_are_each_walked_alone(seed, monkeypatch):
    """hotspots.walk_all walks small threads in one batch (times ranked per thread so one
    thread's slices never nest in another's): thread by thread, every sum, dict order, path and
    the order the threads and paths are listed in are the per-thread walk's — with threads of
    equal times, empty threads, all-NaN threads, big threads among small ones, the same name
    ids in several threads, a path cap reached part way, in one batch or several."""
    import tests.slice_walk_reference as ref

    rnd = random.Random(500 + seed)
    monkeypatch.setattr(hotspots, "SMALL_THREAD", 64)
    monkeypatch.setattr(hotspots, "BATCH_SLICES", [10**9, 150][seed % 2])  # one batch, or many
    cap = [10**9, 300, 40][seed % 3]
    monkeypatch.setattr(hotspots, "MAX_PATHS", cap)
    monkeypatch.setattr(ref, "MAX_PATHS", cap)

    def data() -> PerfData:
        pd = PerfData("test", "generated")
        r = random.Random(seed)
        for tid in range(r.randrange(1, 60)):
            kind = r.random()
            if kind < 0.1:
                ts, dur, name = [], [], []
            elif kind < 0.15:
                ts, dur, name = [float("nan")] * 3, [1.0] * 3, [1, 2, 3]
            elif kind < 0.3:
                ts, dur, name = _nested(r, r.randrange(65, 400), overhang=0.3, ints=True, names=8)
            else:
                ts, dur, name = _nested(r, r.randrange(1, 60), overhang=[0.0, 0.3][tid % 2], ints=tid % 3 != 0,
                                        names=r.choice([2, 6, 30]))
            if r.random() < 0.3 and tid:  # the same times as the thread before: no nesting across threads
                prev = pd.slices[(7, tid - 1)]
                ts, dur, name = list(prev.ts), list(prev.dur), list(prev.name)
            pd.thread(7, tid)
            pd.slices[(7, tid)] = SliceColumns(array("d", ts), array("d", dur), array("l", name))
        return pd

    a, b = Context(data(), 30), Context(data(), 30)
    _reference_walk_all(a)
    hotspots.walk_all(b)
    _same_threads(a, b)
