"""The report's charts as inline SVG strings (see ``svg`` for why plain SVG).

Every function returns a :class:`Chart`, or None when the analysis has no data for it, so the
page never shows an empty frame pretending to be a chart. Every data mark carries
``class="mark"``, a ``data-v`` value and a ``<title>`` tooltip: the browser test counts them and
a reader hovering a bar sees its exact number.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from typing import Sequence

from nodes.perf.model import DEFAULT_BUDGET_MS, CounterSummary, FrameStats, Hotspot, LongTask, StackWeight, StartupStats
from nodes.report.svg import WIDTH, Scale, esc, fit_label, hue, line, open_svg, polyline, rect, text, x_axis, y_axis

#: Most frames a timeline draws (frames beyond it are summarised in the caption).
MAX_TIMELINE_FRAMES = 3000
MAX_TIMELINE_LANES = 7
ICICLE_ROW = 18
ICICLE_MAX_DEPTH = 18
#: Most imports the import tree draws (the Slowest imports table shows tables.IMPORT_ROWS).
IMPORT_CHART_ROWS = 30
MAX_COUNTER_CHARTS = 6


@dataclass
class Chart:
    kind: str
    title: str
    svg: str
    #: What the chart shows, in one sentence (printed under it with the provenance).
    note: str
    marks: int


def _quantile(sorted_vals: Sequence[float], q: float) -> float:
    if not sorted_vals:
        return 0.0
    i = min(len(sorted_vals) - 1, max(0, int(round(q * (len(sorted_vals) - 1)))))
    return sorted_vals[i]


# --------------------------------------------------------------------------------------
# Frames
# --------------------------------------------------------------------------------------


def frame_histogram(fr: FrameStats | None) -> Chart | None:
    """Frame-time distribution with the budget line; bars past the budget are the jank."""
    if not fr or not fr.durations_ms:
        return None
    durs = sorted(d for d in fr.durations_ms if d >= 0)
    if not durs:
        return None
    budget = fr.budget_ms or DEFAULT_BUDGET_MS
    cap = max(2.5 * budget, _quantile(durs, 0.99) * 1.05)
    from nodes.report.svg import nice_step

    # The budget is always a bin edge and bins are (lo, hi]: a bar is either all within the
    # budget or all over it, so the red bars hold exactly the janky frames.
    per_budget = max(1, round(budget / nice_step(cap, 26)))
    width = budget / per_budget
    nbins = max(1, math.ceil(cap / width))
    counts = [0] * nbins
    over = 0
    for d in durs:
        i = max(0, math.ceil(d / width) - 1)
        if i >= nbins:
            over += 1
        else:
            counts[i] += 1
    bins = counts + ([over] if over else [])
    H, left, right, top, bottom = 250, 52, 16, 22, 46
    sx = Scale(0, width * len(bins), left, WIDTH - right)
    ymax = max(bins) or 1
    sy = Scale(0, ymax * 1.12, H - bottom, top)
    parts = [open_svg(H, "Frame-time histogram with the frame budget", "frame-histogram")]
    parts.append(y_axis(sy, left, 0, ymax * 1.12, WIDTH - right, "frames"))
    marks = 0
    for i, c in enumerate(bins):
        lo = i * width
        is_over = over and i == len(bins) - 1
        x0, x1 = sx(lo) + 1, sx(lo + width) - 1
        label = f"> {lo:.2f} ms" if is_over else f"{lo:.2f}–{lo + width:.2f} ms"
        cls = "bad" if i >= per_budget or is_over else "ok"
        if c:
            parts.append(rect(x0, sy(c), x1 - x0, sy(0) - sy(c), cls, f"{label}: {c} frames", c))
            marks += 1
    parts.append(x_axis(sx, H - bottom, 0, width * nbins, "frame time (ms)", 8))
    if over:
        parts.append(text(sx(width * nbins + width / 2), H - bottom + 16, "more", "tick", "middle"))
    bx = sx(budget)
    parts.append(line(bx, top - 6, bx, H - bottom, "budget"))
    parts.append(text(bx + 4, top + 4, f"budget {budget:.2f} ms ({fr.budget_source})", "lbl strong"))
    parts.append("</svg>")
    jank = sum(1 for d in durs if d > budget)
    note = (
        f"{len(durs):,} frame durations; {jank:,} exceed the {budget:.2f} ms budget "
        f"(red, right of the dashed line). Bin width {width:.2f} ms."
    )
    return Chart("frame-histogram", "Frame times", "".join(parts), note, marks)


def text_histogram(durs: Sequence[float], budget: float, width: int = 40) -> str:
    """Frame times in bins of the budget as a fenced text block (report.md's frame chart)."""
    if not durs:
        return ""
    edges = [budget * f for f in (0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0)]
    labels, counts, lo = [], [], 0.0
    for e in edges:
        counts.append(sum(1 for d in durs if lo <= d < e))
        labels.append(f"{lo:6.1f}–{e:6.1f} ms")
        lo = e
    counts.append(sum(1 for d in durs if d >= lo))
    labels.append(f"  ≥ {lo:6.1f} ms   ")
    top = max(counts) or 1
    lines = []
    for i, (lab, c) in enumerate(zip(labels, counts)):
        mark = "#" if i < 4 else "!"
        lines.append(f"{lab} {mark * max(1 if c else 0, round(width * c / top))} {c}")
    lines.append(f"(# within the {budget:.2f} ms budget, ! over it)")
    return "```text\n" + "\n".join(lines) + "\n```"


def timeline(fr: FrameStats | None, long_tasks: Sequence[LongTask], duration_ms: float) -> Chart | None:
    """Frames and long tasks on one time axis: where in the capture the bad moments cluster."""
    lanes: list[tuple[str, list[tuple[float, float, str, str]]]] = []
    budget = (fr.budget_ms if fr else None) or DEFAULT_BUDGET_MS
    n_frames_total = 0
    if fr and fr.starts_ms and len(fr.starts_ms) == len(fr.durations_ms):
        items = list(zip(fr.starts_ms, fr.durations_ms))
        n_frames_total = len(items)
        if len(items) > MAX_TIMELINE_FRAMES:
            # keep every janky frame and a regular sample of the rest
            bad = [it for it in items if it[1] > budget]
            ok = [it for it in items if it[1] <= budget]
            step = max(1, len(ok) // max(1, MAX_TIMELINE_FRAMES - len(bad)))
            items = (bad + ok[::step])[:MAX_TIMELINE_FRAMES]
        lanes.append(
            (
                "frames",
                [(s, d, "bad" if d > budget else "ok", f"frame at {s:,.1f} ms: {d:.2f} ms") for s, d in items],
            )
        )
    elif fr and fr.worst:
        n_frames_total = len(fr.worst)
        lanes.append(
            (
                "worst frames",
                [
                    (w.start_ms, w.dur_ms, "bad" if w.dur_ms > budget else "ok", f"frame at {w.start_ms:,.1f} ms: {w.dur_ms:.2f} ms"
                     + (f" ({w.jank_type})" if w.jank_type else ""))
                    for w in fr.worst
                ],
            )
        )
    by_thread: dict[str, list[LongTask]] = defaultdict(list)
    for t in long_tasks:
        by_thread[t.thread].append(t)
    threads = sorted(by_thread, key=lambda k: -sum(t.dur_ms for t in by_thread[k]))
    room = MAX_TIMELINE_LANES - len(lanes)
    cut = len(threads) if len(threads) <= room else max(0, room - 1)
    shown, rest = threads[:cut], threads[cut:]
    for th in shown:
        lanes.append((th, [(t.start_ms, t.dur_ms, "task", f"{t.name} on {th}: {t.dur_ms:,.1f} ms at {t.start_ms:,.1f} ms") for t in by_thread[th]]))
    if rest:
        lanes.append(
            (
                f"{len(rest)} other threads",
                [(t.start_ms, t.dur_ms, "task", f"{t.name} on {t.thread}: {t.dur_ms:,.1f} ms") for th in rest for t in by_thread[th]],
            )
        )
    if not lanes:
        return None
    end = max([duration_ms or 0.0] + [s + d for _, items in lanes for s, d, _, _ in items])
    start = min([0.0] + [s for _, items in lanes for s, _, _, _ in items])
    left, right, top, lane_h = 150, 16, 12, 30
    H = top + lane_h * len(lanes) + 44
    sx = Scale(start, end, left, WIDTH - right)
    parts = [open_svg(H, "Timeline of frames and long tasks", "timeline")]
    marks = 0
    for i, (name, items) in enumerate(lanes):
        y = top + i * lane_h
        parts.append(f'<rect class="lane" x="{left}" y="{y + 2}" width="{WIDTH - right - left}" height="{lane_h - 4}"/>')
        parts.append(text(left - 8, y + lane_h / 2 + 4, fit_label(name, left - 10) or name[:3], "lbl", "end"))
        for s, d, cls, tip in items:
            x0 = sx(s)
            parts.append(rect(x0, y + 5, sx(s + d) - x0, lane_h - 10, cls, tip, d))
            marks += 1
    parts.append(x_axis(sx, top + lane_h * len(lanes) + 2, start, end, "time in capture (ms)", 8))
    parts.append("</svg>")
    pieces = []
    if n_frames_total:
        pieces.append(f"{n_frames_total:,} frames (red: over the {budget:.2f} ms budget)")
    if long_tasks:
        pieces.append(f"{len(long_tasks)} long tasks by thread")
    return Chart("timeline", "Timeline", "".join(parts), "; ".join(pieces) + ".", marks)


# --------------------------------------------------------------------------------------
# Stacks
# --------------------------------------------------------------------------------------


class _Node:
    __slots__ = ("name", "weight", "children")

    def __init__(self, name: str):
        self.name = name
        self.weight = 0.0
        self.children: dict[str, _Node] = {}


def stack_tree(stacks: Sequence[StackWeight]) -> _Node:
    """Merge stacks into a call tree; several threads get one subtree each, and CPU samples
    of several processes one subtree per process ("name (pid N) (sampled)") above its threads."""
    root = _Node("all")
    threads = {s.thread for s in stacks}
    per_thread = len(threads) > 1
    per_process = len({s.process for s in stacks if s.sampled}) > 1
    for s in stacks:
        if s.weight_ms <= 0:
            continue
        node = root
        node.weight += s.weight_ms
        path = ([f"{s.process or '(process unknown)'} (sampled)"] if per_process and s.sampled else [])
        path += ([s.thread or "(thread unknown)"] if per_thread else []) + list(s.frames)
        for f in path:
            child = node.children.get(f)
            if child is None:
                child = node.children[f] = _Node(f)
            child.weight += s.weight_ms
            node = child
    return root


def icicle(stacks: Sequence[StackWeight]) -> Chart | None:
    """An icicle of the hottest stacks: callers on top, width = time spent inside."""
    root = stack_tree(stacks)
    if root.weight <= 0:
        return None
    left, right, top = 8, 8, 8
    span_px = WIDTH - left - right
    rects: list[str] = []
    depth_used = 0
    marks = 0

    def lay(node: _Node, x: float, depth: int) -> None:
        nonlocal depth_used, marks
        w = span_px * node.weight / root.weight
        if w < 0.8 or depth > ICICLE_MAX_DEPTH:
            return
        y = top + depth * ICICLE_ROW
        depth_used = max(depth_used, depth)
        share = 100.0 * node.weight / root.weight
        tip = f"{node.name}: {node.weight:,.2f} ms ({share:.1f} %)"
        style = "fill:#bbb" if depth == 0 else f"fill:hsl({hue(node.name)},75%,62%)"
        rects.append(rect(x, y, w - 0.5, ICICLE_ROW - 1.5, "ice", tip, node.weight, style))
        marks += 1
        lbl = fit_label(node.name if depth else f"all ({root.weight:,.1f} ms)", w)
        if lbl:
            rects.append(text(x + 3, y + ICICLE_ROW - 5.5, lbl, "ice-lbl"))
        cx = x
        for child in sorted(node.children.values(), key=lambda c: -c.weight):
            lay(child, cx, depth + 1)
            cx += span_px * child.weight / root.weight

    lay(root, left, 0)
    H = top * 2 + (depth_used + 1) * ICICLE_ROW
    svg = open_svg(H, "Icicle of the hottest stacks", "icicle") + "".join(rects) + "</svg>"
    note = (
        f"{len(stacks):,} distinct stacks, {root.weight:,.1f} ms in total; each bar's width is the time spent "
        "in that function and its callees, callers above callees (hover for exact numbers)."
    )
    return Chart("icicle", "Hottest stacks (icicle)", svg, note, marks)


#: Width of one character of a 12 px ``lbl`` label in a proportional font, generously: names
#: like ``Random._randbelow_with_getrandbits`` were clipped at the left edge with 6.4.
LABEL_CHAR_PX = 7.2


def hotspot_bars(hotspots: Sequence[Hotspot], limit: int = 12) -> Chart | None:
    """Self-time share of the top hot spots, as horizontal bars."""
    hs = [h for h in hotspots if h.self_ms > 0][:limit]
    if not hs:
        return None
    left, right, top, row = 230, 70, 6, 22
    H = top * 2 + row * len(hs) + 30
    vmax = max(h.self_pct for h in hs) or 1.0
    sx = Scale(0, vmax * 1.05, left, WIDTH - right)
    parts = [open_svg(H, "Top hot spots by self time", "hotspots")]
    for i, h in enumerate(hs):
        y = top + i * row
        parts.append(text(left - 8, y + row / 2 + 4, fit_label(h.name, left - 12, LABEL_CHAR_PX) or h.name[:3], "lbl", "end"))
        parts.append(rect(left, y + 4, sx(h.self_pct) - left, row - 8, "accent", f"{h.name}: {h.self_ms:,.2f} ms self, {h.self_pct:.1f} %", h.self_pct))
        parts.append(text(sx(h.self_pct) + 5, y + row / 2 + 4, f"{h.self_pct:.1f} %", "tick"))
    parts.append(x_axis(sx, top + row * len(hs) + 2, 0, vmax * 1.05, "share of self time (%)", 6))
    parts.append("</svg>")
    return Chart("hotspots", "Hot spots", "".join(parts), f"Self-time share of the top {len(hs)} hot spots.", len(hs))


# --------------------------------------------------------------------------------------
# Startup
# --------------------------------------------------------------------------------------


def startup_runs(st: StartupStats | None) -> Chart | None:
    if not st or not st.runs:
        return None
    runs = st.runs
    left, right, top, bottom = 52, 16, 20, 46
    H = 220
    vmax = max(r.total_ms for r in runs) * 1.15 or 1.0
    sy = Scale(0, vmax, H - bottom, top)
    band = (WIDTH - left - right) / len(runs)
    parts = [open_svg(H, "Launch time of each run", "startup-runs")]
    parts.append(y_axis(sy, left, 0, vmax, WIDTH - right, "ms"))
    for i, r in enumerate(runs):
        x = left + i * band + band * 0.2
        w = band * 0.6
        tip = f"run {r.index}: {r.total_ms:,.1f} ms ({r.kind})" + (f", wait {r.wait_ms:,.1f} ms" if r.wait_ms is not None else "")
        parts.append(rect(x, sy(r.total_ms), w, sy(0) - sy(r.total_ms), "accent" if i else "first", tip, r.total_ms))
        parts.append(text(x + w / 2, H - bottom + 16, f"#{r.index}", "tick", "middle"))
    if st.median_ms is not None:
        y = sy(st.median_ms)
        parts.append(line(left, y, WIDTH - right, y, "median"))
        parts.append(text(WIDTH - right - 4, y - 5, f"median {st.median_ms:,.1f} ms", "lbl strong", "end"))
    parts.append(line(left, H - bottom, WIDTH - right, H - bottom, "ax"))
    parts.append(text(WIDTH - right, H - bottom + 32, "run (first run highlighted: the coldest)", "tick", "end"))
    parts.append("</svg>")
    return Chart("startup-runs", "Launch runs", "".join(parts), f"{len(runs)} launches; the line is the median.", len(runs))


def startup_waterfall(st: StartupStats | None) -> Chart | None:
    if not st or not st.phases:
        return None
    phases = sorted(st.phases, key=lambda p: p.start_ms)[:40]
    left, right, top, row = 200, 70, 6, 22
    H = top * 2 + row * len(phases) + 34
    lo = min(p.start_ms for p in phases)
    hi = max(p.start_ms + p.dur_ms for p in phases)
    sx = Scale(lo, hi if hi > lo else lo + 1, left, WIDTH - right)
    parts = [open_svg(H, "Startup phases waterfall", "startup-waterfall")]
    for i, p in enumerate(phases):
        y = top + i * row
        parts.append(text(left - 8, y + row / 2 + 4, fit_label(p.name, left - 12) or p.name[:3], "lbl", "end"))
        x0 = sx(p.start_ms)
        tip = f"{p.name}: {p.dur_ms:,.1f} ms from {p.start_ms:,.1f} ms" + (f" on {p.thread}" if p.thread else "")
        parts.append(rect(x0, y + 4, sx(p.start_ms + p.dur_ms) - x0, row - 8, "accent", tip, p.dur_ms))
        parts.append(text(min(sx(p.start_ms + p.dur_ms) + 4, WIDTH - right + 2), y + row / 2 + 4, f"{p.dur_ms:,.0f} ms", "tick"))
    parts.append(x_axis(sx, top + row * len(phases) + 2, lo, hi, "time since launch (ms)", 6))
    parts.append("</svg>")
    return Chart("startup-waterfall", "Startup phases", "".join(parts), f"{len(phases)} phases, in start order.", len(phases))


def import_tree(st: StartupStats | None) -> Chart | None:
    """The costliest part of ``-X importtime`` as an indented tree: cumulative bar, self inside."""
    if not st or not st.imports:
        return None
    imps = st.imports
    total_us = sum(e.cumulative_us for e in imps if e.depth == min(x.depth for x in imps)) or 1.0
    thresh = 0.01 * total_us
    # -X importtime prints children before their parent; reversed, each parent precedes its subtree.
    rows = [e for e in reversed(imps) if e.cumulative_us >= thresh][:IMPORT_CHART_ROWS]
    if not rows:
        return None
    min_depth = min(e.depth for e in rows)
    left, right, top, row = 250, 70, 6, 20
    H = top * 2 + row * len(rows) + 34
    vmax = max(e.cumulative_us for e in rows) / 1000.0
    sx = Scale(0, vmax, left, WIDTH - right)
    parts = [open_svg(H, "Import tree by cumulative time", "import-tree")]
    for i, e in enumerate(rows):
        y = top + i * row
        indent = 10 * (e.depth - min_depth)
        lbl = fit_label(e.module, left - 12 - indent) or e.module[:3]
        parts.append(text(4 + indent, y + row / 2 + 4, lbl, "lbl"))
        cum, slf = e.cumulative_us / 1000.0, e.self_us / 1000.0
        parts.append(rect(left, y + 3, sx(cum) - left, row - 6, "soft", f"{e.module}: {cum:,.2f} ms cumulative, {slf:,.2f} ms self", cum))
        parts.append(rect(left, y + 3, sx(slf) - left, row - 6, "accent", f"{e.module}: {slf:,.2f} ms self", slf))
        parts.append(text(sx(cum) + 4, y + row / 2 + 4, f"{cum:,.1f}", "tick"))
    parts.append(x_axis(sx, top + row * len(rows) + 2, 0, vmax, "ms (light: cumulative, dark: self)", 6))
    parts.append("</svg>")
    return Chart(
        "import-tree",
        "Import tree",
        "".join(parts),
        f"Imports costing at least 1 % of {total_us / 1000:,.1f} ms, parents above their children.",
        2 * len(rows),
    )


# --------------------------------------------------------------------------------------
# Counters (CPU, RSS …)
# --------------------------------------------------------------------------------------


def _counter_rank(c: CounterSummary) -> tuple[int, str]:
    n = c.name.lower()
    for i, key in enumerate(("cpu", "rss", "mem", "pss", "heap")):
        if key in n:
            return (i, n)
    return (9, n)


#: Units shown scaled: raw bytes make unreadable axes.
_SCALED_UNITS = {"bytes": ("MB", 1e-6), "B": ("MB", 1e-6), "kB": ("MB", 1e-3), "KB": ("MB", 1e-3)}


def counter_chart(c: CounterSummary) -> Chart | None:
    pts = [(t, v) for t, v in c.points]
    if len(pts) < 2:
        return None
    if c.unit in _SCALED_UNITS:
        unit, k = _SCALED_UNITS[c.unit]
        pts = [(t, v * k) for t, v in pts]
        c = c.model_copy(update={"unit": unit, "min": c.min * k, "max": c.max * k, "mean": c.mean * k, "last": c.last * k, "points": pts})
    H, left, right, top, bottom = 180, 60, 16, 24, 42
    t0, t1 = min(t for t, _ in pts), max(t for t, _ in pts)
    vmax = max(v for _, v in pts)
    vmin = min(0.0, min(v for _, v in pts))
    sx = Scale(t0, t1 if t1 > t0 else t0 + 1, left, WIDTH - right)
    sy = Scale(vmin, (vmax * 1.1) if vmax > 0 else 1.0, H - bottom, top)
    unit = c.unit or ""
    parts = [open_svg(H, f"{c.name} over time", "counter")]
    parts.append(y_axis(sy, left, vmin, (vmax * 1.1) if vmax > 0 else 1.0, WIDTH - right, unit))
    xy = [(sx(t), sy(v)) for t, v in pts]
    area = f"M{xy[0][0]:.1f},{sy(vmin):.1f} " + " ".join(f"L{x:.1f},{y:.1f}" for x, y in xy) + f" L{xy[-1][0]:.1f},{sy(vmin):.1f} Z"
    parts.append(f'<path class="area" d="{area}"/>')
    parts.append(polyline(xy, "series", f"{c.name}: min {c.min:,.4g}, mean {c.mean:,.4g}, max {c.max:,.4g} {unit}", c.max))
    peak_t, peak_v = max(pts, key=lambda p: p[1])
    parts.append(f'<circle class="mark peak" cx="{sx(peak_t):.1f}" cy="{sy(peak_v):.1f}" r="3.5" data-v="{peak_v:.6g}"><title>peak {esc(f"{peak_v:,.4g}")} {esc(unit)} at {peak_t:,.0f} ms</title></circle>')
    parts.append(x_axis(sx, H - bottom, t0, t1, "time (ms)", 8))
    parts.append("</svg>")
    note = f"{c.name}: min {c.min:,.4g}, mean {c.mean:,.4g}, max {c.max:,.4g}, last {c.last:,.4g} {unit} ({len(pts)} points)."
    return Chart("counter", c.name, "".join(parts), note, 2)


def constant_counters(counters: Sequence[CounterSummary]) -> list[CounterSummary]:
    """Series that never moved (one process, zero bytes read): a flat chart says nothing a
    number cannot, so the page lists them in one line instead."""
    return [c for c in counters if len(c.points) >= 2 and c.min == c.max]


def constant_label(c: CounterSummary) -> str:
    if c.unit in _SCALED_UNITS:
        unit, k = _SCALED_UNITS[c.unit]
        return f"{c.name} {c.min * k:,.4g} {unit}"
    return f"{c.name} {c.min:,.4g}" + (f" {c.unit}" if c.unit else "")


def counter_charts(counters: Sequence[CounterSummary]) -> list[Chart]:
    out = []
    flat = {id(c) for c in constant_counters(counters)}
    for c in sorted(counters, key=_counter_rank):
        if id(c) in flat:
            continue
        ch = counter_chart(c)
        if ch:
            out.append(ch)
        if len(out) >= MAX_COUNTER_CHARTS:
            break
    return out
