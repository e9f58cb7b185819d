"""What every metric family shares: the analysis context and the unit helpers.

:class:`Context` carries the state one analysis builds up in a fixed order (see
:func:`nodes.perf.metrics.compute`): the per-thread slice walk and the sampled-stack
aggregation (:mod:`.hotspots`) come first, then the main thread (:mod:`.threads`), which the
frame and startup families read. Each family module is plain functions of a ``Context``.
"""

from __future__ import annotations

import math
import os
from array import array
from collections import defaultdict
from operator import attrgetter

import numpy as np

from nodes.perf.units import ms, pct
from nodes.perf.model import AnalysisResult, PerfData

LONG_TASK_MS = 50.0
TOP_HOTSPOTS = 30
TOP_PER_THREAD = 10
MAX_THREADS = 64
MAX_FRAME_POINTS = 5000
#: Points per counter series in the result (the chart's resolution); the reader keeps up to
#: model.MAX_COUNTER_POINTS.
MAX_COUNTER_RESULT_POINTS = 200
MAX_COUNTERS = 60
MAX_PATHS = 200_000

ANDROID_FRAME = "Choreographer#doFrame"


def _ms(us: float) -> float:
    return round(us / 1000.0, 3)


def _pct(part: float, whole: float) -> float:
    return round(100.0 * part / whole, 2) if whole > 0 else 0.0


#: Finding texts write numbers as the report does (nodes/perf/units.py), so a finding and the
#: table beside it show the same number.
_fms = ms
_fpct = pct


def shown_path(path: str, root: str | None) -> str:
    """A path as a person reads it in a finding: relative to ``root`` (the workspace the caller
    passed in) when it lies inside it, else as given — never relative to the process's current
    directory, so the same analysis reads the same wherever it runs. Hotspot.file keeps the
    absolute path: the attributor opens it."""
    if not path or not root or not os.path.isabs(path):
        return path
    try:
        rel = os.path.relpath(path, root)
    except ValueError:  # another drive
        return path
    return path if rel == ".." or rel.startswith(".." + os.sep) else rel


def _q(sorted_vals: list[float], q: float) -> float | None:
    """Nearest-rank percentile of an ascending list."""
    if not sorted_vals:
        return None
    k = max(0, min(len(sorted_vals) - 1, math.ceil(q / 100.0 * len(sorted_vals)) - 1))
    return sorted_vals[k]


def unique_inverse(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(x, return_inverse=True)`` of a 1-D array, by a stable sort: ~2x faster on
    the columns the slice walk ranks (times and keys of threads laid end to end, each thread's
    mostly ascending: timsort's runs, where unique's quicksort gains nothing). Floats with NaN,
    or with both 0.0 and -0.0 (unique keeps whichever its sort puts first), take ``np.unique``."""
    if x.dtype.kind == "f":
        negative_zero = np.signbit(x[x == 0.0])
        if np.isnan(x).any() or (negative_zero.any() and not negative_zero.all()):
            uniq, inv = np.unique(x, return_inverse=True)
            return uniq, inv.reshape(-1)
    order = np.argsort(x, kind="stable")
    s = x[order]
    first = np.empty(len(s), dtype=bool)
    first[:1] = True
    np.not_equal(s[1:], s[:-1], out=first[1:])
    inv = np.empty(len(x), dtype=np.int64)
    inv[order] = np.cumsum(first) - 1
    return s[first], inv


def joined_column(cols: list, field: str, dtype) -> np.ndarray:
    """One column of many tracks, concatenated (one join of their buffers when they are arrays
    of that type already: a trace of 11,000 threads paid a numpy call for each)."""
    parts = list(map(attrgetter(field), cols))
    dt = np.dtype(dtype)
    if set(map(type, parts)) <= {array} and all(np.dtype(t) == dt for t in set(map(attrgetter("typecode"), parts))):
        return np.frombuffer(b"".join(parts), dtype=dt)
    return np.concatenate([np.asarray(x).astype(dt, copy=False) for x in parts])


def read_column(cols: list, field: str, dtype) -> np.ndarray:
    """:func:`joined_column`, but one track's column that is of that type already comes as a
    read-only view of its buffer, not a copy: a batch of one thread of millions of slices
    (hotspots._native_walk) copied its times and durations, 24 MB each at 3 M slices, next
    to the C walk's own columns (tests/test_reliability_memory_bounds.py). Read-only, so a
    caller that writes into it fails instead of changing ``pd.slices``; held only while the
    caller runs (an ``array`` cannot grow while a view of it exists)."""
    if len(cols) == 1:
        x = getattr(cols[0], field)
        dt = np.dtype(dtype)
        if isinstance(x, array) and np.dtype(x.typecode) == dt:
            view = np.frombuffer(x, dtype=dt)
        elif isinstance(x, np.ndarray) and x.dtype == dt and x.ndim == 1 and x.flags.c_contiguous:
            view = x.view()
        else:
            return joined_column(cols, field, dtype)
        view.flags.writeable = False
        return view
    return joined_column(cols, field, dtype)


#: ``_Thread.names`` of a thread of the C walk: its distinct names are read from the walk's
#: columns when asked for (None stays "not known").
_FROM_SUMS = object()


class _Thread:
    """Per-thread results of the slice walk. The per-name sums (``self_by``, ``total_by``,
    ``count_by``) of a thread the C walk walked stay in that walk's columns until first read
    (``_sums``): a trace has ten thousand threads, and most are only ever summed over.

    So do its slices in walk order (``ts``, ``dur``, ``name``) when the walk could keep only
    where each lies in the thread's own columns of ``pd.slices`` (``_src``; hotspots.WalkSums.at,
    4 bytes a slice): they are gathered from there on each read, not held — at 1 GB read whole
    the sorted copies of every thread's 4.3 M slices were ~100 MB, held for the whole analysis,
    and most threads are only looked at once (the frame and launch finders' name tests)."""

    __slots__ = ("key", "busy_us", "count", "_self_by", "_total_by", "_count_by", "_sums", "_s", "_top", "_roots",
                 "_ts", "_dur", "_name", "_names", "_src")

    def __init__(self, key: tuple[int, int]):
        self.key = key
        self.busy_us = 0.0
        self.count = 0
        self._self_by: dict[int, float] | None = defaultdict(float)
        self._total_by: dict[int, float] | None = defaultdict(float)
        self._count_by: dict[int, int] | None = defaultdict(int)
        self._sums = None
        self._s = 0
        self._top: list[tuple[float, float, int]] | None = []
        self._roots: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._ts: np.ndarray | None = np.empty(0)
        self._dur: np.ndarray | None = np.empty(0)
        self._name: np.ndarray | None = np.empty(0, dtype=np.int64)
        self._src = None
        #: The distinct ids of ``name``, ascending (``np.unique(name).tolist()``), as the walk
        #: finds them; None when it did not (android_startup's index then finds them itself).
        self._names: list[int] | None = None

    @classmethod
    def of(cls, key: tuple[int, int], ts: np.ndarray, dur: np.ndarray, name: np.ndarray, busy_us: float,
           self_by: dict, total_by: dict, count_by: dict,
           roots: tuple[np.ndarray, np.ndarray, np.ndarray]) -> "_Thread":
        """A thread's results made whole (hotspots' batch walk makes ten thousand at once);
        ``roots`` are the (start, duration, name id) columns of its top-level slices."""
        th = cls.__new__(cls)
        th.key, th._ts, th._dur, th._name, th.count, th.busy_us = key, ts, dur, name, len(ts), busy_us
        th._self_by, th._total_by, th._count_by, th._sums, th._s, th._top, th._roots = (
            self_by, total_by, count_by, None, 0, None, roots)
        th._names = th._src = None
        return th

    @classmethod
    def walked(cls, key: tuple[int, int], count: int, busy_us: float, sums, s: int, src=None,
               cols: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None) -> "_Thread":
        """A thread of hotspots' C walk: its sums, top-level slices and distinct names are thread
        ``s`` of ``sums`` (hotspots.WalkSums), made into dicts and lists when read; its slices
        are ``cols`` (ts, dur, name in walk order), or else gathered from ``src`` (its columns in
        ``pd.slices``) by ``sums.at`` on each read."""
        th = cls.__new__(cls)
        th.key, th.count, th.busy_us = key, count, busy_us
        th._self_by = th._total_by = th._count_by = th._top = th._roots = None
        th._sums, th._s, th._src = sums, s, src
        th._ts, th._dur, th._name = cols if cols is not None else (None, None, None)
        th._names = _FROM_SUMS
        return th

    @property
    def ts(self) -> np.ndarray:
        """Slice starts (µs) in walk order: by start, longer first."""
        return self._ts if self._ts is not None else self._sums.gathered(self._s, self._src.ts, np.float64)

    @ts.setter
    def ts(self, v: np.ndarray) -> None:
        self._ts = v

    @property
    def dur(self) -> np.ndarray:
        """Slice durations (µs, at least 0), beside ``ts``."""
        return self._dur if self._dur is not None else self._sums.gathered(self._s, self._src.dur, np.float64)

    @dur.setter
    def dur(self, v: np.ndarray) -> None:
        self._dur = v

    @property
    def name(self) -> np.ndarray:
        """Slice name ids (int64), beside ``ts``."""
        return self._name if self._name is not None else self._sums.gathered(self._s, self._src.name, np.int64)

    @name.setter
    def name(self, v: np.ndarray) -> None:
        self._name = v

    @property
    def names(self) -> list[int] | None:
        """The distinct ids of ``name``, ascending (``np.unique(name).tolist()``), as the walk
        finds them; None when it did not (android_startup's index then finds them itself)."""
        return self._sums.names(self._s) if self._names is _FROM_SUMS else self._names

    @names.setter
    def names(self, v: list[int] | None) -> None:
        self._names = v

    @property
    def self_by(self) -> dict[int, float]:
        """Self time per name id, in the order the walk first closed a slice of each name."""
        if self._self_by is None:
            self._self_by = self._sums.self_by(self._s)
        return self._self_by

    @property
    def total_by(self) -> dict[int, float]:
        """Total time per name id (outermost occurrences), in the order of their starts."""
        if self._total_by is None:
            self._total_by = self._sums.total_by(self._s)
        return self._total_by

    @property
    def count_by(self) -> dict[int, int]:
        """Slices per name id, ids ascending."""
        if self._count_by is None:
            self._count_by = self._sums.count_by(self._s)
        return self._count_by

    @property
    def top_level(self) -> list[tuple[float, float, int]]:
        """(start, duration, name id) of each top-level slice, by start: made from the columns
        the batch walk left on first use, as only the main thread's are read (threads.long_tasks)
        — a tuple for each of the hundreds of thousands of tasks of a trace was made and freed
        for nothing."""
        if self._top is None:
            if self._sums is not None:
                r = self._sums.roots(self._s)
                self._top = list(zip(self.ts[r].tolist(), self.dur[r].tolist(), self.name[r].tolist())) if len(r) else []
            else:
                self._top = list(zip(*(c.tolist() for c in self._roots))) if self._roots is not None else []
        return self._top

    def keep_roots(self, ts: np.ndarray, dur: np.ndarray, name: np.ndarray) -> None:
        """Hold the (start, duration, name id) columns of the top-level slices (hotspots.walk)
        in place of a tuple for each: ``top_level`` makes the list when read."""
        self._top, self._roots = None, (ts, dur, name)

    def top_level_at_least(self, min_dur: float) -> list[tuple[float, float, int]]:
        """The (start, duration, name id) of ``top_level`` whose duration is ``min_dur`` µs or
        more, in its order (``[x for x in top_level if x[1] >= min_dur]``): only those become
        tuples. threads.long_tasks asks for the few tasks of 50 ms or more; through
        ``top_level`` a trace of 3 M top-level slices on one thread (the 10⁷ tiny events of
        tests/test_reliability_hostile.py, read up to the event cap) made a tuple of three
        boxed numbers for each and kept them: ~500 MB, the analysis' peak."""
        if self._top is not None:
            return [x for x in self._top if x[1] >= min_dur]
        if self._sums is not None:
            r = self._sums.roots(self._s)
            keep = r[_at_least(self.dur[r], min_dur)]
            # each column gathered (hotspots.WalkSums.gathered) and dropped in turn
            return list(zip(self.ts[keep].tolist(), self.dur[keep].tolist(), self.name[keep].tolist()))
        if self._roots is None:
            return []
        keep = _at_least(self._roots[1], min_dur)
        return list(zip(*(c[keep].tolist() for c in self._roots)))


def _at_least(dur: np.ndarray, min_dur: float) -> np.ndarray:
    """Positions of ``dur`` (float64) at ``min_dur`` or more, as Python's ``>=`` on its
    ``tolist()`` finds them (NaN is never kept)."""
    return np.flatnonzero(np.asarray(dur, dtype=np.float64) >= min_dur)


class Context:
    """The state of one analysis, shared by the family functions."""

    def __init__(self, pd: PerfData, top: int):
        self.pd = pd
        self.top = top
        self.t0 = pd.start_us or 0.0
        self.threads: dict[tuple[int, int], _Thread] = {}
        self.sampled_busy: dict[tuple[int, int], float] = defaultdict(float)
        #: Sampled stacks' weights by (track, ("s", frames...)); slice paths are in slice_paths.
        self.paths: dict[tuple[tuple[int, int], tuple], float] = defaultdict(float)
        #: Per thread, the self time of every root-to-slice path of names (hotspots.SlicePaths),
        #: kept as arrays: only the heaviest become tuples (hotspots.stacks).
        self.slice_paths: list = []
        self.slice_path_count = 0
        #: Every thread's self time per name as the C walk left it (hotspots.walk_all): name ids,
        #: times, and thread i's rows [at[i], at[i + 1]) in ``threads``' order; None without it.
        self.walk_self: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        #: slice_stats' (thread, name) groups as the C walk left them (hotspots._walked_groups):
        #: groups per thread in ``threads``' order, then name, count, sum, min, max, first start
        #: and duration per group; None without the C walk, or with a duration of -0.0.
        self.walk_groups: tuple | None = None
        self.main: tuple[int, int] | None = None
        self.res = AnalysisResult(format=pd.format, source=pd.source)
        self.sample_rows: list = []
        #: Set by threads.long_tasks: every long task, not only the 20 kept in the result.
        self.long_count: int | None = None
        #: The app process the analysis is scoped to (metrics/scope.py), None when none is found.
        self.scope = None
        #: The user's ``--process`` choice (a name or a pid), if any.
        self.process: str | None = None
        #: The workspace findings show paths relative to (None: paths as the data gives them).
        self.root: str | None = None
        #: Slices the user named (``--section NAME``): the power and CPU lenses add a window for
        #: each, beside ``trace`` and ``measureBlock`` (metrics/slice_find.py named_sections).
        self.sections: tuple[str, ...] = ()

    def drop_caches(self) -> None:
        """Forget what a family kept on the context for itself (attributes named with a leading
        underscore, set through ``ctx.__dict__``: android_startup's slice index, startup_reasons'
        lookups, the CPU lens's scheduler index): each is rebuilt if asked for again, and none
        is another family's input — at 1 GB read whole they were tens of MB held through the
        families after theirs."""
        for name in [k for k in self.__dict__ if k.startswith("_")]:
            del self.__dict__[name]

    def path_count(self) -> int:
        """Paths held so far, slices' and samples' (bounded by MAX_PATHS)."""
        return len(self.paths) + self.slice_path_count

    def rel(self, us: float) -> float:
        return _ms(us - self.t0)
