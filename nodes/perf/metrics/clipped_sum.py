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

from nodes.perf.compiled_parts import compiled

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
        # the threads :meth:`clipped_sums` bisects all at once: ordered, every time finite
        bad_values = ~(np.isfinite(starts) & np.isfinite(ends))
        self._batch = self.ordered.copy()
        if bad_values.any():
            self._batch[np.unique(np.searchsorted(self.offsets, np.flatnonzero(bad_values), side="right") - 1)] = False

    @classmethod
    def from_columns(cls, starts: np.ndarray, ends: np.ndarray, offsets: np.ndarray, first: np.ndarray,
                     last: np.ndarray, ordered: np.ndarray, finite: np.ndarray) -> "Intervals":
        """The same as ``Intervals(starts, ends, counts)`` from columns the C part computed in its
        pass over the intervals (``_metricsc.split_states``): each thread's first start and last
        end, whether its intervals go forward, whether its times are finite. An unordered
        thread's extent is taken here, from every interval, as the constructor takes it."""
        iv = cls.__new__(cls)
        iv.starts, iv.ends, iv.offsets, iv.first, iv.last = starts, ends, offsets, first, last
        iv.ordered = ordered.view(bool)
        for i in np.flatnonzero(~iv.ordered).tolist():
            iv.first[i] = starts[offsets[i]:offsets[i + 1]].min()
            iv.last[i] = ends[offsets[i]:offsets[i + 1]].max()
        iv._totals = {}
        iv._batch = iv.ordered & finite.view(bool)
        return iv

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


    def clipped_sums(self, threads: np.ndarray, a, b) -> list[float]:
        """:meth:`clipped_sum` of each of ``threads`` (indices) in its window (``a``, ``b``:
        one window for all, or one per thread: every section of the CPU lens at once), bit for
        bit the same floats, without a Python call per thread where it can: the bisections of
        all at once (:func:`_bisect`); a window that misses a thread or overlaps one interval
        computed for all at once; the pairwise sums of threads of at most :data:`_BLOCK`
        intervals (one block of numpy's pairwise sum) by :func:`_block_sums` for all at once.
        The others (longer threads, threads :attr:`_batch` leaves out, windows that are not
        finite, or every one if :func:`_block_sums` is not numpy's sum here) by
        :meth:`clipped_sum` itself."""
        threads = np.asarray(threads, dtype=np.int64)
        if not len(threads):
            return []
        a = np.broadcast_to(np.asarray(a, dtype=np.float64), threads.shape)
        b = np.broadcast_to(np.asarray(b, dtype=np.float64), threads.shape)
        if NATIVE is not None and _native_sums_are_numpys():
            return self._native_sums(threads, a, b)
        out = np.zeros(len(threads))
        off = self.offsets[threads]
        n = self.offsets[threads + 1] - off
        finite = np.isfinite(a) & np.isfinite(b)
        lo = _bisect(self.ends, off, n, a, right=True) - off
        hi = _bisect(self.starts, off, n, b, right=False) - off
        batch = self._batch[threads] & (n > 0) & finite
        first = self.starts[np.minimum(off, max(len(self.starts) - 1, 0))] if len(self.starts) else np.zeros(len(off))
        last = self.ends[np.maximum(off + n - 1, 0)] if len(self.ends) else np.zeros(len(off))
        whole = batch & (lo == 0) & (hi == n) & (a <= first) & (last <= b)
        one = batch & (hi - lo == 1) & ~whole
        at = off[one] + lo[one]
        out[one] = 0.0 + np.clip(np.minimum(self.ends[at], b[one]) - np.maximum(self.starts[at], a[one]), 0.0, None)
        summed = batch & (hi > lo) & ~one  # a pairwise sum: the whole thread, or a stretch of it
        block = summed & (n <= _BLOCK) if _block_sums_are_numpys() else np.zeros(len(threads), dtype=bool)
        all_rows = np.flatnonzero(block)
        width = np.maximum(8, 1 << np.ceil(np.log2(np.maximum(n[all_rows], 1))).astype(np.int64))
        for wide in np.unique(width).tolist():  # rows as wide as their thread (most are short)
            rows = all_rows[width == wide]
            cols = np.arange(wide)
            idx = off[rows, None] + cols
            inside = cols < n[rows, None]
            idx = np.where(inside, idx, 0)
            s, e = self.starts[idx], self.ends[idx]
            w = whole[rows, None]
            # the whole thread: its cached total, ends - starts; a stretch: clipped values there, 0 elsewhere
            vals = np.where(w, e - s, np.clip(np.minimum(e, b[rows, None]) - np.maximum(s, a[rows, None]), 0.0, None))
            keep = inside & (w | ((cols >= lo[rows, None]) & (cols < hi[rows, None])))
            out[rows] = 0.0 + _block_sums(np.where(keep, vals, 0.0), n[rows])
        vals_out = out.tolist()
        for k in np.flatnonzero((n > 0) & ~batch | (summed & ~block)).tolist():
            vals_out[k] = self.clipped_sum(int(threads[k]), float(a[k]), float(b[k]))
        return vals_out


    def _native_sums(self, threads: np.ndarray, a: np.ndarray, b: np.ndarray) -> list[float]:
        """:meth:`clipped_sums` by the C part (``_metricsc.clipped_sums``: the same bisections
        and numpy's pairwise sum over each thread's clipped values, one call for all): the
        threads :attr:`_batch` leaves out, or windows that are not finite, by :meth:`clipped_sum`."""
        off = self.offsets[threads]
        n = self.offsets[threads + 1] - off
        fast = self._batch[threads] & np.isfinite(a) & np.isfinite(b)
        out = np.zeros(len(threads))
        starts, ends = np.ascontiguousarray(self.starts, np.float64), np.ascontiguousarray(self.ends, np.float64)
        if fast.all():
            NATIVE.clipped_sums(starts, ends, self.offsets, threads, np.ascontiguousarray(a), np.ascontiguousarray(b), out)
            return out.tolist()
        rows = np.flatnonzero(fast)
        got = np.zeros(len(rows))
        NATIVE.clipped_sums(starts, ends, self.offsets, threads[rows], a[rows], b[rows], got)
        out[rows] = got
        vals_out = out.tolist()
        for k in np.flatnonzero(~fast & (n > 0)).tolist():
            vals_out[k] = self.clipped_sum(int(threads[k]), float(a[k]), float(b[k]))
        return vals_out


#: The C part (nodes/perf/metrics/_metricsc.c), or None: the numpy code above.
NATIVE = compiled("nodes.perf.metrics._metricsc")


def _block_sums(m: np.ndarray, n: np.ndarray) -> np.ndarray:
    """numpy's ``np.add.reduce`` of each row's first ``n[r]`` values (1 ≤ n ≤ the rows' width,
    a multiple of 8 up to :data:`_BLOCK`), for all rows at once: fewer than 8 values added one after another, more in eight
    interleaved partial sums over the largest multiple of 8, combined pairwise, then the rest
    one after another (``pairwise_sum`` in numpy's ``loops_utils.h.src``). A row's values past
    ``n[r]`` are never added. :func:`_block_sums_are_numpys` checks it against numpy itself."""
    wide = m.shape[1]  # a multiple of 8, at most _BLOCK; every n[r] <= wide
    r = np.arange(len(n))
    seq = np.zeros(len(n))
    for j in range(7):
        seq = np.where(j < n, seq + m[:, j], seq)
    acc = m[:, :8].copy()
    full = n - n % 8
    for i in range(8, wide, 8):
        acc = np.where((i < full)[:, None], acc + m[:, i:i + 8], acc)
    tot = ((acc[:, 0] + acc[:, 1]) + (acc[:, 2] + acc[:, 3])) + ((acc[:, 4] + acc[:, 5]) + (acc[:, 6] + acc[:, 7]))
    for k in range(7):
        c = full + k
        tot = np.where(c < n, tot + m[r, np.minimum(c, wide - 1)], tot)
    return np.where(n < 8, seq, tot)


_BLOCK_SUMS_OK: list[bool] = []


def _block_sums_are_numpys() -> bool:
    """Whether :func:`_block_sums` gives numpy's own sums here (checked once, on values of many
    magnitudes whose sums round, at every length up to a block); when not — another numpy
    summing another way — every sum is numpy's own, one call per thread."""
    if not _BLOCK_SUMS_OK:
        lengths = np.repeat(np.arange(1, _BLOCK + 1), 4)
        # two low-discrepancy sequences (fractions of k·φ and k·√2) for an exponential draw and
        # a magnitude: fixed values without importing numpy.random (~30 ms) into the command
        k = np.arange(1, len(lengths) * _BLOCK + 1, dtype=np.float64).reshape(len(lengths), _BLOCK)
        u, v = (k * 0.6180339887498949) % 1.0, (k * 0.4142135623730951) % 1.0
        m = -np.log1p(-u) * 10.0 ** (v * 12.0 - 6.0)
        m[np.arange(_BLOCK)[None, :] >= lengths[:, None]] = 0.0
        want = np.array([np.add.reduce(row[:k]) for row, k in zip(m, lengths.tolist())])
        ok = True
        for wide in (8, 16, 32, 64, _BLOCK):  # each width clipped_sums uses
            fit = lengths <= wide
            ok &= bool(np.array_equal(_block_sums(np.ascontiguousarray(m[fit, :wide]), lengths[fit]), want[fit]))
        _BLOCK_SUMS_OK.append(ok)
    return _BLOCK_SUMS_OK[0]


_NATIVE_SUMS_OK: list[bool] = []
_CHECK_ROWS: list[tuple[np.ndarray, np.ndarray]] = []


def sum_check_rows() -> tuple[np.ndarray, np.ndarray]:
    """(values, offsets): rows of values of many magnitudes whose sums round (two low-discrepancy
    sequences, as :func:`_block_sums_are_numpys` draws them), of every length to past 16, around
    a block of 128, and split once, twice and three times: what the C part's sums are checked
    against numpy's on, once per process (here and hotspots._native_reduceat_is_numpys)."""
    if not _CHECK_ROWS:
        lengths = np.array(list(range(1, 24)) + list(range(_BLOCK - 8, _BLOCK + 9)) + [248, 255, 256, 257, 263, 385, 511,
                                                                                       512, 1000, 1024], dtype=np.int64)
        k = np.arange(1, int(lengths.sum()) + 1, dtype=np.float64)
        u, v = (k * 0.6180339887498949) % 1.0, (k * 0.4142135623730951) % 1.0
        offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        _CHECK_ROWS.append((-np.log1p(-u) * 10.0 ** (v * 12.0 - 6.0), offsets))
    return _CHECK_ROWS[0]


def _native_sums_are_numpys() -> bool:
    """Whether the C part's pairwise sum is numpy's own here (checked once on
    :func:`sum_check_rows`, as :func:`_block_sums_are_numpys` checks the numpy one); when not,
    the numpy code."""
    if not _NATIVE_SUMS_OK:
        values, offsets = sum_check_rows()
        got = np.zeros(len(offsets) - 1)
        NATIVE.pairwise_sums(values, offsets, got)
        want = np.array([np.add.reduce(values[offsets[i]:offsets[i + 1]]) for i in range(len(got))])
        _NATIVE_SUMS_OK.append(bool(np.array_equal(0.0 + got, 0.0 + want)))
    return _NATIVE_SUMS_OK[0]


def _bisect(values: np.ndarray, off: np.ndarray, n: np.ndarray, x: np.ndarray, right: bool) -> np.ndarray:
    """``off[k] + values[off[k]:off[k] + n[k]].searchsorted(x[k], side)`` for every ``k`` at
    once (each stretch sorted): one bisection step for all of them at a time, no copy of the
    columns. Only meaningful where the stretch is sorted and ``x`` is not NaN."""
    lo, hi = off.copy(), off + n
    last = max(len(values) - 1, 0)
    for _ in range(int(n.max()).bit_length() if len(n) else 0):
        active = lo < hi
        if not active.any():
            break
        mid = (lo + hi) // 2
        v = values[np.minimum(mid, last)] if len(values) else np.zeros(len(mid))
        after = (v <= x) if right else (v < x)  # the answer lies after mid
        lo = np.where(active & after, mid + 1, lo)
        hi = np.where(active & ~after, mid, hi)
    return lo


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
