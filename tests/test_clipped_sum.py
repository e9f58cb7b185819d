"""Intervals.clipped_sum (nodes/perf/metrics/clipped_sum.py) gives the very float of the literal
clipped sum over every interval, while it computes only the intervals inside the window; and the
CPU lens's sections built on it equal the literal walk over every thread on a real capture."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from nodes.perf.formats import load
from nodes.perf.metrics import cpu
from nodes.perf.metrics.clipped_sum import Intervals
from nodes.perf.metrics.common import Context

WARM = Path(__file__).resolve().parent / "data" / "perfetto" / "api32_startup_warm.perfetto-trace"


def _literal(starts: np.ndarray, ends: np.ndarray, a: float, b: float) -> float:
    return float(np.clip(np.minimum(ends, b) - np.maximum(starts, a), 0.0, None).sum())


def _threads(rng: np.random.Generator, sizes: list[int], ordered: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    starts, ends = [], []
    for n in sizes:
        gaps = rng.exponential(50.0, n) * (rng.random(n) < 0.9)  # some back to back
        # some of length 0; lengths of many magnitudes from near 0, so that sums round and the
        # order of the additions shows (a real trace's are on one grid, where no sum rounds)
        durs = rng.exponential(30.0, n) * 10.0 ** rng.uniform(-4, 5, n) * (rng.random(n) < 0.95)
        s = (np.cumsum(gaps) + rng.random()).tolist()
        e = s[:]
        for k in range(n):  # each starts where the one before ended, or later
            s[k] = max(s[k], e[k - 1]) if k else s[k]
            e[k] = s[k] + durs[k]
        s, e = np.array(s), np.array(e)
        if not ordered and n > 1:
            s, e = s[::-1].copy(), e[::-1].copy()
        starts.append(s)
        ends.append(e)
    return np.concatenate(starts), np.concatenate(ends), np.array(sizes)


@pytest.mark.parametrize("ordered", [True, False])
def test_clipped_sum_is_the_literal_sum_bit_for_bit(ordered):
    rng = np.random.default_rng(25)
    # sizes either side of numpy's pairwise limits (8, 128) and several levels of splitting
    sizes = [0, 1, 2, 7, 8, 9, 15, 16, 0, 17, 127, 128, 129, 300, 1000, 5000, 20011, 0, 0]
    starts, ends, counts = _threads(rng, sizes, ordered)
    iv = Intervals(starts, ends, counts)
    assert iv.ordered.tolist() == [ordered or n < 7 and bool(iv.ordered[i]) for i, n in enumerate(sizes)]
    checked = 0
    for i, n in enumerate(sizes):
        s, e = starts[iv.offsets[i]:iv.offsets[i + 1]], ends[iv.offsets[i]:iv.offsets[i + 1]]
        if not n:
            assert iv.clipped_sum(i, 0.0, 1e12) == 0.0
            continue
        lo, hi = s.min(), e.max()
        windows = [(lo - 10, hi + 10), (lo, hi), (hi + 1, hi + 5), (lo - 5, lo - 1), (s[0], e[0])]
        for _ in range(40):
            a = rng.uniform(lo - 100, hi)
            windows.append((a, a + rng.uniform(0, (hi - lo) * rng.choice([0.001, 0.05, 0.5, 1.2]))))
        for a, b in windows:
            got, want = iv.clipped_sum(i, a, b), _literal(s, e, a, b)
            assert got == want and np.signbit(got) == np.signbit(want), (n, a, b, got, want)
            checked += 1
    assert checked > 500


def _literal_section(pd, start: float, end: float) -> tuple[list, dict]:
    """The walk the CPU sections did before: every thread, every interval, clipped."""
    rows, procs = [], defaultdict(lambda: [0.0, 0.0])
    for (pid, tid), iv in pd.sched_intervals.items():
        ts = np.frombuffer(iv.ts, dtype=np.float64)
        du = np.frombuffer(iv.dur, dtype=np.float64)
        st = np.frombuffer(iv.state, dtype=np.int8)
        clipped = np.clip(np.minimum(ts + du, end) - np.maximum(ts, start), 0.0, None)
        run, wait = float(clipped[st == 0].sum()), float(clipped[np.isin(st, (1, 2))].sum())
        if run or wait:
            rows.append((run, wait, pid, tid))
            procs[pid][0] += run
            procs[pid][1] += wait
    return sorted(rows, key=lambda r: (-r[0], -r[1], r[2], r[3])), dict(procs)


def test_cpu_sections_equal_the_literal_walk_on_the_warm_start():
    pd = load(str(WARM))
    ctx = Context(pd, 10)
    span = pd.end_us - pd.start_us
    windows = [(pd.start_us + f * span, pd.start_us + (f + w) * span)
               for f, w in [(0.0, 1.0), (-0.1, 1.2), (0.3, 0.2), (0.5, 0.01), (0.9, 0.5)]]
    for a, b in windows:
        sec = cpu.section(ctx, "window", a, b)
        rows, procs = _literal_section(pd, a, b)
        assert len(rows) > 5
        assert [(t.pid, t.tid) for t in sec.threads] == [(p, t) for _r, _w, p, t in rows[:cpu.SECTION_TOP]]
        for t, (run, wait, _p, _t) in zip(sec.threads, rows):
            assert (t.running_ms, t.runnable_ms) == (round(run / 1000.0, 3), round(wait / 1000.0, 3))
        top = sorted(procs.items(), key=lambda kv: (-kv[1][0], kv[0]))[:cpu.SECTION_TOP]
        assert [(p.pid, p.running_ms, p.runnable_ms) for p in sec.processes] == [
            (pid, round(r / 1000.0, 3), round(w / 1000.0, 3)) for pid, (r, w) in top]


@pytest.mark.parametrize("ordered", [True, False])
@pytest.mark.parametrize("path", ["native", "numpy", "loop"])
def test_clipped_sums_of_many_threads_are_each_threads_clipped_sum(ordered, path, monkeypatch):
    """Intervals.clipped_sums (every thread of a window at once: the CPU sections) gives each
    thread's clipped_sum bit for bit: windows that miss a thread, hold all of it, overlap one
    interval or a stretch, on threads of 0 to 20,011 intervals, some not in time order, one
    with a NaN — by the C part (nodes/perf/metrics/_metricsc.c), by numpy, and with numpy's
    block sums switched off (another numpy) all by clipped_sum."""
    from nodes.perf.metrics import clipped_sum

    assert clipped_sum._block_sums_are_numpys()  # the fast path is live on this numpy
    if path == "native":
        if clipped_sum.NATIVE is None:
            pytest.skip("the C part is not built")
        assert clipped_sum._native_sums_are_numpys()
    else:
        monkeypatch.setattr(clipped_sum, "NATIVE", None)
    if path == "loop":
        monkeypatch.setattr(clipped_sum, "_BLOCK_SUMS_OK", [False])
    rng = np.random.default_rng(7)
    sizes = [0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 64, 127, 128, 129, 300, 0, 1000, 20011, 5, 40]
    starts, ends, counts = _threads(rng, sizes, ordered)
    at_nan = int(np.sum(sizes[:4])) + 1  # the thread of 7 gets a NaN end
    ends[at_nan] = np.nan
    iv = Intervals(starts, ends, counts)
    lo, hi = float(np.nanmin(starts)), float(np.nanmax(ends))
    windows = [(lo - 10, hi + 10), (lo, hi), (hi + 1, hi + 5), (lo - 5, lo - 1)]
    for i in range(len(sizes)):
        s = starts[iv.offsets[i]:iv.offsets[i + 1]]
        if len(s):
            windows.append((float(s.min()), float(s.min()) + 1e-3))
    for _ in range(300):
        a = rng.uniform(lo - 100, hi)
        windows.append((a, a + rng.uniform(0, (hi - lo) * rng.choice([0.0005, 0.01, 0.05, 0.5]))))
    everyone = np.arange(len(sizes))
    kinds = set()
    for a, b in windows:
        some = everyone[rng.random(len(sizes)) < 0.7]
        got = iv.clipped_sums(some, a, b)
        want = [iv.clipped_sum(int(i), a, b) for i in some]
        assert [repr(g) for g in got] == [repr(w) for w in want], (a, b)  # repr: exact, -0.0 and nan too
        kinds.update("zero" if w == 0 else "value" for w in want)
    assert kinds == {"zero", "value"}
    # every window at once, one per thread (how the CPU lens asks for all its sections)
    which = np.concatenate([everyone for _w in windows])
    a_s = np.repeat([a for a, _b in windows], len(everyone))
    b_s = np.repeat([b for _a, b in windows], len(everyone))
    a_s[5], b_s[7] = np.nan, np.inf
    got = iv.clipped_sums(which, a_s, b_s)
    assert [repr(g) for g in got] == [repr(iv.clipped_sum(int(i), float(a), float(b)))
                                      for i, a, b in zip(which, a_s, b_s)]
    assert iv.clipped_sums(np.zeros(0, dtype=np.int64), lo, hi) == []
    assert [repr(g) for g in iv.clipped_sums(everyone, lo, float("inf"))] == [
        repr(iv.clipped_sum(int(i), lo, float("inf"))) for i in everyone]


def test_the_c_pairwise_sum_is_numpys():
    """The C part's pairwise sum (what clipped_sums adds with) against np.add.reduce at every
    length to 600 and around numpy's splits, on values whose sums round; and its self-check
    says no when the sum is not numpy's."""
    from nodes.perf.metrics import clipped_sum

    if clipped_sum.NATIVE is None:
        pytest.skip("the C part is not built")
    rng = np.random.default_rng(3)
    lengths = np.array(list(range(0, 600)) + [1023, 1024, 1025, 2049, 8191, 30001], dtype=np.int64)
    values = rng.exponential(30.0, int(lengths.sum())) * 10.0 ** rng.uniform(-6, 6, int(lengths.sum()))
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    got = np.zeros(len(lengths))
    clipped_sum.NATIVE.pairwise_sums(values, offsets, got)
    want = [np.add.reduce(values[offsets[i]:offsets[i + 1]]) for i in range(len(lengths))]
    assert (0.0 + got).tolist() == (0.0 + np.array(want)).tolist()
    assert sum(sum(values[offsets[i]:offsets[i + 1]].tolist()) != w for i, w in enumerate(want)) > 100  # sums round


def test_the_native_self_check_refuses_another_sum(monkeypatch):
    from nodes.perf.metrics import clipped_sum

    if clipped_sum.NATIVE is None:
        pytest.skip("the C part is not built")

    class Sequential:
        @staticmethod
        def pairwise_sums(values, offsets, out):  # a left-to-right sum: not numpy's
            for i in range(len(out)):
                out[i] = sum(values[offsets[i]:offsets[i + 1]].tolist())

    monkeypatch.setattr(clipped_sum, "NATIVE", Sequential)
    monkeypatch.setattr(clipped_sum, "_NATIVE_SUMS_OK", [])
    assert not clipped_sum._native_sums_are_numpys()


def test_sched_index_columns_from_c_are_the_constructors(monkeypatch):
    """cpu._SchedIndex's Running and runnable Intervals from the C part's one pass
    (_metricsc.split_states, Intervals.from_columns) equal Intervals(starts, ends, counts) built
    by numpy: threads with no interval of a state, out of time order, with NaN and infinite
    times; and the CPU sections of a real capture are the same either way."""
    from types import SimpleNamespace

    from nodes.perf.metrics import clipped_sum
    from nodes.perf.model import SchedIntervals

    if clipped_sum.NATIVE is None:
        pytest.skip("the C part is not built")
    from array import array

    rng = np.random.default_rng(11)
    ivs = {}
    for k in range(60):
        n = int(rng.integers(0, 40))
        ts = np.sort(rng.uniform(0, 1000, n)) if k % 5 else rng.uniform(0, 1000, n)  # some unordered
        dur = rng.exponential(5.0, n)
        if k % 13 == 0 and n:
            ts[n // 2] = [np.nan, np.inf][k % 2]
        state = rng.integers(0, 6, n).astype(np.int8)
        ivs[(k, k)] = SchedIntervals(array("d", ts.tolist()), array("d", dur.tolist()), array("b", state.tolist()),
                                     array("b", [-1] * n))
    pd = SimpleNamespace(sched_intervals=ivs)
    fast = cpu._SchedIndex(pd)
    monkeypatch.setattr(cpu, "NATIVE", None)
    slow = cpu._SchedIndex(pd)
    for a, b in ((fast.running, slow.running), (fast.runnable, slow.runnable)):
        assert a.starts.tobytes() == b.starts.tobytes() and a.ends.tobytes() == b.ends.tobytes()
        assert a.offsets.tolist() == b.offsets.tolist()
        assert a.first.tobytes() == b.first.tobytes() and a.last.tobytes() == b.last.tobytes()
        assert a.ordered.tolist() == b.ordered.tolist() and a._batch.tolist() == b._batch.tolist()
        assert not a.ordered.all() and not a._batch[a.ordered].all()
    pd = load(str(WARM))
    windows = [(pd.start_us + f * 1e6, pd.start_us + (f + 0.3) * 1e6) for f in (0.0, 0.5, 1.0)]
    monkeypatch.undo()
    new = [cpu.section(Context(pd, 10), "w", a, b) for a, b in windows]
    monkeypatch.setattr(cpu, "NATIVE", None)
    assert new == [cpu.section(Context(pd, 10), "w", a, b) for a, b in windows]


@pytest.mark.parametrize("at_once", [1, 7, 300, 1 << 40])
def test_cpu_sections_indexed_a_run_of_threads_at_a_time(at_once, monkeypatch):
    """cpu._all_sections indexes INDEX_INTERVALS intervals' threads at a time and drops each
    index: every window's threads, their order and sums are those of cpu.section over the one
    index of every thread (the path a lone section still takes), whatever the run length, on
    windows that miss, cut and cover the warm start's threads."""
    pd = load(str(WARM))
    span = pd.end_us - pd.start_us
    windows = [(f"w{i}", pd.start_us + f * span, pd.start_us + (f + w) * span)
               for i, (f, w) in enumerate([(0.0, 1.0), (-0.1, 1.2), (0.3, 0.2), (0.5, 0.01), (0.9, 0.5), (2.0, 0.1)])]
    want = [cpu.section(Context(pd, 10), name, a, b) for name, a, b in windows]
    monkeypatch.setattr(cpu, "INDEX_INTERVALS", at_once)
    ctx = Context(pd, 10)
    assert cpu._all_sections(ctx, windows) == want
    assert "_sched_index" not in ctx.__dict__  # nothing kept for the families after
    assert sum(len(s.threads) for s in want) > 20
