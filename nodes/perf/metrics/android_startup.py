"""Android app startups in a system trace, per launch, as the reference tools define them.

Each definition follows a public source (read, not copied; the SQL is Apache-2.0, AOSP):

* **Which launches, when** — Perfetto's ``android_startups``
  (src/trace_processor/perfetto_sql/stdlib/android/startup/startups*.sql). By the SDK level
  the trace reports (``system_info.android_sdk_version``), else by the markers present:
  *SDK ≥ 33*: the async ``launchingActivity#N`` slice, joined with its
  ``launchingActivity#N:completed[-kind]:<package>`` instant; *SDK 29–32*: from the
  ``MetricsLogger:launchObserverNotifyIntentStarted`` slice to the end of the one
  ``launching: <package>`` slice in its partition (a ``…NotifyActivityLaunchFinished`` must be
  there too); *SDK ≤ 28*: the ``launching: <package>`` slice of system_server, plus hot starts
  from an ``activityResume`` outside any launch to the end of the first frame after it.
* **The app's process, kind** — ``android_startup_processes``: of the package's processes
  (nodes/perf/android_package.py: name GLOB ``<package>*``), the one whose main thread resumed
  an activity between start and end; on that main thread,
  bindApplication + activityStart + activityResume → cold; activityStart + activityResume →
  warm; activityResume → hot. A kind the platform wrote (``completed-warm``) wins.
* **TTID / TTFD** — androidx Macrobenchmark's ``StartupTimingQuery`` (what
  StartupTimingMetric reports): TTID ends with the first ``DrawFrame*`` on the app's
  RenderThread that starts after the first ``Choreographer#doFrame*`` on the main thread
  starting after the ``launching:`` slice began; TTFD the same after the first main-thread
  ``Choreographer#doFrame*`` that ends after the first ``reportFullyDrawn*``. Both are measured
  from the startup's start (``android_startups.ts``), as ``android_startup_time_to_display``
  measures them.
* **Breakdown** — ``android_startup_opinionated_breakdown`` (startup_breakdowns.sql): every
  moment of the startup on the app's main thread gets one reason: ``io`` when its blocked
  interval waited on IO (sched_blocked_reason), else the deepest main-thread slice with a
  normalised name (binder, monitor_contention, verify_class, bind_application, …), else the
  scheduler state (Running, R, R+, S, D); the time before the main thread's first scheduler
  state is ``launch_delay``.
* **Slow-start reasons** — trace_processor's ``android_startup`` metric
  (src/trace_processor/metrics/sql/android/startup/slow_start_reasons.sql with the thresholds of
  slow_start_thresholds.sql), the reasons the data here can decide.
* **ART** — Macrobenchmark's ArtMetric: ``JIT Compiling %``, ``L%/%;`` (class init) and
  ``VerifyClass %`` slices of the target process (SQL LIKE: ASCII case-insensitive).

Numbers the trace cannot give are None with a line in ``missing`` naming the Perfetto config
that records them — never estimated. docs/perfetto.md compares every figure with the
reference tools' own answers on the shared captures.
"""

from __future__ import annotations

from bisect import bisect_left
import re
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import chain

import numpy as np

from nodes.perf.model import (
    ArtCount,
    ArtStats,
    BreakdownItem,
    MainThreadState,
    PartInside,
    PerfData,
    StartupPhase,
    StartupRun,
)
from nodes.perf.android_package import LAUNCHING, app_pids
from nodes.perf.sched_state import SchedState

LAUNCHING_ACTIVITY = "launchingActivity#"
INTENT_STARTED = "MetricsLogger:launchObserverNotifyIntentStarted"
LAUNCH_FINISHED = "MetricsLogger:launchObserverNotifyActivityLaunchFinished"
DO_FRAME = "Choreographer#doFrame"
DRAW_FRAME = "DrawFrame"
FULLY_DRAWN = "reportFullyDrawn"
JIT_THREAD = "Jit thread pool"

#: Perfetto config lines that record what a number needs (docs/perfetto.md repeats them).
CONFIG_SCHED = ('data_sources { config { name: "linux.ftrace" ftrace_config { '
                'ftrace_events: "sched/sched_switch" ftrace_events: "sched/sched_waking" '
                'ftrace_events: "sched/sched_blocked_reason" } } }')
CONFIG_BLOCKED = 'ftrace_config { ftrace_events: "sched/sched_blocked_reason" }'
CONFIG_ATRACE = ('ftrace_config { atrace_categories: "am" atrace_categories: "view" '
                 'atrace_categories: "gfx" atrace_categories: "dalvik" atrace_apps: "<package>" }')


# --- the slices of one trace, by thread ----------------------------------------------------
@dataclass
class _Slices:
    """One thread's slices, sorted by start: numpy columns and the names."""

    ts: np.ndarray
    dur: np.ndarray
    name: np.ndarray  # string ids
    #: The distinct name ids of the thread, ascending (set once, by the index).
    present: list[int] | None = None
    present_set: frozenset[int] | None = None
    #: The analysis's answers of name tests (:class:`_NameTests`), None: every name tested.
    tests: "_NameTests | None" = None

    def names(self) -> list[int]:
        if self.present is None:
            self.present = np.unique(self.name).tolist() if len(self.name) else []
        return self.present

    def where(self, pd: PerfData, test) -> list[tuple[float, float, str]]:
        if self.tests is not None:
            return self.rows(pd, self.tests.passing(pd, test, self.present_ids()))
        return self.rows(pd, {i for i in self.names() if test(pd.strings[i])})

    def named(self, pd: PerfData, name: str) -> list[tuple[float, float, str]]:
        """``where(pd, lambda n: n == name)`` by the name's one interned id (the string table
        maps each string to one id): no test of each of the thread's names, which a launch
        asks for each of its threads and names (4,000 such passes on the 100 MB trace)."""
        ids = getattr(pd.strings, "ids", None)
        if ids is None:  # a plain list of strings (a PerfData built by hand)
            return self.where(pd, lambda n: n == name)
        i = ids.get(name)
        if i is None:
            return []
        return self.rows(pd, {i}) if i in self.present_ids() else []

    def present_ids(self) -> frozenset[int]:
        if self.present_set is None:
            self.present_set = frozenset(self.names())
        return self.present_set

    def rows(self, pd: PerfData, ids: set[int]) -> list[tuple[float, float, str]]:
        """The slices whose name id is in ``ids``, in start order (a few ids by comparisons:
        ``np.isin``'s fixed cost is ~5x theirs, and a trace of many launches asks ~1,000 times)."""
        if not ids:
            return []
        if len(ids) <= 8:
            want = iter(ids)
            m = self.name == next(want)
            for i in want:
                m |= self.name == i
        else:
            m = np.isin(self.name, list(ids))
        return [(t, d, pd.strings[n]) for t, d, n in zip(self.ts[m].tolist(), self.dur[m].tolist(), self.name[m].tolist())]


class _SliceIndex:
    """Each thread's slices with the names it holds, the threads of each name and of each pid:
    built once per analysis. A trace with many launches asks the same questions once a launch;
    the index answers each from the threads concerned, not from every thread of the trace."""

    def __init__(self, ctx):
        self.by_pid: dict[int, list[tuple[int, int]]] = {}
        held = []
        for key, th in ctx.threads.items():
            self.by_pid.setdefault(key[0], []).append(key)
            if th.count:
                held.append((key, th))
        # the distinct names the walk found (hotspots.walk), else found here
        distinct = [th.names for _k, th in held]
        unknown = [j for j, names in enumerate(distinct) if names is None]
        for j, names in zip(unknown, _distinct_names([held[j][1].name for j in unknown])):
            distinct[j] = names
        keys = [k for k, _th in held]
        #: The answers of the name tests the launches ask (of every thread's names).
        self.tests = _NameTests()
        self.slices: Mapping[tuple[int, int], _Slices] = _HeldSlices(dict(zip(keys, zip(held, distinct))), self.tests)
        self.by_name: Mapping[int, list[tuple[int, int]]] = _ThreadsByName(keys, distinct)
        #: _all_thread_slices answers asked for by a name (``cache=``), kept for the analysis.
        self.answers: dict[str, list] = {}


class _NameTests:
    """Which name ids pass each name test of the analysis, kept across threads and launches:
    the launches of a trace ask the same tests (``lambda n: n.startswith(DO_FRAME)``, a phase's
    name, an ART pattern) of many threads that share their names, each a new lambda. A test is
    known by its code, defaults and closure values: the tests here are functions of the name
    alone, so those say what it answers. A test whose closure cannot be a key is asked anew."""

    def __init__(self):
        self._known: dict[tuple, tuple[set[int], set[int]]] = {}  # key → (asked, passed)

    def passing(self, pd: PerfData, test, ids) -> set[int]:
        """The ids among ``ids`` (a set) whose name passes ``test``."""
        try:
            key = (test.__code__, test.__defaults__, tuple(c.cell_contents for c in test.__closure__ or ()))
            known = self._known.get(key)
        except (AttributeError, TypeError, ValueError):  # not a plain function, or unhashable values
            strings = pd.strings
            return {i for i in ids if test(strings[i])}
        if known is None:
            known = self._known[key] = (set(), set())
        asked, passed = known
        new = ids - asked if asked else ids
        if new:
            strings = pd.strings
            passed.update(i for i in new if test(strings[i]))
            asked.update(new)
        return passed & ids


class _HeldSlices(Mapping):
    """Thread key → its :class:`_Slices`, each made on first read (a trace has ten thousand
    threads with slices; the launches read a few hundred)."""

    def __init__(self, held: dict, tests: _NameTests):
        self._held = held  # key → ((key, _Thread), its distinct names)
        self._made: dict[tuple[int, int], _Slices] = {}
        self._tests = tests

    def get(self, key, default=None):
        s = self._made.get(key)
        if s is None:
            h = self._held.get(key)
            if h is None:
                return default
            (_key, th), names = h
            s = self._made[key] = _Slices(th.ts, th.dur, th.name, names, tests=self._tests)
        return s

    def __getitem__(self, key) -> _Slices:
        s = self.get(key)
        if s is None:
            raise KeyError(key)
        return s

    def __contains__(self, key) -> bool:
        return key in self._held

    def __iter__(self):
        return iter(self._held)

    def __len__(self) -> int:
        return len(self._held)


class _ThreadsByName(Mapping):
    """Name id → the threads (keys, in ``ctx.threads``' order) that have a slice of that name:
    the (thread, name) pairs sorted once by name, a name's list made when it is asked for."""

    def __init__(self, keys: list[tuple[int, int]], distinct: list[list[int]]):
        self._keys = keys
        flat = np.fromiter(chain.from_iterable(distinct), dtype=np.int64)
        which = np.repeat(np.arange(len(keys), dtype=np.int64), [len(d) for d in distinct])
        order = np.argsort(flat, kind="stable")  # by name, threads in order within a name
        self._which = which[order]
        names = flat[order]
        first = np.flatnonzero(np.r_[True, names[1:] != names[:-1]]) if len(names) else np.zeros(0, dtype=np.int64)
        self._at = dict(zip(names[first].tolist(), zip(first.tolist(), np.r_[first[1:], len(names)].tolist())))
        self._made: dict[int, list[tuple[int, int]]] = {}

    def __getitem__(self, name: int) -> list[tuple[int, int]]:
        got = self._made.get(name)
        if got is None:
            a, b = self._at[name]
            keys = self._keys
            got = self._made[name] = [keys[j] for j in self._which[a:b].tolist()]
        return got

    def __contains__(self, name) -> bool:
        return name in self._at

    def __iter__(self):
        return iter(self._at)

    def __len__(self) -> int:
        return len(self._at)


def _distinct_names(names: list[np.ndarray]) -> list[list[int]]:
    """Each thread's distinct name ids, ascending (``np.unique`` of each): one sort of every
    thread's (thread, name) pairs, not one per thread (a trace of 11,000 threads paid its fixed
    cost for each)."""
    if not names:
        return []
    ids = np.concatenate(names).astype(np.int64, copy=False)
    span = int(ids.max()) + 1 if len(ids) else 1
    which = np.repeat(np.arange(len(names), dtype=np.int64), [len(n) for n in names])
    pairs = np.unique(which * span + ids)
    at = np.searchsorted(pairs // span, np.arange(len(names) + 1, dtype=np.int64)).tolist()
    flat = (pairs % span).tolist()
    return [flat[at[k]:at[k + 1]] for k in range(len(names))]


def _index(ctx) -> _SliceIndex:
    idx = ctx.__dict__.get("_slice_index")
    if idx is None:
        idx = ctx.__dict__["_slice_index"] = _SliceIndex(ctx)
    return idx


def _thread_slices(ctx, key: tuple[int, int]) -> _Slices | None:
    return _index(ctx).slices.get(key)


@dataclass
class _Startup:
    ts: float  # µs
    ts_end: float
    package: str
    platform_kind: str | None = None
    launching_ts: float | None = None


# --- android_startups ------------------------------------------------------------------------
def _sdk(pd: PerfData) -> int | None:
    return pd.facts.android_sdk


def _all_thread_slices(ctx, test, cache: str | None = None) -> list[tuple[float, float, str, tuple[int, int]]]:
    """Every thread slice whose name passes ``test``, sorted; ``cache`` names a question asked
    once a launch, answered once an analysis."""
    idx = _index(ctx)
    if cache is not None and cache in idx.answers:
        return idx.answers[cache]
    strings = ctx.pd.strings
    ids = {i for i in idx.by_name if test(strings[i])}
    keys = {key for i in ids for key in idx.by_name[i]}
    out = []
    for key in keys:
        out += [(t, d, n, key) for t, d, n in idx.slices[key].rows(ctx.pd, ids)]
    out.sort()
    if cache is not None:
        idx.answers[cache] = out
    return out


def _async(pd: PerfData, test) -> list[tuple[float, float, str, int]]:
    out = []
    for (pid, _track), cols in pd.async_slices.items():
        for t, d, n in zip(cols.ts, cols.dur, cols.name):
            nm = pd.strings[n]
            if test(nm):
                out.append((t, d, nm, pid))
    out.sort()
    return out


def _launching_events(ctx) -> list[tuple[float, float, str]]:
    """``_startup_events``: ``launching: <pkg>`` spans of system_server (or of no named process)."""
    pd = ctx.pd
    return [(t, t + d, nm[len(LAUNCHING):].strip()) for t, d, nm, pid in _async(pd, lambda s: s.startswith(LAUNCHING))
            if pd.processes.get(pid) in (None, "system_server")]


def _version(ctx) -> int:
    sdk = _sdk(ctx.pd)
    if sdk is not None:
        return 33 if sdk >= 33 else 29 if sdk >= 29 else 28
    pd = ctx.pd
    if any(nm.startswith(LAUNCHING_ACTIVITY) and ":" in nm for _, _, _, nm in pd.instants) or \
            _async(pd, lambda s: s.startswith(LAUNCHING_ACTIVITY) and ":" in s):
        return 33
    if any(pd.strings[i].startswith("MetricsLogger:") for i in range(len(pd.strings))):
        return 29
    return 28


def find_startups(ctx) -> list[_Startup]:
    """``android_startups`` for this trace, in start order."""
    version = _version(ctx)
    launches = _launching_events(ctx)
    out: list[_Startup] = []
    if version == 33:
        pd = ctx.pd
        completed: dict[int, tuple[str, str | None]] = {}
        marks = [(ts, nm) for ts, _pid, _tid, nm in pd.instants if nm.startswith(LAUNCHING_ACTIVITY) and ":" in nm]
        marks += [(t, nm) for t, d, nm, _ in _async(pd, lambda s: s.startswith(LAUNCHING_ACTIVITY) and ":" in s) if d == 0]
        for _ts, nm in sorted(marks):
            parts = nm[len(LAUNCHING_ACTIVITY):].split(":", 2)
            if len(parts) < 3 or not parts[0].isdigit() or not parts[1].startswith("completed"):
                continue
            kind = {"completed-hot": "hot", "completed-warm": "warm", "completed-cold": "cold"}.get(parts[1])
            completed.setdefault(int(parts[0]), (parts[2], kind))
        for t, d, nm, _pid in _async(pd, lambda s: s.startswith(LAUNCHING_ACTIVITY) and ":" not in s):
            sid = nm[len(LAUNCHING_ACTIVITY):]
            if d == 0 or not sid.isdigit() or int(sid) not in completed:
                continue
            pkg, kind = completed[int(sid)]
            lt = next((lt for lt, le, lp in launches if lp == pkg and t <= lt <= t + d), None)
            out.append(_Startup(t, t + d, pkg, kind, lt))
    elif version == 29:
        intents = [t for t, _d, _n, _k in _all_thread_slices(ctx, lambda s: s == INTENT_STARTED)]
        finished = [t for t, _d, _n, _k in _all_thread_slices(ctx, lambda s: s == LAUNCH_FINISHED)]
        end_of_trace = ctx.pd.end_us or 0.0
        for i, t in enumerate(intents):
            stop = intents[i + 1] if i + 1 < len(intents) else end_of_trace
            inside = [le for le in launches if t <= le[0] <= stop]
            if len(inside) != 1 or not any(t <= f <= stop for f in finished):
                continue
            lt, le, pkg = inside[0]
            if t <= le <= stop:
                out.append(_Startup(t, le, pkg, None, lt))
    else:
        out = [_Startup(lt, le, pkg, None, lt) for lt, le, pkg in launches]
        out += _hot_starts_maxsdk28(ctx, out)
    out.sort(key=lambda s: s.ts)
    return out


def _hot_starts_maxsdk28(ctx, warm_and_cold: list[_Startup]) -> list[_Startup]:
    """``maybe_hot`` of startups_maxsdk28.sql: an activityResume outside every launch, to the
    end of the first frame after it (the process name stands for the package)."""
    out = []
    for t, _d, _n, key in _all_thread_slices(ctx, lambda s: s == "activityResume"):
        if any(w.ts <= t <= w.ts_end for w in warm_and_cold):
            continue
        frame = _first_frame_after_maxsdk28(ctx, t)
        if frame is None:
            continue
        out.append(_Startup(t, frame, ctx.pd.processes.get(key[0], str(key[0])), "hot", None))
    return out


def _first_frame_after_maxsdk28(ctx, ts: float) -> float | None:
    """End of the first frame (doFrame on a main thread, its process's DrawFrames until the next
    doFrame) that starts after ``ts``: timeline_maxsdk28.sql's frame."""
    best = None
    for key in ctx.threads:
        if key[0] != key[1]:
            continue
        s = _thread_slices(ctx, key)
        if s is None:
            continue
        frames = s.named(ctx.pd, DO_FRAME)
        for i, (ft, _fd, _n) in enumerate(frames):
            if ft <= ts or (best is not None and ft >= best[0]):
                continue
            nxt = frames[i + 1][0] if i + 1 < len(frames) else float("inf")
            draws = [dt + dd for dt, dd, _ in _process_slices(ctx, key[0], lambda n: n == DRAW_FRAME) if ft <= dt < nxt]
            if draws:
                best = (ft, max(draws))
            break
    return best[1] if best else None


def _process_slices(ctx, pid: int, test, thread_name: str | None = None) -> list[tuple[float, float, str]]:
    """The process's thread slices whose name passes ``test``, sorted: ``test`` asked once per
    distinct name of the process, not once per thread that holds it (an app's threads share
    most names; 3,200 such questions on the 100 MB trace)."""
    idx = _index(ctx)
    pd = ctx.pd
    held = []
    for key in idx.by_pid.get(pid, ()):
        if thread_name is not None:
            info = pd.threads.get(key)
            if not info or (info.name or "") != thread_name:
                continue
        s = idx.slices.get(key)
        if s is not None:
            held.append(s)
    if not held:
        return []
    names = set(held[0].names()).union(*(s.names() for s in held[1:]))
    match = idx.tests.passing(pd, test, names)
    out = []
    if match:
        for s in held:
            out += s.rows(pd, match.intersection(s.present_ids()))
    out.sort()
    return out


# --- the app process -------------------------------------------------------------------------
def _count_on(ctx, key, start: float, end: float, name: str) -> int:
    """How many of the thread's slices named ``name`` start in [start, end): by bisection in
    their starts, found once per analysis (a package launched many times asks for each launch,
    for each of its pids)."""
    starts = ctx.__dict__.setdefault("_named_starts", {})
    got = starts.get((key, name))
    if got is None:
        s = _thread_slices(ctx, key)
        got = starts[(key, name)] = [t for t, _d, _n in s.named(ctx.pd, name)] if s is not None else []
    return max(0, bisect_left(got, end) - bisect_left(got, start))


def _package_pids(ctx, package: str) -> list[int]:
    """:func:`app_pids`, once per package per analysis."""
    cache = ctx.__dict__.setdefault("_package_pids", {})
    if package not in cache:
        cache[package] = app_pids(ctx.pd.processes, package)
    return cache[package]


def _startup_process(ctx, st: _Startup) -> tuple[int | None, str, str | None]:
    """``android_startup_processes``: the process whose main thread resumed an activity within
    the startup, and the kind its main-thread slices say (the platform's kind first).

    Returns (pid, kind, note). Where trace_processor leaves the kind NULL because the platform
    traced no ``activityResume`` (API ≤ 28 does not), the same rule without it decides —
    bindApplication + activityStart → cold, activityStart → warm — and ``note`` says so.
    """
    pids = _package_pids(ctx, st.package)
    fallback: tuple[int, str] | None = None
    for pid in reversed(pids):  # a relaunched package: the newest pid first
        key = (pid, pid)
        bind = _count_on(ctx, key, st.ts, st.ts_end, "bindApplication")
        start = _count_on(ctx, key, st.ts, st.ts_end, "activityStart")
        resume = _count_on(ctx, key, st.ts, st.ts_end, "activityResume")
        if resume:
            return pid, st.platform_kind or ("cold" if bind and start else "warm" if start else "hot"), None
        if start and fallback is None:
            fallback = (pid, "cold" if bind else "warm")
    if st.platform_kind:
        return (pids[-1] if pids else None), st.platform_kind, None
    if fallback is not None:
        return fallback[0], fallback[1], (
            "kind: trace_processor leaves startup_type NULL (no activityResume slice on the main thread, as on "
            f"API ≤ 28); {fallback[1]} is read from bindApplication/activityStart alone")
    return (pids[-1] if pids else None), "unknown", None


# --- TTID / TTFD ------------------------------------------------------------------------------
def _display_times(ctx, st: _Startup, pid: int) -> tuple[float | None, float | None, list[str]]:
    """(TTID µs, TTFD µs, missing) as Macrobenchmark's StartupTimingQuery computes them."""
    missing: list[str] = []
    main = _thread_slices(ctx, (pid, pid))
    ui = [x for x in (main.where(ctx.pd, lambda n: n.startswith(DO_FRAME)) if main else []) if x[1] > 0]
    rt = [x for x in _process_slices(ctx, pid, lambda n: n.startswith(DRAW_FRAME), "RenderThread") if x[1] > 0]
    if not ui or not rt:
        missing.append("no Choreographer#doFrame / RenderThread DrawFrame slices of the app: TTID and TTFD "
                       f"need atrace categories \"view\" and \"gfx\" ({CONFIG_ATRACE})")
        return None, None, missing

    def end_of_frame(pred) -> float | None:
        u = next((x for x in ui if pred(x)), None)
        if u is None:
            return None
        r = next((x for x in rt if x[0] > u[0]), None)
        return r[0] + r[1] if r else None

    after = st.launching_ts if st.launching_ts is not None else st.ts
    initial = end_of_frame(lambda u: u[0] > after)
    ttid = initial - st.ts if initial is not None else None
    fully = main.where(ctx.pd, lambda n: n.startswith(FULLY_DRAWN)) if main else []
    fully = [x for x in fully if x[0] >= st.ts and x[1] > 0]
    ttfd = None
    if not fully:
        missing.append("no reportFullyDrawn on the app's main thread: TTFD needs the app to call "
                       "Activity.reportFullyDrawn() (androidx FullyDrawnReporter / ReportDrawn) once its content is shown")
    else:
        rfd = fully[0][0]
        full = end_of_frame(lambda u: u[0] + u[1] > rfd)
        ttfd = full - st.ts if full is not None else None
    return ttid, ttfd, missing


# --- phases -----------------------------------------------------------------------------------
_PHASES = ("ActivityThreadMain", "bindApplication", "activityStart", "activityResume", "inflate",
           DO_FRAME, FULLY_DRAWN)


def _phases(ctx, st: _Startup, pid: int) -> list[StartupPhase]:
    """The launch's markers on the app's main thread (first of each, inside the startup;
    reportFullyDrawn after its start too) and the first RenderThread DrawFrame, in ms from the
    startup's start."""
    pd = ctx.pd
    out = [StartupPhase(name="startup", start_ms=0.0, dur_ms=_ms(st.ts_end - st.ts), thread="system_server")]
    main = _thread_slices(ctx, (pid, pid))
    label = pd.thread_label(pid, pid)
    if main is not None:
        for want in _PHASES:
            hits = [x for x in main.where(pd, lambda n, w=want: n == w or n.startswith(w + " ") or
                                          (w in (DO_FRAME, FULLY_DRAWN) and n.startswith(w)))
                    if st.ts <= x[0] <= st.ts_end or (want == FULLY_DRAWN and x[0] >= st.ts)]
            if hits:
                t, d, _ = hits[0]
                name = "first Choreographer#doFrame" if want == DO_FRAME else want
                out.append(StartupPhase(name=name, start_ms=_ms(t - st.ts), dur_ms=_ms(d), thread=label))
    rt = [x for x in _process_slices(ctx, pid, lambda n: n.startswith(DRAW_FRAME), "RenderThread") if x[0] >= st.ts]
    if rt:
        t, d, _ = rt[0]
        out.append(StartupPhase(name="first DrawFrame", start_ms=_ms(t - st.ts), dur_ms=_ms(d), thread="RenderThread"))
    out.sort(key=lambda p: p.start_ms)
    return out


def _process_start(ctx, st: _Startup, pid: int) -> StartupPhase | None:
    """A cold start's "process start": from the startup's start to the first thing the new
    process's main thread does in it (its first scheduler interval, else its first slice)."""
    firsts = []
    iv = ctx.pd.sched_intervals.get((pid, pid))
    if iv is not None and len(iv):
        ts = np.frombuffer(iv.ts, dtype=np.float64)
        inside = ts[(ts >= st.ts) & (ts <= st.ts_end)]
        if len(inside):
            firsts.append(float(inside.min()))
    s = _thread_slices(ctx, (pid, pid))
    if s is not None:
        inside = s.ts[(s.ts >= st.ts) & (s.ts <= st.ts_end)]
        if len(inside):
            firsts.append(float(inside.min()))
    if not firsts:
        return None
    return StartupPhase(name="process start", start_ms=0.0, dur_ms=_ms(min(firsts) - st.ts),
                        thread=ctx.pd.thread_label(pid, pid))


def _ms(us: float) -> float:
    return round(us / 1000.0, 3)


# --- breakdown --------------------------------------------------------------------------------
def normalize(name: str) -> str | None:
    """``_normalize_android_string`` of startup_breakdowns.sql: the slice names the breakdown
    blames, as its keys; None for every other slice."""
    if name == "mm_vmscan_direct_reclaim":
        return "kernel_memory_reclaim"
    if name.startswith("GC: Wait For"):
        return "userspace_memory_reclaim"
    if name.startswith(("monitor contention", "Lock contention on a monitor lock")):
        return "monitor_contention"
    if name.startswith("Lock contention"):
        return "art_lock_contention"
    if name in ("binder transaction", "binder reply"):
        return "binder"
    if name == "Contending for pthread mutex":
        return "mutex_contention"
    if name.startswith("dlopen"):
        return "dlopen"
    if name.startswith("VerifyClass"):
        return "verify_class"
    if name == "inflate":
        return "inflate"
    if name.startswith(DO_FRAME):
        return "choreographer_do_frame"
    if name.startswith("OpenDexFilesFromOat"):
        return "open_dex_files_from_oat"
    return {"ResourcesManager#getResources": "resources_manager_get_resources",
            "bindApplication": "bind_application", "activityStart": "activity_start",
            "activityResume": "activity_resume", "activityRestart": "activity_restart",
            "clientTransactionExecuted": "client_transaction_executed"}.get(name)


def _flat_slices(ctx, key, start: float, end: float) -> list[tuple[float, float, str]]:
    """The deepest normalised slice at every moment of [start, end) on one thread, as
    non-overlapping (start, end, reason) pieces (``_intervals_flatten`` of the normalised,
    re-parented slice tree, clipped to the startup)."""
    s = _thread_slices(ctx, key)
    named = s.where(ctx.pd, lambda n: normalize(n) is not None) if s is not None else []
    hits = []
    for t, d, n in named:
        if d > 0 and t < end and t + d > start:
            hits.append((t, t + d, normalize(n)))
    # slices on one thread nest: sorted by start (longer first), the open stack's top is deepest
    hits.sort(key=lambda x: (x[0], -(x[1] - x[0])))
    out: list[tuple[float, float, str]] = []
    stack: list[tuple[float, float, str]] = []
    cursor = start

    def emit(upto: float) -> None:
        nonlocal cursor
        upto = min(upto, end)
        if stack and upto > cursor:
            out.append((cursor, upto, stack[-1][2]))
        cursor = max(cursor, upto)

    for h in hits:
        while stack and stack[-1][1] <= h[0]:
            emit(stack[-1][1])
            stack.pop()
        emit(h[0])
        cursor = max(cursor, h[0], start)
        stack.append(h)
    while stack:
        emit(stack[-1][1])
        stack.pop()
    return [(a, b, r) for a, b, r in out if b > a]


def _states_in(pd: PerfData, key, start: float, end: float) -> list[tuple[float, float, int, int]]:
    """Scheduler intervals of one thread clipped to [start, end): (start, end, state, io_wait)."""
    iv = pd.sched_intervals.get(key)
    if iv is None or not len(iv):
        return []
    ts = np.frombuffer(iv.ts, dtype=np.float64)
    du = np.frombuffer(iv.dur, dtype=np.float64)
    m = (ts < end) & (ts + du > start)
    out = []
    for t, d, s, io in zip(ts[m].tolist(), du[m].tolist(), np.frombuffer(iv.state, dtype=np.int8)[m].tolist(),
                           np.frombuffer(iv.io_wait, dtype=np.int8)[m].tolist()):
        a, b = max(t, start), min(t + d, end)
        if b > a:
            out.append((a, b, s, io))
    out.sort()
    return out


#: Intervals meet where float µs of the same ns timestamps differ by rounding: closer than
#: this they touch.
_EPS_US = 1e-3


def breakdown(ctx, key, start: float, end: float, has_sched: bool) -> tuple[list[BreakdownItem], list[str]]:
    """Exclusive reasons covering [start, end) on the main thread ``key``, summed per reason.

    With sched data: trace_processor's opinionated breakdown (see the module docstring); a gap
    between two scheduler intervals (events lost) is ``unknown`` so the parts still sum to the
    startup. Without: the deepest normalised slice, else ``unknown (no sched data)``.
    """
    slices = _flat_slices(ctx, key, start, end)
    states = _states_in(ctx.pd, key, start, end) if has_sched else []
    totals: dict[str, list[float]] = {}

    def add(reason: str, a: float, b: float) -> None:
        if b > a:
            t = totals.setdefault(reason, [0.0, 0])
            t[0] += b - a
            t[1] += 1

    def with_slices(a: float, b: float, fallback: str, io: bool) -> None:
        """Split [a, b) by the flattened slices: io first, else the slice, else ``fallback``."""
        if io:
            add("io", a, b)
            return
        cur = a
        for sa, sb, r in slices:
            if sb <= cur or sa >= b:
                continue
            add(fallback, cur, max(cur, sa))
            add(r, max(cur, sa), min(b, sb))
            cur = min(b, sb)
        add(fallback, cur, b)

    missing: list[str] = []
    if states:
        add("launch_delay", start, states[0][0])
        cur = states[0][0]
        for a, b, s, io in states:
            if a > cur + _EPS_US:
                with_slices(cur, a, "unknown", False)
            a = max(a, cur)
            with_slices(a, b, SchedState(s).label, io == 1)
            cur = max(cur, b)
        if cur < end - _EPS_US:
            with_slices(cur, end, "unknown", False)
    else:
        with_slices(start, end, "unknown (no sched data)", False)
        missing.append("no scheduler data for the app's main thread: the breakdown has no thread states and "
                       f"main_thread is unknown; record {CONFIG_SCHED}")
    items = [BreakdownItem(reason=r, dur_ms=_ms(v[0]), intervals=int(v[1])) for r, v in totals.items()]
    items.sort(key=lambda i: -i.dur_ms)
    return items, missing


# --- main thread state, ART -------------------------------------------------------------------
def main_thread_state(pd: PerfData, key, start: float, end: float, has_blocked: bool) -> MainThreadState | None:
    states = _states_in(pd, key, start, end)
    if not states:
        return None
    by = dict.fromkeys(SchedState, 0.0)
    io = 0.0
    for a, b, s, w in states:
        by[SchedState(s)] += b - a
        if w == 1 and s == SchedState.D:
            io += b - a
    return MainThreadState(
        running_ms=_ms(by[SchedState.RUNNING]), runnable_ms=_ms(by[SchedState.R] + by[SchedState.R_PREEMPTED]),
        sleeping_ms=_ms(by[SchedState.S]), uninterruptible_ms=_ms(by[SchedState.D]),
        io_wait_ms=_ms(io) if has_blocked else None,
    )


#: A child slice at least this share of its parent is what the parent spent its time on: the
#: descent into the largest part of the breakdown goes on into it.
DOMINANT_CHILD = 0.5


def inside_part(ctx, key, start: float, end: float, reason: str, has_blocked: bool) -> PartInside | None:
    """What the largest part of a launch did, when the part is a slice (activityResume,
    bindApplication, inflate …): the breakdown blames the whole part on that slice, but a
    warm start's activityResume of 103 ms can be a 100 ms ``sleep`` under performResume — the
    answer to "why is it slow" is that, not "activityResume". From the part's longest slice
    in the launch (clipped to it), the longest direct child on the main thread, then its longest
    child while each is at least :data:`DOMINANT_CHILD` of its parent; and the main thread's
    scheduler states over the span of the slice the descent ends at. None when the part is
    several slices none of which has a child (56 binder transactions: the longest of them is
    not what the part was made of)."""
    s = _thread_slices(ctx, key)
    if s is None or not len(s.ts):
        return None
    ids = [i for i in s.names() if normalize(ctx.pd.strings[i]) == reason]
    if not ids:
        return None  # a scheduler state, the launch delay, IO: no slice to look inside
    ts, du = s.ts, s.dur
    cand = np.flatnonzero(np.isin(s.name, ids) & (ts < end) & (ts + du > start))
    if not len(cand):
        return None
    clipped = np.minimum(ts[cand] + du[cand], end) - np.maximum(ts[cand], start)
    cur = int(cand[int(np.argmax(clipped))])
    path, path_ms = [cur], [float(clipped.max())]
    while (kid := _longest_child(ts, du, cur)) is not None:
        dominant = du[kid] >= DOMINANT_CHILD * du[cur]
        if not dominant and len(path) > 1:
            break
        path.append(kid)  # the part's own longest child is named even when it does not dominate
        path_ms.append(float(du[kid]))
        if not dominant:
            break
        cur = kid
    if len(path) == 1 and len(cand) > 1:
        return None  # many slices, none with a child: one of them says nothing of the part
    last = path[-1]
    a, b = max(float(ts[last]), start), min(float(ts[last] + du[last]), end)
    return PartInside(reason=reason, path=[ctx.pd.strings[int(s.name[i])] for i in path],
                      path_ms=[_ms(v) for v in path_ms], states=main_thread_state(ctx.pd, key, a, b, has_blocked))


def _longest_child(ts: np.ndarray, du: np.ndarray, i: int) -> int | None:
    """The longest direct child of slice ``i`` of a thread sorted by start, longer first (the
    first of equals): the slices inside it that start after the previous child ended."""
    end = ts[i] + du[i]
    j, stop = i + 1, int(np.searchsorted(ts, end, side="left"))
    best, covered = None, -np.inf
    while j < stop:
        if ts[j] >= covered and ts[j] + du[j] <= end:
            if best is None or du[j] > du[best]:
                best = j
            covered = ts[j] + du[j]
        j += 1
    return best


def _like(pattern: str):
    """SQL LIKE (``%`` any run, ASCII case-insensitive) as a predicate on a name."""
    rx = re.compile("^" + ".*".join(re.escape(p) for p in pattern.split("%")) + "$", re.IGNORECASE | re.DOTALL)
    return lambda s: rx.match(s) is not None


#: Macrobenchmark ArtMetric's section patterns (TraceSectionMetric LIKE patterns).
ART_SECTIONS = {"jit": "JIT Compiling %", "class_init": "L%/%;", "verify_class": "VerifyClass %"}


def art(ctx, pid: int, start: float, end: float) -> ArtStats:
    """ArtMetric's count and sum of each section in the target process, for slices that start
    in [start, end)."""
    out = ArtStats()
    for field_name, pattern in ART_SECTIONS.items():
        like = _like(pattern)
        hits = [x for x in _process_slices(ctx, pid, like) if start <= x[0] < end and x[1] > 0]
        setattr(out, field_name, ArtCount(count=len(hits), total_ms=_ms(sum(d for _, d, _ in hits))))
    return out


# --- the whole per-run computation ------------------------------------------------------------
@dataclass
class Launch:
    """One startup: its result, and what the slow-start rules need to look further."""

    run: StartupRun
    startup: _Startup
    pid: int | None
    #: The window ART counts cover: from the previous launch of the same package (or the
    #: trace start) to the next one (or the trace end) — the whole trace when there is one.
    art_window: tuple[float, float] = (0.0, 0.0)


def launches(ctx) -> list[Launch]:
    """Every app startup in the trace, with everything item 1 of issue 16 asks for except the
    slow-start reasons (:mod:`nodes.perf.metrics.startup_reasons` adds those)."""
    pd = ctx.pd
    startups = find_startups(ctx)
    has_sched = bool(pd.sched_intervals)
    has_blocked = (pd.facts.sched_blocked_reasons or 0) > 0
    out: list[Launch] = []
    for i, st in enumerate(startups):
        pid, kind, note = _startup_process(ctx, st)
        run = StartupRun(index=i, total_ms=_ms(st.ts_end - st.ts), kind=kind, package=st.package,
                         start_ms=ctx.rel(st.ts), ready_by="android_startups end",
                         command=f"launch {st.package}")
        prev = next((o.ts for o in reversed(startups[:i]) if o.package == st.package), pd.start_us or st.ts)
        nxt = next((o.ts for o in startups[i + 1:] if o.package == st.package), pd.end_us or st.ts_end)
        launch = Launch(run, st, pid, (min(prev, st.ts), max(nxt, st.ts_end)))
        out.append(launch)
        if note:
            run.missing.append(note)
        if pid is None:
            run.missing.append(f"no process named {st.package} in the trace: phases, breakdown and TTID unknown "
                               "(record process names: data source \"linux.process_stats\" with scan_all_processes_on_start: true)")
            continue
        ttid, ttfd, missing = _display_times(ctx, st, pid)
        run.ttid_ms = _ms(ttid) if ttid is not None else None
        run.ttfd_ms = _ms(ttfd) if ttfd is not None else None
        run.missing += missing
        run.phases = _phases(ctx, st, pid)
        if kind == "cold":
            born = _process_start(ctx, st, pid)
            if born is not None:
                run.phases.insert(1, born)
        key = (pid, pid)
        has_main_sched = has_sched and key in pd.sched_intervals
        run.breakdown, missing = breakdown(ctx, key, st.ts, st.ts_end, has_main_sched)
        run.missing += missing
        if run.breakdown:
            run.inside_biggest = inside_part(ctx, key, st.ts, st.ts_end, run.breakdown[0].reason, has_blocked)
        if has_main_sched:
            run.main_thread = main_thread_state(pd, key, st.ts, st.ts_end, has_blocked)
            if not has_blocked:
                run.missing.append(f"no sched_blocked_reason events: io_wait_ms unknown; record {CONFIG_BLOCKED}")
        run.art = art(ctx, pid, *launch.art_window)
    return out
