"""Why a frame was late: one cause from a closed set (:class:`~nodes.perf.model.FrameCause`),
decided on evidence the trace holds, never guessed.

The frame's window (its actual timeline slice, or its ``Choreographer#doFrame``) is cut into
exclusive pieces, like trace_processor's startup breakdown (stdlib
android/startup/startup_breakdowns.sql) cuts a launch, and each piece of the **main thread**
gets one reason, first that applies:

1. inside a slice of a blocking kind — lock contention (ART's ``Lock contention on …`` /
   ``monitor contention with owner …``), binder (``binder transaction``, AIDL/HIDL
   ``…::client``), GC (``GC``, ``WaitForGcToComplete``), shader compilation (``shader``,
   ``shader_compile``, Skia's ``GrGLProgramBuilder``) — the deepest such slice decides;
2. runnable (waiting for a CPU) → sched delay; in D with ``sched_blocked_reason`` io_wait → IO;
3. running inside a slice (or, without sched data, inside a slice) → a long slice on the main
   thread, named by the deepest slice;
4. sleeping inside a slice while a RenderThread of the app is busy → RenderThread work (the UI
   thread waits for its sync); sleeping inside a slice otherwise → still that main-thread slice.

Then the **RenderThread(s)** of the app are cut the same way over the window's time the main
thread does not account for: blocking kinds as above, else long RenderThread work. A frame
whose FrameTimeline jank type blames SurfaceFlinger (CPU/GPU deadline, scheduling, Display
HAL) and not the app is SurfaceFlinger's.

The cause is the reason with the most time, if it accounts for at least MIN_CAUSE_SHARE of the
frame; ``candidates`` keeps them all (ms), ``evidence`` names the slices, states and verdicts.
With neither slices nor scheduler data for the app's threads in the window, or when what they
show explains too little of the frame, there is no cause and ``cause_missing`` says why.
"""

from __future__ import annotations

import re
from collections import defaultdict

import numpy as np

from nodes.perf.model import FrameCause, PerfData, WorstFrame
from nodes.perf.parsers.perfetto_frames import APP_JANK, SF_JANK, JANK_LABELS, jank_components
from nodes.perf.sched_state import SchedState

BINDER_SLICE = re.compile(r"^binder transaction$|^AIDL::.*::client$|^HIDL::.*::client$")
LOCK_SLICE = re.compile(r"^Lock contention on |^monitor contention with owner |^Contending for ")
GC_SLICE = re.compile(r"(?:^|[^A-Za-z])GC(?:[^A-Za-z]|$)|WaitForGcToComplete|[Gg]arbage [Cc]ollect")
SHADER_SLICE = re.compile(r"(?i)\bshader\b|shader_compile|GrGLProgramBuilder|compileProgram")
#: Checked in this order when a slice name would match two.
BLOCKING_KINDS: tuple[tuple[FrameCause, re.Pattern], ...] = (
    (FrameCause.LOCK_CONTENTION, LOCK_SLICE),
    (FrameCause.BINDER, BINDER_SLICE),
    (FrameCause.GC, GC_SLICE),
    (FrameCause.SHADER_COMPILATION, SHADER_SLICE),
)
RENDER_THREAD_NAMES = ("RenderThread",)
#: Below this (µs) a reason explains nothing.
MIN_CAUSE_US = 100.0
#: A cause must account for at least this share of the frame's duration; below it the
#: frame's time went elsewhere (GPU, SurfaceFlinger, threads without slices) and no cause is
#: named — the candidates are still listed.
MIN_CAUSE_SHARE = 0.2
#: At most this many slices of one thread are cut per window (bounded work per frame).
MAX_SLICES_IN_WINDOW = 5000

# The states a frame's window is cut by.
_RUNNING, _RUNNABLE, _SLEEPING, _D, _IO = 0, 1, 2, 3, 4
#: PerfData.sched_intervals codes (SchedState, by value) → ours; D becomes IO where
#: sched_blocked_reason said io_wait.
_FROM_SCHED = np.array([{SchedState.RUNNING: _RUNNING, SchedState.R: _RUNNABLE, SchedState.R_PREEMPTED: _RUNNABLE,
                         SchedState.S: _SLEEPING, SchedState.D: _D, SchedState.OTHER: _SLEEPING}[s]
                        for s in SchedState], dtype=np.int64)
_LABEL_BITS = {label: bit for bit, label in JANK_LABELS}


def _bits(jank_type: str | None) -> int:
    return sum(_LABEL_BITS.get(c, 0) for c in jank_components(jank_type))


class _Timeline:
    """Slices and scheduler spans of one thread, ready to be cut into windows."""

    def __init__(self, ctx, key: tuple[int, int]):
        th = ctx.threads.get(key)
        self.ts = th.ts if th is not None else np.empty(0)
        self.dur = th.dur if th is not None else np.empty(0)
        self.name = th.name if th is not None else np.empty(0, dtype=np.int64)
        iv = getattr(ctx.pd, "sched_intervals", {}).get(key)
        if iv is not None and len(iv):
            self.sts = np.frombuffer(iv.ts, dtype=np.float64)
            self.sdur = np.frombuffer(iv.dur, dtype=np.float64)
            code = np.frombuffer(iv.state, dtype=np.int8).astype(np.int64)
            io = np.frombuffer(iv.io_wait, dtype=np.int8)
            st = _FROM_SCHED[np.clip(code, 0, len(_FROM_SCHED) - 1)]
            self.sst = np.where((st == _D) & (io == 1), _IO, st)
        else:
            self.sts = None

    @property
    def has_sched(self) -> bool:
        return self.sts is not None

    def segments(self, s: float, e: float) -> list[tuple[float, float, tuple[int, ...]]]:
        """[s, e] cut where the slice stack changes: (start, end, name ids outermost first)."""
        if not len(self.ts):
            return [(s, e, ())]
        hi = int(np.searchsorted(self.ts, e, side="left"))
        ts, dur, nm = self.ts[:hi], self.dur[:hi], self.name[:hi]
        idx = np.flatnonzero(ts + dur > s)[:MAX_SLICES_IN_WINDOW]
        out: list[tuple[float, float, tuple[int, ...]]] = []
        stack: list[tuple[float, int]] = []
        cur = s

        def emit(upto: float) -> None:
            nonlocal cur
            if upto > cur:
                out.append((cur, upto, tuple(x[1] for x in stack)))
                cur = upto

        for i in idx.tolist():
            a = max(float(ts[i]), s)
            b = min(float(ts[i] + dur[i]), e)
            while stack and stack[-1][0] <= a:
                emit(stack[-1][0])
                stack.pop()
            emit(a)
            if stack:
                b = min(b, stack[-1][0])
            stack.append((b, int(nm[i])))
        while stack:
            emit(stack[-1][0])
            stack.pop()
        emit(e)
        return out

    def states(self, s: float, e: float) -> list[tuple[float, float, int]]:
        if self.sts is None:
            return []
        i = max(0, int(np.searchsorted(self.sts, s, side="right")) - 1)
        out = []
        n = len(self.sts)
        while i < n and self.sts[i] < e:
            a, b = max(float(self.sts[i]), s), min(float(self.sts[i] + self.sdur[i]), e)
            if b > a:
                out.append((a, b, int(self.sst[i])))
            i += 1
        return out

    def cut(self, s: float, e: float) -> list[tuple[float, float, tuple[int, ...], int | None]]:
        """Segments overlaid with states: (start, end, stack, state or None when unknown)."""
        segs = self.segments(s, e)
        sts = self.states(s, e)
        if not sts:
            return [(a, b, p, None) for a, b, p in segs]
        out = []
        j = 0
        for a, b, p in segs:
            t = a
            while j < len(sts) and sts[j][1] <= t:
                j += 1
            k = j
            while t < b:
                while k < len(sts) and sts[k][1] <= t:
                    k += 1
                if k < len(sts) and sts[k][0] <= t:
                    u = min(b, sts[k][1])
                    out.append((t, u, p, sts[k][2]))
                else:  # no state known here (before the thread's first sched event)
                    u = min(b, sts[k][0]) if k < len(sts) else b
                    out.append((t, u, p, None))
                t = u
        return out


def _blocking(pd: PerfData, path: tuple[int, ...]) -> tuple[FrameCause, int] | None:
    """The blocking kind of the deepest slice on the stack that has one."""
    for nid in reversed(path):
        name = pd.strings[nid]
        for cause, rx in BLOCKING_KINDS:
            if rx.search(name):
                return cause, nid
    return None


def _merge(iv: list[tuple[float, float]]) -> list[tuple[float, float]]:
    out: list[list[float]] = []
    for a, b in sorted(iv):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return [(a, b) for a, b in out]


def _minus(a: float, b: float, taken: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """[a, b] minus the merged intervals ``taken``."""
    out, t = [], a
    for x, y in taken:
        if y <= t:
            continue
        if x >= b:
            break
        if x > t:
            out.append((t, min(x, b)))
        t = max(t, y)
        if t >= b:
            break
    if t < b:
        out.append((t, b))
    return out


def _overlap(a: float, b: float, busy: list[tuple[float, float]]) -> float:
    return sum(max(0.0, min(b, y) - max(a, x)) for x, y in busy if y > a and x < b)


def _ms(us: float) -> float:
    return round(us / 1000.0, 3)


def render_threads(ctx, pid: int) -> list[tuple[int, int]]:
    return sorted(k for k, t in ctx.pd.threads.items()
                  if k[0] == pid and (t.name or "") in RENDER_THREAD_NAMES)


def explain(ctx, wf: WorstFrame, ts_us: float, dur_us: float, pid: int | None, tid: int | None,
            jank_type: str | None, on_time_finish: bool | None = None, overrun_us: float | None = None) -> None:
    """Fill ``wf.cause``, ``cause_ms``, ``candidates``, ``evidence`` (or ``cause_missing``)."""
    pd = ctx.pd
    s, e = ts_us, ts_us + dur_us
    bits = _bits(jank_type)
    evidence: list[str] = []
    if jank_type:
        evidence.append(f"jank type: {jank_type}")
    if bits & SF_JANK and not bits & APP_JANK:
        wf.cause = FrameCause.SURFACEFLINGER
        blame = max(overrun_us or 0.0, 0.0) or dur_us
        wf.cause_ms = _ms(blame)
        wf.candidates = {FrameCause.SURFACEFLINGER.value: wf.cause_ms}
        if on_time_finish:
            evidence.append("the app finished its work on time")
        if overrun_us is not None:
            evidence.append(f"presented {_ms(overrun_us):g} ms after the expected end")
        wf.evidence = evidence
        return
    main_pid = pid if pid is not None else (ctx.main[0] if ctx.main else None)
    if main_pid is None:
        wf.cause_missing = "the frame names no process"
        return
    main_key = (main_pid, tid if tid is not None else main_pid)
    if ctx.main is not None and ctx.main[0] == main_pid:
        main_key = ctx.main
    main = _Timeline(ctx, main_key)
    rts = [_Timeline(ctx, k) for k in render_threads(ctx, main_pid) if k != main_key]
    if not len(main.ts) and not main.has_sched and not any(len(r.ts) for r in rts):
        wf.cause_missing = (f"no atrace slices and no scheduler data for {pd.thread_label(*main_key)} "
                            "during the frame")
        wf.evidence = evidence
        return
    time: dict[FrameCause, float] = defaultdict(float)
    names: dict[FrameCause, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    state_time: dict[int, float] = defaultdict(float)
    taken: list[tuple[float, float]] = []
    blocked: list[tuple[float, float, int]] = []

    def add(cause: FrameCause, a: float, b: float, label: str) -> None:
        time[cause] += b - a
        names[cause][label] += b - a

    for a, b, path, st in main.cut(s, e):
        if st is not None:
            state_time[st] += b - a
        kind = _blocking(pd, path)
        if kind is not None:
            add(kind[0], a, b, pd.strings[kind[1]])
        elif st == _RUNNABLE:
            add(FrameCause.SCHED_DELAY, a, b, "runnable" + (f" in {pd.strings[path[-1]]}" if path else ""))
        elif st == _IO:
            add(FrameCause.IO, a, b, "IO wait" + (f" in {pd.strings[path[-1]]}" if path else ""))
        elif path and st in (None, _RUNNING):
            add(FrameCause.MAIN_THREAD_SLICE, a, b, _path_label(pd, path))
        elif path:
            blocked.append((a, b, path[-1]))
            continue
        elif st == _RUNNING:
            add(FrameCause.MAIN_THREAD_SLICE, a, b, "(running outside any slice)")
        else:
            continue
        taken.append((a, b))
    rt_busy: list[tuple[float, float]] = []
    rt_cuts = []
    for rt in rts:
        cut = rt.cut(s, e)
        rt_cuts.append(cut)
        rt_busy += [(a, b) for a, b, p, st in cut if p and st in (None, _RUNNING, _RUNNABLE)]
    rt_busy = _merge(rt_busy)
    for a, b, nid in blocked:
        w = _overlap(a, b, rt_busy)
        if w > 0:
            time[FrameCause.RENDER_THREAD] += w
            names[FrameCause.RENDER_THREAD][f"{pd.strings[nid]} waiting for RenderThread"] += w
        if (b - a) - w > 0:
            time[FrameCause.MAIN_THREAD_SLICE] += (b - a) - w
            names[FrameCause.MAIN_THREAD_SLICE][f"{pd.strings[nid]} (sleeping)"] += (b - a) - w
        taken.append((a, b))
    taken = _merge(taken)
    for cut in rt_cuts:
        for a, b, path, st in cut:
            if not path and st != _RUNNING:
                continue  # idle: a RenderThread only runs to draw frames, so running counts
            for x, y in _minus(a, b, taken):
                kind = _blocking(pd, path) if path else None
                if kind is not None:
                    add(kind[0], x, y, pd.strings[kind[1]] + " (RenderThread)")
                else:
                    add(FrameCause.RENDER_THREAD, x, y, _path_label(pd, path) if path else "RenderThread running (no slice)")
    if bits & SF_JANK:
        evidence.append("SurfaceFlinger missed its deadline too")
    cands = {c: t for c, t in time.items() if t >= MIN_CAUSE_US}
    wf.candidates = {c.value: _ms(t) for c, t in sorted(cands.items(), key=lambda kv: -kv[1])}
    if state_time:
        evidence.append("main thread: " + ", ".join(
            f"{lab} {_ms(state_time[c]):g} ms" for c, lab in
            ((_RUNNING, "running"), (_RUNNABLE, "runnable"), (_SLEEPING, "sleeping"), (_D, "D"), (_IO, "IO wait"))
            if state_time.get(c)))
    if not cands:
        wf.cause_missing = "nothing in the app's main or RenderThread accounts for the frame's time"
        wf.evidence = evidence
        return
    cause = max(cands, key=lambda c: cands[c])
    if cands[cause] < MIN_CAUSE_SHARE * dur_us:
        wf.cause_missing = (f"the app's main and RenderThread account for {_ms(cands[cause]):g} ms at most of the "
                            f"{_ms(dur_us):g} ms frame; the rest is outside them (GPU, SurfaceFlinger, or threads "
                            "without slices)")
        wf.evidence = evidence
        return
    wf.cause = cause
    wf.cause_ms = _ms(cands[cause])
    top = sorted(names[cause].items(), key=lambda kv: -kv[1])[:3]
    wf.evidence = [f"{n} {_ms(t):g} ms" for n, t in top] + evidence


def _path_label(pd: PerfData, path: tuple[int, ...]) -> str:
    """The deepest slice, with its two nearest ancestors: "inflate (traversal > measure)"."""
    leaf = pd.strings[path[-1]]
    up = [pd.strings[n] for n in path[-3:-1]]
    return f"{leaf} ({' > '.join(up)})" if up else leaf
