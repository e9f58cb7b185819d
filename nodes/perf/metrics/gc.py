"""ART garbage collections of each process: which ones ran, how long, how long they stopped the
app's threads, what they reclaimed, and how long the main thread waited for them.

* Events: trace_processor's ``android_garbage_collection_events`` (perfetto
  ``src/trace_processor/perfetto_sql/stdlib/android/garbage_collection.sql``): a thread's
  top-level slice named ``*concurrent*GC``, lengthened by the top-level slice right after it
  when that is ``CompactionPhase`` or ``Background concurrent copying GC``; a slice with no end
  lasts to the end of the trace. Its ``gc_type`` from its name (``*NativeAlloc*``
  native_alloc, ``*Alloc*`` alloc, ``*young*`` young, ``*CollectorTransition*``
  collector_transition, ``*Explicit*`` explicit, else full).
* Thread states during a GC, as that table's ``gc_running_dur``, ``gc_runnable_dur`` (R, R+),
  ``gc_unint_io_dur`` (D with io_wait), ``gc_unint_non_io_dur`` (D without), ``gc_int_dur``
  (S): the GC thread's scheduler intervals clipped to the GC.
* Reclaimed: that table's ``reclaimed_mb`` = max − min of the process's ``Heap size (KB)``
  counter over the GC, including the first reading after it (/ 1e3, as the stdlib does). The
  stdlib leaves it NULL when no reading follows the GC before the next GC of the process ends
  (SQLite's ``max(x, NULL)``); so do we (None). One deliberate difference: the stdlib's inner
  span join drops a GC of a process with no heap counter at all; it is kept here (count,
  durations and pause) with ``reclaimed_mb`` None.
* Pause: the stdlib has no column for it. ART stops every mutator thread with
  ``ThreadList::SuspendAll``, which writes ``Suspending mutator threads`` while it suspends,
  then ``Mutator threads suspended for <cause>`` until ``ResumeAll``'s ``Resuming mutator
  threads`` (art ``runtime/thread_list.cc``); concurrent copying's flip is its TimingLogger split
  ``ThreadListFlip`` (``ThreadList::FlipThreadRoots``). A GC's pause is the union of those
  slices on its thread inside it — what ART's ``ScopedPause`` measures, SuspendAll to the end of
  ResumeAll.
* Waiting for GC: a thread that needs the heap while a GC runs blocks in
  ``Heap::WaitForGcToComplete`` (art ``runtime/gc/heap.cc``), which writes ``GC: Wait For
  Completion`` (newer ART: ``… <cause>``) around the wait and, when the lock itself is held,
  ``Lock contention on GC complete lock``. The main thread's wait is the union of those slices
  on the process's main thread (tid = pid); nested or overlapping ones are one wait.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from fnmatch import fnmatchcase

import numpy as np

from nodes.perf.metrics.slice_find import find_slices, name_ids
from nodes.perf.model import MAX_GC_MARKS, GcKind, GcSummary, PerfData
from nodes.perf.sched_state import SchedState

#: (pid, tid, ts µs, dur µs, name) of one GC.
GcEvent = tuple[int, int, float, float, str]

GC_PATTERN = "*concurrent*GC"
_FOLLOWERS = ("CompactionPhase", "Background concurrent copying GC")
_PAUSE_PREFIXES = ("Suspending mutator threads", "Mutator threads suspended for ", "Resuming mutator threads",
                   "ThreadListFlip")
_WAIT_PREFIXES = ("GC: Wait For Completion", "Lock contention on GC complete lock", "WaitForGcToComplete")
HEAP_COUNTER = "Heap size (KB)"


def gc_type(name: str) -> str:
    for pattern, kind in (("*NativeAlloc*", "native_alloc"), ("*Alloc*", "alloc"), ("*young*", "young"),
                          ("*CollectorTransition*", "collector_transition"), ("*Explicit*", "explicit")):
        if fnmatchcase(name, pattern):
            return kind
    return "full"


def gc_events(pd: PerfData) -> list[GcEvent]:
    """Every closed GC, as android_garbage_collection_events: only the threads that have a
    GC-named slice are walked for their top-level slices."""
    gc_ids = name_ids(pd, lambda s: fnmatchcase(s, GC_PATTERN))
    threads = {k for k, _ts, _d, _n in find_slices(pd, gc_ids)}
    out = []
    strings = pd.strings
    for (pid, tid) in sorted(threads):
        cols = pd.slices[(pid, tid)]
        order = sorted(range(len(cols)), key=lambda i: (cols.ts[i], -cols.dur[i]))
        top: list[int] = []
        end = float("-inf")
        for i in order:
            if cols.ts[i] >= end:
                top.append(i)
                end = cols.ts[i] + cols.dur[i]
        for j, i in enumerate(top):
            if cols.name[i] not in gc_ids:
                continue
            dur = cols.dur[i]
            if j + 1 < len(top) and strings[cols.name[top[j + 1]]] in _FOLLOWERS:
                dur += cols.dur[top[j + 1]]
            out.append((pid, tid, cols.ts[i], dur, strings[cols.name[i]]))
    return out


def open_gcs(pd: PerfData) -> list[GcEvent]:
    """GC slices with no end: trace_processor counts them to the end of the trace (dur = -1 →
    trace_end − ts). Only the outermost open slice of a thread can be top-level."""
    end = pd.end_us if pd.end_us is not None else 0.0
    first: dict[tuple[int, int], tuple[float, str]] = {}
    for pid, tid, ts, name in pd.open_slices:
        if (pid, tid) not in first or ts < first[(pid, tid)][0]:
            first[(pid, tid)] = (ts, name)
    out = []
    for (pid, tid), (ts, name) in first.items():
        if fnmatchcase(name, GC_PATTERN):  # a closed slice cannot enclose one still open
            out.append((pid, tid, ts, max(0.0, end - ts), name))
    return out


def union_us(spans: list[tuple[float, float]]) -> tuple[float, int]:
    """Length of the union of (start, end) spans, and how many separate stretches it has:
    nested pause and wait slices count once."""
    total, n, cur_a, cur_b = 0.0, 0, 0.0, None
    for a, b in sorted(spans):
        if cur_b is None or a > cur_b:
            if cur_b is not None:
                total += cur_b - cur_a
            cur_a, cur_b, n = a, b, n + 1
        else:
            cur_b = max(cur_b, b)
    if cur_b is not None:
        total += cur_b - cur_a
    return total, n


def _states(pd: PerfData, key: tuple[int, int], a: float, b: float) -> dict[str, float] | None:
    """µs of the thread in each of the stdlib's GC state columns inside [a, b); None when the
    trace has no scheduler data for it."""
    iv = pd.sched_intervals.get(key)
    if iv is None or not len(iv):
        return None
    ts = np.frombuffer(iv.ts, dtype=np.float64)
    dur = np.frombuffer(iv.dur, dtype=np.float64)
    state = np.frombuffer(iv.state, dtype=np.int8)
    io = np.frombuffer(iv.io_wait, dtype=np.int8)
    part = np.clip(np.minimum(ts + dur, b) - np.maximum(ts, a), 0.0, None)
    d = state == SchedState.D
    return {
        "running": float(part[state == SchedState.RUNNING].sum()),
        "runnable": float(part[(state == SchedState.R) | (state == SchedState.R_PREEMPTED)].sum()),
        "unint_io": float(part[d & (io == 1)].sum()),
        # io_wait unknown (-1) is neither, as SQL's NULL != 1 is not true
        "unint_non_io": float(part[d & (io == 0)].sum()),
        "int": float(part[state == SchedState.S].sum()),
    }


def _reclaimed_kb(ev: GcEvent, heap: list[tuple[float, float]], ends: list[float], trace_end: float) -> float | None:
    """max − min of the heap counter over the GC and the first reading after it (KB), as the
    stdlib's _gc_slice_heap; None where it is NULL."""
    _pid, _tid, g0, dur, _n = ev
    g1 = g0 + dur
    if not heap:
        return None
    vals = [v for i, (t, v) in enumerate(heap)
            if t < g1 and (heap[i + 1][0] if i + 1 < len(heap) else trace_end) > g0]
    after = next(((t, v) for t, v in heap if t >= g1), None)
    if not vals or after is None or any(g1 < e < after[0] for e in ends):
        return None
    vals.append(after[1])
    return max(vals) - min(vals)


def _ms(us: float) -> float:
    return round(us / 1000.0, 3)


def summarize_gcs(pd: PerfData, events: list[GcEvent], rel) -> dict[int, GcSummary]:
    """GcSummary per pid, over its GCs and its main thread's waits for them."""
    by_pid: dict[int, list[GcEvent]] = defaultdict(list)
    for ev in events:
        by_pid[ev[0]].append(ev)
    pause_ids = name_ids(pd, lambda s: s.startswith(_PAUSE_PREFIXES))
    wait_ids = name_ids(pd, lambda s: s.startswith(_WAIT_PREFIXES))
    gc_threads = {(p, t) for p, t, *_ in events}
    pauses: dict[tuple[int, int], list[tuple[float, float]]] = defaultdict(list)
    for key, ts, dur, _n in find_slices(pd, pause_ids, keys=gc_threads):
        pauses[key].append((ts, ts + dur))
    waits: dict[int, list[tuple[float, float]]] = defaultdict(list)
    mains = [k for k in pd.slices if k[0] == k[1]] if wait_ids else []  # only main threads are read
    for (pid, _tid), ts, dur, _n in find_slices(pd, wait_ids, keys=mains):
        waits[pid].append((ts, ts + dur))
    trace_end = pd.end_us if pd.end_us is not None else 0.0
    out: dict[int, GcSummary] = {}
    for pid in set(by_pid) | set(waits):
        evs = sorted(by_pid.get(pid, []), key=lambda e: e[2])
        heap = list(pd.memory.get((pid, HEAP_COUNTER)) or [])  # tuples once: indexed per GC below
        ends = [e[2] + e[3] for e in evs]
        kinds: dict[str, GcKind] = {}
        states_sum: dict[str, float] | None = None
        pause_total = pause_max = 0.0
        reclaimed_sum: float | None = None
        for ev in evs:
            _p, tid, ts, dur, name = ev
            g1 = ts + dur
            pause, _n = union_us([(max(a, ts), min(b, g1)) for a, b in pauses.get((pid, tid), []) if a < g1 and b > ts])
            pause_total += pause
            pause_max = max(pause_max, pause)
            rec = _reclaimed_kb(ev, heap, ends, trace_end)
            st = _states(pd, (pid, tid), ts, g1)
            if st is not None:
                states_sum = {k: (states_sum or {}).get(k, 0.0) + v for k, v in st.items()}
            k = kinds.setdefault(gc_type(name), GcKind(count=0, total_ms=0.0, max_ms=0.0, pause_ms=0.0))
            k.count += 1
            k.total_ms = round(k.total_ms + dur / 1000.0, 3)
            k.max_ms = max(k.max_ms, _ms(dur))
            k.pause_ms = round(k.pause_ms + pause / 1000.0, 3)
            if rec is not None:
                k.reclaimed_mb = round((k.reclaimed_mb or 0.0) + rec / 1e3, 3)
                reclaimed_sum = (reclaimed_sum or 0.0) + rec
        tid = Counter(e[1] for e in evs).most_common(1)[0][0] if evs else None
        info = pd.threads.get((pid, tid)) if tid is not None else None
        wait_us, wait_n = union_us(waits.get(pid, []))
        out[pid] = GcSummary(
            count=len(evs), total_ms=round(sum(e[3] for e in evs) / 1000.0, 3),
            max_ms=round(max((e[3] for e in evs), default=0.0) / 1000.0, 3),
            types=dict(Counter(gc_type(e[4]) for e in evs).most_common()),
            by_type=dict(sorted(kinds.items(), key=lambda kv: (-kv[1].total_ms, kv[0]))),
            pause_ms=_ms(pause_total), pause_max_ms=_ms(pause_max),
            running_ms=_ms(states_sum["running"]) if states_sum else None,
            runnable_ms=_ms(states_sum["runnable"]) if states_sum else None,
            unint_io_ms=_ms(states_sum["unint_io"]) if states_sum else None,
            unint_non_io_ms=_ms(states_sum["unint_non_io"]) if states_sum else None,
            int_ms=_ms(states_sum["int"]) if states_sum else None,
            reclaimed_mb=round(reclaimed_sum / 1e3, 3) if reclaimed_sum is not None else None,
            main_thread_waits=wait_n, main_thread_wait_ms=_ms(wait_us),
            thread=(info.name if info and info.name else f"tid {tid}") if tid is not None else None,
            starts_ms=[rel(e[2]) for e in evs[:MAX_GC_MARKS]],
        )
    return out
