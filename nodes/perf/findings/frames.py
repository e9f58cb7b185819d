"""Frame rules: janky frames against the budget, and the producer's own jank figure."""

from __future__ import annotations

from nodes.perf.findings.common import finding
from nodes.perf.metrics.common import _fms, _fpct
from nodes.perf.metrics.frames import _reported
from nodes.perf.model import Finding, FrameStats

#: Share of janky frames from which it is a finding, and "high".
JANK_RATIO = 0.05
JANK_RATIO_HIGH = 0.25
#: Below JANK_RATIO, "within budget" is said from this many frames.
WITHIN_BUDGET_MIN_FRAMES = 10
#: The producer's janky percentage from which it is "high".
REPORTED_JANK_HIGH_PCT = 25.0


def janky_frames(fs: FrameStats | None, source: str | None) -> list[Finding]:
    """Frames over budget — or, with enough frames and few janky ones, that they are fine."""
    if not fs or fs.jank_ratio is None or not fs.count:
        return []
    if fs.jank_ratio >= JANK_RATIO:
        sev = "high" if fs.jank_ratio >= JANK_RATIO_HIGH else "medium"
        w = fs.worst[0] if fs.worst else None
        return [finding(
            f"Janky frames: {_fpct(fs.jank_ratio * 100)}", sev,
            f"{fs.jank_count:,} of {fs.count:,} frames exceeded the {_fms(fs.budget_ms)} budget "
            f"({fs.budget_source}); p90 {_fms(fs.p90_ms)}, p99 {_fms(fs.p99_ms)}"
            + (f"; worst {_fms(w.dur_ms)} at {_fms(w.start_ms)}" if w else "") + ".",
            source,
            start_ms=w.start_ms if w else None,
            end_ms=round(w.start_ms + w.dur_ms, 3) if w else None,
            events=(w.ran[:5] if w else []),
            metric={"jank_ratio": fs.jank_ratio, "count": fs.count, "budget_ms": fs.budget_ms},
        )]
    if fs.count >= WITHIN_BUDGET_MIN_FRAMES:
        return [finding("Frames within budget", "info",
                        f"{fs.count:,} frames, {_fpct(fs.jank_ratio * 100)} over the {_fms(fs.budget_ms)} budget.",
                        source, metric={"jank_ratio": fs.jank_ratio})]
    return []


def reported_jank(fs: FrameStats | None, fmt: str, source: str | None) -> list[Finding]:
    """The janky share the producing tool reported itself (gfxinfo), when large."""
    if not fs or not fs.reported:
        return []
    rep = _reported(fs.reported)
    jr = rep.get("janky_ratio")
    if jr is None or jr < JANK_RATIO:
        return []
    jp = round(jr * 100.0, 2)
    janky_n = f"{int(rep['janky']):,}" if rep.get("janky") else "?"
    total_n = f"{int(rep['total']):,}" if rep.get("total") else "?"
    return [finding(
        f"The tool reports {_fpct(jp)} janky frames", "high" if jp >= REPORTED_JANK_HIGH_PCT else "medium",
        f"{fmt} reported {janky_n} janky of {total_n} frames ({_fpct(jp)})"
        + (f"; p90 {_fms(rep['p90'])}" if rep.get("p90") is not None else "") + ".",
        source, metric={"janky_percent": jp},
    )]
