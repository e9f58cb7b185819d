"""The total length of a thread's intervals inside a window, touching only the intervals there.

The CPU lens's sections (:mod:`.cpu`) sum, per thread and state, every interval clipped to the
section: ``clip(min(end, b) - max(start, a), 0).sum()`` over all of the thread's intervals in
that state. Done literally that walks every interval of every thread once per section — a trace
with many launches pays launches × intervals. Only the intervals that overlap the window give
anything but 0, so :meth:`Intervals.clipped_sum` computes those and no others, and still returns the very
float the literal sum gives: numpy sums a float64 array pairwise (``pairwise_sum`` in numpy's
``loops_utils.h.src``: fewer than 8 values one after another, up to 128 in eight interleaved
partial sums, more split in two at a multiple of 8), and adding an exact 0 changes no sum, so
the same tree walked over the overlapping stretch — with the zeros outside it left out, and
every part that lies wholly inside summed by numpy itself — rounds exactly as the full sum did.
tests/test_clipped_sum.py checks it against the literal sum.
"""

from __future__ import annotations

import numpy as np

#: numpy's pairwise block (PW_BLOCKSIZE): up to this many values are one block of 8 partial sums.
_BLOCK = 128


class Intervals:
    """Many threads' intervals in one state, thread after thread: starts and ends (µs, ``ts +
    dur`` as the literal sum has them); thread ``i`` is ``[offsets[i], offsets[i + 1])``.
    ``ordered[i]``: that thread's intervals follow one another in time, so a window's
    overlapping intervals are one stretch, found by bisection."""

    def __init__(self, starts: np.ndarray, ends: np.ndarray, counts: np.ndarray):
        self.starts, self.ends = starts, ends
        self.offsets = np.zeros(len(counts) + 1, dtype=np.int64)
        np.cumsum(counts, out=self.offsets[1:])
        first, last = self.offsets[:-1], self.offsets[1:] - 1
        has = counts > 0
        #: each thread's first start and last end; (inf, -inf) for a thread with none
        self.first = np.full(len(counts), np.inf)
        self.last = np.full(len(counts), -np.inf)
        self.first[has], self.last[has] = starts[first[has]], ends[last[has]]
        same_thread = np.ones(len(starts), dtype=bool)
        inner = self.offsets[1:-1]
        same_thread[inner[inner < len(starts)]] = False  # each thread's first interval
        backwards = np.zeros(len(starts), dtype=bool)
        backwards[1:] = ((starts[1:] < starts[:-1]) | (ends[1:] < ends[:-1])) & same_thread[1:]
        bad = np.unique(np.searchsorted(self.offsets, np.flatnonzero(backwards), side="right") - 1)
        self.ordered = np.ones(len(counts), dtype=bool)
        self.ordered[bad] = False
        for i in bad.tolist():  # not in time order: their extent from every interval
            self.first[i] = starts[self.offsets[i]:self.offsets[i + 1]].min()
            self.last[i] = ends[self.offsets[i]:self.offsets[i + 1]].max()
        self._totals: dict[int, float] = {}

    def clipped_sum(self, i: int, a: float, b: float) -> float:
        """Thread ``i``'s ``float(np.clip(np.minimum(ends, b) - np.maximum(starts, a), 0,
        None).sum())``, bit for bit, from its intervals that overlap [a, b] only."""
        off, n = int(self.offsets[i]), int(self.offsets[i + 1] - self.offsets[i])
        if not n:
            return 0.0
        starts, ends = self.starts[off:off + n], self.ends[off:off + n]
        if self.ordered[i]:
            lo = int(ends.searchsorted(a, side="right"))  # before: ends ≤ a, clipped to 0
            hi = int(starts.searchsorted(b, side="left"))  # from here: starts ≥ b, clipped to 0
            if hi <= lo:
                return 0.0
            if lo == 0 and hi == n and a <= starts[0] and ends[-1] <= b:
                total = self._totals.get(i)  # all inside: nothing clipped, the same sum each time
                if total is None:
                    total = self._totals[i] = 0.0 + float(np.add.reduce(ends - starts))
                return total
        else:
            lo, hi = 0, n
        vals = np.clip(np.minimum(ends[lo:hi], b) - np.maximum(starts[lo:hi], a), 0.0, None)
        if hi - lo == 1:
            return 0.0 + float(vals[0])  # one value among exact zeros: the sum is that value
        return 0.0 + _pairwise(vals, lo, hi, 0, n)


def _pairwise(vals: np.ndarray, lo: int, hi: int, first: int, n: int) -> float:
    """numpy's pairwise sum of positions [first, first + n) of an array that is ``vals`` at
    [lo, hi) and 0 elsewhere."""
    last = first + n
    if last <= lo or first >= hi:
        return 0.0
    if lo <= first and last <= hi:
        return float(np.add.reduce(vals[first - lo:last - lo]))
    if n <= _BLOCK:
        block = np.zeros(n)
        a, b = max(lo, first), min(hi, last)
        block[a - first:b - first] = vals[a - lo:b - lo]
        return float(np.add.reduce(block))
    half = n // 2
    half -= half % 8
    return _pairwise(vals, lo, hi, first, half) + _pairwise(vals, lo, hi, first + half, n - half)
