"""Frames: from the reader (frame timeline, gfxinfo), Android ``Choreographer#doFrame``, or
Chrome ``BeginFrame``/``DrawFrame``; count, FPS, p50/p90/p99, jank against the budget the data
gives (expected frame durations, the vsync period) or 16.67 ms, the worst frames and the longest
slices that ran during them.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from statistics import median

import numpy as np

from nodes.perf.metrics.common import ANDROID_FRAME, DEFAULT_BUDGET_MS, MAX_FRAME_POINTS, _ms, _q
from nodes.perf.model import Frame, FrameStats, WorstFrame


def frames(ctx) -> FrameStats | None:
    pd = ctx.pd
    frames: list[Frame] = list(pd.frames)
    origin = "reader"
    budget_us: float | None = None
    budget_source = "default"
    if not frames:
        frames = android_frames(ctx)
        origin = ANDROID_FRAME
    if not frames:
        frames = chrome_frames(ctx)
        origin = "DrawFrame"
    if not frames and not _reported(pd.frame_summary).get("total"):
        return None
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
    fs.starts_ms = [ctx.rel(f.ts_us) for f in frames[::step]]
    worst = sorted(range(len(frames)), key=lambda i: -durs[i])[:5]
    for i in worst:
        f = frames[i]
        fs.worst.append(WorstFrame(
            start_ms=ctx.rel(f.ts_us), dur_ms=round(durs[i], 3),
            jank_type=f.jank_type, ran=ran_during(ctx, f),
        ))
    ctx.frame_origin = origin
    return fs


def ids_with_prefix(ctx, prefix: str) -> list[int]:
    return [i for i, s in enumerate(ctx.pd.strings) if s.startswith(prefix)]


def android_frames(ctx) -> list[Frame]:
    ids = ids_with_prefix(ctx, ANDROID_FRAME)
    if not ids:
        return []
    out: list[Frame] = []
    for k, th in ctx.threads.items():
        if not len(th.name):
            continue
        m = np.isin(th.name, ids)
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
    ctx.chrome_frame_thread = key
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

