"""Exercises the copied sortedcontainers so a sampling profiler sees its hot paths.

Run from anywhere: the script's own folder comes first on sys.path, so the copy next to it is
imported, not the one in site-packages. ``--seconds`` bounds how long it runs.
"""

import random
import sys
import time

from sortedcontainers import SortedDict, SortedList, SortedSet


def churn_list(rng, n):
    sl = SortedList()
    for _ in range(n):
        sl.add(rng.random())
    for _ in range(n // 2):
        sl.remove(sl[rng.randrange(len(sl))])
    return len(sl)


def query_dict(rng, n):
    sd = SortedDict((rng.randrange(10 * n), i) for i in range(n))
    hits = 0
    for _ in range(n):
        k = rng.randrange(10 * n)
        hits += sd.bisect_left(k)
        hits += len(list(sd.irange(k, k + 50)))
    return hits


def set_algebra(rng, n):
    a = SortedSet(rng.randrange(4 * n) for _ in range(n))
    b = SortedSet(rng.randrange(4 * n) for _ in range(n))
    return len(a & b) + len(a | b) + len(a - b)


def main(seconds):
    rng = random.Random(7)
    end = time.monotonic() + seconds
    total = 0
    while time.monotonic() < end:
        total += churn_list(rng, 20000)
        total += query_dict(rng, 5000)
        total += set_algebra(rng, 20000)
    return total


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 3.0)
