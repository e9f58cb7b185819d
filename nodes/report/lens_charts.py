"""The lens sections' charts (CPU, power, memory, blocking, scroll), drawn as ``charts`` draws:
inline SVG from ``svg``'s blocks, every data mark a ``class="mark"`` element with ``data-v`` and a
``<title>``. Each chart draws at most LENS_CHART_ROWS bars or LENS_CHART_LINES curves or
LENS_CHART_POINTS points, whatever the trace holds: a big trace gives the same size of page.
"""

from __future__ import annotations

from typing import Sequence

from nodes.report.charts import LABEL_CHAR_PX, Chart
from nodes.report.svg import WIDTH, Scale, esc, fit_label, line, open_svg, rect, text, x_axis, y_axis

#: Bars per bar chart (processes, threads, categories, blocking intervals).
LENS_CHART_ROWS = 12
#: Curves per over-time chart (processes), and points per scatter (scroll updates).
LENS_CHART_LINES = 6
LENS_CHART_POINTS = 2000
#: Power windows drawn (the whole trace and the first measureBlocks); the tables list up to
#: LENS_TABLE_ROWS (nodes/report/lens_sections.py).
LENS_CHART_WINDOWS = 4

#: Line colours of the over-time chart, one per process (hue, in order).
_LINE_HUES = (215, 10, 140, 40, 280, 180)


def bars(kind: str, title: str, rows: Sequence[tuple[str, Sequence[tuple[float, str, str]]]], unit: str,
         note: str) -> Chart | None:
    """Horizontal bars, one row per (label, segments); a row's segments (value, css class, tip)
    are stacked left to right. At most LENS_CHART_ROWS rows."""
    rows = [r for r in rows if sum(v for v, _, _ in r[1]) > 0][:LENS_CHART_ROWS]
    if not rows:
        return None
    left, right, top, row = 230, 80, 6, 22
    H = top * 2 + row * len(rows) + 30
    vmax = max(sum(v for v, _, _ in segs) for _, segs in rows)
    sx = Scale(0, vmax * 1.05, left, WIDTH - right)
    parts = [open_svg(H, title, kind)]
    marks = 0
    for i, (label, segs) in enumerate(rows):
        y = top + i * row
        parts.append(text(left - 8, y + row / 2 + 4, fit_label(label, left - 12, LABEL_CHAR_PX) or label[:3], "lbl", "end"))
        x = 0.0
        for value, cls, tip in segs:
            parts.append(rect(sx(x), y + 4, sx(x + value) - sx(x), row - 8, cls, tip, value))
            marks += 1
            x += value
        parts.append(text(sx(x) + 5, y + row / 2 + 4, f"{x:,.0f}" if x >= 100 else f"{x:.3g}", "tick"))
    parts.append(x_axis(sx, top + row * len(rows) + 2, 0, vmax * 1.05, unit, 6))
    parts.append("</svg>")
    return Chart(kind, title, "".join(parts), note, marks)


def lines_over_time(kind: str, title: str, curves: Sequence[tuple[str, Sequence[tuple[float, float]]]], unit: str,
                    note: str, events: Sequence[tuple[float, str, str]] = ()) -> Chart | None:
    """One curve per (label, points), at most LENS_CHART_LINES; ``events`` (ms, css class, tip)
    are marked as ticks on the time axis (a kill, a GC)."""
    curves = [(n, list(p)) for n, p in curves if len(p) >= 1][:LENS_CHART_LINES]
    if not curves:
        return None
    rows = (min(len(curves), LENS_CHART_LINES) + 2) // 3
    H, left, right, top, bottom = 210 + 16 * rows, 60, 16, 24, 44 + 16 * rows
    ts = [t for _, p in curves for t, _ in p] + [t for t, _, _ in events]
    t0, t1 = min(ts), max(ts)
    vmax = max(v for _, p in curves for _, v in p)
    vtop = vmax * 1.1 if vmax > 0 else 1.0
    sx = Scale(t0, t1 if t1 > t0 else t0 + 1, left, WIDTH - right)
    sy = Scale(0.0, vtop, H - bottom, top)
    parts = [open_svg(H, title, kind), y_axis(sy, left, 0.0, vtop, WIDTH - right, unit)]
    marks = 0
    for i, (name, pts) in enumerate(curves):
        colour = f"stroke:hsl({_LINE_HUES[i % len(_LINE_HUES)]},65%,48%)"
        peak = max(v for _, v in pts)
        xy = " ".join(f"{sx(t):.1f},{sy(v):.1f}" for t, v in pts)
        parts.append(f'<polyline class="mark series" points="{xy}" style="{esc(colour)}" data-v="{peak:.6g}">'
                     f"<title>{esc(f'{name}: peak {peak:,.4g} {unit}')}</title></polyline>")
        marks += 1
        lx = left + (i % 3) * ((WIDTH - left - right) / 3)
        ly = H - bottom + 44 + 16 * (i // 3)
        parts.append(f'<line x1="{lx:.1f}" y1="{ly - 4:.1f}" x2="{lx + 14:.1f}" y2="{ly - 4:.1f}" class="series" style="{esc(colour)}"/>')
        parts.append(text(lx + 18, ly, fit_label(name, (WIDTH - left - right) / 3 - 22) or name[:3], "tick"))
    base = sy(0.0)
    for t, cls, tip in events:
        x = sx(t)
        parts.append(f'<rect class="mark {esc(cls)}" x="{x - 1:.1f}" y="{base - 10:.1f}" width="2" height="10" '
                     f'data-v="{t:.6g}"><title>{esc(tip)}</title></rect>')
        marks += 1
    parts.append(x_axis(sx, base, t0, t1, "time (ms)", 8))
    parts.append("</svg>")
    return Chart(kind, title, "".join(parts), note, marks)


def scatter_over_time(kind: str, title: str, points: Sequence[tuple[float, float, str, str]], unit: str, note: str,
                      levels: Sequence[tuple[float, str]] = ()) -> Chart | None:
    """One dot per (ms, value, css class, tip), at most LENS_CHART_POINTS; ``levels`` (value,
    label) are dashed horizontal lines (percentiles)."""
    points = list(points)[:LENS_CHART_POINTS]
    if not points:
        return None
    H, left, right, top, bottom = 220, 60, 60, 20, 42
    t0, t1 = min(p[0] for p in points), max(p[0] for p in points)
    vmax = max([p[1] for p in points] + [v for v, _ in levels])
    vtop = vmax * 1.1 if vmax > 0 else 1.0
    sx = Scale(t0, t1 if t1 > t0 else t0 + 1, left, WIDTH - right)
    sy = Scale(0.0, vtop, H - bottom, top)
    parts = [open_svg(H, title, kind), y_axis(sy, left, 0.0, vtop, WIDTH - right, unit)]
    for v, label in levels:
        parts.append(line(left, sy(v), WIDTH - right, sy(v), "median"))
        parts.append(text(WIDTH - right + 4, sy(v) + 4, label, "tick"))
    for t, v, cls, tip in points:
        parts.append(f'<circle class="mark {esc(cls)}" cx="{sx(t):.1f}" cy="{sy(v):.1f}" r="2.6" data-v="{v:.6g}">'
                     f"<title>{esc(tip)}</title></circle>")
    parts.append(x_axis(sx, H - bottom, t0, t1, "time (ms)", 8))
    parts.append("</svg>")
    return Chart(kind, title, "".join(parts), note, len(points))
