"""memory.memory's per-process numbers computed for every process at once (nodes/perf/metrics/
memory.py ``_rss_max``, ``_parts_totals``, ``_growth``) and its rows built only for the processes
it keeps: the same floats as ``max`` over each ``mem.rss``, the event walk of anon + file + shmem
(``_parts_total_loop``) and last minus first, and the same processes in the same order as building
and sorting a row for every process (the memory.memory of 06ffed0)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nodes.perf.compiled_parts import compiled
from nodes.perf.formats import load
from nodes.perf.metrics import compute, memory
from nodes.perf.metrics.gc import gc_events, open_gcs, summarize_gcs
from nodes.perf.model import PerfData, SeriesMap

DATA = Path(__file__).resolve().parent / "data"
CAPTURES = sorted((DATA / "perfetto").glob("*trace")) + [DATA / "android" / "api32_startup_warm.perfetto-trace"]
NAMES = ("mem.rss", "mem.rss.anon", "mem.rss.file", "mem.rss.shmem", "mem.swap", "Heap size (KB)")

_value = st.one_of(st.sampled_from([0.0, -0.0, 1.0, 2.5, float("nan"), float("inf")]),
                   st.floats(-1e6, 1e9, allow_nan=False), st.floats(0, 1, allow_nan=False).map(lambda x: x * 1e-3))
_points = st.lists(st.tuples(st.sampled_from([0.0, 1.0, 2.0, 5.0, 5.5, float("nan")]) | st.floats(0, 100, allow_nan=False),
                             _value), min_size=1, max_size=12)
_finite_points = st.lists(st.tuples(st.integers(0, 20).map(float), st.floats(0, 1e6, allow_nan=False)), min_size=1, max_size=12)
_process = st.dictionaries(st.sampled_from(NAMES), _points | _finite_points, max_size=len(NAMES))


@pytest.fixture(autouse=True, params=["native", "numpy"])
def _parts_path(request, monkeypatch):
    """Every test twice: _parts_totals by the C part (nodes/perf/metrics/_metricsc.c), and by numpy."""
    if request.param == "native":
        if memory.NATIVE is None:
            pytest.skip("the C part is not built")
    else:
        monkeypatch.setattr(memory, "NATIVE", None)
    return request.param


def _series(processes: list[dict]) -> tuple[SeriesMap, list[dict[str, int]]]:
    sm = SeriesMap()
    sm.add_points(((pid, name), pts) for pid, p in enumerate(processes) for name, pts in p.items())
    maps: list[dict[str, int]] = [{} for _ in processes]
    for (pid, name), n, _length in sm.numbered():
        maps[pid][name] = n
    return sm, maps


def _plain_rss(p: dict) -> float | None:
    if "mem.rss" in p:
        return max(v for _t, v in p["mem.rss"])
    if all(k in p for k in memory._PARTS):
        # the points as the series hand them back: each NaN its own object (sorted() compares
        # tuples by identity first, so a NaN time shared by two points sorts otherwise)
        return memory._parts_total_loop({k: [(t + 0.0, v + 0.0) for t, v in pts] for k, pts in p.items()})
    return None


def _plain_growth(p: dict) -> float:
    pts = p["mem.rss"] if len(p.get("mem.rss", ())) >= 2 else p.get("mem.rss.anon")
    if pts is None or len(pts) < 2:
        return float("-inf")
    return pts[-1][1] - pts[0][1]


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.lists(_process, max_size=12))
def test_every_process_at_once_is_each_on_its_own(processes):
    sm, maps = _series(processes)
    assert repr(memory._rss_max(sm, maps)) == repr([_plain_rss(p) for p in processes])
    assert repr(memory._growth(sm, maps)) == repr([_plain_growth(p) for p in processes])


def test_the_first_of_equal_zeros_and_nan_as_max_passes_them():
    """``max`` keeps the first of 0.0 and -0.0 (numpy's maximum the other) and NaN by order."""
    nan = float("nan")
    processes = [{"mem.rss": [(0.0, a), (1.0, b)]} for a, b in ((0.0, -0.0), (-0.0, 0.0), (nan, 1.0), (1.0, nan))]
    sm, maps = _series(processes)
    assert repr(memory._rss_max(sm, maps)) == repr([0.0, -0.0, nan, 1.0])


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.lists(st.fixed_dictionaries({p: _finite_points for p in memory._PARTS}), min_size=1, max_size=8))
def test_parts_totals_of_finite_points_are_the_walk(processes):
    """Finite points: the batched sort, including equal times of one part in either order."""
    sm, maps = _series(processes)
    got = memory._parts_totals(sm, [tuple(m[p] for p in memory._PARTS) for m in maps])
    assert repr(got) == repr([memory._parts_total_loop(p) for p in processes])


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.one_of(st.none(), st.sampled_from([0.0, -0.0, 1.5, float("nan"), float("inf")]),
                                    st.floats(0, 1e4, allow_nan=False)),
                          st.sampled_from([0.0, 2.0, 2.5, float("nan")])), max_size=40),
       st.sampled_from([None, 3, 10**30]), st.booleans())
def test_ranked_is_the_sort_of_the_key_tuples(rows, app, huge):
    pids = [(i * 7919) % 101 + (10**30 if huge and i == 0 else 0) for i in range(len(rows))]
    rss, gc_ms = [r for r, _g in rows], [g for _r, g in rows]
    keys = [(p != app, -(r or 0.0), -g, p) for p, r, g in zip(pids, rss, gc_ms)]
    assert memory._ranked(pids, rss, gc_ms, app) == sorted(range(len(pids)), key=keys.__getitem__)


def _every_process_sorted(ctx) -> list[tuple]:
    """memory.memory's processes as 06ffed0 ranked them: a row for every process, then sorted."""
    pd: PerfData = ctx.pd
    by_pid: dict[int, dict] = defaultdict(dict)
    for (pid, name), n, length in pd.memory.numbered():
        if length:
            by_pid[pid][name] = list(pd.memory.at(n))
    gcs = summarize_gcs(pd, gc_events(pd) + open_gcs(pd), ctx.rel)
    killed = {k[1] for k in memory.lmk_kills(pd)}
    app = ctx.scope.pid if ctx.scope is not None else None
    rows = []
    for pid in set(by_pid) | {p for p, g in gcs.items() if g.count} | killed:
        rss = _plain_rss(by_pid.get(pid, {}))
        rows.append((pid, pd.processes.get(pid) or f"pid {pid}", round(rss, 3) if rss is not None else None,
                     pid in killed, gcs.get(pid)))
    rows.sort(key=lambda r: (r[0] != app, -(r[2] or 0.0), -(r[4].total_ms if r[4] else 0.0), r[0]))
    grow = {r[0]: _plain_growth(by_pid.get(r[0], {})) for r in rows}
    growers = sorted((r for r in rows[memory.MAX_PROCESSES:] if grow[r[0]] > 0), key=lambda r: (-grow[r[0]], r[0]))
    return rows[:memory.MAX_PROCESSES] + growers[:memory.MAX_GROWERS]


def _check(pd: PerfData, monkeypatch) -> list[tuple]:
    seen = {}

    def both(ctx):
        seen["want"] = _every_process_sorted(ctx)
        seen["got"] = got = real(ctx)
        return got

    real = memory.memory
    monkeypatch.setattr(memory, "memory", both)
    compute(pd)
    got = seen["got"]
    rows = [(p.pid, p.name, p.rss_max_mb, p.killed, p.gc) for p in (got.processes if got else [])]
    assert repr(rows) == repr(seen["want"])
    return rows


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.name)
def test_real_captures_rank_as_before(path, monkeypatch):
    _check(load(str(path)), monkeypatch)


def test_the_warm_start_keeps_its_processes(monkeypatch):
    rows = _check(load(str(DATA / "perfetto" / "api32_startup_warm.perfetto-trace")), monkeypatch)
    assert len(rows) > memory.MAX_PROCESSES  # the largest, then some that grew


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.lists(st.dictionaries(st.sampled_from(NAMES), _finite_points, max_size=len(NAMES)), min_size=1, max_size=40))
def test_many_processes_rank_as_before(processes):
    """Many processes, many ties (NaN is left to the tests above: memory._series has no NaN)."""
    pd = PerfData("perfetto", "memory.perfetto-trace")
    pd.add_memory_series_many(((pid + 1, name), pts) for pid, p in enumerate(processes) for name, pts in p.items())
    with pytest.MonkeyPatch.context() as mp:
        _check(pd, mp)


_part_points = st.lists(st.tuples(st.sampled_from([0.0, -0.0, 1.0, 2.0, 3.0]) | st.floats(0, 50, allow_nan=False),
                                  st.sampled_from([0.0, -0.0, 1.0, 1e-3, 7.0]) | st.floats(-1e3, 1e9, allow_nan=False)),
                        max_size=10)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(processes=st.lists(st.fixed_dictionaries({p: _part_points for p in memory._PARTS}), min_size=1, max_size=8))
def test_parts_totals_native_is_numpys(processes):
    """The C parts_totals and the numpy passes: the same floats (-0.0, equal times and values
    of one part, parts first coming in any order, processes with no row holding all three)."""
    native = compiled("nodes.perf.metrics._metricsc")
    if native is None:
        pytest.skip("the C part is not built")
    processes = [{p: pts for p, pts in proc.items() if pts} for proc in processes]
    processes = [proc for proc in processes if len(proc) == 3] or [{p: [(0.0, 1.0)] for p in memory._PARTS}]
    sm, maps = _series(processes)
    triples = [tuple(m[p] for p in memory._PARTS) for m in maps]
    with pytest.MonkeyPatch.context() as m:
        m.setattr(memory, "NATIVE", native)
        got = memory._parts_totals(sm, triples)
        m.setattr(memory, "NATIVE", None)
        assert repr(got) == repr(memory._parts_totals(sm, triples))


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([0, 1, 7, 42, 2**40, -3]), st.sampled_from(NAMES), st.integers(0, 3)),
                max_size=30),
       st.lists(st.sampled_from([0, 1, 5, 42, 2**70, -(2**64)]), max_size=5))
def test_processes_from_the_key_columns_are_the_dicts(series, extra):
    """memory._ByProcess reads the map's key columns (SeriesMap.key_columns) as the per-process
    dicts read the keys: the same pids in the same order, series numbers by name (-1: none;
    empty series left out), each process's names, pids beyond int64 (a killed pid) found in none."""
    keys = list(dict.fromkeys((p, n) for p, n, _k in series))
    lens = [next(k for p, n, k in series if (p, n) == key) for key in keys]
    bounds = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    cols, dicts = SeriesMap(), SeriesMap()
    ts = np.arange(bounds[-1], dtype=np.float64)
    cols.add_columns(keys, bounds, ts, ts)
    dicts.add_columns(keys, bounds, ts, ts)
    dicts._keys()  # the keys as a dict
    assert (cols.key_columns() is None) == (not keys) and dicts.key_columns() is None
    a, b = memory._ByProcess(cols), memory._ByProcess(dicts)
    assert a.pids == b.pids == list(dict.fromkeys(p for (p, _n), k in zip(keys, lens) if k))
    pids = list(dict.fromkeys(a.pids + extra))
    for name in NAMES:
        assert a.numbers(pids, name).tolist() == b.numbers(pids, name).tolist()
    for pid in pids:
        assert a.of(pid) == b.of(pid)
