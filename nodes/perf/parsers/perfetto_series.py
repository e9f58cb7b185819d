"""Capped point series as a Perfetto reader collects them (per CPU frequency and idle,
perfetto_cpu.py; per process and thread memory counters, perfetto_memory.py): flat columns
in arrival order — series number, time (int ns), value — instead of a list of (ts, value)
tuples per series, ~110 bytes a point, which at 1 GB held ~1.1 GB (issue 25).

Each series keeps its first ``cap`` points, as a list that appends while ``len < cap`` did;
series are numbered in the order of their first point, the order a dict of them kept.
:meth:`SeriesTable.sorted` gives each series sorted by (time, value), what ``sorted`` of its
tuples gave. A time beyond int64 (a corrupt trace read event by event) turns the columns
into lists and the sort into that ``sorted``.
"""

from __future__ import annotations

from array import array

import numpy as np

_DTYPE = {"I": np.uint32, "d": np.float64}


class SeriesTable:
    def __init__(self, value_code: str) -> None:
        #: key → series number, in order of the series' first point
        self.ids: dict = {}
        #: points kept per series (a list: indexed per point, faster than an array's boxing)
        self.count: list[int] = []
        self.sid = array("i")  # int32: 4 bytes a point
        self.ts = array("q")
        self.value = array(value_code)
        self._code = value_code
        self._dtype = _DTYPE[value_code]
        self.wide = False  # a time beyond int64: the columns are lists

    def __len__(self) -> int:
        return len(self.ids)

    def series_id(self, key) -> int:
        """The number of series ``key``, a new (empty) series when it has none."""
        i = self.ids.get(key)
        if i is None:
            i = self.ids[key] = len(self.count)
            self.count.append(0)
        return i

    def add(self, key, ts: int, value, cap: int) -> bool:
        """One point of series ``key``; False (and not kept) when the series has ``cap``."""
        i = self.series_id(key)
        if self.count[i] >= cap:
            return False
        try:
            self.ts.append(ts)
        except OverflowError:
            self._widen()
            self.ts.append(ts)
        self.sid.append(i)
        self.value.append(value)
        self.count[i] += 1
        return True

    def extend_at(self, ts: int, sids: list[int], values: list) -> None:
        """Points at one time ``ts``, of series ``sids`` (numbers, counted kept already)."""
        if not sids:
            return
        try:
            self.ts.extend([ts] * len(sids))
        except OverflowError:
            self._widen()
            self.ts.extend([ts] * len(sids))
        self.sid.extend(sids)
        self.value.extend(values)

    def _widen(self) -> None:
        self.sid, self.ts, self.value = list(self.sid), list(self.ts), list(self.value)
        self.wide = True

    def extend_runs(self, cap: int, keys: list, first, lo, hi, ts, value) -> int:
        """Points as they would be added one by one: ``ts[lo[i]:hi[i]]`` (with ``value``, in
        arrival order; the runs cover ``ts``) to series ``keys[i]``, new series numbered in
        order of their first point's arrival (``first``). Returns how many were dropped."""
        lens = hi - lo
        take = np.zeros(len(keys), np.int64)
        sids = np.zeros(len(keys), np.int64)
        lo_l, hi_l = lo.tolist(), hi.tolist()
        count = self.count
        dropped = 0
        for j in np.argsort(first, kind="stable").tolist():
            i = self.series_id(keys[j])
            n = hi_l[j] - lo_l[j]
            room = cap - count[i]
            room = room if room > 0 else 0
            if n > room:
                dropped += n - room
                n = room
            count[i] += n
            take[j], sids[j] = n, i
        if dropped:
            keep = (np.arange(len(ts)) - np.repeat(lo, lens)) < np.repeat(take, lens)
            sid, ts, value = np.repeat(sids, lens)[keep], ts[keep], value[keep]
        else:
            sid = np.repeat(sids, lens)
        self._extend(sid, ts, value)
        return dropped

    def _extend(self, sid, ts, value) -> None:
        if self.wide:
            self.sid += sid.tolist()
            self.ts += ts.tolist()
            self.value += value.astype(self._dtype).tolist()
            return
        self.sid.frombytes(np.ascontiguousarray(sid, np.int32).tobytes())
        self.ts.frombytes(np.ascontiguousarray(ts, np.int64).tobytes())
        self.value.frombytes(np.ascontiguousarray(value, self._dtype).tobytes())

    def columns(self):
        """(series number, ts, value) of every point, numpy, in arrival order (None when wide)."""
        if self.wide:
            return None
        return (np.frombuffer(self.sid, np.int32), np.frombuffer(self.ts, np.int64),
                np.frombuffer(self.value, self._dtype))

    def items(self, keep=None):
        """(key, [(ts, value)] in arrival order) per series: the dict of lists it replaced; only
        the series whose ``keep(key)`` is true when ``keep`` is given (only their points are
        boxed: most of the atrace counters a reader holds are of processes no one asks about)."""
        ids = self.ids if keep is None else {k: i for k, i in self.ids.items() if keep(k)}
        per: dict[int, list] = {i: [] for i in ids.values()}
        sid, ts, value = self.sid, self.ts, self.value
        if keep is not None and not self.wide and len(per) < len(self.count):
            at = np.flatnonzero(np.isin(np.frombuffer(sid, np.int32), np.fromiter(per, np.int32, len(per))))
            sid = np.frombuffer(sid, np.int32)[at].tolist()
            ts, value = np.frombuffer(ts, np.int64)[at].tolist(), np.frombuffer(value, self._dtype)[at].tolist()
        for i, t, v in zip(sid, ts, value):
            pts = per.get(i)
            if pts is not None:
                pts.append((t, v))
        return [(k, per[i]) for k, i in ids.items()]

    def subset(self, keep) -> SeriesTable:
        """A table of the series whose ``keep(key)`` is true, with their points, numbered in
        the order they have here."""
        out = SeriesTable(self._code)
        new = [-1] * len(self.count)
        for k, i in self.ids.items():
            if keep(k):
                new[i] = out.ids[k] = len(out.count)
                out.count.append(self.count[i])
        if self.wide:
            out._widen()
            for i, t, v in zip(self.sid, self.ts, self.value):
                if new[i] >= 0:
                    out.sid.append(new[i])
                    out.ts.append(t)
                    out.value.append(v)
            return out
        sid, ts, value = self.columns()
        to = np.array(new, np.int64)[sid]
        at = to >= 0
        out._extend(to[at], ts[at], value[at])
        return out

    def points(self) -> int:
        """How many points are kept, of all series."""
        return len(self.ts)


def sort_series(n: int, sid, ts, value):
    """Points of series ``0..n-1`` (int64 ts; value float64 without NaN, or integers) each sorted
    by (ts, value), as ``sorted`` sorts its (ts, value) tuples: (bounds, ts, value), series
    ``i`` being rows ``bounds[i]:bounds[i + 1]``. The sort key is let go before the columns
    are gathered (8 bytes a point less at the peak: the memory lens's 4 M points at 1 GB)."""
    order = None
    if len(ts):
        t0 = int(ts.min())
        span = int(ts.max()) - t0 + 1
        if n * span < 1 << 63:  # (series, ts) as one int64 key: one quicksort, not a lexsort
            key = sid.astype(np.int64)  # sid * span + (ts - t0), in place (int64 wraps alike on the way)
            key *= span
            key += ts
            key -= t0
            order = np.argsort(key)
            key = key[order]  # sorted: equal neighbours are equal times in a series
            ties = bool((key[1:] == key[:-1]).any())
            del key
            if ties:  # the values order them
                order = np.lexsort((value, sid.astype(np.int64) * span + (ts - t0)))
    if order is None:
        order = np.lexsort((value, ts, sid))
    bounds = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(sid, minlength=n), out=bounds[1:])
    return bounds, ts[order], value[order]


def sort_series_python(n: int, sid: list, ts: list, value: list):
    """:func:`sort_series` of Python values (a time beyond int64, a NaN value), with
    ``sorted``: (bounds, [ts], [value])."""
    per: list[list] = [[] for _ in range(n)]
    for i, t, v in zip(sid, ts, value):
        per[i].append((t, v))
    bounds, t_out, v_out = [0], [], []
    for pts in per:
        for t, v in sorted(pts):
            t_out.append(t)
            v_out.append(v)
        bounds.append(len(t_out))
    return bounds, t_out, v_out
