"""threads.thread_stats ranks threads on their numbers and builds only the rows it keeps
(nodes/perf/metrics/threads.py): the same rows, in the same order (ties as the key set lists
them), as building a row for every thread and sorting the rows."""

from __future__ import annotations

from array import array
from pathlib import Path

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
