"""PerfData → AnalysisResult: the numbers a performance engineer checks. Deterministic.

* Hot spots by self and total time with their share, overall and per thread, with file and
  line where the format has them. Nested slices: per-thread stacks rebuilt from times (sorted
  by start, longer first), self = own time minus direct children. Sampled stacks: self = the
  leaf's weight, total = the weight of every stack the function is on, counted once per stack
  (recursion does not double it). pstats rows and ``-X importtime`` modules as they come.
* Threads: busy time (top-level slices, or sampled weight), scheduler states, the main/UI
  thread (reader's mark; CrRendererMain/CrBrowserMain; "MainThread"; pid == tid on Android;
  else the busiest), and long tasks (≥ 50 ms top-level slices) on it.
* Frames: from the reader (frame timeline, gfxinfo), Android ``Choreographer#doFrame``, or
  Chrome ``BeginFrame``/``DrawFrame``; count, FPS, p50/p90/p99, jank against the budget the
  data gives (expected frame durations, the vsync period) or 16.67 ms, the worst frames and
  the longest slices that ran during them.
* Startup: measured runs (median, min, max, spread, the first run apart), phases, the import
  tree; an Android ``launching: <pkg>`` span with its phases; Chrome navigation marks.
* Counters summarised with downsampled curves; ``perf stat`` figures; findings with evidence
  (file, time range, events) and a severity.
"""

from __future__ import annotations

import math
import os
import re
from collections import defaultdict
from statistics import median
from typing import Iterable

import numpy as np

from nodes.perf.model import (
    MAX_RESULT_STACKS,
    AnalysisResult,
    CounterSummary,
    Evidence,
    Finding,
    Frame,
    FrameStats,
    Hotspot,
    LongTask,
    PerfData,
    StackWeight,
    StartupPhase,
    StartupRun,
    StartupStats,
    ThreadStat,
    WorstFrame,
)

LONG_TASK_MS = 50.0
DEFAULT_BUDGET_MS = 1000.0 / 60.0
TOP_HOTSPOTS = 30
TOP_PER_THREAD = 10
MAX_THREADS = 64
MAX_FRAME_POINTS = 5000
MAX_COUNTER_POINTS = 200
MAX_COUNTERS = 60
MAX_PATHS = 200_000

MAIN_THREAD_NAMES = ("CrRendererMain", "CrBrowserMain", "MainThread", "main", "ui", "UI Thread")
ANDROID_FRAME = "Choreographer#doFrame"
ANDROID_PHASES = (
    "bindApplication",
    "activityStart",
    "activityResume",
    "Choreographer#doFrame",
    "reportFullyDrawn",
    "ActivityThreadMain",
    "Application.onCreate",
    "inflate",
    "traversal",
)
PAGE_MARKS = (
    "fetchStart",
    "responseEnd",
    "firstPaint",
    "firstContentfulPaint",
    "firstMeaningfulPaint",
    "largestContentfulPaint::Candidate",
    "domInteractive",
    "domContentLoadedEventEnd",
    "MarkDOMContent",
    "loadEventStart",
    "loadEventEnd",
    "MarkLoad",
)
_SEVERITY_ORDER = {"high": 0, "medium": 1, "low": 2, "info": 3}


def compute(pd: PerfData, top: int = TOP_HOTSPOTS) -> AnalysisResult:
    """The analysis of one reader's output."""
    return _Analysis(pd, top).run()


def _ms(us: float) -> float:
    return round(us / 1000.0, 3)


def _pct(part: float, whole: float) -> float:
    return round(100.0 * part / whole, 2) if whole > 0 else 0.0


def _fms(v: float | None) -> str:
    """Milliseconds in a finding's text, written as the report writes them (``2,410 ms``,
    ``97.2 ms``, ``3.14 ms``) so a finding and the table beside it show the same number."""
    if v is None or not math.isfinite(v):
        return "–"
    digits = 0 if abs(v) >= 100 else 1 if abs(v) >= 10 else 2
    return f"{v:,.{digits}f} ms"


def _fpct(v: float | None) -> str:
    """A share already in percent, one decimal, as the report writes it (``97.2 %``)."""
    return "–" if v is None or not math.isfinite(v) else f"{v:,.1f} %"


def shown_path(path: str, root: str | None = None) -> str:
    """A path as a person reads it in a finding: relative to ``root`` (the current directory)
    when it lies inside it, else as given. Hotspot.file keeps the absolute path: the attributor
    opens it."""
    if not path or not os.path.isabs(path):
        return path
    try:
        rel = os.path.relpath(path, root or os.getcwd())
    except (ValueError, OSError):  # another drive; the cwd was deleted
        return path
    return path if rel == ".." or rel.startswith(".." + os.sep) else rel


def _q(sorted_vals: list[float], q: float) -> float | None:
    """Nearest-rank percentile of an ascending list."""
    if not sorted_vals:
        return None
    k = max(0, min(len(sorted_vals) - 1, math.ceil(q / 100.0 * len(sorted_vals)) - 1))
    return sorted_vals[k]


class _Thread:
    """Per-thread results of the slice walk."""

    __slots__ = ("key", "busy_us", "count", "self_by", "total_by", "count_by", "top_level", "ts", "dur", "name")

    def __init__(self, key: tuple[int, int]):
        self.key = key
        self.busy_us = 0.0
        self.count = 0
        self.self_by: dict[int, float] = defaultdict(float)
        self.total_by: dict[int, float] = defaultdict(float)
        self.count_by: dict[int, int] = defaultdict(int)
        self.top_level: list[tuple[float, float, int]] = []
        self.ts: np.ndarray = np.empty(0)
        self.dur: np.ndarray = np.empty(0)
        self.name: np.ndarray = np.empty(0, dtype=np.int64)


class _Analysis:
    def __init__(self, pd: PerfData, top: int):
        self.pd = pd
        self.top = top
        self.t0 = pd.start_us or 0.0
        self.threads: dict[tuple[int, int], _Thread] = {}
        self.sampled_busy: dict[tuple[int, int], float] = defaultdict(float)
        self.paths: dict[tuple[tuple[int, int], tuple], float] = defaultdict(float)
        self.findings: list[Finding] = []
        self.main: tuple[int, int] | None = None
        self.res = AnalysisResult(format=pd.format, source=pd.source)

    def rel(self, us: float) -> float:
        return _ms(us - self.t0)

    # ----------------------------------------------------------------------------------
    def run(self) -> AnalysisResult:
        pd, res = self.pd, self.res
        res.duration_ms = _ms(pd.duration_us)
        res.stats = dict(pd.stats)
        res.meta = {k: str(v) for k, v in pd.meta.items()}
        res.meta.setdefault("source", os.path.basename(pd.source))
        res.warnings = list(pd.warnings)
        res.partial = bool(pd.partial)
        for key in pd.slices:
            self._walk(key)
        self._samples()
        self._pick_main()
        hotspots = self._slice_hotspots() + self._sample_hotspots() + self._call_hotspots() + self._import_hotspots()
        res.hotspots = hotspots
        res.threads = self._thread_stats()
        res.long_tasks = self._long_tasks()
        res.frames = self._frames()
        res.startup = self._startup()
        res.counters = self._counters()
        res.stacks = self._stacks()
        self._findings()
        res.findings = sorted(self.findings, key=lambda f: _SEVERITY_ORDER.get(f.severity, 9))
        return res

    # --- slices ---------------------------------------------------------------------------
    def _walk(self, key: tuple[int, int]) -> None:
        cols = self.pd.slices[key]
        n = len(cols)
        th = self.threads[key] = _Thread(key)
        if not n:
            return
        ts = np.frombuffer(cols.ts, dtype=np.float64).copy()
        dur = np.frombuffer(cols.dur, dtype=np.float64).copy()
        name = np.frombuffer(cols.name, dtype=np.dtype(cols.name.typecode)).astype(np.int64)
        ok = np.isfinite(ts) & np.isfinite(dur)
        if not ok.all():
            ts, dur, name = ts[ok], dur[ok], name[ok]
        dur = np.maximum(dur, 0.0)
        order = np.lexsort((-dur, ts))
        ts, dur, name = ts[order], dur[order], name[order]
        th.ts, th.dur, th.name = ts, dur, name
        th.count = len(ts)
        self_by, total_by, count_by = th.self_by, th.total_by, th.count_by
        active: dict[int, int] = defaultdict(int)
        paths = self.paths
        track_paths = len(paths) < MAX_PATHS
        # stack entries: [end, nid, start, dur, child_us, path]
        stack: list[list] = []
        busy = 0.0
        top_level = th.top_level

        for t, d, nid in zip(ts.tolist(), dur.tolist(), name.tolist()):
            end = t + d
            while stack and stack[-1][0] <= t:
                e = stack.pop()  # closes: own time = duration − direct children
                n_ = e[1]
                own = e[3] - e[4]
                if own > 0.0:
                    self_by[n_] += own
                    if track_paths:
                        paths[(key, e[5])] += own
                else:
                    self_by[n_] += 0.0  # listed even with no time of its own
                active[n_] -= 1
            if stack:
                parent = stack[-1]
                parent[4] += (end if end < parent[0] else parent[0]) - t
                path = parent[5] + (nid,) if len(parent[5]) < 64 else parent[5]
            else:
                busy += d
                top_level.append((t, d, nid))
                path = (nid,)
            if active[nid] == 0:
                total_by[nid] += d  # outermost occurrence only: recursion is not counted twice
            active[nid] += 1
            stack.append([end, nid, t, d, 0.0, path])
        while stack:
            e = stack.pop()
            own = e[3] - e[4]
            self_by[e[1]] += own if own > 0.0 else 0.0
            if track_paths and own > 0.0:
                paths[(key, e[5])] += own
        counts = np.bincount(name)
        for nid in np.flatnonzero(counts).tolist():
            count_by[nid] = int(counts[nid])
        th.busy_us = busy

    def _slice_hotspots(self) -> list[Hotspot]:
        if not self.threads:
            return []
        pd = self.pd
        total_busy = sum(t.busy_us for t in self.threads.values())
        agg_self: dict[int, float] = defaultdict(float)
        agg_total: dict[int, float] = defaultdict(float)
        agg_count: dict[int, int] = defaultdict(int)
        for th in self.threads.values():
            for nid, v in th.self_by.items():
                agg_self[nid] += v
            for nid, v in th.total_by.items():
                agg_total[nid] += v
            for nid, v in th.count_by.items():
                agg_count[nid] += v
        out: list[Hotspot] = []
        ranked = sorted(agg_self, key=lambda n: (-agg_self[n], -agg_total[n]))[: self.top]
        for nid in ranked:
            out.append(self._slice_hotspot(nid, agg_self[nid], agg_total[nid], agg_count[nid], total_busy, None))
        # per thread: the main thread and the busiest others
        keys = sorted(self.threads, key=lambda k: -self.threads[k].busy_us)[:8]
        if self.main in self.threads and self.main not in keys:
            keys.insert(0, self.main)
        if len(self.threads) > 1:
            for k in keys:
                th = self.threads[k]
                if th.busy_us <= 0:
                    continue
                label = pd.thread_label(*k)
                for nid in sorted(th.self_by, key=lambda n: (-th.self_by[n], -th.total_by[n]))[:TOP_PER_THREAD]:
                    out.append(self._slice_hotspot(nid, th.self_by[nid], th.total_by[nid], th.count_by[nid], th.busy_us, label))
        return out

    def _slice_hotspot(self, nid: int, s: float, t: float, c: int, whole: float, thread: str | None) -> Hotspot:
        name = self.pd.strings[nid]
        file, line = self.pd.locations.get(nid, (None, None))
        if file is not None and name.endswith(f" ({file}:{line})"):
            name = name[: -len(f" ({file}:{line})")]  # viztracer's "func (file:line)"
        return Hotspot(
            name=name,
            file=file,
            line=line,
            self_ms=_ms(s),
            total_ms=_ms(t),
            self_pct=_pct(s, whole),
            total_pct=_pct(t, whole),
            count=c,
            thread=thread,
            kind="slice",
        )

    # --- samples --------------------------------------------------------------------------
    def _samples(self) -> None:
        """Aggregate sampled stacks per function (name, file): self, total, hottest line, and how
        many samples the function was on (anywhere in the stack, once per sample)."""
        pd = self.pd
        if not pd.stacks:
            self.sample_rows: list = []
            return
        refs = pd.frame_refs
        fkey = [(r.name, r.file) for r in refs]
        self_w: dict = defaultdict(float)
        total_w: dict = defaultdict(float)
        count: dict = defaultdict(int)
        line_w: dict = defaultdict(lambda: defaultdict(float))
        per_thread_self: dict = defaultdict(lambda: defaultdict(float))
        per_thread_total: dict = defaultdict(lambda: defaultdict(float))
        per_thread_count: dict = defaultdict(lambda: defaultdict(int))
        n_samples = pd.stack_samples
        grand = 0.0
        for key, w in pd.stacks.items():
            track, ids = key
            if not ids:
                continue
            grand += w
            self.sampled_busy[track] += w
            n = n_samples.get(key, 1)
            leaf = ids[-1]
            lk = fkey[leaf]
            self_w[lk] += w
            per_thread_self[track][lk] += w
            if refs[leaf].line is not None:
                line_w[lk][refs[leaf].line] += w
            seen = set()
            for i in ids:
                k = fkey[i]
                if k in seen:
                    continue
                seen.add(k)
                total_w[k] += w
                count[k] += n
                per_thread_total[track][k] += w
                per_thread_count[track][k] += n
                if k != lk and refs[i].line is not None and k not in line_w:
                    line_w[k][refs[i].line] += 0.0
            if len(self.paths) < MAX_PATHS:
                self.paths[(track, ("s",) + tuple(fkey[i] for i in ids[-64:]))] += w
        self.sample_rows = [self_w, total_w, count, line_w, per_thread_self, per_thread_total, per_thread_count, grand]

    def _sample_hotspots(self) -> list[Hotspot]:
        if not self.pd.stacks or not self.sample_rows:
            return []
        self_w, total_w, count, line_w, pts, ptt, ptc, grand = self.sample_rows

        def line_of(k) -> int | None:
            lines = line_w.get(k)
            if not lines:
                return None
            return max(lines.items(), key=lambda kv: (kv[1], -kv[0]))[0]

        out: list[Hotspot] = []
        # by self time, then total: callers with no self time of their own (main, <module>) come
        # after every function that has some, ordered by the time spent under them
        keys = sorted(total_w, key=lambda k: (-self_w.get(k, 0.0), -total_w[k], k[0], k[1] or ""))[: self.top]
        for k in keys:
            out.append(Hotspot(
                name=k[0], file=k[1], line=line_of(k),
                self_ms=_ms(self_w.get(k, 0.0)), total_ms=_ms(total_w[k]),
                self_pct=_pct(self_w.get(k, 0.0), grand), total_pct=_pct(total_w[k], grand),
                count=count.get(k, 0), thread=None, kind="sample",
            ))
        if len(pts) > 1:
            tracks = sorted(pts, key=lambda tr: -self.sampled_busy[tr])[:8]
            for tr in tracks:
                whole = self.sampled_busy[tr]
                label = self.pd.thread_label(*tr)
                for k in sorted(pts[tr], key=lambda k: (-pts[tr][k], -ptt[tr].get(k, 0.0), k[0], k[1] or ""))[:TOP_PER_THREAD]:
                    out.append(Hotspot(
                        name=k[0], file=k[1], line=line_of(k),
                        self_ms=_ms(pts[tr][k]), total_ms=_ms(ptt[tr].get(k, 0.0)),
                        self_pct=_pct(pts[tr][k], whole), total_pct=_pct(ptt[tr].get(k, 0.0), whole),
                        count=ptc[tr].get(k, 0), thread=label, kind="sample",
                    ))
        return out

    # --- pstats / imports -------------------------------------------------------------------
    def _call_hotspots(self) -> list[Hotspot]:
        calls = self.pd.calls
        if not calls:
            return []
        whole = sum(c.self_us for c in calls) or 1.0
        ranked = sorted(calls, key=lambda c: (-c.self_us, -c.total_us))[: self.top]
        return [
            Hotspot(
                name=c.name, file=c.file, line=c.line,
                self_ms=_ms(c.self_us), total_ms=_ms(c.total_us),
                self_pct=_pct(c.self_us, whole), total_pct=_pct(c.total_us, whole),
                count=c.calls, thread=None, kind="call",
            )
            for c in ranked
        ]

    def _import_hotspots(self) -> list[Hotspot]:
        imps = self.pd.imports
        if not imps:
            return []
        whole = sum(i.cumulative_us for i in imps if i.depth == 0) or sum(i.self_us for i in imps) or 1.0
        ranked = sorted(imps, key=lambda i: (-i.self_us, -i.cumulative_us))[: self.top]
        return [
            Hotspot(
                name=i.module, file=i.file, line=1 if i.file else None,
                self_ms=_ms(i.self_us), total_ms=_ms(i.cumulative_us),
                self_pct=_pct(i.self_us, whole), total_pct=_pct(i.cumulative_us, whole),
                count=1, thread=None, kind="import",
            )
            for i in ranked
        ]

    # --- threads ------------------------------------------------------------------------------
    def _busy(self, key: tuple[int, int]) -> float:
        """Busy time: top-level slices, else sampled weight, else scheduler running time."""
        th = self.threads.get(key)
        b = (th.busy_us if th else 0.0) + self.sampled_busy.get(key, 0.0)
        if b <= 0.0:
            b = self.pd.thread_states.get(key, {}).get("running", 0.0)
        return b

    def _pick_main(self) -> None:
        pd = self.pd
        cands = list(pd.threads)
        if not cands:
            return

        def busiest(keys: Iterable[tuple[int, int]]) -> tuple[int, int] | None:
            keys = list(keys)
            return max(keys, key=lambda k: (self._busy(k), -k[1])) if keys else None

        # Android: the app whose frames were measured (frame timeline / gfxinfo pid), or the
        # app being launched; its main thread is the thread whose tid is the pid
        for (pid, _track), cols in pd.async_slices.items():
            names = {pd.strings[n] for n in set(cols.name)}
            for nm in names:
                if nm.startswith("launching: "):
                    pkg = nm[len("launching: "):].strip()
                    for ppid, pname in pd.processes.items():
                        if pname == pkg and (ppid, ppid) in pd.threads:
                            self.main = (ppid, ppid)
                            return
        pids = [f.pid for f in pd.frames if f.pid]
        if pids:
            top_pid = max(set(pids), key=pids.count)
            if (top_pid, top_pid) in pd.threads:
                self.main = (top_pid, top_pid)
                return
        # the thread that draws the most Android frames is the UI thread of the app of interest
        fid = [i for i, s in enumerate(pd.strings) if s.startswith(ANDROID_FRAME)]
        if fid:
            counts = {}
            for k, th in self.threads.items():
                if len(th.name):
                    c = int(np.isin(th.name, fid).sum())
                    if c:
                        counts[k] = c
            if counts:
                apps = {k: c for k, c in counts.items() if k[0] == k[1]} or counts
                self.main = max(apps, key=lambda k: (apps[k], self._busy(k)))
                return
        marked = [k for k in cands if pd.threads[k].is_main]
        for pool in (
            marked if len(marked) == 1 else [],
            [k for k in cands if (pd.threads[k].name or "") == "CrRendererMain"],
            [k for k in cands if (pd.threads[k].name or "") == "CrBrowserMain"],
            [k for k in cands if (pd.threads[k].name or "") in MAIN_THREAD_NAMES],
            marked,
        ):
            b = busiest(pool)
            if b is not None and self._busy(b) > 0:
                self.main = b
                return
        self.main = busiest(cands)

    def _thread_stats(self) -> list[ThreadStat]:
        pd = self.pd
        keys = set(pd.threads) | set(self.threads) | set(self.sampled_busy) | set(pd.thread_states)
        rows = []
        for k in keys:
            info = pd.threads.get(k)
            states = pd.thread_states.get(k, {})
            th = self.threads.get(k)
            busy = self._busy(k)
            if not busy and not states and not (th and th.count):
                continue
            rows.append(ThreadStat(
                pid=k[0], tid=k[1],
                name=(info.name if info and info.name else f"tid {k[1]}"),
                process=pd.processes.get(k[0]),
                busy_ms=_ms(busy),
                slice_count=th.count if th else 0,
                is_main=(k == self.main),
                running_ms=_ms(states["running"]) if "running" in states else None,
                runnable_ms=_ms(states["runnable"]) if "runnable" in states else None,
                sleeping_ms=_ms(states["sleeping"]) if "sleeping" in states else None,
            ))
        rows.sort(key=lambda r: (not r.is_main, -r.busy_ms, -(r.running_ms or 0.0)))
        return rows[:MAX_THREADS]

    def _long_tasks(self) -> list[LongTask]:
        if self.main is None or self.main not in self.threads:
            return []
        th = self.threads[self.main]
        label = self.pd.thread_label(*self.main)
        tasks = [(t, d, n) for t, d, n in th.top_level if d >= LONG_TASK_MS * 1000.0]
        tasks.sort(key=lambda x: -x[1])
        self.long_total_us = sum(d for _, d, _ in tasks)
        self.long_count = len(tasks)
        return [LongTask(name=self.pd.strings[n], thread=label, start_ms=self.rel(t), dur_ms=_ms(d)) for t, d, n in tasks[:20]]

    # --- frames -----------------------------------------------------------------------------
    def _frames(self) -> FrameStats | None:
        pd = self.pd
        frames: list[Frame] = list(pd.frames)
        origin = "reader"
        budget_us: float | None = None
        budget_source = "default"
        if not frames:
            frames = self._android_frames()
            origin = ANDROID_FRAME
        if not frames:
            frames = self._chrome_frames()
            origin = "DrawFrame"
        if not frames and not _reported(pd.frame_summary).get("total"):
            return None
        budgets = [f.budget_us for f in frames if f.budget_us and f.budget_us > 0]
        if budgets:
            budget_us = median(budgets)
            said = pd.frame_summary.get("budget_source")
            budget_source = said if isinstance(said, str) and said else "expected frames"
        else:
            v = self._vsync_period_us()
            if v:
                budget_us = v
                budget_source = "vsync period"
        budget_ms = budget_us / 1000.0 if budget_us else DEFAULT_BUDGET_MS
        fs = FrameStats(count=len(frames), budget_ms=round(budget_ms, 3), budget_source=budget_source)
        fs.reported = {  # the model holds float | str: ints become floats
            str(k): (float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else str(v))
            for k, v in pd.frame_summary.items()
        }
        if not frames:
            # only the producer's own totals (gfxinfo without per-frame rows)
            rep = _reported(pd.frame_summary)
            fs.count = int(rep.get("total", 0) or 0)
            fs.jank_count = int(rep.get("janky", 0) or 0)
            jr = rep.get("janky_ratio")
            fs.jank_ratio = round(jr, 4) if jr is not None else None
            for q in (50, 90, 99):
                setattr(fs, f"p{q}_ms", rep.get(f"p{q}"))
            return fs
        frames.sort(key=lambda f: f.ts_us)
        durs = [f.dur_us / 1000.0 for f in frames]
        janky = [
            (f.janky if f.janky is not None else (f.dur_us / 1000.0) > (f.budget_us / 1000.0 if f.budget_us else budget_ms))
            for f in frames
        ]
        sd = sorted(durs)
        fs.jank_count = sum(1 for j in janky if j)
        fs.jank_ratio = round(fs.jank_count / len(frames), 4)
        fs.p50_ms, fs.p90_ms, fs.p99_ms = (round(_q(sd, q), 3) for q in (50, 90, 99))  # type: ignore[misc]
        fs.max_ms = round(sd[-1], 3)
        span_us = (frames[-1].ts_us + frames[-1].dur_us) - frames[0].ts_us
        if span_us > 0 and len(frames) > 1:
            fs.fps = round(len(frames) / (span_us / 1e6), 2)
        step = max(1, math.ceil(len(frames) / MAX_FRAME_POINTS))
        fs.durations_ms = [round(d, 3) for d in durs[::step]]
        fs.starts_ms = [self.rel(f.ts_us) for f in frames[::step]]
        worst = sorted(range(len(frames)), key=lambda i: -durs[i])[:5]
        for i in worst:
            f = frames[i]
            fs.worst.append(WorstFrame(
                start_ms=self.rel(f.ts_us), dur_ms=round(durs[i], 3),
                jank_type=f.jank_type, ran=self._ran_during(f),
            ))
        self.frame_origin = origin
        return fs

    def _ids_with_prefix(self, prefix: str) -> list[int]:
        return [i for i, s in enumerate(self.pd.strings) if s.startswith(prefix)]

    def _android_frames(self) -> list[Frame]:
        ids = self._ids_with_prefix(ANDROID_FRAME)
        if not ids:
            return []
        out: list[Frame] = []
        for k, th in self.threads.items():
            if not len(th.name):
                continue
            m = np.isin(th.name, ids)
            if not m.any():
                continue
            if self.main is not None and k != self.main and k[0] == self.main[0]:
                continue
            for t, d in zip(th.ts[m].tolist(), th.dur[m].tolist()):
                out.append(Frame(ts_us=t, dur_us=d, pid=k[0], tid=k[1]))
        if self.main is not None:
            mine = [f for f in out if (f.pid, f.tid) == self.main]
            if mine:
                return mine
        return out

    def _chrome_frames(self) -> list[Frame]:
        pd = self.pd
        draws: dict[tuple[int, int], list[float]] = defaultdict(list)
        begins: dict[tuple[int, int], list[float]] = defaultdict(list)
        requests: dict[tuple[int, int], list[float]] = defaultdict(list)
        for ts, pid, tid, name in pd.instants:
            if name == "DrawFrame":
                draws[(pid, tid)].append(ts)
            elif name == "BeginFrame":
                begins[(pid, tid)].append(ts)
            elif name == "RequestMainThreadFrame":
                requests[(pid, tid)].append(ts)
        if not draws:
            return []
        # the compositor thread that both begins and draws frames (the page's), else the busiest
        both = [k for k in draws if begins.get(k)]
        key = max(both or list(draws), key=lambda k: len(draws[k]))
        d = sorted(draws[key])
        b = np.array(sorted(begins.get(key, [])))
        r = np.array(sorted(requests.get(key, [])))
        out: list[Frame] = []
        prev = None
        for t in d:
            lo = prev if prev is not None else -math.inf
            start = None
            # A frame the main thread was asked for began with the vsync of that request (the
            # vsyncs it then missed make it longer); a compositor-only frame began with the
            # last BeginFrame before its draw. BeginFrames with neither request nor draw are
            # idle vsyncs, not part of any frame.
            if len(r):
                i = np.searchsorted(r, lo, side="right")
                if i < len(r) and r[i] <= t:
                    req = r[i]
                    j = np.searchsorted(b, req, side="right") - 1 if len(b) else -1
                    start = b[j] if j >= 0 and b[j] > lo else req
            if start is None and len(b):
                j = np.searchsorted(b, t, side="right") - 1
                if j >= 0 and b[j] > lo:
                    start = b[j]
            if start is None and not len(b) and prev is not None and t - prev < 1e6:
                start = prev  # no BeginFrames recorded: the interval since the last draw
            if start is not None:
                out.append(Frame(ts_us=float(start), dur_us=float(t - start), pid=key[0], tid=key[1]))
            prev = t
        self.chrome_frame_thread = key
        return out

    def _vsync_period_us(self) -> float | None:
        """The refresh period the data shows: VSYNC counters (one toggle a vsync), Chrome's
        BeginFrame cadence or VSync slices. None when nothing plausible (4–50 ms) is there."""
        pd = self.pd
        cands: list[float] = []
        for name, pts in pd.counters.items():
            if name.startswith(("VSYNC-app", "VSYNC-sf", "HW_VSYNC")) and len(pts) > 4:
                ts = sorted(t for t, _ in pts)
                cands.append(median(np.diff(ts).tolist()))
                break
        if not cands:
            begins: dict = defaultdict(list)
            for ts, pid, tid, name in pd.instants:
                if name == "BeginFrame":
                    begins[(pid, tid)].append(ts)
            if begins:
                k = max(begins, key=lambda k: len(begins[k]))
                if len(begins[k]) > 4:
                    cands.append(median(np.diff(sorted(begins[k])).tolist()))
        if not cands:
            ids = [i for i, s in enumerate(pd.strings) if s == "VSync"]
            if ids:
                for th in self.threads.values():
                    m = np.isin(th.name, ids)
                    if m.sum() > 4:
                        cands.append(median(np.diff(np.sort(th.ts[m])).tolist()))
                        break
        for c in cands:
            if 4000.0 <= c <= 50000.0:
                return _snap_period(c)
        return None

    def _ran_during(self, f: Frame) -> list[str]:
        """The longest slices overlapping a frame: on its thread and the main thread."""
        keys = []
        if f.pid is not None and f.tid is not None:
            keys.append((f.pid, f.tid))
        if self.main is not None:
            keys.append(self.main)
        if f.pid is not None:
            for k in self.threads:
                if k[0] == f.pid and (self.pd.threads.get(k) and (self.pd.threads[k].name or "") in ("RenderThread", "CrRendererMain")):
                    keys.append(k)
        start, end = f.ts_us, f.ts_us + f.dur_us
        found: list[tuple[float, str]] = []
        seen = set()
        for k in keys:
            if k in seen or k not in self.threads:
                continue
            seen.add(k)
            th = self.threads[k]
            if not len(th.ts):
                continue
            hi = np.searchsorted(th.ts, end, side="left")
            ts, dur, name = th.ts[:hi], th.dur[:hi], th.name[:hi]
            m = ts + dur > start
            if not m.any():
                continue
            ov = np.minimum(ts[m] + dur[m], end) - np.maximum(ts[m], start)
            nm = name[m]
            for j in np.argsort(-ov)[:6].tolist():
                found.append((float(ov[j]), f"{self.pd.strings[int(nm[j])]} ({_ms(ov[j]):g} ms, {self.pd.thread_label(*k)})"))
        found.sort(key=lambda x: -x[0])
        out, names = [], set()
        for _, s in found:
            if s not in names:
                names.add(s)
                out.append(s)
            if len(out) >= 5:
                break
        return out

    # --- startup ----------------------------------------------------------------------------
    def _startup(self) -> StartupStats | None:
        pd = self.pd
        runs = sorted(pd.startup_runs, key=lambda r: r.index)
        phases = list(pd.startup_phases)
        kind = pd.meta.get("startup kind", "unknown")
        if not runs:
            launch = self._android_launch()
            if launch:
                runs, phases, kind = launch
        if not runs:
            page = self._page_load()
            if page:
                runs, phases, kind = page
        imports = sorted(pd.imports, key=lambda i: -i.cumulative_us)[:25]
        if not runs and not phases and not imports:
            return None
        st = StartupStats(runs=runs, phases=phases, imports=imports, kind=kind)
        if runs:
            totals = [r.total_ms for r in runs]
            st.median_ms = round(median(totals), 3)
            st.min_ms = round(min(totals), 3)
            st.max_ms = round(max(totals), 3)
            st.spread_ms = round(st.max_ms - st.min_ms, 3)
            st.first_ms = round(runs[0].total_ms, 3)
            if kind == "unknown":
                kinds = {r.kind for r in runs}
                st.kind = kinds.pop() if len(kinds) == 1 else "mixed"
        return st

    def _android_launch(self):
        pd = self.pd
        spans = []
        for (pid, track), cols in pd.async_slices.items():
            for t, d, n in zip(cols.ts, cols.dur, cols.name):
                nm = pd.strings[n]
                if nm.startswith("launching:") or nm.startswith("launchingActivity#"):
                    spans.append((t, d, nm))
        if not spans:
            return None
        runs, phases = [], []
        for i, (t, d, nm) in enumerate(sorted(spans)):
            runs.append(StartupRun(index=i, total_ms=_ms(d), kind="unknown", ready_by="launching span", command=nm))
        t, d, nm = sorted(spans)[0]
        end = t + d
        wanted = {p: None for p in ANDROID_PHASES}
        for k, th in self.threads.items():
            if not len(th.ts):
                continue
            m = (th.ts >= t) & (th.ts <= end)
            for ts_, du, n in zip(th.ts[m].tolist(), th.dur[m].tolist(), th.name[m].tolist()):
                s = pd.strings[n]
                base = ANDROID_FRAME if s.startswith(ANDROID_FRAME) else s
                if base in wanted and wanted[base] is None:
                    wanted[base] = (ts_, du, pd.thread_label(*k))
        for p, v in wanted.items():
            if v:
                name = "first frame (Choreographer#doFrame)" if p == ANDROID_FRAME else p
                phases.append(StartupPhase(name=name, start_ms=_ms(v[0] - t), dur_ms=_ms(v[1]), thread=v[2]))
        phases.sort(key=lambda p: p.start_ms)
        return runs, phases, "android launch"

    def _page_load(self):
        pd = self.pd
        marks: dict[str, float] = {}
        nav = None
        for ts, pid, tid, name in pd.instants:
            if name == "navigationStart" and nav is None:
                nav = ts
            elif name in PAGE_MARKS and name not in marks:
                marks[name] = ts
        if nav is None or not marks:
            return None
        phases = [
            StartupPhase(name=n, start_ms=0.0, dur_ms=_ms(t - nav))
            for n, t in sorted(marks.items(), key=lambda kv: kv[1])
            if t >= nav
        ]
        if not phases:
            return None
        last = max(p.dur_ms for p in phases)
        runs = [StartupRun(index=0, total_ms=last, kind="unknown", ready_by=phases[-1].name, command="navigation")]
        return runs, phases, "page load"

    # --- counters ---------------------------------------------------------------------------
    def _counters(self) -> list[CounterSummary]:
        pd = self.pd
        out = []
        for name in sorted(pd.counters)[:MAX_COUNTERS]:
            pts = sorted(pd.counters[name])
            if not pts:
                continue
            vals = [v for _, v in pts]
            step = max(1, math.ceil(len(pts) / MAX_COUNTER_POINTS))
            sample = pts[::step]
            if pts[-1] not in sample:
                sample.append(pts[-1])
            out.append(CounterSummary(
                name=name, unit=pd.counter_units.get(name),
                min=min(vals), max=max(vals), mean=round(sum(vals) / len(vals), 4), last=vals[-1],
                points=[(self.rel(t), v) for t, v in sample],
            ))
        return out

    # --- stacks for flame graphs --------------------------------------------------------------
    def _stacks(self) -> list[StackWeight]:
        pd = self.pd
        items = sorted(self.paths.items(), key=lambda kv: -kv[1])[:MAX_RESULT_STACKS]
        out = []
        for (track, path), w in items:
            if path and path[0] == "s":
                frames = [f"{n} ({os.path.basename(f)})" if f else n for n, f in path[1:]]
            else:
                frames = [pd.strings[n] for n in path]
            out.append(StackWeight(frames=frames, weight_ms=_ms(w), thread=pd.thread_label(*track)))
        return out

    # --- findings ---------------------------------------------------------------------------
    def _add(self, title: str, severity: str, detail: str, **kw) -> None:
        metric = kw.pop("metric", {})
        self.findings.append(Finding(title=title, severity=severity, detail=detail,
                                     evidence=Evidence(source=self.pd.source, **kw), metric=metric))

    def _findings(self) -> None:
        res, pd = self.res, self.pd
        overall = [h for h in res.hotspots if h.thread is None]
        by_kind: dict[str, list[Hotspot]] = defaultdict(list)
        for h in overall:
            by_kind[h.kind].append(h)
        what = {"slice": "of the traced thread time", "sample": "of the sampled time",
                "call": "of the profiled time", "import": "of the import time"}
        for kind, hs in by_kind.items():
            hs = [h for h in hs if h.name not in ("(program)", "(root)", "(idle)")]
            if not hs:
                continue
            h = hs[0]
            if h.self_pct >= 20.0 or (kind == "import" and h.self_ms >= 50.0):
                sev = "high" if h.self_pct >= 40.0 else "medium"
                f = shown_path(h.file) if h.file else None
                where = f" ({f}:{h.line})" if f and h.line else (f" ({f})" if f else "")
                self._add(
                    f"Hot spot: {h.name}", sev,
                    f"{h.name}{where} takes {_fpct(h.self_pct)} {what.get(kind, '')} by itself "
                    f"({_fms(h.self_ms)} self, {_fms(h.total_ms)} with callees).",
                    start_ms=0.0, end_ms=res.duration_ms, events=[h.name],
                    metric={"self_ms": h.self_ms, "self_pct": h.self_pct, "kind": kind},
                )
        if res.long_tasks:
            worst = res.long_tasks[0]
            total = sum(t.dur_ms for t in res.long_tasks)
            n = getattr(self, "long_count", len(res.long_tasks))
            sev = "high" if worst.dur_ms >= 200.0 or total >= 500.0 else "medium"
            self._add(
                f"{n} long task(s) on the main thread", sev,
                f"{n:,} tasks of ≥ {_fms(LONG_TASK_MS)} on {worst.thread}; the longest is {worst.name} "
                f"({_fms(worst.dur_ms)} at {_fms(worst.start_ms)}). Long tasks block input and frames.",
                start_ms=worst.start_ms, end_ms=round(worst.start_ms + worst.dur_ms, 3),
                events=[t.name for t in res.long_tasks[:5]],
                metric={"count": n, "longest_ms": worst.dur_ms, "total_ms": round(total, 3)},
            )
        fs = res.frames
        if fs and fs.jank_ratio is not None and fs.count:
            if fs.jank_ratio >= 0.05:
                sev = "high" if fs.jank_ratio >= 0.25 else "medium"
                w = fs.worst[0] if fs.worst else None
                self._add(
                    f"Janky frames: {_fpct(fs.jank_ratio * 100)}", sev,
                    f"{fs.jank_count:,} of {fs.count:,} frames exceeded the {_fms(fs.budget_ms)} budget "
                    f"({fs.budget_source}); p90 {_fms(fs.p90_ms)}, p99 {_fms(fs.p99_ms)}"
                    + (f"; worst {_fms(w.dur_ms)} at {_fms(w.start_ms)}" if w else "") + ".",
                    start_ms=w.start_ms if w else None,
                    end_ms=round(w.start_ms + w.dur_ms, 3) if w else None,
                    events=(w.ran[:5] if w else []),
                    metric={"jank_ratio": fs.jank_ratio, "count": fs.count, "budget_ms": fs.budget_ms},
                )
            elif fs.count >= 10:
                self._add("Frames within budget", "info",
                          f"{fs.count:,} frames, {_fpct(fs.jank_ratio * 100)} over the {_fms(fs.budget_ms)} budget.",
                          metric={"jank_ratio": fs.jank_ratio})
        if fs and fs.reported:
            rep = _reported(fs.reported)
            jr = rep.get("janky_ratio")
            if jr is not None and jr >= 0.05:
                jp = round(jr * 100.0, 2)
                janky_n = f"{int(rep['janky']):,}" if rep.get("janky") else "?"
                total_n = f"{int(rep['total']):,}" if rep.get("total") else "?"
                self._add(
                    f"The tool reports {_fpct(jp)} janky frames", "high" if jp >= 25 else "medium",
                    f"{pd.format} reported {janky_n} janky of {total_n} frames ({_fpct(jp)})"
                    + (f"; p90 {_fms(rep['p90'])}" if rep.get("p90") is not None else "") + ".",
                    metric={"janky_percent": jp},
                )
        st = res.startup
        if st and st.median_ms is not None:
            limit = {"cold": 5000.0, "warm": 2000.0, "hot": 1500.0}.get(st.kind, 1000.0)
            if st.median_ms >= limit:
                self._add(
                    f"Slow startup: {_fms(st.median_ms)} (median)", "high" if st.median_ms >= 2 * limit else "medium",
                    f"{len(st.runs):,} run(s), median {_fms(st.median_ms)}, min {_fms(st.min_ms)}, max {_fms(st.max_ms)} "
                    f"({st.kind}); threshold {_fms(limit)}.",
                    metric={"median_ms": st.median_ms, "runs": len(st.runs)},
                )
            if len(st.runs) >= 3 and st.median_ms and st.spread_ms is not None and st.spread_ms > 0.3 * st.median_ms:
                self._add("Startup time varies a lot", "low",
                          f"spread {_fms(st.spread_ms)} over {len(st.runs):,} runs (median {_fms(st.median_ms)}).",
                          metric={"spread_ms": st.spread_ms})
            if len(st.runs) >= 2 and st.first_ms and st.median_ms and st.first_ms >= 1.5 * st.median_ms:
                self._add("The first run is much slower", "info",
                          f"first run {_fms(st.first_ms)} vs median {_fms(st.median_ms)}: cold caches, "
                          "bytecode compilation or disk reads.", metric={"first_ms": st.first_ms})
        if st and st.imports:
            total = sum(i.cumulative_us for i in pd.imports if i.depth == 0) / 1000.0
            if total >= 100.0:
                heavy = sorted(pd.imports, key=lambda i: -i.self_us)[:5]
                self._add(
                    f"Imports take {_fms(total)}", "medium" if total < 500 else "high",
                    "Heaviest modules by own time: " + ", ".join(f"{i.module} {_fms(i.self_us / 1000)}" for i in heavy) + ".",
                    events=[i.module for i in heavy], metric={"import_ms": round(total, 3)},
                )
        for c in res.counters:
            if c.name == "cpu_percent" and c.mean >= 90.0:
                self._add("CPU bound", "medium",
                          f"the process used {_fpct(c.mean)} CPU on average (max {_fpct(c.max)}): one core saturated.",
                          metric={"cpu_mean": c.mean})
            if c.name == "rss_bytes" and c.points:
                first, last = c.points[0][1], c.last
                if last - first >= 50 * 2**20 and (first <= 0 or last / first >= 1.5):
                    self._add("Memory grows", "medium",
                              f"RSS grew from {first / 2**20:,.0f} MiB to {last / 2**20:,.0f} MiB.",
                              start_ms=c.points[0][0], end_ms=c.points[-1][0], metric={"rss_growth_bytes": last - first})
        self._perf_stat_findings()
        if self.main is not None:
            states = pd.thread_states.get(self.main, {})
            tot = sum(states.values())
            if tot > 0 and states.get("runnable", 0.0) / tot >= 0.1:
                share = states["runnable"] / tot
                self._add("Main thread waits for a CPU", "medium",
                          f"{pd.thread_label(*self.main)} was runnable but not running {_fpct(share * 100)} of its traced time.",
                          metric={"runnable_share": round(share, 4)})
        if pd.partial or pd.skipped_events:
            self._add("Incomplete data", "info",
                      f"{pd.skipped_events:,} events could not be read; results cover the rest. " + "; ".join(pd.warnings[:3]))

    def _perf_stat_findings(self) -> None:
        stats = self.pd.stats
        if not stats or self.pd.format != "perfstat":
            return
        runs = int(self.pd.meta.get("runs", "1") or 1)
        labels = [""] if runs == 1 else [f" [run {i}]" for i in range(1, runs + 1)]
        for i, lab in enumerate(labels, 1):
            prefix = "" if runs == 1 else f"run {i} "
            cmd = self.pd.meta.get(prefix + "command", "")
            # perf attached to a process/thread (-p/-t) or counted system-wide: name that instead
            pid, tid, target = (self.pd.meta.get(prefix + k) for k in ("pid", "tid", "target"))
            who = (f" ({cmd})" if cmd else f" (pid {pid})" if pid else f" (tid {tid})" if tid
                   else f" ({target})" if target else "")
            ipc = stats.get(f"insn per cycle{lab}")
            if ipc is not None and ipc < 1.0:
                self._add(f"Low IPC {ipc:g}{who}", "medium",
                          f"{ipc:g} instructions per cycle: the CPU mostly waits (memory, branches).",
                          command=cmd or None, metric={"ipc": ipc})
            for key, title, lim in (
                ("backend bound %", "Backend bound", 30.0),
                ("frontend bound %", "Frontend bound", 30.0),
                ("bad speculation %", "Bad speculation", 10.0),
                ("tma_backend_bound %", "Backend bound", 30.0),
                ("tma_frontend_bound %", "Frontend bound", 30.0),
                ("tma_bad_speculation %", "Bad speculation", 10.0),
            ):
                v = stats.get(f"{key}{lab}")
                if v is not None and v >= lim:
                    self._add(f"{title} {_fpct(v)}{who}", "high" if v >= 2 * lim else "medium",
                              f"top-down analysis: {_fpct(v)} of pipeline slots are {title.lower()}.",
                              command=cmd or None, metric={key: v})
            bm = stats.get(f"branch-misses %{lab}")
            if bm is not None and bm >= 5.0:
                self._add(f"Branch misses {_fpct(bm)}{who}", "medium",
                          f"{_fpct(bm)} of branches mispredicted.", command=cmd or None, metric={"branch_miss_pct": bm})


def _snap_period(us: float) -> float:
    """A measured period snapped to the common refresh rate it is within 3 % of."""
    for hz in (60.0, 90.0, 120.0, 144.0, 30.0, 50.0, 75.0, 165.0, 240.0):
        p = 1e6 / hz
        if abs(us - p) <= 0.03 * p:
            return p
    return us


_PCTL = re.compile(r"(?:^|[^\d])(50|90|95|99)(?:th)?(?:[^\d]|$)")


def _reported(rep: dict) -> dict[str, float]:
    """Tolerant reading of a producer's frame totals, whatever the reader named its keys:
    total frames, janky frames, janky share, and the 50/90/95/99th percentiles (ms)."""
    out: dict[str, float] = {}
    for k, v in rep.items():
        key = str(k).lower()
        num = _float(v)
        if num is None:
            continue
        pct_text = isinstance(v, str) and v.strip().endswith("%")
        if "jank" in key and ("percent" in key or "pct" in key or "ratio" in key or "%" in key or pct_text):
            out["janky_ratio"] = num if ("ratio" in key and num <= 1.0) else num / 100.0
        elif "jank" in key and "frame" in key or key in ("janky", "janky_count"):
            out.setdefault("janky", num)
        elif "total" in key and "frame" in key or key in ("frames", "frame_count", "count"):
            out.setdefault("total", num)
        else:
            m = _PCTL.search(key)
            if m and ("percentile" in key or key.startswith("p") or "th" in key):
                out.setdefault(f"p{m.group(1)}", num)
    if "janky_ratio" not in out and out.get("total") and "janky" in out:
        out["janky_ratio"] = out["janky"] / out["total"]
    return out


def _float(v) -> float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        try:
            return float(v.strip().rstrip("%"))
        except ValueError:
            return None
    return None

