"""memory._parts_total (anon + file + shmem at its largest, nodes/perf/metrics/memory.py) with
numpy gives the very float of the event walk it replaced (memory._parts_total_loop): the
parts' latest values summed in the order the parts first appear, ties in time by part name."""

from __future__ import annotations

import random

import pytest

from nodes.perf.metrics import memory


@pytest.mark.parametrize("seed", range(40))
def test_parts_total_is_the_event_walk(seed):
    rnd = random.Random(seed)
    grid = rnd.choice([3, 20, 10**6])
    by_name = {}
    for p in memory._PARTS:
        n = rnd.randrange(0 if seed % 7 == 0 else 1, 30)
        # values of many magnitudes, so that the order of the three additions shows
        by_name[p] = [(float(rnd.randrange(grid)), rnd.choice([1.0, 3.0, 1e-3, 7e5]) * rnd.random() * 10 ** rnd.randrange(6))
                      for _ in range(n)]
    if seed % 5 == 0:  # equal maxima and zeros
        for p in memory._PARTS:
            by_name[p] = [(t, 0.0 if rnd.random() < 0.5 else 1.0) for t, _v in by_name[p]]
    want = memory._parts_total_loop(by_name)
    got = memory._parts_total(by_name)
    assert repr(got) == repr(want)


def test_parts_total_needs_every_part_and_keeps_nan_to_the_walk():
    assert memory._parts_total({"mem.rss.anon": [(0.0, 1.0)], "mem.rss.file": [(0.0, 1.0)]}) is None
    nan = float("nan")
    by_name = {"mem.rss.anon": [(0.0, nan), (1.0, 2.0)], "mem.rss.file": [(0.0, 1.0)], "mem.rss.shmem": [(2.0, 0.1)]}
    assert repr(memory._parts_total(by_name)) == repr(memory._parts_total_loop(by_name))
    sums = {"mem.rss.anon": [(5.0, 0.1)], "mem.rss.file": [(0.0, 0.2)], "mem.rss.shmem": [(1.0, 0.3)]}
    assert memory._parts_total(sums) == (0.2 + 0.3) + 0.1  # file, then shmem, then anon: as they first appear
