"""The typed performance data every reader produces, and the analysis result every consumer reads.

Two layers, on purpose:

* :class:`PerfData` is what a *reader* fills: a columnar, interned store (slices as parallel
  ``array`` columns per thread, samples as aggregated stacks) so a trace of hundreds of MB
  stays within a bounded, small multiple of its event count in memory. Every format — Trace
  Event JSON, atrace text, speedscope, pstats, Perfetto protobuf, gfxinfo, ``am start -W``,
  ``-X importtime``, ``perf stat``, psutil series — becomes this, so the metrics, the
  attributor and the reporter never see a format.
* :class:`AnalysisResult` is what the *metrics* compute from it: a ``msgspec.Struct``
  (:class:`nodes.perf.result.Result`: no pydantic on the ``perfscout analyze`` path), small and
  JSON-able, stored in the graph state as ``model_dump(mode="json")`` and consumed by the
  attributor and the reporter.

Units: timestamps and durations in a ``PerfData`` are microseconds (the Trace Event Format's
unit), and in an ``AnalysisResult`` milliseconds, as people read them — unless the field's name
says another unit (``StartupRun.total_ms`` on the reader side; ``ImportEntry.self_us`` /
``cumulative_us`` as ``-X importtime`` prints them, ``energy_uws``, ``power_uw``, ``*_mhz``,
``*_mb``, ``*_mah``) or a ``unit`` field does (``MemorySeries``, ``CounterSummary``).
``tests/test_perf_model_api.py`` checks every float field of the result types for it.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import ItemsView, Mapping, Sequence as _Sequence, ValuesView
from dataclasses import dataclass, field
from enum import Enum
from typing import Iterable, Literal, Sequence

import msgspec

from nodes.perf.result import Result

# ======================================================================================
# Reader side: PerfData
# ======================================================================================

#: At most this many instant events are kept per trace, and points per counter series, by
#: every reader (bounded memory).
MAX_INSTANTS = 50_000
MAX_COUNTER_POINTS = 20_000
#: At most this many slices still open at the end are kept by name (``PerfData.open_slices``).
MAX_OPEN_SLICES = 1000
#: A frame's budget when the data gives none: one 60 Hz vsync.
DEFAULT_BUDGET_MS = 1000.0 / 60.0
#: Thread names that make a thread its process's main thread where pid == tid does not say it:
#: Chrome's browser, renderer and GPU main threads, Python's ``MainThread``, UI toolkits'.
MAIN_THREAD_NAMES = ("CrRendererMain", "CrBrowserMain", "CrGpuMain", "MainThread", "main", "ui", "UI Thread")


class CapacityReached(Exception):
    """A ``PerfData`` holds ``max_events`` items: the reader stops and returns what it has.

    Raised by the ``add_*`` methods (and :meth:`PerfData.check_capacity`) once, after the data
    was marked partial with a warning; ``nodes.perf.formats.load`` returns ``data`` as the
    result, and a reader that has its own finishing work catches it itself."""

    def __init__(self, data: "PerfData"):
        super().__init__(f"stopped at {data.max_events} events")
        self.data = data


@dataclass(slots=True)
class SliceColumns:
    """Complete slices of one thread, as parallel columns (24 bytes a slice)."""

    ts: array = field(default_factory=lambda: array("d"))
    dur: array = field(default_factory=lambda: array("d"))
    name: array = field(default_factory=lambda: array("l"))

    def __len__(self) -> int:
        return len(self.ts)

    def add(self, ts_us: float, dur_us: float, name_id: int) -> None:
        """One slice (its name interned: :meth:`StringTable.intern`)."""
        self.ts.append(ts_us)
        self.dur.append(dur_us)
        self.name.append(name_id)

    def appenders(self):
        """The three columns' ``append``, for a reader's hot loop (one row: ts, dur, name id;
        a row left half-appended is dropped with :meth:`trim`)."""
        return self.ts.append, self.dur.append, self.name.append

    def trim(self) -> None:
        """Drop a row a hot loop appended only partly (a value the column refused)."""
        n = min(len(self.ts), len(self.dur), len(self.name))
        for col in (self.ts, self.dur, self.name):
            del col[n:]

    def clamp_durations(self) -> int:
        """Durations that are negative or not finite become 0 (a hot loop appends them as
        read); returns how many there were."""
        import numpy as np

        d = np.frombuffer(self.dur, dtype=np.float64)
        bad = ~np.isfinite(d) | (d < 0)
        n = int(bad.sum())
        if n:
            d[bad] = 0.0
        del d  # release the buffer view: the column may grow again
        return n

    def extend_raw(self, ts: bytes, dur: bytes, name: bytes) -> None:
        """Rows from machine-order buffers (float64, float64, the name column's int type)."""
        self.ts.frombytes(ts)
        self.dur.frombytes(dur)
        self.name.frombytes(name)


class PointSeries:
    """One series of (ts µs, value) points as two numpy columns, read as the list of tuples it
    replaced: ``len``, iteration, indexing (an int gives a tuple, a slice a list), ``==`` with
    a list and ``repr`` as that list's (tests/helpers/differential.py hashes the repr). Kept as
    columns because a 1 GB trace holds millions of them (issue 25: ~110 bytes a tuple point);
    the metrics read ``ts`` and ``value`` (nodes/perf/metrics/cpu.py, memory.py)."""

    __slots__ = ("ts", "value")

    def __init__(self, ts, value) -> None:
        self.ts = ts
        self.value = value

    @classmethod
    def of(cls, points, value_dtype: str = "float64") -> PointSeries:
        """From (ts, value) pairs (a list of tuples, as a reader used to hand them)."""
        import numpy as np

        if isinstance(points, PointSeries):
            return points
        pts = list(points)
        return cls(np.array([t for t, _ in pts], dtype=np.float64),
                   np.array([v for _, v in pts], dtype=value_dtype))

    def __len__(self) -> int:
        return len(self.ts)

    def __iter__(self):
        return zip(self.ts.tolist(), self.value.tolist())

    def __getitem__(self, i):
        if isinstance(i, slice):
            return list(zip(self.ts[i].tolist(), self.value[i].tolist()))
        return self.ts[i].item(), self.value[i].item()

    def __eq__(self, other) -> bool:
        if isinstance(other, PointSeries | list | tuple):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(list(self))

    def __reduce__(self):
        return PointSeries, (self.ts, self.value)


class SeriesMap(Mapping):
    """(pid, counter name) → :class:`PointSeries`, every series' points in two shared float64
    columns (``ts`` µs, ``value``), series ``n`` being rows ``bounds[n]:bounds[n + 1]``; keys in
    the order a dict would keep them (a key set again keeps its place and takes the new points).
    ``PerfData.memory``: hundreds of thousands of short series at 1 GB (a process_stats snapshot
    per process), where a dict of lists of tuples took ~500 MB (issue 25).

    The keys of the first :meth:`add_columns` are kept as columns too when they are distinct
    ``(int, str)`` pairs — a pid column and a name code column, 12 bytes a series instead of a
    tuple, its pid and a dict entry (~180 bytes: ~100 MB for the 569 k series of the 1 GB
    benchmark trace) — and looked up by binary search; any other keys, or a second call, turn
    them into the dict (``_n``: key → series number) it reads as."""

    def __init__(self) -> None:
        import numpy as np

        self._n: dict | None = {}  # key → its series number; None while the keys are columns
        self._pid = self._code = self._by_key = None  # the keys as columns: pid, name code; sorted order
        self._names: list[str] = []
        self.lo = np.zeros(0, np.int64)
        self.hi = np.zeros(0, np.int64)
        self.ts = np.zeros(0, np.float64)
        self.value = np.zeros(0, np.float64)

    def add_columns(self, keys: Sequence, bounds, ts, value) -> None:
        """Series ``keys[i]`` = rows ``bounds[i]:bounds[i + 1]`` of ``ts`` / ``value`` (float64),
        set in turn as ``dict.update`` would."""
        import numpy as np

        bounds = np.asarray(bounds, dtype=np.int64)
        first, base = len(self.lo), len(self.ts)
        if base:
            self.ts = np.concatenate((self.ts, ts))
            self.value = np.concatenate((self.value, value))
        else:
            self.ts, self.value = np.asarray(ts, np.float64), np.asarray(value, np.float64)
        self.lo = np.concatenate((self.lo, bounds[:-1] + base))
        self.hi = np.concatenate((self.hi, bounds[1:] + base))
        if first == 0 and self._n is not None and not self._n and self._as_columns(keys):
            return
        n = self._keys()
        n.update(zip(keys, range(first, first + len(keys))))

    def add_key_columns(self, pid, code, names: Sequence[str], bounds, ts, value) -> None:
        """:meth:`add_columns` of the keys ``(pid[i], names[code[i]])``: int pids, name codes,
        the keys distinct and ``names`` in the order their first key comes (what
        :meth:`_as_columns` makes of such keys). Into an empty map the columns are kept as
        they are given; else the keys are made."""
        import numpy as np

        if len(pid) and not len(self.lo) and self._n is not None and not self._n:
            self.lo, self.hi = np.asarray(bounds, np.int64)[:-1].copy(), np.asarray(bounds, np.int64)[1:].copy()
            self.ts, self.value = np.asarray(ts, np.float64), np.asarray(value, np.float64)
            names = list(names)
            self._n, self._pid, self._names = None, np.array(pid, np.int64), names
            self._code = np.array(code, np.int32 if len(names) < 1 << 31 else np.int64)
            return
        self.add_columns(list(zip(np.asarray(pid).tolist(), map(list(names).__getitem__, np.asarray(code).tolist()))),
                         bounds, ts, value)

    def _as_columns(self, keys: Sequence) -> bool:
        """Keep ``keys`` (the first) as columns, when they are distinct (int, str) pairs."""
        import numpy as np

        if not len(keys) or set(map(type, keys)) != {tuple} or set(map(len, keys)) != {2}:
            return False
        pids, names = [k[0] for k in keys], [k[1] for k in keys]
        if set(map(type, pids)) != {int} or set(map(type, names)) != {str}:
            return False
        try:
            pid = np.array(pids, np.int64)
        except OverflowError:
            return False
        distinct = list(dict.fromkeys(names))
        code_of = dict(zip(distinct, range(len(distinct))))
        code = np.array(list(map(code_of.__getitem__, names)), np.int32 if len(distinct) < 1 << 31 else np.int64)
        by_key = np.lexsort((code, pid))
        p, c = pid[by_key], code[by_key]
        if len(p) > 1 and bool(((p[1:] == p[:-1]) & (c[1:] == c[:-1])).any()):
            return False  # a key twice: the dict keeps its place and the last series
        self._n, self._pid, self._code, self._names = None, pid, code, distinct
        return True

    def _keys(self) -> dict:
        """The dict of keys (made from the columns, the first time they are not enough)."""
        if self._n is None:
            self._n = dict(zip(self._key_list(), range(len(self._pid))))
            self._pid = self._code = self._by_key = None
            self._names = []
        return self._n

    def _key_list(self) -> list:
        return list(self._key_iter())

    def _key_iter(self):
        """The keys made one at a time (the metrics walk ~570 k of them once: no list of tuples)."""
        names = self._names
        return zip(self._pid.tolist(), map(names.__getitem__, self._code.tolist()))

    def _number(self, key) -> int:
        """The series number of ``key``, found as a dict finds it (equal keys: ``1.0`` is ``1``);
        KeyError when there is none, TypeError for an unhashable key."""
        if self._n is not None:
            return self._n[key]
        import numpy as np

        hash(key)
        if not isinstance(key, tuple) or len(key) != 2:
            raise KeyError(key)
        pid, name = key
        try:
            code = self._names.index(name)  # a few dozen names
            p = int(pid)
        except (ValueError, TypeError, OverflowError):
            raise KeyError(key) from None
        if p != pid or not -(1 << 63) <= p < 1 << 63:
            raise KeyError(key)
        if self._by_key is None:  # made at the first look-up: the metrics read by number
            order = np.lexsort((self._code, self._pid))
            self._by_key = (order, self._pid[order])
        order, pids = self._by_key
        lo, hi = int(np.searchsorted(pids, p, side="left")), int(np.searchsorted(pids, p, side="right"))
        at = np.flatnonzero(self._code[order[lo:hi]] == code)
        if not len(at):
            raise KeyError(key)
        return int(order[lo + int(at[0])])

    def add_points(self, series: Iterable[tuple[object, Sequence[tuple[float, float]]]]) -> None:
        """``self[key] = points`` for each ``(key, points)`` in turn (points: (ts µs, value))."""
        import numpy as np

        keys, ts, value, bounds = [], [], [], [0]
        for key, pts in series:
            keys.append(key)
            for t, v in pts:
                ts.append(t)
                value.append(v)
            bounds.append(len(ts))
        if keys:
            self.add_columns(keys, bounds, np.array(ts, np.float64), np.array(value, np.float64))

    def numbered(self):
        """(key, series number, points) of each series, in order: to group series without
        making a :class:`PointSeries` of each (``at`` makes one)."""
        lo, hi = self.lo, self.hi
        n = (hi - lo).tolist()
        if self._n is None:
            return ((k, i, n[i]) for i, k in enumerate(self._key_iter()))
        return ((k, i, n[i]) for k, i in self._n.items())

    def key_columns(self):
        """(pid int64 array, name code int array, names) when the keys are held as columns —
        series ``i``'s key is ``(pid[i], names[code[i]])`` — else None: for a reader of all
        series (the memory lens groups ~570 k at 1 GB) that would rather not make a tuple and
        a dict entry of each."""
        if self._n is not None:
            return None
        return self._pid, self._code, list(self._names)

    def at(self, i: int) -> PointSeries:
        a, b = int(self.lo[i]), int(self.hi[i])
        return PointSeries(self.ts[a:b], self.value[a:b])

    def __getitem__(self, key) -> PointSeries:
        return self.at(self._number(key))

    def __contains__(self, key) -> bool:
        try:
            self._number(key)
        except KeyError:
            return False
        return True

    def __iter__(self):
        return iter(self._n) if self._n is not None else self._key_iter()

    def __len__(self) -> int:
        return len(self._n) if self._n is not None else len(self._pid)

    def __repr__(self) -> str:
        return "{" + ", ".join(f"{k!r}: {self.at(i)!r}" for k, i, _n in self.numbered()) + "}"


class StringTable(list):
    """Interned names: the list maps an id to its string, :attr:`ids` a string to its id.

    Grows only through :meth:`intern`; a reader's hot loop may look a name up in ``ids``
    (``ids.get``) and intern only the names it has not seen."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: dict[str, int] = {}

    def intern(self, s: str) -> int:
        i = self.ids.get(s)
        if i is None:
            i = self.ids[s] = len(self)
            list.append(self, s)
        return i


class SliceStore(dict):
    """Slices as columns per track: (pid, tid) → :class:`SliceColumns` for thread slices,
    (pid, track name) → columns for async spans."""

    def columns(self, key: tuple) -> SliceColumns:
        """The columns of one track, created empty the first time."""
        cols = self.get(key)
        if cols is None:
            cols = self[key] = SliceColumns()
        return cols


class InstantStore(list):
    """Instant events: (ts µs, pid, tid, name), at most :data:`MAX_INSTANTS`."""

    def add(self, ts_us: float, pid: int, tid: int, name: str, keep: bool = False) -> None:
        """One instant; past the cap only one the metrics cannot do without (``keep``)."""
        if keep or len(self) < MAX_INSTANTS:
            self.append((ts_us, pid, tid, name))


class MarkStore(list):
    """Instants kept with their decoded args: (ts µs, pid, tid, name, args or None)."""

    def add(self, ts_us: float, pid: int, tid: int, name: str, args: dict | None) -> None:
        self.append((ts_us, pid, tid, name, args))


class CounterStore(dict):
    """Counter series: name → [(ts µs, value)], at most :data:`MAX_COUNTER_POINTS` points each."""

    def add(self, name: str, ts_us: float, value: float) -> None:
        pts = self.setdefault(name, [])
        if len(pts) < MAX_COUNTER_POINTS:
            pts.append((ts_us, float(value)))


class ReportedTotals(dict):
    """What a tool reported itself about the frames (gfxinfo's "Janky frames", percentiles,
    the frame timeline's frame counts): name → value."""

    def set(self, name: str, value: float | str) -> None:
        self[name] = value


class Notes(dict):
    """Free-form facts worth showing (device model, build, command line, event counts): name →
    text, shown as read and never an input of a metric (those are :class:`TraceFacts`)."""

    def note(self, name: str, value: str, replace: bool = True) -> None:
        """Show ``value`` under ``name``; with ``replace`` False, only when nothing is there yet."""
        if replace or name not in self:
            self[name] = value

    def note_all(self, values: dict[str, str]) -> None:
        self.update(values)


@dataclass
class PerfStatTarget:
    """What one ``perf stat`` run counted (``nodes/perf/parsers/perfstat.py``)."""

    #: "command", "pid", "tid" or "target" (system-wide, per CPU …), as perf's header says.
    kind: str
    what: str
    #: ``-r N``: the run repeated N times, None when not repeated.
    repeats: int | None = None


@dataclass
class TraceFacts:
    """The facts about the capture that metrics and findings read: typed, and set by the reader
    that knows them (None / empty when it did not say). Shown with the free-form notes under
    the names in :data:`FACT_NAMES` (:meth:`PerfData.shown_meta`)."""

    #: The Android SDK level of the device (Perfetto ``system_info``).
    android_sdk: int | None = None
    #: "sysname release machine" of the kernel (Perfetto ``system_info.utsname``).
    kernel: str | None = None
    #: Perfetto packets of the frame timeline, and sched_blocked_reason events read.
    frame_timeline_events: int | None = None
    sched_blocked_reasons: int | None = None
    #: cold / warm / hot as a startup collector recorded it (PerfScout JSON).
    startup_kind: str | None = None
    #: The process the data is about, when the tool named it (meminfo, gfxinfo, PerfScout JSON).
    pid: int | None = None
    package: str | None = None
    #: What each ``perf stat`` run of the file counted, in file order.
    perf_stat: list[PerfStatTarget] = field(default_factory=list)

    def __post_init__(self) -> None:
        #: field → how many notes there were when it was first set (where it is shown).
        object.__setattr__(self, "_set_at", {})
        object.__setattr__(self, "_notes", None)

    def __setattr__(self, name: str, value) -> None:
        object.__setattr__(self, name, value)
        set_at = self.__dict__.get("_set_at")
        if set_at is not None and name not in set_at:
            notes = self.__dict__.get("_notes")
            set_at[name] = len(notes) if notes is not None else 0

    def shown_items(self) -> list[tuple[str, str, str]]:
        """(field, name, text) of each fact given, under the names the analysis has always shown
        them by, in the order they were set."""
        out: list[tuple[str, str, str]] = []
        for name in self.__dict__["_set_at"]:
            v = getattr(self, name)
            if name in FACT_NAMES and v is not None:
                out.append((name, FACT_NAMES[name], str(v)))
            elif name == "perf_stat" and v:
                out.append((name, "runs", str(len(v))))
                for i, r in enumerate(v, 1):
                    prefix = f"run {i} " if len(v) > 1 else ""
                    out.append((name, prefix + r.kind, r.what))
                    if r.repeats:
                        out.append((name, prefix + "repeats", str(r.repeats)))
        return out

    def shown(self) -> dict[str, str]:
        """The facts as display text (:meth:`shown_items`)."""
        return {key: text for _f, key, text in self.shown_items()}


#: The name each scalar fact of :class:`TraceFacts` is shown by (``AnalysisResult.meta``).
FACT_NAMES = {
    "android_sdk": "android_sdk",
    "kernel": "kernel",
    "frame_timeline_events": "perfetto.frame_timeline_events",
    "sched_blocked_reasons": "perfetto.sched_blocked_reasons",
    "startup_kind": "startup kind",
    "pid": "pid",
    "package": "package",
}


def _one_copy(name):
    """A process or thread name as one string object per distinct name (``sys.intern``): the
    1 GB benchmark trace names 347 k processes with 505 names and 192 k threads with 311, each
    name read as a new string (~35 MB of copies held to the end)."""
    return sys.intern(name) if type(name) is str else name


class ThreadStates(Mapping):
    """(pid, tid) → {state: µs}, read as the dict of dicts :meth:`PerfData.add_thread_state`
    fills, held as columns: the keys in a list (the caller's tuples, which the threads dict
    shares) and the totals in one float64 column, ``len(states)`` a thread, -1.0 where a state
    has no total (a total kept is never negative). A thread's dict is made when it is read.
    What :meth:`PerfData.add_thread_state_totals` stores for a reader of every thread at once:
    the 1 GB benchmark trace's ~190 k threads held ~55 MB of dicts and floats to the end of
    the metrics, and making them fragmented the heap the metrics reuse.

    The dict of keys to rows is made at the first look-up (the metrics' first read by key);
    :meth:`PerfData.add_thread_state` turns the whole table into the dict it reads as."""

    __slots__ = ("_keys", "_states", "_tot", "_index")

    def __init__(self, keys: list, states: tuple[str, ...], tot: array) -> None:
        self._keys, self._states, self._tot = keys, states, tot
        self._index: dict | None = None

    def _rows(self) -> dict:
        if self._index is None:
            self._index = dict(zip(self._keys, range(len(self._keys))))
        return self._index

    def _row(self, i: int) -> dict[str, float]:
        tot, states = self._tot, self._states
        if len(states) == 3:  # the scheduler's three (perfetto_sched.COARSE): no slice, no loop
            j = 3 * i
            a, b, c = tot[j], tot[j + 1], tot[j + 2]
            if a >= 0.0 and b >= 0.0 and c >= 0.0:
                return {states[0]: a, states[1]: b, states[2]: c}
            vals = (a, b, c)
        else:
            vals = tot[i * len(states):(i + 1) * len(states)].tolist()
        return {s: v for s, v in zip(states, vals) if v >= 0.0}

    def __getitem__(self, key) -> dict[str, float]:
        return self._row(self._rows()[key])

    def get(self, key, default=None):
        index = self._index if self._index is not None else self._rows()
        i = index.get(key)
        return default if i is None else self._row(i)

    def __contains__(self, key) -> bool:
        return key in self._rows()

    def __iter__(self):
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)

    def _dicts(self):
        """Every thread's dict, in order (one pass over the column, not a look-up each)."""
        states, w = self._states, len(self._states)
        for lo in range(0, len(self._tot), w << 14):  # a block of threads' values made at a time
            vals = self._tot[lo:lo + (w << 14)].tolist()
            for j in range(0, len(vals), w):
                row = vals[j:j + w]
                yield dict(zip(states, row)) if min(row) >= 0.0 else {s: v for s, v in zip(states, row) if v >= 0.0}

    def columns(self):
        """(keys, states, totals): the keys in order (a list), the states, and a float64 array
        (one row a key, one column a state) of the totals in µs, -1.0 where a thread has none in
        a state: for a reader of every thread that would rather not make a dict of each."""
        import numpy as np

        return self._keys, self._states, np.frombuffer(self._tot, np.float64).reshape(-1, len(self._states))

    def values(self):
        return _StateValues(self)

    def items(self):
        return _StateItems(self)

    def as_dict(self) -> dict:
        return dict(zip(self._keys, self._dicts()))

    def __repr__(self) -> str:
        return repr(self.as_dict())


class _StateValues(ValuesView):
    __slots__ = ()

    def __iter__(self):
        return self._mapping._dicts()


class _StateItems(ItemsView):
    __slots__ = ()

    def __iter__(self):
        return zip(self._mapping._keys, self._mapping._dicts())


class SchedIntervals:
    """One thread's scheduler states as time intervals (µs), from sched_switch / waking events.

    ``state`` holds :class:`nodes.perf.sched_state.SchedState` codes (Running, R, R+, S, D,
    other). ``io_wait`` is 1 where ``sched_blocked_reason`` said the blocked interval waited on IO, 0
    where it said not, -1 where nothing said. Kept as columns: 18 bytes an interval.

    Either its own four columns (``SchedIntervals(ts, dur, state, io_wait)``: ``array``s, or
    anything that slices and exports a buffer alike), or rows ``lo:hi`` of columns shared by
    many threads (:meth:`rows`: the Perfetto reader's ~60 k threads at 1 GB are cuts of one
    set of columns, not four arrays each; a field is read as a ``memoryview`` of its rows — it
    iterates, compares, ``len``, ``tolist`` and ``np.frombuffer`` as the ``array`` did).
    """

    __slots__ = ("_cols", "_lo", "_hi")

    def __init__(self, ts=None, dur=None, state=None, io_wait=None) -> None:
        self._cols = (array("d") if ts is None else ts, array("d") if dur is None else dur,
                      array("b") if state is None else state, array("b") if io_wait is None else io_wait)
        self._lo = 0
        self._hi = None  # the whole columns

    @classmethod
    def rows(cls, cols: tuple, lo: int, hi: int) -> SchedIntervals:
        """Rows ``lo:hi`` of the shared columns ``cols`` (ts, dur, state, io_wait: memoryviews
        of float64, float64, int8, int8)."""
        iv = cls.__new__(cls)
        iv._cols, iv._lo, iv._hi = cols, lo, hi
        return iv

    def _col(self, k: int):
        c = self._cols[k]
        return c if self._hi is None else c[self._lo:self._hi]

    ts = property(lambda self: self._col(0))
    dur = property(lambda self: self._col(1))
    state = property(lambda self: self._col(2))
    io_wait = property(lambda self: self._col(3))

    def __len__(self) -> int:
        return len(self._cols[0]) if self._hi is None else self._hi - self._lo

    def __eq__(self, other) -> bool:
        if not isinstance(other, SchedIntervals):
            return NotImplemented
        return all(a == b for a, b in zip(self._fields(), other._fields()))

    __hash__ = None  # type: ignore[assignment]

    def _fields(self) -> tuple:
        return self.ts, self.dur, self.state, self.io_wait

    def __repr__(self) -> str:
        return "SchedIntervals(ts={!r}, dur={!r}, state={!r}, io_wait={!r})".format(
            *(list(c) for c in self._fields()))


@dataclass
class PowerRail:
    """One ODPM power rail's energy counter (µWs since boot) over time, as read
    (``nodes/perf/parsers/perfetto_power.py``). ``name`` is trace_processor's counter track name."""

    name: str
    raw_name: str
    subsystem: str
    #: False when readings came for an index no descriptor named.
    described: bool = True
    ts_us: array = field(default_factory=lambda: array("d"))
    energy_uws: array = field(default_factory=lambda: array("d"))


@dataclass(slots=True)
class BinderCall:
    """One binder transaction with both ends (``nodes/perf/parsers/perfetto_binder_calls.py``)."""

    client_pid: int
    client_tid: int
    ts_us: float
    #: None until the reply came back (a call open at the end of the trace keeps None).
    dur_us: float | None = None
    server_pid: int | None = None
    server_tid: int | None = None
    oneway: bool = False
    replied: bool = False


class BinderCalls(_Sequence):
    """``PerfData.binder_calls`` held as columns, read as the list of :class:`BinderCall` it
    stands for (each call made when it is read): the client's pid and tid, the start (µs), the
    duration (µs) where there is one, the server's pid and tid where a receipt named them, and
    the one-way and replied flags. What :meth:`PerfData.add_binder_call_columns` stores for a
    reader that pairs the calls in vectorised passes (perfetto_binder_calls.py): the 1 GB
    benchmark trace's ~140 k calls were ~37 MB of objects from its finish to the metrics' end."""

    __slots__ = ("_cols",)

    def __init__(self, client_pid, client_tid, ts_us, dur_us, has_dur, server_pid, server_tid, has_server,
                 oneway, replied) -> None:
        import numpy as np

        self._cols = (np.asarray(client_pid, np.int64), np.asarray(client_tid, np.int64),
                      np.asarray(ts_us, np.float64), np.asarray(dur_us, np.float64), np.asarray(has_dur, bool),
                      np.asarray(server_pid, np.int64), np.asarray(server_tid, np.int64),
                      np.asarray(has_server, bool), np.asarray(oneway, bool), np.asarray(replied, bool))

    def __len__(self) -> int:
        return len(self._cols[0])

    def _calls(self, lo: int, hi: int) -> list[BinderCall]:
        cp, ct, ts, dur, has_dur, sp, st, has_s, oneway, replied = (c[lo:hi].tolist() for c in self._cols)
        return list(map(BinderCall, cp, ct, ts, [d if h else None for d, h in zip(dur, has_dur)],
                        [p if h else None for p, h in zip(sp, has_s)], [t if h else None for t, h in zip(st, has_s)],
                        oneway, replied))

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("binder call index out of range")
        return self._calls(i, i + 1)[0]

    def __iter__(self):
        for lo in range(0, len(self), 1 << 14):  # a block of calls made at a time
            yield from self._calls(lo, lo + (1 << 14))

    def __eq__(self, other) -> bool:
        if isinstance(other, (BinderCalls, list)):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(list(self))


#: Linux keeps a task's name (comm) in 16 bytes: 15 characters and the NUL (TASK_COMM_LEN).
COMM_CHARS = 15


def is_comm_of(thread: str | None, process: str) -> bool:
    """Whether a thread's name says no more than its process's: none, the same, or the
    process name cut to :data:`COMM_CHARS` at either end."""
    if not thread or thread == process:
        return True
    return len(thread) == COMM_CHARS and (process.endswith(thread) or process.startswith(thread))


@dataclass(slots=True)
class ThreadInfo:
    pid: int
    tid: int
    name: str | None = None
    #: Set by a reader that knows (Android's pid == tid, Chrome's CrRendererMain, …).
    is_main: bool | None = None


@dataclass
class CallStat:
    """One function of a deterministic profile (cProfile/pstats): aggregate, not a timeline."""

    name: str
    file: str | None
    line: int | None
    calls: int
    primitive_calls: int
    self_us: float
    total_us: float


@dataclass
class FrameRef:
    """A frame of a sampled stack: function name, and where the format says it is."""

    name: str
    file: str | None = None
    line: int | None = None


class Frame(Result, kw_only=True):
    """One displayed frame (Chrome DrawFrame, Android doFrame, Perfetto frame timeline, gfxinfo row)."""

    ts_us: float
    #: None when the frame has no end: a frame timeline frame whose ``FrameEnd`` never arrived
    #: (trace_processor keeps it with ``dur`` -1). It is counted, with its jank verdict, but
    #: has no duration to rank or average.
    dur_us: float | None
    #: The budget the frame had (expected duration or vsync period), when the data says it.
    budget_us: float | None = None
    #: The producer's own verdict (frame timeline jank type, gfxinfo flags), when it has one.
    janky: bool | None = None
    jank_type: str | None = None
    pid: int | None = None
    tid: int | None = None
    layer: str | None = None
    #: Frame timeline only (``nodes/perf/parsers/perfetto_frames.py``): the start of the
    #: expected slice with the same token (its end minus the actual end is the overrun), the
    #: tokens, and SurfaceFlinger's verdicts as trace_processor names them.
    expected_ts_us: float | None = None
    token: int | None = None
    display_token: int | None = None
    present_type: str | None = None
    on_time_finish: bool | None = None
    prediction: str | None = None
    #: The jank type of the display frame (SurfaceFlinger's composition) this frame was part of.
    display_jank_type: str | None = None


class StartupPhase(Result, kw_only=True):
    name: str
    start_ms: float
    dur_ms: float
    thread: str | None = None


class BreakdownItem(Result, kw_only=True):
    """Time of one startup spent for one reason: the sum of trace_processor's exclusive
    ``android_startup_opinionated_breakdown`` intervals with that reason."""

    reason: str
    dur_ms: float
    #: How many exclusive intervals were blamed on it.
    intervals: int = 0


class MainThreadState(Result, kw_only=True):
    """The launched app's main thread over the startup window, from sched data."""

    running_ms: float
    runnable_ms: float
    sleeping_ms: float
    uninterruptible_ms: float
    #: Uninterruptible time that sched_blocked_reason marked as IO; None when the trace did not
    #: record sched_blocked_reason (then nobody can tell IO from other D waits).
    io_wait_ms: float | None = None


class ArtCount(Result, kw_only=True):
    count: int = 0
    total_ms: float = 0.0


class ArtStats(Result, kw_only=True):
    """ART work in the target process, as Macrobenchmark's ArtMetric counts it."""

    jit: ArtCount = msgspec.field(default_factory=ArtCount)
    class_init: ArtCount = msgspec.field(default_factory=ArtCount)
    verify_class: ArtCount = msgspec.field(default_factory=ArtCount)


class SlowReason(Result, kw_only=True):
    """One of trace_processor's slow-start reasons that fired, with its threshold."""

    id: str
    #: A duration that crossed its threshold …
    observed_ms: float | None = None
    #: … or a count (or a share in %, as ``expected`` says).
    observed: float | None = None
    expected: str
    suggestion: str
    link: str | None = None


class PartInside(Result, kw_only=True):
    """What the largest slice part of a launch's breakdown did on the app's main thread
    (nodes/perf/metrics/android_startup.py ``inside_part``): the longest instance of the part's
    slice, its longest child, and on down while a child is at least half of its parent; and
    the main thread's scheduler states over the span of the slice it ends at."""

    reason: str
    #: Names from the part's own slice (first) down to the slice it ends at (last).
    path: list[str] = msgspec.field(default_factory=list)
    #: Duration of each slice of ``path``, ms.
    path_ms: list[float] = msgspec.field(default_factory=list)
    #: The main thread over the span of ``path[-1]``; None without scheduler data.
    states: MainThreadState | None = None


class StartupRun(Result, kw_only=True):
    """One launch of the target: a local run, one ``am start -W``, or one launch in a trace."""

    index: int
    total_ms: float
    wait_ms: float | None = None
    #: cold / warm / hot / unknown — as the tool reported it or as the launch was forced.
    kind: str = "unknown"
    ready_by: str | None = None
    exit_code: int | None = None
    command: str | None = None
    # --- a launch read from an Android system trace (nodes/perf/metrics/android_startup.py)
    package: str | None = None
    #: Start of the launch in ms from the capture start.
    start_ms: float | None = None
    ttid_ms: float | None = None
    #: None when the app never called reportFullyDrawn (``missing`` says so).
    ttfd_ms: float | None = None
    phases: list[StartupPhase] = msgspec.field(default_factory=list)
    breakdown: list[BreakdownItem] = msgspec.field(default_factory=list)
    main_thread: MainThreadState | None = None
    #: Inside the largest part of ``breakdown`` when it is a slice (activityResume …): None
    #: when that part is a scheduler state, launch delay or IO, or has no slice to descend.
    inside_biggest: PartInside | None = None
    art: ArtStats | None = None
    slow_reasons: list[SlowReason] = msgspec.field(default_factory=list)
    #: What the trace lacks for a number here, and the Perfetto config that would capture it.
    missing: list[str] = msgspec.field(default_factory=list)


class ImportEntry(Result, kw_only=True):
    """One line of ``python -X importtime``."""

    module: str
    self_us: float
    cumulative_us: float
    depth: int
    file: str | None = None


def _thread_rows(pid, tid):
    """The stable order of rows by (pid, tid): one int64 key when the ranges fit, else a lexsort."""
    import numpy as np

    if not len(pid):
        return np.zeros(0, np.int64)
    p0, t0 = int(pid.min()), int(tid.min())
    span = int(tid.max()) - t0 + 1
    if (int(pid.max()) - p0 + 1) * span < 1 << 63:
        key = pid - p0
        key *= span
        key += tid - t0
        return np.argsort(key, kind="stable")
    return np.lexsort((tid, pid))


class PerfData:
    """A reader's output, one store per kind of data.

    A reader fills it only through methods: the ``add_*``/``set_*`` methods of ``PerfData``
    for what counts against the event cap (``max_events``) or moves the time bounds, and the
    ``add``/``note`` methods of the per-kind stores (:class:`StringTable`, :class:`SliceStore`,
    :class:`InstantStore`, :class:`MarkStore`, :class:`CounterStore`, :class:`ReportedTotals`,
    :class:`Notes`) for the rest. Metrics read the attributes and never write them.
    ``tests/test_perf_model_api.py`` fails when a reader in ``nodes/perf/parsers/`` writes an
    attribute, appends to a store or touches a private name instead.

    The facts a metric or finding reads about the capture (SDK level, kernel, what a
    ``perf stat`` run counted …) are typed, in :attr:`facts` (:class:`TraceFacts`); :attr:`meta`
    holds only free-form text worth showing. Times and durations are microseconds unless the
    name says another unit (``StartupRun.total_ms``, ``PowerRail.energy_uws``, counters and
    stats in their ``*_units``, CPU frequency in kHz, memory in MiB as documented below).
    """

    def __init__(self, format: str, source: str, max_events: int | None = None):
        from nodes.perf import limits

        self.format = format
        self.source = source
        #: How many timeline items (slices, async spans, distinct stacks, frames, profile rows)
        #: this data keeps (nodes/perf/limits.py); ``stored`` counts them.
        self.max_events = int(max_events if max_events is not None else limits.current().max_events)
        self.stored = 0
        #: Set once the cap is met: the reader stopped there.
        self.stopped_at_cap = False
        self.strings = StringTable()
        self.processes: dict[int, str] = {}
        self.threads: dict[tuple[int, int], ThreadInfo] = {}
        self.slices: SliceStore = SliceStore()
        #: name id → (file, line) for slices whose producer recorded a location.
        self.locations: dict[int, tuple[str | None, int | None]] = {}
        #: Sampled stacks aggregated: ((pid, tid), (frame ids root→leaf)) → weight in µs.
        self.stacks: dict[tuple[tuple[int, int], tuple[int, ...]], float] = {}
        #: How many samples each key of ``stacks`` aggregates (hot-spot counts; weights alone
        #: cannot tell 200 samples of 10 ms from one of 2 s).
        self.stack_samples: dict[tuple[tuple[int, int], tuple[int, ...]], int] = {}
        self.frame_refs: list[FrameRef] = []
        self._frame_ids: dict[tuple[str, str | None, int | None], int] = {}
        self.instants = InstantStore()
        #: Instants kept with their decoded args: (ts µs, pid, tid, name, args or None). The
        #: Trace Event reader keeps the page marks the web vitals read (MARK_NAMES in
        #: nodes/perf/parsers/trace_event/events.py); other readers leave it empty.
        self.marks = MarkStore()
        #: Async spans (Trace Event b/e and S/F, atrace S/F), which do not nest on a thread:
        #: (pid, track name) → columns. Track name is the span's name (or its category).
        self.async_slices: SliceStore = SliceStore()
        #: Deterministic-profile rows (pstats): per function self/total time and call counts.
        self.calls: list[CallStat] = []
        self.counters = CounterStore()
        self.counter_units: dict[str, str] = {}
        self.frames: list[Frame] = []
        #: Totals a tool reported itself (gfxinfo's "Janky frames", percentiles, …).
        self.frame_summary = ReportedTotals()
        #: Time spent per thread in each scheduler state, in µs (from sched data): a dict, or
        #: the :class:`ThreadStates` columns a bulk reader's :meth:`add_thread_state_totals` made.
        self.thread_states: dict[tuple[int, int], dict[str, float]] | ThreadStates = {}
        #: Thread (CPU) time per thread, µs, with the number of slices it is summed over: Chrome's
        #: ``tdur`` of top-level slices (parsers/trace_event/phases.py ``thread_cpu_us``).
        self.thread_cpu_us: dict[tuple[int, int], tuple[float, int]] = {}
        #: The same scheduler data as intervals per thread (Perfetto sched), for the startup
        #: breakdown and main-thread states over a window; empty when the trace has no sched.
        self.sched_intervals: dict[tuple[int, int], SchedIntervals] = {}
        self.startup_runs: list[StartupRun] = []
        #: CPUs the trace covers (ftrace bundles), and per CPU its frequency (kHz) and idle
        #: state changes (cpu_idle's state; 4294967295 = left idle) as (ts µs, value), each a
        #: :class:`PointSeries` (columns: float64 ts and kHz, float64 ts and int64 state).
        self.cpu_count: int | None = None
        self.cpu_frequency: dict[int, PointSeries] = {}
        self.cpu_idle: dict[int, PointSeries] = {}
        #: Per process memory counters (MiB) over time, for the memory lens: (pid, counter name
        #: as trace_processor names it) → (ts µs, value) points (:class:`SeriesMap`); and lmkd's
        #: kills (ts µs, pid killed).
        self.memory = SeriesMap()
        self.lmk_kills: list[tuple[float, int]] = []
        #: Chrome's EventLatency / ScrollJankV4 / PipelineReporter span ends with their args, for
        #: the scroll lens: (ts µs, is begin, name, async key, pid, args of a begin or None).
        self.scroll_spans: list[tuple[float, bool, str, object, int, dict | None]] = []
        self.scroll_spans_dropped = 0
        #: Thread slices still open at the end of the trace, (pid, tid, ts µs, name): left out of
        #: ``slices``, kept so a metric that counts them to the end (GC, as trace_processor's
        #: ``dur = -1``) can.
        self.open_slices: list[tuple[int, int, float, str]] = []
        #: Binder transactions, client → server, in time order (Perfetto ftrace binder events).
        #: (A list, or the :class:`BinderCalls` columns a bulk reader stored.)
        self.binder_calls: list[BinderCall] | BinderCalls = []
        #: ODPM power rails (Perfetto ``power_rails``), one per rail; empty when none was recorded.
        self.power_rails: list[PowerRail] = []
        self.startup_phases: list[StartupPhase] = []
        self.imports: list[ImportEntry] = []
        #: Scalar statistics (perf stat counters, meminfo totals, cpuinfo shares): name → value.
        self.stats: dict[str, float] = {}
        self.stat_units: dict[str, str] = {}
        #: Free-form facts worth showing (device model, Android build, command line …).
        self.meta = Notes()
        #: The facts metrics and findings read, typed.
        self.facts = TraceFacts()
        object.__setattr__(self.facts, "_notes", self.meta)
        self.start_us: float | None = None
        self.end_us: float | None = None
        self.warnings: list[str] = []
        self.partial = False
        self.skipped_events = 0

    # --- the event cap ----------------------------------------------------------------
    def check_capacity(self, held: int) -> None:
        """Raise CapacityReached when ``held`` reaches ``max_events``: for a reader that fills
        the columns itself (its fast path bypasses ``add_slice``) or buffers events before it
        stores them (unmatched B/E), counted by the reader, checked once per block it reads."""
        if held >= self.max_events:
            self._stop()

    def _stop(self) -> None:
        if not self.stopped_at_cap:
            self.stopped_at_cap = True
            self.partial = True
            self.warn(
                f"stopped reading at the event cap ({self.max_events} events, PERFSCOUT_MAX_EVENTS, which "
                "bounds memory): the result covers the start of the data only; raise the cap to read more"
            )
        raise CapacityReached(self)

    def _count(self) -> None:
        if self.stored >= self.max_events:
            self._stop()
        self.stored += 1

    # --- strings ----------------------------------------------------------------------
    def intern(self, s: str) -> int:
        return self.strings.intern(s)

    # --- metadata ---------------------------------------------------------------------
    def set_process_name(self, pid: int, name: str, replace: bool = True) -> None:
        """Name a process; with ``replace`` False only one no reader has named yet."""
        if replace or pid not in self.processes:
            self.processes[pid] = _one_copy(name)

    def thread(self, pid: int, tid: int) -> ThreadInfo:
        key = (pid, tid)
        t = self.threads.get(key)
        if t is None:
            t = self.threads[key] = ThreadInfo(pid, tid)
        return t

    def _thread_at(self, key: tuple[int, int]) -> ThreadInfo:
        """:meth:`thread` of a (pid, tid) key a bulk caller holds already: the threads dict and
        the ThreadInfo share its tuple and ints with the caller's dict (the 1 GB trace's ~190 k
        threads, a tuple and two ints each, once rather than twice)."""
        t = self.threads.get(key)
        if t is None:
            t = self.threads[key] = ThreadInfo(key[0], key[1])
        return t

    def set_thread_name(self, pid: int, tid: int, name: str) -> None:
        self.thread(pid, tid).name = _one_copy(name)

    def mark_main_thread(self, pid: int, tid: int) -> None:
        self.thread(pid, tid).is_main = True

    def name_threads(self, comm: dict[int, str]) -> None:
        """For every thread: :meth:`set_thread_name` with ``comm[tid]`` when it has no name and
        ``comm`` has a non-empty one, and :meth:`mark_main_thread` when ``pid == tid`` and it is
        not marked either way — in one pass (a Perfetto trace has tens of thousands of threads)."""
        for (pid, tid), info in self.threads.items():
            if not info.name:
                name = comm.get(tid)
                if name:
                    info.name = _one_copy(name)
            if pid == tid and info.is_main is None:
                info.is_main = True

    def extend_bounds(self, ts_us: float, end_us: float) -> None:
        """Widen the data's time bounds to cover ``ts_us``…``end_us``."""
        if self.start_us is None or ts_us < self.start_us:
            self.start_us = ts_us
        if self.end_us is None or end_us > self.end_us:
            self.end_us = end_us

    def skip(self, events: int = 1) -> None:
        """Count events that could not be read (the data is then ``partial``, said by the reader)."""
        self.skipped_events += events

    def mark_partial(self) -> None:
        """The data covers only part of the input (cut short, events skipped)."""
        self.partial = True

    def shown_meta(self) -> dict[str, str]:
        """What the analysis shows about the capture: the notes and the typed facts as text, in
        the order the reader gave them (``AnalysisResult.meta``)."""
        notes = list(self.meta.items())
        set_at = self.facts.__dict__["_set_at"]
        facts = self.facts.shown_items()
        out: dict[str, str] = {}
        k = 0
        for i in range(len(notes) + 1):
            while k < len(facts) and set_at[facts[k][0]] <= i:
                out[facts[k][1]] = facts[k][2]
                k += 1
            if i < len(notes):
                out[notes[i][0]] = notes[i][1]
        return out

    # --- timeline ---------------------------------------------------------------------
    def add_slice(
        self,
        pid: int,
        tid: int,
        ts_us: float,
        dur_us: float,
        name: str,
        file: str | None = None,
        line: int | None = None,
    ) -> None:
        """A complete slice on a thread. Nesting is recovered from times by the metrics."""
        self._count()
        key = (pid, tid)
        cols = self.slices.get(key)
        if cols is None:
            cols = self.slices[key] = SliceColumns()
            self.thread(pid, tid)
        nid = self.intern(name)
        cols.ts.append(ts_us)
        cols.dur.append(max(0.0, dur_us))
        cols.name.append(nid)
        if file is not None and nid not in self.locations:
            self.locations[nid] = (file, line)
        self.extend_bounds(ts_us, ts_us + max(0.0, dur_us))

    def _fitting(self, n: int) -> int:
        """How many of ``n`` new rows fit under the event cap; the read stops here when none do
        (the bulk adds keep the rows that fit, then stop after storing them)."""
        room = self.max_events - self.stored
        if room <= 0:
            self._stop()
        return min(n, room)

    def add_slices(self, pid: int, tid: int, ts_us: Sequence[float], dur_us: Sequence[float],
                   names: Sequence[str]) -> None:
        """Complete slices of one thread, in order: what ``add_slice`` does for each (no
        locations), the event cap included — the slices up to the cap are kept, then it raises."""
        n = len(ts_us)
        if not n:
            return
        k = self._fitting(n)
        key = (pid, tid)
        cols = self.slices.get(key)
        if cols is None:
            cols = self.slices[key] = SliceColumns()
            self.thread(pid, tid)
        ts = list(ts_us[:k])
        dur = [d if d > 0.0 else 0.0 for d in dur_us[:k]]
        intern = self.intern
        cols.ts.extend(ts)
        cols.dur.extend(dur)
        cols.name.extend([intern(x) for x in names[:k]])
        self.stored += k
        self.extend_bounds(min(ts), max([t + d for t, d in zip(ts, dur)]))
        if k < n:
            self._stop()

    def add_slice_rows(self, pid, tid, ts_us, dur_us, name, names: Sequence[str]) -> None:
        """Complete slices of any threads as numpy columns, row ``i`` on thread ``(pid[i],
        tid[i])`` named ``names[name[i]]``, in the order ``add_slice`` would take them one by
        one — and stored exactly as it would store them (no locations): each thread's rows in
        row order, a thread's columns and ThreadInfo created at its first row, names interned
        at their first row, a negative duration as 0, and the event cap after the rows that fit
        (they are kept, then it raises). For a reader that pairs its slices in vectorised
        passes (nodes/perf/parsers/perfetto_ftrace.py): no Python work per slice."""
        import numpy as np

        n = len(ts_us)
        if not n:
            return
        k = self._fitting(n)
        pid = np.asarray(pid, np.int64)[:k]
        tid = np.asarray(tid, np.int64)[:k]
        ts = np.asarray(ts_us, np.float64)[:k]
        dur = np.asarray(dur_us, np.float64)[:k]
        dur = np.where(dur > 0.0, dur, 0.0)  # as max(0.0, d): NaN and -0.0 become 0.0 too
        name = np.asarray(name, np.int64)[:k]
        # names interned in the order of their first row: each distinct id's first row, by ufunc.at
        # over the ids (they index ``names``: a few thousand, not the rows)
        m = len(names)
        name = np.where(name < 0, name + m, name)  # names[-1] is names[m - 1], as a list indexes
        if k and (int(name.min()) < 0 or int(name.max()) >= m):
            raise IndexError("add_slice_rows: a name id outside names")
        first = np.full(m, k, np.int64)
        np.minimum.at(first, name, np.arange(k, dtype=np.int64))
        used = np.flatnonzero(first < k)
        ids = np.zeros(m, np.dtype("l"))  # the name column's type (array "l")
        intern = self.intern
        for j in used[np.argsort(first[used], kind="stable")].tolist():
            ids[j] = intern(names[j])
        nid = ids[name]
        order = _thread_rows(pid, tid)  # by thread; stable, so each thread's rows stay in order
        P, T = pid[order], tid[order]
        new = np.empty(k, bool)
        new[0] = True
        new[1:] = (P[1:] != P[:-1]) | (T[1:] != T[:-1])
        starts = np.flatnonzero(new)
        ends = np.append(starts[1:], k)
        # each thread's rows as byte ranges of the sorted columns (memoryviews: no copy per thread)
        TS, DUR, NID = (memoryview(c[order]).cast("B") for c in (ts, dur, nid))
        f8, fl = 8, ids.itemsize
        # threads in the order of their first row (the smallest row index of each group)
        g = np.argsort(order[starts], kind="stable")
        slices, get, thread = self.slices, self.slices.get, self._thread_at
        for p, t, a, b in zip(P[starts[g]].tolist(), T[starts[g]].tolist(), starts[g].tolist(), ends[g].tolist()):
            key = (p, t)
            cols = get(key)
            if cols is None:
                cols = slices[key] = SliceColumns(array("d"), array("d"), array("l"))
                thread(key)
            cols.ts.frombytes(TS[a * f8:b * f8])
            cols.dur.frombytes(DUR[a * f8:b * f8])
            cols.name.frombytes(NID[a * fl:b * fl])
        self.stored += k
        # the first of equal extremes, as row by row (0.0 and -0.0 are equal, and min/max's SIMD
        # loops may hand back either: the bounds would differ in their sign bit)
        end = ts + dur
        self.extend_bounds(float(ts[int(ts.argmin())]), float(end[int(end.argmax())]))
        if k < n:
            self._stop()

    def slice_columns(self, pid: int, tid: int) -> SliceColumns:
        """One thread's slice columns (created, with the thread, the first time), for a reader
        that fills them itself (counted with :meth:`check_capacity`)."""
        cols = self.slices.get((pid, tid))
        if cols is None:
            cols = self.slices[(pid, tid)] = SliceColumns()
            self.thread(pid, tid)
        return cols

    def set_location(self, name_id: int, file: str | None, line: int | None) -> None:
        """Where the slices named ``name_id`` are in the source; the first location given stays."""
        self.locations.setdefault(name_id, (file, line))

    def add_open_slice(self, pid: int, tid: int, ts_us: float, name: str) -> None:
        self.open_slices.append((pid, tid, ts_us, name))

    def add_async_slice(self, pid: int, track: str, ts_us: float, dur_us: float, name: str) -> None:
        """A span that is not on a thread stack (async b/e, S/F): kept apart from thread slices."""
        self._count()
        key = (pid, track)
        cols = self.async_slices.get(key)
        if cols is None:
            cols = self.async_slices[key] = SliceColumns()
        cols.ts.append(ts_us)
        cols.dur.append(max(0.0, dur_us))
        cols.name.append(self.intern(name))
        self.extend_bounds(ts_us, ts_us + max(0.0, dur_us))

    def add_call(
        self,
        name: str,
        file: str | None,
        line: int | None,
        calls: int,
        primitive_calls: int,
        self_us: float,
        total_us: float,
    ) -> None:
        self._count()
        self.calls.append(CallStat(name, file, line, int(calls), int(primitive_calls),
                                   max(0.0, float(self_us)), max(0.0, float(total_us))))

    def add_instant(self, pid: int, tid: int, ts_us: float, name: str) -> None:
        self.instants.add(ts_us, pid, tid, name)
        self.extend_bounds(ts_us, ts_us)

    def add_counter(self, name: str, ts_us: float, value: float, unit: str | None = None) -> None:
        self.counters.add(name, ts_us, value)
        if unit:
            self.counter_units[name] = unit
        self.extend_bounds(ts_us, ts_us)

    def add_counter_points(self, name: str, points: Sequence[tuple[float, float]], unit: str | None = None) -> None:
        """:meth:`add_counter` for each ``(ts µs, value)`` of ``points`` in turn (values are
        numbers), in one step: the first points up to :data:`MAX_COUNTER_POINTS` kept, the
        bounds widened over all of them."""
        if not points:
            return
        pts = self.counters.setdefault(name, [])
        room = MAX_COUNTER_POINTS - len(pts)
        if room > 0:
            pts.extend([(t, float(v)) for t, v in points[:room]])
        if unit:
            self.counter_units[name] = unit
        ts = [t for t, _ in points]
        if any(t != t for t in ts):  # NaN: the bounds as point after point leaves them
            for t in ts:
                self.extend_bounds(t, t)
        else:
            self.extend_bounds(min(ts), max(ts))

    def add_frame(self, frame: Frame) -> None:
        self._count()
        self.frames.append(frame)
        self.extend_bounds(frame.ts_us, frame.ts_us + (frame.dur_us or 0.0))

    def add_thread_state(self, pid: int, tid: int, state: str, dur_us: float) -> None:
        """Accumulate scheduler time: state is "running", "runnable" or "sleeping"."""
        self.thread(pid, tid)
        d = self._state_dicts().setdefault((pid, tid), {})
        d[state] = d.get(state, 0.0) + max(0.0, dur_us)

    def _state_dicts(self) -> dict:
        """:attr:`thread_states` as the dict of dicts (made from :class:`ThreadStates`, in its
        order, when a bulk reader's columns are added to)."""
        if type(self.thread_states) is ThreadStates:
            self.thread_states = self.thread_states.as_dict()
        return self.thread_states

    def add_thread_state_totals(self, threads: Sequence[tuple[int, int]], totals, states: Sequence[str]) -> None:
        """Scheduler time of many threads at once, what ``add_thread_state`` does for each
        nonzero total in turn: thread ``threads[i]`` spent ``totals[i][j]`` **ns** in
        ``states[j]`` (converted to µs here; ``totals`` a sequence of rows, or a 2-d numpy
        array). For a reader that sums the states in vectorised passes
        (nodes/perf/parsers/perfetto_sched.py): no Python step per thread but its ThreadInfo;
        into an empty table of distinct threads, the totals are kept as columns
        (:class:`ThreadStates`)."""
        import numpy as np

        states = tuple(states)
        if not len(threads):
            return
        ns = None
        if type(self.thread_states) is dict and not self.thread_states and states and len(set(states)) == len(states):
            try:
                if len(set(threads)) == len(threads):  # distinct keys: no total added to another
                    ns = np.asarray(totals, np.float64).reshape(len(threads), len(states))
            except (ValueError, TypeError, OverflowError):
                ns = None
            if ns is not None:
                # as the loop below: a state with a nonzero total gets max(0.0, ns / 1000.0) (0.0 + it)
                has = ns != 0.0
                us = ns / 1000.0
                us = np.where(has, np.where(us > 0.0, us, 0.0), -1.0)
                kept = np.flatnonzero(has.any(axis=1))
                keys = [threads[i] for i in kept.tolist()] if len(kept) < len(threads) else list(threads)
                thread = self._thread_at
                for key in keys:
                    thread(key)
                self.thread_states = ThreadStates(keys, states, array("d", us[kept].tobytes()))
                return
        table = self._state_dicts()
        thread = self._thread_at
        for key, row in zip(threads, totals if not hasattr(totals, "tolist") else totals.tolist()):
            d = None
            for state, v in zip(states, row):
                if v:
                    if d is None:
                        thread(key)
                        d = table.setdefault(key, {})
                    us = v / 1000.0
                    d[state] = d.get(state, 0.0) + (us if us > 0.0 else 0.0)

    def add_thread_cpu_time(self, pid: int, tid: int, cpu_us: float, slices: int) -> None:
        """A thread's CPU time as the trace's own thread clock measured it (Chrome ``tdur``)."""
        self.thread(pid, tid)
        self.thread_cpu_us[(pid, tid)] = (max(0.0, cpu_us), slices)

    def add_sched_intervals(self, pid: int, tid: int, intervals: SchedIntervals) -> None:
        self.sched_intervals[(pid, tid)] = intervals

    def add_sched_intervals_many(self, threads: Sequence[tuple[int, int]], intervals: Sequence[SchedIntervals]) -> None:
        """:meth:`add_sched_intervals` for each thread ``(pid, tid)`` of ``threads`` in turn, in one
        step (nodes/perf/parsers/perfetto_ftrace.py stores ~20 k threads' at once)."""
        self.sched_intervals.update(zip(threads, intervals))

    # --- per-lens data (kept as read; no event cap: each reader bounds its own) --------
    def set_cpu_count(self, cpus: int) -> None:
        self.cpu_count = cpus

    def add_cpu_frequency(self, cpu: int, points: PointSeries | list[tuple[float, float]]) -> None:
        """One CPU's frequency changes, (ts µs, kHz) in time order."""
        self.cpu_frequency[cpu] = PointSeries.of(points)

    def add_cpu_idle(self, cpu: int, points: PointSeries | list[tuple[float, int]]) -> None:
        """One CPU's idle state changes, (ts µs, state) in time order."""
        self.cpu_idle[cpu] = PointSeries.of(points, "int64")

    def add_memory_series(self, pid: int, name: str, points: list[tuple[float, float]]) -> None:
        """One process's memory counter, (ts µs, value) in time order."""
        self.memory.add_points([((pid, name), points)])

    def add_memory_series_many(self, series: Iterable[tuple[tuple[int, str], list[tuple[float, float]]]]) -> None:
        """:meth:`add_memory_series` for each ``((pid, name), points)`` in turn, in one step: for a
        reader with tens of thousands of short series (a process_stats snapshot per process)."""
        self.memory.add_points(series)

    def add_memory_columns(self, keys: Sequence[tuple[int, str]], bounds, ts_us, values) -> None:
        """:meth:`add_memory_series_many` with the points as columns: series ``keys[i]`` is rows
        ``bounds[i]:bounds[i + 1]`` of ``ts_us`` and ``values`` (float64 arrays)."""
        self.memory.add_columns(keys, bounds, ts_us, values)

    def add_memory_key_columns(self, pid, code, names: Sequence[str], bounds, ts_us, values) -> None:
        """:meth:`add_memory_columns` of the keys ``(pid[i], names[code[i]])`` given as columns
        (distinct pairs; ``names`` in the order their first key comes): no tuple made of each."""
        self.memory.add_key_columns(pid, code, names, bounds, ts_us, values)

    def add_lmk_kills(self, kills: Iterable[tuple[float, int]]) -> None:
        """lmkd kills, (ts µs, pid killed); kept in time order."""
        self.lmk_kills.extend(kills)
        self.lmk_kills.sort()

    def add_scroll_span(self, ts_us: float, begin: bool, name: str, key: object, pid: int,
                        args: dict | None, limit: int) -> None:
        """One begin or end of a Chrome scroll span; past ``limit`` spans only counted as dropped."""
        if len(self.scroll_spans) >= limit:
            self.scroll_spans_dropped += 1
        else:
            self.scroll_spans.append((ts_us, begin, name, key, pid, args))

    def add_binder_calls(self, calls: Iterable[BinderCall]) -> None:
        if type(self.binder_calls) is BinderCalls:
            calls = list(calls)
            if not calls:
                return  # the columns stay
            self.binder_calls = list(self.binder_calls)
        self.binder_calls.extend(calls)

    def add_binder_call_columns(self, client_pid, client_tid, ts_us, dur_us, has_dur, server_pid, server_tid,
                                has_server, oneway, replied) -> None:
        """:meth:`add_binder_calls` of the calls given as columns (numpy; ``dur_us`` read where
        ``has_dur``, the server's pid and tid where ``has_server``): kept as
        :class:`BinderCalls` when there are none yet."""
        calls = BinderCalls(client_pid, client_tid, ts_us, dur_us, has_dur, server_pid, server_tid, has_server,
                            oneway, replied)
        if not len(calls):
            return
        if type(self.binder_calls) is list and not self.binder_calls:
            self.binder_calls = calls
        else:
            self.add_binder_calls(calls)

    def add_power_rail(self, rail: PowerRail) -> None:
        self.power_rails.append(rail)

    def add_startup_run(self, run: StartupRun) -> None:
        self.startup_runs.append(run)

    def add_startup_phases(self, phases: Iterable[StartupPhase]) -> None:
        self.startup_phases.extend(phases)

    def add_import(self, entry: ImportEntry) -> None:
        self.imports.append(entry)

    # --- sampled profiles -------------------------------------------------------------
    def frame_id(self, name: str, file: str | None = None, line: int | None = None) -> int:
        key = (name, file, line)
        i = self._frame_ids.get(key)
        if i is None:
            self._count()
            i = len(self.frame_refs)
            self.frame_refs.append(FrameRef(name, file, line))
            self._frame_ids[key] = i
        return i

    def add_sample(
        self, stack: Sequence[int], weight_us: float, pid: int = 0, tid: int = 0, samples: int = 1
    ) -> None:
        """One sample (or an aggregated weight of ``samples`` samples) for a stack of frame ids, root first."""
        key = ((pid, tid), tuple(stack))
        if key not in self.stacks:
            self._count()  # repeated stacks aggregate; only a new one costs memory
        self.stacks[key] = self.stacks.get(key, 0.0) + weight_us
        self.stack_samples[key] = self.stack_samples.get(key, 0) + max(0, int(samples))
        self.thread(pid, tid)

    def reserve_stack(self, key: tuple) -> None:
        """Count a stack new to this data against the event cap before its samples are summed:
        for a reader that sums samples by stack in vectorised passes and stores the totals after
        (nodes/perf/parsers/speedscope_samples.py); raises CapacityReached as ``add_sample`` does."""
        if key not in self.stacks:
            self.check_capacity(self.stored)
            self.stored += 1

    def set_stack_totals(self, key: tuple, weight_us: float, samples: int) -> None:
        """The summed weight and sample count of a stack (``((pid, tid), frame ids)``), replacing
        what it held: the vectorised reader sums what was there already into them."""
        self.stacks[key] = float(weight_us)
        self.stack_samples[key] = int(samples)

    # --- scalar facts -----------------------------------------------------------------
    def add_stat(self, name: str, value: float, unit: str | None = None) -> None:
        self.stats[name] = float(value)
        if unit:
            self.stat_units[name] = unit

    def warn(self, message: str) -> None:
        if len(self.warnings) < 100:
            self.warnings.append(message)

    def warn_counts(self, *counts: tuple[int, str]) -> None:
        """A warning for each count of events left out that is not 0, so a drop is never silent:
        ``(count, text)``, the count put into the text at ``{n}`` (``{n:,}`` with separators)."""
        for n, text in counts:
            if n:
                self.warn(text.format(n=n))

    # --- summaries --------------------------------------------------------------------
    @property
    def slice_count(self) -> int:
        return sum(len(c) for c in self.slices.values())

    @property
    def duration_us(self) -> float:
        if self.start_us is None or self.end_us is None:
            return 0.0
        return self.end_us - self.start_us

    def thread_label(self, pid: int, tid: int) -> str:
        """"RenderThread (com.demo.shop 7694)"; a process's main thread (tid == pid) whose name
        is only the process's cut to Linux's 15-character comm ("enchmark.target": Android
        keeps a package's last 15 characters, exec the first 15), the same or none is "main
        thread (com.demo.shop 7694)" — a name of its own (CrBrowserMain, MainThread) stays."""
        t = self.threads.get((pid, tid))
        proc = self.processes.get(pid)
        if proc and tid == pid and is_comm_of(t.name if t else None, proc):
            return f"main thread ({proc} {pid})"
        name = t.name if t and t.name else f"tid {tid}"
        return f"{name} ({proc} {pid})" if proc else f"{name} ({pid})"

    def process_label(self, pid: int) -> str | None:
        """"name (pid N)", "pid N" without a name; None for pid 0 without one — a profile that
        names no process (py-spy's speedscope without ``Process N``) reads it as 0."""
        proc = self.processes.get(pid)
        if proc:
            return f"{proc} (pid {pid})"
        return f"pid {pid}" if pid else None

    def iter_samples(self) -> Iterable[tuple[tuple[int, int], list[FrameRef], float]]:
        for (track, ids), w in self.stacks.items():
            yield track, [self.frame_refs[i] for i in ids], w


# ======================================================================================
# Consumer side: AnalysisResult
# ======================================================================================

Severity = Literal["high", "medium", "low", "info"]


class Evidence(Result, kw_only=True):
    """Where a number came from: the file, the time range, the events, or the command."""

    source: str | None = None
    start_ms: float | None = None
    end_ms: float | None = None
    events: list[str] = msgspec.field(default_factory=list)
    command: str | None = None


class Hotspot(Result, kw_only=True):
    name: str
    file: str | None = None
    line: int | None = None
    self_ms: float
    total_ms: float
    self_pct: float
    total_pct: float = 0.0
    count: int = 0
    #: The thread it ran on, or None when aggregated over all threads.
    thread: str | None = None
    #: A sampled row aggregated over one process's threads (thread None): "name (pid N)".
    #: None on the overall rows and the per-thread rows (:attr:`overall`).
    process: str | None = None
    #: "slice" (trace), "sample" (sampling profiler), "call" (pstats), "import" (-X importtime).
    kind: str = "slice"
    #: Which processes the row covers when an app is identified (``AnalysisResult.app``):
    #: "app", "harness" or "system"; None when the row covers the whole trace.
    scope: str | None = None

    @property
    def overall(self) -> bool:
        """A row over the whole data: neither one thread's nor one process's."""
        return self.thread is None and self.process is None


class ThreadStat(Result, kw_only=True):
    pid: int
    tid: int
    name: str
    process: str | None = None
    busy_ms: float
    slice_count: int = 0
    is_main: bool = False
    running_ms: float | None = None
    runnable_ms: float | None = None
    sleeping_ms: float | None = None


class LongTask(Result, kw_only=True):
    name: str
    thread: str
    start_ms: float
    dur_ms: float


class FrameCause(str, Enum):
    """Why a frame was late: a closed set, each decided from named evidence
    (``nodes/perf/metrics/frame_causes.py``; the rules are in docs/analyzer.md)."""

    MAIN_THREAD_SLICE = "main_thread_slice"
    RENDER_THREAD = "render_thread"
    SCHED_DELAY = "sched_delay"
    BINDER = "binder"
    LOCK_CONTENTION = "lock_contention"
    IO = "io"
    GC = "gc"
    SHADER_COMPILATION = "shader_compilation"
    SURFACEFLINGER = "surfaceflinger"


#: How a cause reads in a sentence.
FRAME_CAUSE_LABELS: dict[FrameCause, str] = {
    FrameCause.MAIN_THREAD_SLICE: "a long slice on the main thread",
    FrameCause.RENDER_THREAD: "long RenderThread work",
    FrameCause.SCHED_DELAY: "the main thread waiting for a CPU (runnable)",
    FrameCause.BINDER: "the main thread blocked in binder",
    FrameCause.LOCK_CONTENTION: "lock contention",
    FrameCause.IO: "IO",
    FrameCause.GC: "garbage collection",
    FrameCause.SHADER_COMPILATION: "shader compilation",
    FrameCause.SURFACEFLINGER: "SurfaceFlinger (not the app)",
}


class WorstFrame(Result, kw_only=True):
    start_ms: float
    dur_ms: float
    jank_type: str | None = None
    #: The longest slices that overlapped the frame on its thread(s).
    ran: list[str] = msgspec.field(default_factory=list)
    pid: int | None = None
    #: Actual end minus expected end (frame timeline); > 0 means the deadline was missed.
    overrun_ms: float | None = None
    present_type: str | None = None
    #: The cause the evidence points to, None when the trace holds nothing to decide on
    #: (``cause_missing`` then says what is absent).
    cause: FrameCause | None = None
    #: The time the cause accounts for inside the frame (ms).
    cause_ms: float | None = None
    #: What the cause was decided on: slices, states and verdicts with their times.
    evidence: list[str] = msgspec.field(default_factory=list)
    #: Every candidate cause with the time it accounts for (ms), for the curious.
    candidates: dict[str, float] = msgspec.field(default_factory=dict)
    cause_missing: str | None = None


class MissingData(Result, kw_only=True):
    """A number the trace cannot give: what, why, and the capture settings that would."""

    what: str
    why: str
    #: Perfetto trace-config lines (text proto) or a command that captures it.
    capture: str | None = None


class OtherProcessFrames(Result, kw_only=True):
    """Frames of a process that is not the app: summarised apart, never mixed in."""

    pid: int | None = None
    process: str | None = None
    count: int
    jank_count: int = 0
    p50_ms: float | None = None
    max_ms: float | None = None
    jank_types: dict[str, int] = msgspec.field(default_factory=dict)


class FrameStats(Result, kw_only=True):
    count: int
    fps: float | None = None
    jank_count: int = 0
    jank_ratio: float | None = None
    budget_ms: float = DEFAULT_BUDGET_MS
    #: Where the budget came from: "expected frames", "vsync period", "default".
    budget_source: str = "default"
    p50_ms: float | None = None
    p90_ms: float | None = None
    p99_ms: float | None = None
    max_ms: float | None = None
    #: Frame durations (ms) for a histogram; at most a few thousand.
    durations_ms: list[float] = msgspec.field(default_factory=list)
    #: Start of each frame in ``durations_ms`` (ms from the capture start, same order and length),
    #: when the data has times; empty otherwise. The report's timeline draws frames from these.
    starts_ms: list[float] = msgspec.field(default_factory=list)
    worst: list[WorstFrame] = msgspec.field(default_factory=list)
    #: What the producing tool reported itself (gfxinfo totals and percentiles).
    reported: dict[str, int | float | str] = msgspec.field(default_factory=dict)
    #: The one process these frames are of (count, percentiles and jank are its own).
    pid: int | None = None
    process: str | None = None
    #: Why that process: an app rule of metrics/scope.py ("named by the user", "launched
    #: package", "most surface frames", "most frames"), "most frames (no app identified)" (e.g. a
    #: Chrome trace's compositor), or "single source" (frames with no process, e.g. gfxinfo).
    chosen_by: str | None = None
    #: FrameTimeline jank types as the trace marks them, each component of a combined type
    #: counted on its own ("App Deadline Missed, Buffer Stuffing" counts under both).
    jank_types: dict[str, int] = msgspec.field(default_factory=dict)
    #: What ``jank_count`` counts: "frame timeline" (frames with a user-visible jank type,
    #: docs/analyzer.md), "over budget" (duration above ``budget_ms``), or "reported".
    jank_source: str = "over budget"
    #: Causes of the analysed janky frames (at most MAX_CAUSE_FRAMES): cause → frames.
    causes: dict[str, int] = msgspec.field(default_factory=dict)
    #: Frames of the other processes, one row each, busiest first.
    other_processes: list[OtherProcessFrames] = msgspec.field(default_factory=list)
    #: What the trace lacks for a full frame analysis, and how to capture it.
    missing: list[MissingData] = msgspec.field(default_factory=list)


class SliceStat(Result, kw_only=True):
    """Per-name slice statistics in one process scope, as androidx TraceSectionMetric reports
    them (``count``, ``sum``, ``min``, ``max``, ``first`` by start time; ms)."""

    name: str
    #: "app" (the app's process, ``AnalysisResult.app``) or "all" (every process).
    scope: str
    #: "thread" (a thread's slice stack) or "async" (a process-scoped span, not thread time).
    kind: str = "thread"
    count: int
    sum_ms: float
    min_ms: float
    max_ms: float
    first_ms: float
    #: Start of the first one, ms from the capture start, and the process it ran in.
    first_start_ms: float
    first_process: str | None = None


class ScopeSummary(Result, kw_only=True):
    """The slices of one group of processes, summarised apart from the app's."""

    scope: str
    processes: list[str] = msgspec.field(default_factory=list)
    busy_ms: float = 0.0
    slice_count: int = 0
    #: The heaviest names by self time: "name (12.3 ms)".
    top: list[str] = msgspec.field(default_factory=list)


class AppScope(Result, kw_only=True):
    """The one app process a trace is about, and how it was chosen."""

    pid: int
    process: str | None = None
    #: "named by the user", "launched package", "most surface frames", "most frames".
    chosen_by: str
    #: The app, the harness (e.g. the Macrobenchmark test process) and the system, apart.
    summaries: list[ScopeSummary] = msgspec.field(default_factory=list)
    harness: list[str] = msgspec.field(default_factory=list)


def run_statistics(totals_ms: list[float], digits: int = 3) -> dict[str, float]:
    """Median, min, max, spread and the first (coldest) of launch totals given in run order —
    the one place these are computed (analysis, collection summaries, device launches)."""
    if not totals_ms:
        return {}
    from statistics import median

    lo, hi = min(totals_ms), max(totals_ms)
    return {
        "median_ms": round(median(totals_ms), digits),
        "min_ms": round(lo, digits),
        "max_ms": round(hi, digits),
        "spread_ms": round(hi - lo, digits),
        "first_ms": round(totals_ms[0], digits),
    }


class StartupStats(Result, kw_only=True):
    runs: list[StartupRun] = msgspec.field(default_factory=list)
    median_ms: float | None = None
    min_ms: float | None = None
    max_ms: float | None = None
    spread_ms: float | None = None
    #: The first run, reported separately: the coldest.
    first_ms: float | None = None
    kind: str = "unknown"
    phases: list[StartupPhase] = msgspec.field(default_factory=list)
    imports: list[ImportEntry] = msgspec.field(default_factory=list)

    def fill_statistics(self) -> None:
        """The run statistics from ``runs``, in run order (``index``): the first is the coldest."""
        ordered = sorted(self.runs, key=lambda r: r.index)
        for key, value in run_statistics([r.total_ms for r in ordered]).items():
            setattr(self, key, value)


class CounterSummary(Result, kw_only=True):
    name: str
    unit: str | None = None
    min: float
    max: float
    mean: float
    last: float
    #: (t_ms, value) points, downsampled to at most a few hundred for charts.
    points: list[tuple[float, float]] = msgspec.field(default_factory=list)


class StackWeight(Result, kw_only=True):
    """One aggregated call stack (root first) and the time it held, for flame graphs and icicles."""

    frames: list[str]
    weight_ms: float
    thread: str | None = None
    #: The thread's process ("name (pid N)", or "pid N"); None when the data names no process.
    process: str | None = None
    #: A stack of CPU samples (a sampling profiler, perf_sample), not of traced slices.
    sampled: bool = False


#: At most this many of the heaviest stacks are kept in an AnalysisResult (bounded state size).
MAX_RESULT_STACKS = 500


class PageVitals(Result, kw_only=True):
    """One navigation's web vitals, as Lighthouse observes them (nodes/perf/metrics/web.py).

    Times are ms from the navigation's ``navigationStart`` (Lighthouse's time origin). A value
    the trace cannot give is None, and ``missing`` says why and how to capture it."""

    url: str | None = None
    #: The main frame's id and its renderer main thread (pid, tid), as TraceProcessor finds them.
    frame: str | None = None
    pid: int | None = None
    tid: int | None = None
    #: The navigation's start, ms from the capture start (the report's timeline).
    start_ms: float = 0.0
    fcp_ms: float | None = None
    #: FCP of any frame of the page (Lighthouse's firstContentfulPaintAllFrames).
    fcp_all_frames_ms: float | None = None
    lcp_ms: float | None = None
    #: The LCP element as Chrome names it: its type (image, text), size (px²) and node.
    lcp_type: str | None = None
    lcp_size: float | None = None
    lcp_node: str | None = None
    #: Session-windowed CLS over the page's frame tree (Lighthouse's cumulativeLayoutShift),
    #: and over the main frame alone.
    cls: float | None = None
    cls_main_frame: float | None = None
    layout_shifts: int = 0
    #: Time to Interactive: the end of TBT's window (Lighthouse's observed Interactive).
    tti_ms: float | None = None
    tbt_ms: float | None = None
    #: Main-thread top-level tasks of 50 ms or more between FCP and TTI (TBT's contributors).
    blocking_tasks: int = 0
    dcl_ms: float | None = None
    load_ms: float | None = None
    #: metric → why it is None and how to record a trace that has it.
    missing: dict[str, str] = msgspec.field(default_factory=dict)


class CpuUse(Result, kw_only=True):
    """CPU time of one process (``tid`` None) or one thread over the window, from sched data:
    trace_processor's ``thread_state`` Running (on a CPU) and R / R+ (waiting for one)."""

    pid: int
    tid: int | None = None
    name: str
    #: The thread's process name (threads only).
    process: str | None = None
    #: None when the source gives shares, not time (``dumpsys cpuinfo``, ``top``: see ``CpuStats.measure``).
    running_ms: float | None = None
    runnable_ms: float | None = None
    #: running / window length, and running / (window length × CPUs): fractions 0–1.
    share_of_window: float | None = None
    share_of_cpus: float | None = None
    #: The percentage as the source printed it (``dumpsys cpuinfo``: of all cores; ``top``: of one core).
    cpu_pct: float | None = None
    #: CPU time in user and kernel mode, when the source splits it (``perf stat``'s seconds user / sys).
    user_ms: float | None = None
    sys_ms: float | None = None


class CpuCore(Result, kw_only=True):
    """One CPU's frequency and idle residency (ftrace cpu_frequency / cpu_idle)."""

    cpu: int
    #: Time-weighted over the time the frequency is known (from its first event to the end).
    freq_avg_mhz: float | None = None
    freq_min_mhz: float | None = None
    freq_max_mhz: float | None = None
    #: Time in any idle state, and per idle state (its index as the kernel gives it), ms.
    idle_ms: float | None = None
    idle_share: float | None = None
    idle_states: dict[str, float] = msgspec.field(default_factory=dict)


class CpuSection(Result, kw_only=True):
    """CPU time per process and thread inside one section (a launch, Macrobenchmark's
    measureBlock): the scheduler intervals clipped to it."""

    name: str
    start_ms: float
    dur_ms: float
    processes: list[CpuUse] = msgspec.field(default_factory=list)
    threads: list[CpuUse] = msgspec.field(default_factory=list)


class CpuStats(Result, kw_only=True):
    #: What the shares are of: "trace" (the capture's bounds), "cpuinfo window", "top snapshot".
    window: str = "trace"
    #: None when the source does not say how long it measured (``top``'s one snapshot).
    window_ms: float | None = None
    #: What the rows measured: "sched" (thread_state Running / runnable), "cpuinfo" (``dumpsys
    #: cpuinfo``: % of all cores over its window), "top" (% of one core, one snapshot),
    #: "thread_time" (Chrome trace events' ``tdur``), "perf_stat" (``perf stat`` task-clock).
    measure: str = "sched"
    #: The source's own total: cpuinfo's TOTAL %, top's busy % of its capacity, perf stat's CPUs utilized.
    total_pct: float | None = None
    cpu_count: int | None = None
    processes: list[CpuUse] = msgspec.field(default_factory=list)
    threads: list[CpuUse] = msgspec.field(default_factory=list)
    cpus: list[CpuCore] = msgspec.field(default_factory=list)
    #: The same per section: each launch of the app ("startup"), each measureBlock.
    sections: list[CpuSection] = msgspec.field(default_factory=list)
    missing: list[MissingData] = msgspec.field(default_factory=list)


#: Points per memory series kept for the report's chart, and GC starts per process.
MAX_MEMORY_SAMPLES = 200
MAX_GC_MARKS = 200


class MemorySeries(Result, kw_only=True):
    """One memory counter of one process over the trace: start, peak, end, growth (MiB unless
    ``unit`` says otherwise). ``label`` names it as a person reads it: "process (pid): counter"."""

    name: str
    label: str
    unit: str = "MB"
    start: float
    peak: float
    end: float
    #: end − start
    growth: float
    #: When the peak was first reached, ms from the capture start.
    peak_ms: float
    points: int
    #: (ms from the capture start, value), at most MAX_MEMORY_SAMPLES, the peak and the last
    #: reading kept: the report's memory-over-time chart (``perfscout analyze --json`` drops it).
    samples: list[tuple[float, float]] = msgspec.field(default_factory=list)


class GcKind(Result, kw_only=True):
    """The GCs of one gc_type in one process (nodes/perf/metrics/gc.py)."""

    count: int
    total_ms: float
    max_ms: float
    #: Mutator threads stopped (ART's SuspendAll … ResumeAll, or concurrent copying's flip).
    pause_ms: float = 0.0
    #: Sum of the stdlib's reclaimed_mb over the GCs that have one; None when none has.
    reclaimed_mb: float | None = None


class GcSummary(Result, kw_only=True):
    """ART garbage collections of one process, as trace_processor's
    ``android_garbage_collection_events`` finds them, with their pauses and the main thread's
    waits for them (nodes/perf/metrics/gc.py says where each number is defined)."""

    count: int
    total_ms: float
    max_ms: float
    #: gc_type (young, full, alloc, native_alloc, collector_transition, explicit) → count.
    types: dict[str, int] = msgspec.field(default_factory=dict)
    #: gc_type → count, durations, pause and reclaimed of that type, the longest in total first.
    by_type: dict[str, GcKind] = msgspec.field(default_factory=dict)
    #: Time the GCs stopped every mutator thread, in total and the longest one GC's.
    pause_ms: float = 0.0
    pause_max_ms: float = 0.0
    #: The GC thread's states during its GCs (gc_running_dur, gc_runnable_dur, gc_unint_io_dur,
    #: gc_unint_non_io_dur, gc_int_dur summed); None without scheduler data.
    running_ms: float | None = None
    runnable_ms: float | None = None
    unint_io_ms: float | None = None
    unint_non_io_ms: float | None = None
    int_ms: float | None = None
    #: Heap reclaimed (stdlib reclaimed_mb, summed over the GCs that have one); None when none has.
    reclaimed_mb: float | None = None
    #: The main thread (tid = pid) blocked waiting for a GC: how often, and for how long.
    main_thread_waits: int = 0
    main_thread_wait_ms: float = 0.0
    #: The thread that ran most of them (HeapTaskDaemon, usually).
    thread: str | None = None
    #: When the first MAX_GC_MARKS of them started (ms from the capture start): the report marks
    #: them on the memory chart (``perfscout analyze --json`` drops it).
    starts_ms: list[float] = msgspec.field(default_factory=list)


class MemoryProcess(Result, kw_only=True):
    pid: int
    name: str
    #: The highest RSS seen (MiB): ``mem.rss`` (process_stats), else anon + file + shmem.
    rss_max_mb: float | None = None
    series: list[MemorySeries] = msgspec.field(default_factory=list)
    gc: GcSummary | None = None
    #: Killed by lmkd during the trace.
    killed: bool = False


class LmkKill(Result, kw_only=True):
    """A low-memory kill by lmkd, as trace_processor's ``android_lmk_events``."""

    ts_ms: float
    pid: int
    process: str | None = None
    #: lmkd's kill reason (LOW_MEM_AND_SWAP, …) and the victim's oom_score_adj, when recorded.
    kill_reason: str | None = None
    oom_score_adj: int | None = None


class MemoryStats(Result, kw_only=True):
    #: The app first (when one is identified), then by highest RSS (the 20 largest), then the
    #: ones that grew the most among the rest (nodes/perf/metrics/memory.py MAX_GROWERS).
    processes: list[MemoryProcess] = msgspec.field(default_factory=list)
    #: The app the analysis is scoped to (AnalysisResult.app), None when none was identified.
    app_pid: int | None = None
    lmk_kills: list[LmkKill] = msgspec.field(default_factory=list)
    missing: list[MissingData] = msgspec.field(default_factory=list)


class BlockingOverlap(Result, kw_only=True):
    """Where a blocking interval fell: inside the app's startup, and which janky frames."""

    in_startup: bool = False
    #: Start (ms from the capture start) of each janky frame of the app it overlapped.
    janky_frames: list[float] = msgspec.field(default_factory=list)


class BinderWait(Result, kw_only=True):
    """A synchronous binder call: the client thread waited ``dur_ms`` for the server's reply."""

    client: str
    client_tid: int
    server: str | None = None
    server_thread: str | None = None
    server_tid: int | None = None
    start_ms: float
    dur_ms: float
    overlap: BlockingOverlap = msgspec.field(default_factory=BlockingOverlap)


class BinderServer(Result, kw_only=True):
    server: str
    calls: int
    total_ms: float
    max_ms: float


class LockWait(Result, kw_only=True):
    """A lock contention slice (ART's ``monitor contention with owner …`` / ``Lock contention on …``)."""

    thread: str
    tid: int
    start_ms: float
    dur_ms: float
    #: "monitor" for a Java monitor, else the lock ART names (``thread list lock``, …).
    lock: str
    owner: str | None = None
    owner_tid: int | None = None
    owner_method: str | None = None
    blocked_method: str | None = None
    waiters: int | None = None
    overlap: BlockingOverlap = msgspec.field(default_factory=BlockingOverlap)


class StateWait(Result, kw_only=True):
    """Uninterruptible sleep (D) of the thread; ``io_wait`` as sched_blocked_reason said, None
    when nothing said."""

    start_ms: float
    dur_ms: float
    io_wait: bool | None = None
    overlap: BlockingOverlap = msgspec.field(default_factory=BlockingOverlap)


class BlockingStats(Result, kw_only=True):
    """What the app's main thread waited on: binder, locks, uninterruptible sleep
    (nodes/perf/metrics/blocking.py). Lists are the longest first, at most 20 each."""

    thread: str | None = None
    pid: int | None = None
    tid: int | None = None
    binder_calls: int = 0
    binder_ms: float = 0.0
    lock_waits: int = 0
    lock_ms: float = 0.0
    d_ms: float = 0.0
    io_wait_ms: float | None = None
    binder: list[BinderWait] = msgspec.field(default_factory=list)
    binder_servers: list[BinderServer] = msgspec.field(default_factory=list)
    locks: list[LockWait] = msgspec.field(default_factory=list)
    d_state: list[StateWait] = msgspec.field(default_factory=list)
    #: The longest lock waits on other threads of the app (contention the main thread did not see).
    other_locks: list[LockWait] = msgspec.field(default_factory=list)
    missing: list[MissingData] = msgspec.field(default_factory=list)


class ScrollUpdate(Result, kw_only=True):
    """One scroll update (an EventLatency span of a scroll-update type)."""

    start_ms: float
    #: Input-to-frame latency; None when its span never ended.
    latency_ms: float | None = None
    type: str
    #: Chrome's scroll jank v3 verdict on the frame this update was judged by; None for the
    #: updates Chrome did not judge (coalesced into another's frame).
    janky: bool | None = None
    #: On a janky update: the EventLatency stage that grew the most over the previous frame
    #: Chrome judged in the same scroll (Perfetto's ``chrome_get_v3_jank_cause_id``); else None.
    jank_cause: str | None = None


class ScrollStage(Result, kw_only=True):
    """One EventLatency stage (a direct child span: GenerationToBrowserMain,
    RendererCompositorQueueingDelay, … SubmitCompositorFrameToPresentationCompositorFrame) over
    the janky scroll updates (nodes/perf/metrics/scroll.py)."""

    name: str
    #: Janky updates that have this stage, and its duration over them (ms, nearest rank).
    janky_updates: int
    p50_ms: float
    p90_ms: float
    total_ms: float
    #: total_ms over the summed latency of the janky updates (0–1).
    share_of_janky_latency: float
    #: The same stage's p50 over every scroll update that has it, to compare against.
    all_p50_ms: float | None = None


#: At most this many scroll updates are listed one by one (``update_count`` counts them all).
MAX_SCROLL_UPDATES = 10_000


class ScrollStats(Result, kw_only=True):
    """Chrome scrolling, from Chrome's own EventLatency / ScrollJankV4 / PipelineReporter spans
    (nodes/perf/metrics/scroll.py): its jank verdicts counted, input-to-frame latency measured."""

    #: Scroll gestures (GESTURE_SCROLL_BEGIN) and scroll updates (first, plain, inertial): their
    #: count, and the updates one by one in time order (at most MAX_SCROLL_UPDATES).
    scrolls: int = 0
    update_count: int = 0
    updates: list[ScrollUpdate] = msgspec.field(default_factory=list)
    #: Frames that presented a scroll update (the updates carrying Chrome's verdict), those its
    #: scroll jank v3 marked janky (``is_janky_scrolled_frame``), and their ratio.
    presented_frames: int = 0
    janky_frames: int = 0
    janky_ratio: float | None = None
    #: Chrome's scroll jank v4 verdicts (ScrollJankV4 ``is_janky``) over the frames it judged.
    v4_frames: int = 0
    v4_janky_frames: int = 0
    #: Chrome's reasons for its v4 janky frames (ScrollJankV4 ``missed_vsyncs_per_jank_reason``):
    #: reason → janky frames naming it, most first. Empty when Chrome wrote none.
    jank_reasons: dict[str, int] = msgspec.field(default_factory=dict)
    #: Where the janky updates' latency went: EventLatency's stages over the updates Chrome's v3
    #: judged janky, most time first; ``dominant_stage`` is the first of them.
    janky_stages: list[ScrollStage] = msgspec.field(default_factory=list)
    dominant_stage: str | None = None
    #: Per janky update the stage that grew the most over the previous judged frame (Perfetto's
    #: ``cause_of_jank`` rule): stage → janky updates, most first.
    jank_causes: dict[str, int] = msgspec.field(default_factory=dict)
    #: Input-to-frame latency of the scroll updates (EventLatency duration), ms, nearest rank.
    latency_p50_ms: float | None = None
    latency_p90_ms: float | None = None
    latency_p99_ms: float | None = None
    latency_max_ms: float | None = None
    #: Chrome's frame reporter states (PipelineReporter): STATE_PRESENTED_ALL → count, …
    frame_states: dict[str, int] = msgspec.field(default_factory=dict)
    dropped_frames: int = 0
    partial_frames: int = 0
    missing: list[MissingData] = msgspec.field(default_factory=list)


class PowerWindow(Result, kw_only=True):
    """Energy over one window, as androidx Macrobenchmark's PowerMetric computes it
    (``nodes/perf/metrics/power.py``): per rail the counter's increase over the readings inside
    the window, per category the sum of its rails."""

    #: "trace" for the whole capture, else the section's name (Macrobenchmark's measureBlock).
    name: str
    start_ms: float
    dur_ms: float
    energy_uws: float
    #: Sum over rails of energy / that rail's reading span (µW).
    power_uw: float
    #: The rails' reading spans inside the window (ms): from a rail's first to its last reading,
    #: the time PowerMetric divides by — shorter than ``dur_ms`` when readings are sparse.
    reading_span_ms: tuple[float, float] | None = None
    #: PowerMetric category (CPU, DISPLAY, GPU, GPS, MEMORY, MACHINE_LEARNING, NETWORK,
    #: UNCATEGORIZED) → energy (µWs); only categories with a rail.
    categories: dict[str, float] = msgspec.field(default_factory=dict)
    category_power_uw: dict[str, float] = msgspec.field(default_factory=dict)
    #: Rail, named as Macrobenchmark names its components (CpuBig, Display …) → energy (µWs).
    rails: dict[str, float] = msgspec.field(default_factory=dict)
    #: Battery charge (mAh) as BatteryDischargeQuery reads it: the highest and lowest
    #: ``batt.charge_uah`` in the window and their difference; None without battery counters.
    battery_start_mah: float | None = None
    battery_end_mah: float | None = None
    battery_diff_mah: float | None = None


class PowerStats(Result, kw_only=True):
    windows: list[PowerWindow] = msgspec.field(default_factory=list)
    #: Component name → (trace_processor counter name, rail name, subsystem as the device says).
    rails: dict[str, list[str]] = msgspec.field(default_factory=dict)
    #: Rails whose counter went backwards (reset): readings across a reset add nothing.
    resets: dict[str, int] = msgspec.field(default_factory=dict)
    #: The sections the user named (``--section``, ``sections=``, a quoted name in the question),
    #: in their order → None when windows of that name are measured, else why none is. The
    #: answer leads with the first of them (metrics/power.py summarize_power).
    named: dict[str, str | None] = msgspec.field(default_factory=dict)
    missing: list[MissingData] = msgspec.field(default_factory=list)


class Finding(Result, kw_only=True):
    title: str
    severity: Severity
    detail: str
    evidence: Evidence = msgspec.field(default_factory=Evidence)
    metric: dict[str, float | str] = msgspec.field(default_factory=dict)
    #: The metric family that produced it ("startup", "frames", …): a startup trace's answer
    #: leads with the startup family's findings.
    family: str | None = None
    #: What to do about it, one line from a curated offline table (no model involved).
    suggestion: str | None = None
    #: The documentation that explains the fix (Android developers, web.dev …).
    link: str | None = None


class AnalysisResult(Result, kw_only=True):
    """What the analyzer found. JSON-able; stored in the graph state as ``analysis``."""

    format: str
    source: str
    duration_ms: float = 0.0
    hotspots: list[Hotspot] = msgspec.field(default_factory=list)
    #: Task runners' self time (nodes/perf/containers.py): untraced time inside tasks, not hot spots.
    untraced_in_tasks: list[Hotspot] = msgspec.field(default_factory=list)
    #: Per-name slice statistics for the app and for all processes (TraceSectionMetric's view).
    slice_stats: list[SliceStat] = msgspec.field(default_factory=list)
    #: The app process the analysis is scoped to, when one is identified.
    app: AppScope | None = None
    threads: list[ThreadStat] = msgspec.field(default_factory=list)
    #: The longest long tasks of the main thread (nodes/perf/metrics/threads.py keeps 20) …
    long_tasks: list[LongTask] = msgspec.field(default_factory=list)
    #: … and how many there are in all (None: not counted, e.g. an older report.json).
    long_task_count: int | None = None
    frames: FrameStats | None = None
    startup: StartupStats | None = None
    #: Web vitals of the main navigation (Lighthouse's: the last one in the trace) …
    page: PageVitals | None = None
    #: … and of every navigation of the main frame, in order, when there are several.
    pages: list[PageVitals] = msgspec.field(default_factory=list)
    counters: list[CounterSummary] = msgspec.field(default_factory=list)
    stats: dict[str, float] = msgspec.field(default_factory=dict)
    meta: dict[str, str] = msgspec.field(default_factory=dict)
    findings: list[Finding] = msgspec.field(default_factory=list)
    warnings: list[str] = msgspec.field(default_factory=list)
    partial: bool = False
    #: The heaviest sampled (or slice-nesting) stacks, at most MAX_RESULT_STACKS; empty when the
    #: data has none. The reporter draws its icicle and writes its speedscope export from these.
    stacks: list[StackWeight] = msgspec.field(default_factory=list)
    #: CPU time per process and thread (sched data), per CPU frequency and idle residency.
    cpu: CpuStats | None = None
    #: Memory per process over time (RSS anon/file/shmem, swap, heap), lmkd kills, ART GC.
    memory: MemoryStats | None = None
    #: Chrome scrolling: jank verdicts, input-to-frame latency, frame fates (EventLatency).
    scroll: ScrollStats | None = None
    #: What the app's main thread waited on (binder, locks, D state), and in which frames.
    blocking: BlockingStats | None = None
    #: Energy by rail and category (ODPM power rails), whole trace then each measured section.
    power: PowerStats | None = None

    def long_tasks_seen(self) -> int:
        """How many long tasks there are in all: ``long_tasks`` keeps only the longest."""
        return self.long_task_count if self.long_task_count is not None else len(self.long_tasks)
