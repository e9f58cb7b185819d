"""The app a trace is about — one process, chosen by named rules — and which other processes
are the harness that drove it rather than the system.

Why one process: a system trace holds every process on the device. Counting the launcher's and
SystemUI's frames, or a Macrobenchmark test process's ``measureBlock``, as the app's is how a
report ends up describing what is *largest* instead of what is *wrong*. trace_processor and
Macrobenchmark scope their answers to one package (androidx ``FrameTimingQuery`` and
``TraceSectionMetric`` filter on ``process.name LIKE <package>``); so does this module.

Rules, first that applies (docs/analyzer.md, "App scope"):

1. the process the user named (``perfscout analyze --process NAME|PID``): an explicit choice
   wins over any inference;
2. the launched package: the ``launching: <package>`` span system_server writes for each app
   start;
3. the process with the most *actual surface frames* in the frame timeline;
4. the process whose main thread (pid == tid) runs the most ``Choreographer#doFrame``.

A package's scope also covers its ``<package>:<name>`` sub-processes, as androidx
``processNameLikePkg`` does; process names truncated to their last 15 characters (the kernel's
``comm``) match too.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from nodes.perf.android_package import launched_package
from nodes.perf.metrics import slice_find
from nodes.perf.metrics.common import ANDROID_FRAME
from nodes.perf.model import PerfData

CHOSEN_BY_USER = "named by the user"
CHOSEN_BY_LAUNCH = "launched package"
CHOSEN_BY_SURFACE_FRAMES = "most surface frames"
CHOSEN_BY_FRAMES = "most frames"

#: Slices only a benchmark/instrumentation harness writes (androidx benchmark-macro's
#: MacrobenchmarkScope, Shell and measureRepeated) — their process is the harness.
HARNESS_SLICE_PREFIXES = ("measureBlock", "startActivityAndWait", "MacrobenchmarkScope", "executeCommand ",
                          "Macrobenchmark", "measureRepeated")
#: Threads of an instrumentation process (``AndroidJUnitRunner``, truncated by the kernel to
#: 15 characters: "roidJUnitRunner"; ``Instr: <class>``).
HARNESS_THREAD_SUFFIXES = ("JUnitRunner",)
HARNESS_THREAD_PREFIXES = ("Instr: ",)
#: The kernel keeps this many characters of a process name.
COMM_LEN = 15


@dataclass(frozen=True)
class Scope:
    """The chosen app process and the groups the other processes fall into."""

    pid: int
    process: str | None
    chosen_by: str
    #: The app's pid and its ``<package>:<name>`` sub-processes.
    app_pids: frozenset[int] = field(default_factory=frozenset)
    harness_pids: frozenset[int] = field(default_factory=frozenset)

    def group(self, pid: int) -> str:
        """"app", "harness" or "system"."""
        if pid in self.app_pids:
            return "app"
        if pid in self.harness_pids:
            return "harness"
        return "system"


def _name_matches(name: str, wanted: str) -> bool:
    return name == wanted or (len(wanted) > COMM_LEN and name == wanted[-COMM_LEN:])


def find_process(pd: PerfData, spec: str) -> int | None:
    """The pid a user's ``--process`` names: a pid, an exact process name, the kernel's
    truncated name, or else the one process whose name contains it."""
    spec = spec.strip()
    if not spec:
        return None
    if spec.isdigit():
        pid = int(spec)
        if pid in pd.processes or any(k[0] == pid for k in pd.threads):
            return pid
        return None
    tail = spec[-COMM_LEN:] if len(spec) > COMM_LEN else spec  # _name_matches, without a call a process
    exact = [p for p, n in pd.processes.items() if n == spec or n == tail]
    if not exact:  # no process_tree name: the main thread carries the (truncated) name
        exact = [k[0] for k, t in pd.threads.items() if k[0] == k[1] and t.name and _name_matches(t.name, spec)]
    if exact:
        return min(exact)
    partial = sorted({p for p, n in pd.processes.items() if spec in n})
    return partial[0] if len(partial) == 1 else None


def launched_packages(pd: PerfData) -> list[str]:
    """Packages of the ``launching: <package>`` spans, first launch first."""
    found: list[tuple[float, str]] = []
    for (_pid, _track), cols in pd.async_slices.items():
        for t, n in zip(cols.ts, cols.name):
            s = pd.strings[n]
            pkg = launched_package(s)
            if pkg:
                found.append((t, pkg))
    return list(dict.fromkeys(p for _, p in sorted(found) if p))


def _surface_frame_pids(pd: PerfData) -> Counter[int]:
    return Counter(f.pid for f in pd.frames if f.pid and (f.layer is not None or f.token is not None))


def _do_frame_pids(pd: PerfData) -> Counter[int]:
    ids = {i for i, s in enumerate(pd.strings) if s.startswith(ANDROID_FRAME)}
    out: Counter[int] = Counter()
    if not ids:
        return out
    for (pid, tid), cols in pd.slices.items():
        if pid == tid and pid > 0:
            n = sum(map(ids.__contains__, cols.name))  # the slices named so, without a Python step each
            if n:
                out[pid] = n
    return out


def harness_pids(pd: PerfData, app_pids: frozenset[int]) -> frozenset[int]:
    """Processes (other than the app) that carry a harness's slices or threads."""
    out: set[int] = set()
    marks = {i for i, s in enumerate(pd.strings) if s.startswith(HARNESS_SLICE_PREFIXES)}
    if marks:
        out |= _pids_with_names(pd, app_pids, marks)
    for (pid, _tid), t in pd.threads.items():
        name = t.name or ""
        if pid not in app_pids and pid > 0 and (name.endswith(HARNESS_THREAD_SUFFIXES) or name.startswith(HARNESS_THREAD_PREFIXES)):
            out.add(pid)
    return frozenset(out)


def _pids_with_names(pd: PerfData, app_pids: frozenset[int], marks: set[int]) -> set[int]:
    """The processes (positive pids, not the app's) with a thread slice whose name id is in
    ``marks``: every thread's names in one column (slice_find's, laid out once per analysis
    and read again by the lenses), looked up in a table of the string table's length (a 100 MB
    trace has 11,000 threads, 500,000 slices)."""
    if not marks:
        return set()
    tracks, names, offsets = slice_find.thread_names(pd)
    if not tracks:
        return set()
    size = max(len(pd.strings), max(marks) + 1)
    if len(names) and (int(names.min()) < 0 or int(names.max()) >= size):  # ids a hand-made PerfData may hold
        return {k[0] for k, c in tracks if k[0] > 0 and k[0] not in app_pids and not marks.isdisjoint(c.name)}
    table = np.zeros(size, dtype=bool)
    table[np.fromiter(marks, dtype=np.int64, count=len(marks))] = True
    which = np.searchsorted(offsets, np.flatnonzero(table[names]), side="right") - 1
    pids = (tracks[i][0][0] for i in np.unique(which).tolist())
    return {p for p in pids if p > 0 and p not in app_pids}


def identify(pd: PerfData, process: str | None = None) -> tuple[Scope | None, list[str]]:
    """The app scope of a trace (None when no rule applies, e.g. a py-spy profile), and the
    warnings to show (a ``--process`` that names nothing in the trace)."""
    warnings: list[str] = []
    pid: int | None = None
    how = ""
    if process is not None and str(process).strip():
        pid = find_process(pd, str(process))
        if pid is None:
            warnings.append(f"--process {process}: no such process in the trace; the app is chosen by the usual rules")
        else:
            how = CHOSEN_BY_USER
    if pid is None:
        for pkg in launched_packages(pd):
            pid = find_process(pd, pkg)
            if pid is not None:
                how = CHOSEN_BY_LAUNCH
                break
    if pid is None:
        counts = _surface_frame_pids(pd)
        if counts:
            pid, how = max(counts, key=lambda p: (counts[p], -p)), CHOSEN_BY_SURFACE_FRAMES
    if pid is None:
        counts = _do_frame_pids(pd)
        if counts:
            pid, how = max(counts, key=lambda p: (counts[p], -p)), CHOSEN_BY_FRAMES
    if pid is None:
        return None, warnings
    name = pd.processes.get(pid)
    if name is None:
        t = pd.threads.get((pid, pid))
        name = t.name if t and t.name else None
    app = {pid}
    if name:
        sub = name + ":"
        app |= {p for p, n in pd.processes.items() if n.startswith(sub)}
    app_pids = frozenset(app)
    return Scope(pid, name, how, app_pids, harness_pids(pd, app_pids)), warnings
