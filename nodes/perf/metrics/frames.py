"""Frames: from the reader (frame timeline, gfxinfo), Android ``Choreographer#doFrame``, or
Chrome ``BeginFrame``/``DrawFrame``; count, FPS, p50/p90/p99 and jank **of one process** — the
app (:mod:`.scope`) — with the other processes summarised apart.

Jank: with a frame timeline, a frame is janky when FrameTimeline marks it with a user-visible
jank type (``perfetto_frames.USER_VISIBLE_JANK``) and ``jank_types`` counts every component of
the marks; without one, a frame is janky when it is longer than the budget the data gives
(expected frame durations, the vsync period) or one 60 Hz vsync (model.DEFAULT_BUDGET_MS).
The worst frames get a cause
(:mod:`.frame_causes`) and the longest slices that ran during them.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from statistics import median

import numpy as np

from nodes.perf.metrics import frame_causes
from nodes.perf.metrics.common import ANDROID_FRAME, MAX_FRAME_POINTS, _ms, _q
from nodes.perf.model import DEFAULT_BUDGET_MS, Frame, FrameStats, MissingData, OtherProcessFrames, WorstFrame
from nodes.perf.parsers.perfetto_frames import jank_components


#: ``chosen_by`` of frames whose process no app rule chose (e.g. a Chrome trace's compositor).
NO_APP_CHOSEN_BY = "most frames (no app identified)"
#: At most this many janky frames of the app get a cause (the worst first): bounded work.
MAX_CAUSE_FRAMES = 200
#: A frame rate needs this many frames: a launch's first 2 or 3 frames over the half second
#: they span are no rate (api24's cold start read "5.7 FPS"). Macrobenchmark's
#: FrameTimingMetric states no rate at all (frame count, frameDurationCpuMs, frameOverrunMs).
FPS_MIN_FRAMES = 10
#: How many worst frames the result lists.
WORST_FRAMES = 5
#: How many other processes' frame summaries the result lists.
MAX_OTHER_PROCESSES = 10

CAPTURE_FRAME_TIMELINE = 'data_sources { config { name: "android.surfaceflinger.frametimeline" } }'
CAPTURE_SCHED = ('data_sources { config { name: "linux.ftrace" ftrace_config {\n'
                 '  ftrace_events: "sched/sched_switch" ftrace_events: "sched/sched_waking"\n'
                 '  ftrace_events: "sched/sched_blocked_reason" } } }')
CAPTURE_ATRACE = ('data_sources { config { name: "linux.ftrace" ftrace_config {\n'
                  '  atrace_categories: "gfx" atrace_categories: "view" atrace_categories: "dalvik"\n'
                  '  atrace_categories: "binder_driver" atrace_apps: "{app}" } } }')


def _is_timeline(f: Frame) -> bool:
    """A FrameTimeline frame carries its surface-frame token (nodes/perf/parsers/perfetto_frames.py).
    A layer name alone is not one: gfxinfo's framestats and legacy rows name their window too, and
    judged as timeline frames (no jank type = no verdict) they all read as smooth."""
    return f.token is not None


def frames(ctx) -> FrameStats | None:
    """Frame statistics of the app (``ctx.scope``), the other processes apart."""
    pd = ctx.pd
    frames: list[Frame] = list(pd.frames)
    origin = "reader"
    if not frames:
        frames = android_frames(ctx)
        origin = ANDROID_FRAME
    if not frames:
        frames = chrome_frames(ctx)
        origin = "DrawFrame"
    if not frames and not _reported(pd.frame_summary).get("total"):
        return None
    scope = getattr(ctx, "scope", None)
    pid: int | None = None
    chosen_by: str | None = None
    others: list[Frame] = []
    if frames and any(f.pid for f in frames):
        if scope is not None:
            pid, chosen_by = scope.pid, scope.chosen_by
        else:
            counts = Counter(f.pid for f in frames if f.pid)
            pid = max(counts, key=lambda p: (counts[p], -p))
            chosen_by = NO_APP_CHOSEN_BY
        others = [f for f in frames if f.pid != pid]
        frames = [f for f in frames if f.pid == pid]
    elif frames:
        chosen_by = "single source"
    budget_us: float | None = None
    budget_source = "default"
    budgets = [f.budget_us for f in frames if f.budget_us and f.budget_us > 0]
    if budgets:
        budget_us = median(budgets)
        said = pd.frame_summary.get("budget_source")
        budget_source = said if isinstance(said, str) and said else "expected frames"
    else:
        v = vsync_period_us(ctx)
        if v:
            budget_us = v
            budget_source = "vsync period"
    budget_ms = budget_us / 1000.0 if budget_us else DEFAULT_BUDGET_MS
    fs = FrameStats(count=len(frames), budget_ms=round(budget_ms, 3), budget_source=budget_source)
    fs.pid, fs.chosen_by = pid, chosen_by
    fs.process = pd.processes.get(pid) if pid is not None else None
    if fs.process is None and scope is not None and pid == scope.pid:
        fs.process = scope.process
    fs.reported = {  # the model holds float | str: ints become floats
        str(k): (float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else str(v))
        for k, v in pd.frame_summary.items()
    }
    fs.other_processes = _other_processes(ctx, others, budget_ms)
    fs.missing = _missing(ctx, origin, pid, fs.process)
    timeline = any(_is_timeline(f) for f in frames) or any(_is_timeline(f) for f in others)
    fs.jank_source = "frame timeline" if timeline else (
        "reported" if frames and all(f.janky is not None for f in frames) else "over budget")
    if not frames and not others:
        # only the producer's own totals (gfxinfo without per-frame rows)
        rep = _reported(pd.frame_summary)
        fs.jank_source = "reported"
        fs.count = int(rep.get("total", 0) or 0)
        fs.jank_count = int(rep.get("janky", 0) or 0)
        jr = rep.get("janky_ratio")
        fs.jank_ratio = round(jr, 4) if jr is not None else None
        for q in (50, 90, 99):
            setattr(fs, f"p{q}_ms", rep.get(f"p{q}"))
        return fs
    if not frames:
        return fs  # the app drew none: count 0, the others apart, and ``missing`` says so
    frames.sort(key=lambda f: f.ts_us)
    janky = [_janky(f, budget_ms) for f in frames]
    if timeline:
        types: Counter[str] = Counter()
        for f in frames:
            types.update(jank_components(f.jank_type))
        fs.jank_types = dict(types.most_common())
    fs.jank_count = sum(1 for j in janky if j)
    fs.jank_ratio = round(fs.jank_count / len(frames), 4)
    # A frame with an open end (no FrameEnd: trace_processor's dur -1) is counted above, with
    # its jank verdict; it has no duration for the percentiles, the worst frames or the rate.
    janky = [j for f, j in zip(frames, janky) if f.dur_us is not None]
    frames = [f for f in frames if f.dur_us is not None]
    if not frames:
        return fs
    durs = [f.dur_us / 1000.0 for f in frames]
    sd = sorted(durs)
    fs.p50_ms, fs.p90_ms, fs.p99_ms = (round(_q(sd, q), 3) for q in (50, 90, 99))  # type: ignore[misc]
    fs.max_ms = round(sd[-1], 3)
    span_us = (frames[-1].ts_us + frames[-1].dur_us) - frames[0].ts_us
    if span_us > 0 and len(frames) >= FPS_MIN_FRAMES:
        fs.fps = round(len(frames) / (span_us / 1e6), 2)
    step = max(1, math.ceil(len(frames) / MAX_FRAME_POINTS))
    fs.durations_ms = [round(d, 3) for d in durs[::step]]
    fs.starts_ms = [ctx.rel(f.ts_us) for f in frames[::step]]
    worst = sorted(range(len(frames)), key=lambda i: -durs[i])[:WORST_FRAMES]
    for i in worst:
        fs.worst.append(_worst(ctx, frames[i]))
    causes: Counter[str] = Counter()
    late = sorted((i for i in range(len(frames)) if janky[i]), key=lambda i: -durs[i])[:MAX_CAUSE_FRAMES]
    by_index = {i: w for i, w in zip(worst, fs.worst)}
    for i in late:
        w = by_index.get(i) or _worst(ctx, frames[i], with_ran=False)
        if w.cause is not None:
            causes[w.cause.value] += 1
    fs.causes = dict(causes.most_common())
    return fs


def _janky(f: Frame, budget_ms: float) -> bool:
    if f.janky is not None:
        return f.janky
    if _is_timeline(f):
        return False  # Unspecified: the timeline gives no verdict, and none is made up
    if f.dur_us is None:
        return False
    return (f.dur_us / 1000.0) > (f.budget_us / 1000.0 if f.budget_us else budget_ms)


def _overrun_us(f: Frame) -> float | None:
    """Actual end minus expected end, as stdlib android_frames_overrun computes it."""
    if f.expected_ts_us is None or not f.budget_us:
        return None
    return (f.ts_us + f.dur_us) - (f.expected_ts_us + f.budget_us)


def _worst(ctx, f: Frame, with_ran: bool = True) -> WorstFrame:
    over = _overrun_us(f)
    w = WorstFrame(
        start_ms=ctx.rel(f.ts_us), dur_ms=round(f.dur_us / 1000.0, 3),
        jank_type=f.jank_type, ran=ran_during(ctx, f) if with_ran else [],
        pid=f.pid, overrun_ms=round(over / 1000.0, 3) if over is not None else None,
        present_type=f.present_type,
    )
    frame_causes.explain(ctx, w, f.ts_us, f.dur_us, f.pid, f.tid, f.jank_type, f.on_time_finish, over)
    return w


def _other_processes(ctx, others: list[Frame], budget_ms: float) -> list[OtherProcessFrames]:
    by: dict[int | None, list[Frame]] = defaultdict(list)
    for f in others:
        by[f.pid].append(f)
    rows = []
    for pid, fl in sorted(by.items(), key=lambda kv: -len(kv[1]))[:MAX_OTHER_PROCESSES]:
        d = sorted(f.dur_us / 1000.0 for f in fl if f.dur_us is not None)  # open ends have none
        types: Counter[str] = Counter()
        for f in fl:
            types.update(jank_components(f.jank_type))
        rows.append(OtherProcessFrames(
            pid=pid, process=ctx.pd.processes.get(pid) if pid is not None else None, count=len(fl),
            jank_count=sum(1 for f in fl if _janky(f, budget_ms)),
            p50_ms=round(_q(d, 50), 3) if d else None, max_ms=round(d[-1], 3) if d else None,
            jank_types=dict(types.most_common()),
        ))
    return rows


def _missing(ctx, origin: str, pid: int | None, process: str | None) -> list[MissingData]:
    """What an Android trace lacks for frames to be judged as FrameTimeline and causes need."""
    pd = ctx.pd
    if pd.format != "perfetto":
        return []
    out = []
    if not pd.facts.frame_timeline_events:
        out.append(MissingData(
            what="FrameTimeline jank types (frames.jank_types) and per-frame deadlines",
            why="the trace has no android.surfaceflinger.frametimeline data (Android 12+); jank is "
                "judged by duration over the budget instead",
            capture=CAPTURE_FRAME_TIMELINE))
    if pid is None:
        return out
    if not any(k[0] == pid for k in getattr(pd, "sched_intervals", {})) and not any(
            k[0] == pid for k in pd.thread_states):
        out.append(MissingData(
            what="scheduler states of the app's threads (sched delay, IO wait as frame causes)",
            why="the trace has no sched_switch / sched_waking events for the app",
            capture=CAPTURE_SCHED))
    if not any(k[0] == pid and len(c) for k, c in pd.slices.items()):
        out.append(MissingData(
            what="the app's atrace slices (which slice made a frame long)",
            why="the trace has no atrace slices for the app's threads",
            capture=CAPTURE_ATRACE.replace("{app}", process or str(pid))))
    if origin == "reader" and not any(f.pid == pid for f in pd.frames):
        out.append(MissingData(
            what=f"frames of {process or pid}",
            why="the app drew no frame in the trace's frame timeline (other processes did)",
            capture=None))
    return out


def ids_with_prefix(ctx, prefix: str) -> list[int]:
    return [i for i, s in enumerate(ctx.pd.strings) if s.startswith(prefix)]


def android_frames(ctx) -> list[Frame]:
    ids = ids_with_prefix(ctx, ANDROID_FRAME)
    if not ids:
        return []
    out: list[Frame] = []
    for k, th in ctx.threads.items():
        if not th.count:
            continue
        m = np.isin(th.name, ids)  # a thread's names are gathered on each read (common._Thread): once here
        if not m.any():
            continue
        if ctx.main is not None and k != ctx.main and k[0] == ctx.main[0]:
            continue
        for t, d in zip(th.ts[m].tolist(), th.dur[m].tolist()):
            out.append(Frame(ts_us=t, dur_us=d, pid=k[0], tid=k[1]))
    if ctx.main is not None:
        mine = [f for f in out if (f.pid, f.tid) == ctx.main]
        if mine:
            return mine
    return out


def chrome_frames(ctx) -> list[Frame]:
    pd = ctx.pd
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
    return out


def vsync_period_us(ctx) -> float | None:
    """The refresh period the data shows: VSYNC counters (one toggle a vsync), Chrome's
    BeginFrame cadence or VSync slices. None when nothing plausible (4–50 ms) is there."""
    pd = ctx.pd
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
            for th in ctx.threads.values():
                m = np.isin(th.name, ids)
                if m.sum() > 4:
                    cands.append(median(np.diff(np.sort(th.ts[m])).tolist()))
                    break
    for c in cands:
        if 4000.0 <= c <= 50000.0:
            return _snap_period(c)
    return None


def ran_during(ctx, f: Frame) -> list[str]:
    """The longest slices overlapping a frame: on its thread and the main thread."""
    keys = []
    if f.pid is not None and f.tid is not None:
        keys.append((f.pid, f.tid))
    if ctx.main is not None:
        keys.append(ctx.main)
    if f.pid is not None:
        for k in ctx.threads:
            if k[0] == f.pid and (ctx.pd.threads.get(k) and (ctx.pd.threads[k].name or "") in ("RenderThread", "CrRendererMain")):
                keys.append(k)
    start, end = f.ts_us, f.ts_us + f.dur_us
    found: list[tuple[float, str]] = []
    seen = set()
    for k in keys:
        if k in seen or k not in ctx.threads:
            continue
        seen.add(k)
        th = ctx.threads[k]
        if not th.count:
            continue
        ts = th.ts
        hi = np.searchsorted(ts, end, side="left")
        ts, dur, name = ts[:hi], th.dur[:hi], th.name[:hi]
        m = ts + dur > start
        if not m.any():
            continue
        ov = np.minimum(ts[m] + dur[m], end) - np.maximum(ts[m], start)
        nm = name[m]
        for j in np.argsort(-ov)[:6].tolist():
            found.append((float(ov[j]), f"{ctx.pd.strings[int(nm[j])]} ({_ms(ov[j]):g} ms, {ctx.pd.thread_label(*k)})"))
    found.sort(key=lambda x: -x[0])
    out, names = [], set()
    for _, s in found:
        if s not in names:
            names.add(s)
            out.append(s)
        if len(out) >= 5:
            break
    return out


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
    total frames, janky frames, janky share, and the 50/90/95/99th percentiles (ms).

    Where a producer reports a count twice (gfxinfo's "Janky frames" and "Janky frames
    (legacy)"), the current definition wins and the legacy one fills only what is missing, so
    the count and the share always come from the same line."""
    out: dict[str, float] = {}
    for k, v in sorted(rep.items(), key=lambda kv: "legacy" in str(kv[0]).lower()):
        key = str(k).lower()
        num = _float(v)
        if num is None:
            continue
        pct_text = isinstance(v, str) and v.strip().endswith("%")
        if "jank" in key and ("percent" in key or "pct" in key or "ratio" in key or "%" in key or pct_text):
            out.setdefault("janky_ratio", num if ("ratio" in key and num <= 1.0) else num / 100.0)
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

