"""A few plain-SVG building blocks: escaping, scales, round tick values, axes.

Hand-written rather than a charting library: the page must be self-contained (no script fetched,
no runtime), render identically in any browser and in a headless one, and follow the page's CSS
colours for light and dark. Five small chart types do not justify shipping a JavaScript library
inline or a plotting stack (matplotlib would add ~30 MB and rasterise or emit opaque SVG).
"""

from __future__ import annotations

import math
from html import escape
from typing import Iterable

#: Every chart is drawn in this many user units wide; CSS scales it to the page.
WIDTH = 720


def esc(s: object) -> str:
    return escape(str(s), quote=True)


def nice_step(span: float, target_ticks: int = 5) -> float:
    """A 1/2/5×10^k step that cuts ``span`` into about ``target_ticks`` parts."""
    if span <= 0 or not math.isfinite(span):
        return 1.0
    raw = span / max(1, target_ticks)
    mag = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 5, 10):
        if raw <= m * mag:
            return m * mag
    return 10 * mag


def ticks(lo: float, hi: float, target: int = 5) -> list[float]:
    step = nice_step(hi - lo, target)
    start = math.ceil(lo / step) * step
    out, v = [], start
    while v <= hi + step * 1e-9 and len(out) < 50:
        out.append(round(v, 10))
        v += step
    return out


def tick_label(v: float) -> str:
    """Short axis labels: 12k, 3.5M, 2G past 10,000, so a wide number never leaves the margin."""
    for bound, unit, suffix in ((1e9, 1e9, "G"), (1e6, 1e6, "M"), (1e4, 1e3, "k")):
        if abs(v) >= bound:
            return f"{v / unit:.3g}{suffix}"
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    if float(v).is_integer():
        return f"{int(v)}"
    return f"{v:.3g}"


class Scale:
    """Linear map from data [d0, d1] to pixels [p0, p1]."""

    def __init__(self, d0: float, d1: float, p0: float, p1: float):
        self.d0, self.d1, self.p0, self.p1 = d0, d1 if d1 != d0 else d0 + 1.0, p0, p1

    def __call__(self, v: float) -> float:
        return self.p0 + (v - self.d0) * (self.p1 - self.p0) / (self.d1 - self.d0)


def open_svg(height: float, label: str, kind: str) -> str:
    """The root element: scales to the container width, keeps its aspect, announces its content."""
    return (
        f'<svg class="chart" data-chart="{esc(kind)}" viewBox="0 0 {WIDTH} {height:.0f}" '
        f'role="img" aria-label="{esc(label)}" xmlns="http://www.w3.org/2000/svg">'
        f"<title>{esc(label)}</title>"
    )


def rect(x: float, y: float, w: float, h: float, cls: str, tip: str, value: float, style: str = "") -> str:
    st = f' style="{esc(style)}"' if style else ""
    return (
        f'<rect class="mark {cls}" x="{x:.2f}" y="{y:.2f}" width="{max(w, 0.6):.2f}" height="{max(h, 0.6):.2f}" '
        f'data-v="{value:.6g}"{st}><title>{esc(tip)}</title></rect>'
    )


def text(x: float, y: float, s: str, cls: str = "lbl", anchor: str = "start") -> str:
    return f'<text class="{cls}" x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}">{esc(s)}</text>'


def line(x1: float, y1: float, x2: float, y2: float, cls: str) -> str:
    return f'<line class="{cls}" x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}"/>'


def x_axis(sx: Scale, y: float, lo: float, hi: float, unit: str, target: int = 6) -> str:
    parts = [line(sx.p0, y, sx.p1, y, "ax")]
    for t in ticks(lo, hi, target):
        x = sx(t)
        parts.append(line(x, y, x, y + 4, "ax"))
        parts.append(text(x, y + 16, tick_label(t), "tick", "middle"))
    parts.append(text(sx.p1, y + 30, unit, "tick", "end"))
    return "".join(parts)


def y_axis(sy: Scale, x: float, lo: float, hi: float, x_end: float, unit: str = "", target: int = 4) -> str:
    parts = [line(x, sy.p0, x, sy.p1, "ax")]
    for t in ticks(lo, hi, target):
        y = sy(t)
        parts.append(line(x, y, x_end, y, "grid"))
        parts.append(text(x - 6, y + 4, tick_label(t), "tick", "end"))
    if unit:
        parts.append(text(x - 6, sy.p1 - 8, unit, "tick", "end"))
    return "".join(parts)


def polyline(points: Iterable[tuple[float, float]], cls: str, tip: str, value: float) -> str:
    pts = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
    return f'<polyline class="mark {cls}" points="{pts}" data-v="{value:.6g}"><title>{esc(tip)}</title></polyline>'


def hue(name: str) -> int:
    """A stable hue for a name, in the warm half of the wheel (flame-graph convention)."""
    h = 2166136261
    for ch in name.encode("utf-8", "replace"):
        h = ((h ^ ch) * 16777619) & 0xFFFFFFFF
    return 0 + (h % 60)  # 0–59: red → yellow


def fit_label(s: str, width_px: float, char_px: float = 6.4) -> str | None:
    """The label truncated to fit ``width_px`` (None when not even three characters fit)."""
    n = int((width_px - 6) / char_px)
    if n < 3:
        return None
    return s if len(s) <= n else s[: n - 1] + "…"
