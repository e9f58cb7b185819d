"""slice_stats' per-thread groups folded per name with numpy (hotspots._fold) give what one
``add`` per group gives (hotspots._thread_groups_loop): counts, sums added in thread order,
min, max, the first slice (equal starts: the earlier thread's) and the entries' order, which
breaks slice_stats' ties of sum."""
from types import SimpleNamespace

import numpy as np
import pytest

from nodes.perf.metrics import hotspots


def _add_into(acc):
    def add(scope, kind, nid, n, tot, lo, hi, t0, d0, pid):  # slice_stats' add
        a = acc.get((scope, kind, nid))
        if a is None:
            acc[(scope, kind, nid)] = [n, tot, lo, hi, t0, d0, pid]
            return
        a[0] += n
        a[1] += tot
        a[2] = min(a[2], lo)
        a[3] = max(a[3], hi)
        if t0 < a[4]:
            a[4], a[5], a[6] = t0, d0, pid
    return add


def _ctx(rng, n_threads, app):
    threads = {}
    for k in range(n_threads):
        n = int(rng.integers(0, 40))
        ts = np.sort(rng.integers(0, 50, n).astype(np.float64))  # equal starts within and across threads
        dur = rng.random(n) * 10.0 ** rng.integers(-3, 6, n)
        dur[rng.random(n) < 0.3] = 0.0
        dur[rng.random(n) < 0.1] = 1.0  # equal sums
        threads[(k % 7, 1000 + k)] = SimpleNamespace(ts=ts, dur=dur, name=rng.integers(0, 12, n).astype(np.int32), count=n)
    return SimpleNamespace(threads=threads, scope=None if app is None else SimpleNamespace(app_pids=frozenset(app)))


def _both(ctx, monkeypatch):
    fast: dict = {}
    hotspots._thread_groups(ctx, _add_into(fast), fast)
    slow: dict = {}
    with monkeypatch.context() as m:
        m.setattr(hotspots, "_foldable", lambda values: False)
        hotspots._thread_groups(ctx, _add_into(slow), slow)
    # slice_stats reads each scope apart (its ties of sum in that scope's order of entries)
    return ([[kv for kv in acc.items() if kv[0][0] == scope] for scope in ("all", "app")] for acc in (fast, slow))


@pytest.mark.parametrize("seed", range(16))
def test_fold_equals_one_add_per_group(seed, monkeypatch):
    rng = np.random.default_rng(seed)
    ctx = _ctx(rng, int(rng.integers(1, 40)), app=[None, {1, 3}, {99}][seed % 3])
    fast, slow = _both(ctx, monkeypatch)
    assert fast == slow
    assert bool(fast[1]) == (seed % 3 == 1)


@pytest.mark.parametrize("odd", [-0.0, float("nan")])
def test_negative_zero_and_nan_take_the_loop(odd, monkeypatch):
    ctx = _ctx(np.random.default_rng(7), 10, app={1})
    ctx.threads[(1, 1)] = SimpleNamespace(ts=np.array([0.0, 1.0]), dur=np.array([odd, 2.0]), name=np.array([3, 3], np.int32), count=2)
    assert not hotspots._foldable(np.array([1.0, odd]))
    monkeypatch.setattr(hotspots, "_fold", lambda *a: pytest.fail("folded"))
    acc: dict = {}
    hotspots._thread_groups(ctx, _add_into(acc), acc)
    assert acc
