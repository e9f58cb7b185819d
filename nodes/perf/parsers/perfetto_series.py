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


class Points:
    """One series' points as two columns (``ts`` int64 ns, ``value``), read as the list of
    ``(ts, value)`` tuples it stands for (``len``, slices, iteration: the tuples made as they are
    read), for a reader that would rather take the columns (perfetto_memory.py's merge)."""

    __slots__ = ("ts", "value")

    def __init__(self, ts: np.ndarray, value: np.ndarray) -> None:
        self.ts, self.value = ts, value

    def __len__(self) -> int:
        return len(self.ts)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return Points(self.ts[i], self.value[i])
        return (int(self.ts[i]), self.value[i].item())

    def __iter__(self):
        return zip(self.ts.tolist(), self.value.tolist())

    def __eq__(self, other) -> bool:
        return list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(list(self))


class OddKey(TypeError):
    """A key :class:`PairKeys` cannot hold (not a pair of an int in range and a str)."""


#: A :class:`PairKeys` key's pid and name code as one int64: pid * _NAME_SPAN + code.
_NAME_SPAN = 1 << 16
_PID_LIMIT = 1 << 46


class PairKeys:
    """The keys of a :class:`SeriesTable` of (pid, name) series — key → series number, numbered
    0, 1, … in the order the keys came, read as the dict it stands for (``get``, ``[]``,
    ``in``, ``len``, iteration in order, ``items``, ``values``) — held as columns: each key's
    pid (int64) and name code (int32, the names in the order they came), looked up through
    sorted runs of the keys as one int64 each, merged as they grow. ~24 bytes a key instead of a
    tuple, its pid, its number and a dict entry (~145 bytes: the 1 GB benchmark trace's ~570 k
    process_stats series, 83 MB held from the read to the end of the memory lens's finish).

    Keys are set one at a time (``ids[key] = len(ids)``) or many at once, by columns
    (:meth:`numbers` then :meth:`add_many`: process_stats rows a snapshot at a time); a key
    that is not an (int, str) pair raises :class:`OddKey` (its table turns into the dict)."""

    __slots__ = ("pid", "code", "names", "_code_of", "_runs", "_pending")

    def __init__(self) -> None:
        self.pid = array("q")
        self.code = array("i")
        self.names: list[str] = []
        self._code_of: dict[str, int] = {}
        self._runs: list[tuple[np.ndarray, np.ndarray]] = []  # (sorted joined keys, their numbers)
        self._pending: dict[int, int] = {}  # joined key → number, set one at a time, not yet in a run

    def __len__(self) -> int:
        return len(self.pid)

    # --- keys ------------------------------------------------------------------------------
    def name_code(self, name: str, create: bool = False) -> int:
        """The code of ``name`` (-1 when it has none and ``create`` is false)."""
        c = self._code_of.get(name)
        if c is None:
            if not create:
                return -1
            if len(self.names) >= _NAME_SPAN:
                raise OddKey("too many names")
            c = self._code_of[name] = len(self.names)
            self.names.append(name)
        return c

    def _joined(self, key, create: bool = False) -> int | None:
        """``key`` as one int (None when no key of this table can equal it); :class:`OddKey`
        with ``create`` when it cannot be held."""
        hash(key)  # an unhashable key fails as a dict's look-up does
        if type(key) is not tuple or len(key) != 2:
            if create:
                raise OddKey(key)
            return None
        pid, name = key
        if type(pid) is not int or type(name) is not str:
            if create:
                raise OddKey(key)
            try:  # equal keys find each other, as in a dict (1.0 is 1; a str subclass its str)
                q = int(pid)
                if q != pid or not isinstance(name, str) or name != str(name):
                    return None
                pid, name = q, str(name)
            except (TypeError, ValueError, OverflowError):
                return None
        if not -_PID_LIMIT <= pid < _PID_LIMIT:
            if create:
                raise OddKey(key)
            return None
        c = self.name_code(name, create)
        return None if c < 0 else pid * _NAME_SPAN + c

    def get(self, key, default=None):
        j = self._joined(key)
        if j is None:
            return default
        i = self._pending.get(j)
        if i is not None:
            return i
        for keys, nums in self._runs:
            at = int(keys.searchsorted(j))
            if at < len(keys) and keys[at] == j:
                return int(nums[at])
        return default

    def __getitem__(self, key) -> int:
        i = self.get(key)
        if i is None:
            raise KeyError(key)
        return i

    def __contains__(self, key) -> bool:
        return self.get(key) is not None

    def __setitem__(self, key, number: int) -> None:
        """A new key, numbered next (``number == len(self)``: a table numbers its series so)."""
        if number != len(self) or self.get(key) is not None:
            raise OddKey(key)  # not how a SeriesTable numbers its series: the dict does it
        j = self._joined(key, create=True)
        pid, name = key
        self.pid.append(pid)
        self.code.append(self._code_of[name])
        self._pending[j] = number
        if len(self._pending) >= _PENDING:
            self._flush()

    def _flush(self) -> None:
        if self._pending:
            j = np.fromiter(self._pending, np.int64, len(self._pending))
            n = np.fromiter(self._pending.values(), np.int32, len(self._pending))
            self._pending = {}
            self._add_run(j, n)

    def _add_run(self, joined: np.ndarray, numbers: np.ndarray) -> None:
        order = np.argsort(joined)
        self._runs.append((joined[order], numbers[order]))
        runs = self._runs
        while len(runs) > 1 and len(runs[-2][0]) < 4 * len(runs[-1][0]):  # sizes fall 4× a run: few runs
            (a, an), (b, bn) = runs[-2], runs.pop()
            j = np.concatenate((a, b))
            order = np.argsort(j, kind="stable")
            runs[-1] = (j[order], np.concatenate((an, bn))[order])

    def numbers(self, pid: np.ndarray, code: np.ndarray) -> np.ndarray:
        """The number of each key (``pid`` int64 within ±2^46, ``code`` a name code or -1), -1
        where there is none."""
        self._flush()
        out = np.full(len(pid), -1, np.int64)
        ok = code >= 0
        j = pid * _NAME_SPAN + np.where(ok, code, 0)
        for keys, nums in self._runs:
            at = np.minimum(keys.searchsorted(j), len(keys) - 1)
            hit = (keys[at] == j) & ok
            out[hit] = nums[at[hit]]
        return out

    def add_many(self, pid: np.ndarray, code: np.ndarray) -> None:
        """New keys (distinct, none held yet; name codes given), numbered next in order."""
        if not len(pid):
            return
        self._flush()
        first = len(self)
        self.pid.frombytes(np.ascontiguousarray(pid, np.int64).tobytes())
        self.code.frombytes(np.ascontiguousarray(code, np.int32).tobytes())
        self._add_run(pid * _NAME_SPAN + code, np.arange(first, first + len(pid), dtype=np.int32))

    def columns(self) -> tuple[np.ndarray, np.ndarray, list[str]]:
        """(pid int64, name code int32, names): key ``i`` is ``(pid[i], names[code[i]])``."""
        return np.frombuffer(self.pid, np.int64), np.frombuffer(self.code, np.int32), self.names

    # --- the dict's reading ----------------------------------------------------------------
    def __iter__(self):
        names = self.names
        for lo in range(0, len(self), _ITER_BLOCK):  # no list of every key at once
            yield from zip(self.pid[lo:lo + _ITER_BLOCK].tolist(),
                           map(names.__getitem__, self.code[lo:lo + _ITER_BLOCK].tolist()))

    def keys(self):
        return iter(self)

    def values(self):
        return range(len(self))

    def items(self):
        return zip(self, range(len(self)))

    def as_dict(self) -> dict:
        return dict(self.items())

    def __eq__(self, other) -> bool:
        if isinstance(other, PairKeys):
            other = other.as_dict()
        return self.as_dict() == other

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"PairKeys({self.as_dict()!r})"


def _fits_pairs(pid: np.ndarray, names: int) -> bool:
    """Whether keys of these pids and ``names`` distinct names fit :class:`PairKeys`' joined int."""
    return names < _NAME_SPAN and (not len(pid) or (int(pid.min()) >= -_PID_LIMIT and int(pid.max()) < _PID_LIMIT))


#: Keys set one at a time held in :class:`PairKeys`' dict before they join a sorted run.
_PENDING = 4096
_ITER_BLOCK = 1 << 16


class SeriesTable:
    def __init__(self, value_code: str, pairs: bool = False) -> None:
        #: key → series number, in order of the series' first point (with ``pairs``, the keys
        #: held as columns, :class:`PairKeys`, until one is not an (int, str) pair)
        self.ids: dict | PairKeys = PairKeys() if pairs else {}
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
            i = len(self.count)
            try:
                self.ids[key] = i
            except OddKey:
                self.ids = self.ids.as_dict()
                self.ids[key] = i
            self.count.append(0)
        return i

    def series_ids(self, keys: list) -> list[int]:
        """``[self.series_id(k) for k in keys]``; with :class:`PairKeys`, looked up and made as
        columns (new series numbered in the order their keys first come, as one at a time)."""
        if type(self.ids) is PairKeys and keys:
            pids, names = [k[0] if type(k) is tuple and len(k) == 2 else None for k in keys], [
                k[1] if type(k) is tuple and len(k) == 2 else None for k in keys]
            if set(map(type, pids)) == {int} and set(map(type, names)) == {str}:
                try:
                    pid = np.array(pids, np.int64)
                except OverflowError:
                    pid = None
                local_names = list(dict.fromkeys(names))
                if pid is not None and _fits_pairs(pid, len(local_names)):
                    local = np.array(list(map({n: i for i, n in enumerate(local_names)}.__getitem__, names)), np.int64)
                    return self.pair_series(pid, local, local_names).tolist()
        return [self.series_id(k) for k in keys]

    def pair_series(self, pid: np.ndarray, local: np.ndarray, local_names) -> np.ndarray:
        """:meth:`series_ids` of the keys ``(pid[i], local_names[local[i]])`` (int64; the
        caller checked :func:`_fits_pairs`), ``self.ids`` a :class:`PairKeys`: the keys held
        found at once, the others made in the order they first come."""
        ids: PairKeys = self.ids  # type: ignore[assignment]
        lut = np.array([ids.name_code(n) for n in local_names], np.int64)
        nums = ids.numbers(pid, lut[local])
        miss = np.flatnonzero(nums < 0)
        if len(miss):
            mp, ml = pid[miss], local[miss]
            _u, first, inv = np.unique(mp * _NAME_SPAN + ml, return_index=True, return_inverse=True)
            order = np.argsort(first, kind="stable")  # the new keys by first appearance
            new_pid, new_local = mp[first[order]], ml[first[order]]
            _v, at = np.unique(new_local, return_index=True)
            for li in new_local[np.sort(at)].tolist():  # names new to the table, in that order
                if lut[li] < 0:
                    lut[li] = ids.name_code(local_names[li], create=True)
            base = len(ids)
            ids.add_many(new_pid, lut[new_local])
            self.count.extend([0] * len(new_pid))
            rank = np.empty(len(order), np.int64)
            rank[order] = np.arange(len(order))
            nums[miss] = base + rank[inv.reshape(-1)]
        return nums

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

    def point_columns(self, keep) -> dict | None:
        """:meth:`items` with ``keep`` as a dict, each series' points as :class:`Points`
        (columns, no tuple per point); None when the columns are wide (times beyond int64)."""
        if self.wide:
            return None
        ids = {k: i for k, i in self.ids.items() if keep(k)}
        sid, ts, value = self.columns()
        at = np.flatnonzero(np.isin(sid, np.fromiter(ids.values(), np.int32, len(ids))))
        at = at[np.argsort(sid[at], kind="stable")]  # series by series, each in arrival order
        s = sid[at]
        nums = np.fromiter(ids.values(), np.int64, len(ids))
        lo = np.searchsorted(s, nums, side="left").tolist()
        hi = np.searchsorted(s, nums, side="right").tolist()
        return {k: Points(ts[at[a:b]], value[at[a:b]]) for k, a, b in zip(ids, lo, hi)}

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

    def subset_names(self, names) -> SeriesTable:
        """:meth:`subset` of the series whose key's name is one of ``names``; with
        :class:`PairKeys`, picked and renumbered as columns (no tuple made of each key)."""
        ids = self.ids
        if type(ids) is not PairKeys or self.wide:
            return self.subset(lambda key: key[1] in names)
        pid, code, all_names = ids.columns()
        wanted = np.array([c for c, n in enumerate(all_names) if n in names], np.int32)
        sel = np.flatnonzero(np.isin(code, wanted))
        out = SeriesTable(self._code, pairs=True)
        sub = code[sel]
        lut = np.full(len(all_names), -1, np.int32)
        _u, at = np.unique(sub, return_index=True)
        for c in sub[np.sort(at)].tolist():  # names coded in the order their first key comes
            lut[c] = out.ids.name_code(all_names[c], create=True)
        out.ids.add_many(pid[sel], lut[sub])
        out.count = np.array(self.count, np.int64)[sel].tolist() if len(sel) else []
        new = np.full(len(self.count), -1, np.int64)
        new[sel] = np.arange(len(sel))
        s_sid, s_ts, s_value = self.columns()
        to = new[s_sid]
        at = to >= 0
        out._extend(to[at], s_ts[at], s_value[at])
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
