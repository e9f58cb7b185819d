"""threads.thread_stats ranks threads on their numbers and builds only the rows it keeps
(nodes/perf/metrics/threads.py): the same rows, in the same order (ties as the key set lists
them), as building a row for every thread and sorting the rows."""

from __future__ import annotations

from array import array
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nodes.perf.formats import load
from nodes.perf.metrics import compute, threads
from nodes.perf.metrics.common import MAX_THREADS, _ms
from nodes.perf.model import PerfData, SliceColumns, ThreadStat

WARM = Path(__file__).resolve().parent / "data" / "perfetto" / "api32_startup_warm.perfetto-trace"


def _every_row_sorted(ctx) -> list[ThreadStat]:
    pd = ctx.pd
    keys = set(pd.threads) | set(ctx.threads) | set(ctx.sampled_busy) | set(pd.thread_states)
    rows = []
    for k in keys:
        info = pd.threads.get(k)
        states = pd.thread_states.get(k, {})
        th = ctx.threads.get(k)
        busy = threads.thread_busy_us(ctx, k)
        if not busy and not states and not (th and th.count):
            continue
        rows.append(ThreadStat(
            pid=k[0], tid=k[1], name=(info.name if info and info.name else f"tid {k[1]}"),
            process=pd.processes.get(k[0]), busy_ms=_ms(busy), slice_count=th.count if th else 0,
            is_main=(k == ctx.main),
            running_ms=_ms(states["running"]) if "running" in states else None,
            runnable_ms=_ms(states["runnable"]) if "runnable" in states else None,
            sleeping_ms=_ms(states["sleeping"]) if "sleeping" in states else None))
    rows.sort(key=lambda r: (not r.is_main, -r.busy_ms, -(r.running_ms or 0.0)))
    return rows[:MAX_THREADS]


def _check(pd: PerfData, monkeypatch) -> list[ThreadStat]:
    seen = {}

    def both(ctx):
        seen["want"] = _every_row_sorted(ctx)
        seen["got"] = got = real(ctx)
        return got

    real = threads.thread_stats
    monkeypatch.setattr(threads, "thread_stats", both)
    compute(pd)
    assert seen["got"] == seen["want"]
    return seen["got"]


def test_the_warm_start_ranks_as_before(monkeypatch):
    assert len(_check(load(str(WARM)), monkeypatch)) > 10


def test_ties_keep_the_order_of_the_key_set(monkeypatch):
    pd = PerfData("test", "generated")
    for tid in range(200):  # many threads of equal busy time: the cut at MAX_THREADS falls in a tie
        pd.thread(3, tid)
        pd.slices[(3, tid)] = SliceColumns(array("d", [0.0]), array("d", [1000.0 * (tid % 3)]), array("l", [pd.intern("x")]))
    rows = _check(pd, monkeypatch)
    assert len(rows) == MAX_THREADS and len({r.busy_ms for r in rows}) <= 3


def _many_threads(busy_us: list[float], running_us: list[float | None], main_tid: int) -> PerfData:
    pd = PerfData("test", "generated")
    for tid, (b, r) in enumerate(zip(busy_us, running_us)):
        pd.thread(5 if tid != main_tid else 9, tid)
        if b:
            pd.slices[(5 if tid != main_tid else 9, tid)] = SliceColumns(array("d", [0.0]), array("d", [b]),
                                                                          array("l", [pd.intern("t")]))
        if r is not None:
            pd.thread_states[(5 if tid != main_tid else 9, tid)] = {"running": r}
    pd.mark_main_thread(9, main_tid)
    return pd


_busy = st.builds(lambda k, frac: 1000.0 * k + frac, st.integers(1, 6),
                  st.sampled_from([0.0, 0.4, 0.5, 0.6, 1.4, 1.6, 2.0, 2.5, 3.0, 999.5]))


@settings(max_examples=15, deadline=None)
@given(busy=st.lists(_busy, min_size=260, max_size=400),
       running=st.lists(st.one_of(st.none(), st.sampled_from([0.0, 1.0, 500.0, 1000.4, 1000.6])), min_size=400, max_size=400),
       main_tid=st.integers(0, 300))
def test_ranking_only_the_rows_near_the_cut_ranks_as_all(busy, running, main_tid):
    # more than 4 × MAX_THREADS threads: thread_stats ranks only the rows near the cut, which
    # falls among many busy times that round to the same ms
    with pytest.MonkeyPatch.context() as mp:
        rows = _check(_many_threads(busy, running[: len(busy)], main_tid), mp)
    assert len(rows) == MAX_THREADS


@settings(max_examples=200, deadline=None)
@given(busy=st.lists(st.builds(lambda k, frac: 1000.0 * k + frac, st.integers(1, 3), st.sampled_from([0.0, 0.2, 0.4, 0.6, 2.0])),
                    min_size=0, max_size=60), keep=st.integers(0, 12), main=st.integers(0, 70),
       running=st.lists(st.one_of(st.none(), st.sampled_from([0.0, 1000.4, 1000.6])), min_size=60, max_size=60))
def test_ranked_is_the_first_rows_of_the_whole_sort(busy, keep, main, running):
    listed = [((1, i), b, {} if running[i] is None else {"running": running[i]}, None) for i, b in enumerate(busy)]
    want = sorted(listed, key=lambda r: threads._rank(r, (1, main)))[:keep]
    assert threads.ranked(listed, (1, main), keep) == want
