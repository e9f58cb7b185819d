"""Frame rules: the app's janky frames and their causes, what the trace lacks to judge them,
and the producer's own jank figure — each with a curated, offline suggestion and the Android
documentation that explains it (no model involved)."""

from __future__ import annotations

from nodes.perf.findings.common import finding
from nodes.perf.metrics.common import _fms, _fpct
from nodes.perf.metrics.scope import CHOSEN_BY_FRAMES, CHOSEN_BY_LAUNCH, CHOSEN_BY_SURFACE_FRAMES, CHOSEN_BY_USER
from nodes.perf.metrics.frames import _reported
from nodes.perf.model import FRAME_CAUSE_LABELS, FrameCause, FrameStats, Finding, WorstFrame
from nodes.perf.parsers.perfetto_frames import JANK_LABELS, USER_VISIBLE_JANK
from nodes.perf.units import counted

USER_VISIBLE_LABELS = frozenset(label for bit, label in JANK_LABELS if bit & USER_VISIBLE_JANK)

#: Share of janky frames from which it is a finding, and "high".
JANK_RATIO = 0.05
JANK_RATIO_HIGH = 0.25
#: Below JANK_RATIO, "within budget" is said from this many frames.
WITHIN_BUDGET_MIN_FRAMES = 10
#: The producer's janky percentage from which it is "high".
REPORTED_JANK_HIGH_PCT = 25.0
#: A cause is a finding of its own when it explains at least this share of the janky frames
#: that got a cause (and at least one frame); at most this many cause findings.
CAUSE_SHARE = 0.2
MAX_CAUSE_FINDINGS = 3
#: A cause finding is "high" when it explains this share of the explained janky frames, at
#: least this many of them, and the frames are "high" janky.
CAUSE_HIGH_SHARE = 0.5
CAUSE_HIGH_FRAMES = 3
#: FrameTimeline types listed in a finding's text.
TYPES_SHOWN = 4

_RENDER = "https://developer.android.com/topic/performance/vitals/render"
_JANK_DETECTION = "https://developer.android.com/studio/profile/jank-detection"
#: cause → (what to do, where Android's documentation explains it).
CAUSE_SUGGESTIONS: dict[FrameCause, tuple[str, str]] = {
    FrameCause.MAIN_THREAD_SLICE: (
        "Make the named main-thread work cheaper or move it off the UI thread: flatten layouts, "
        "inflate less per frame, keep onBindViewHolder/onDraw/compositions light.", _RENDER),
    FrameCause.RENDER_THREAD: (
        "Reduce what each frame draws (overdraw, large bitmaps and paths, layers, alpha animations "
        "of complex views); check GPU rendering speed.",
        "https://developer.android.com/topic/performance/rendering/profile-gpu"),
    FrameCause.SCHED_DELAY: (
        "The UI thread was ready but got no CPU: cut background threads competing with it during "
        "animations and scrolls, and lower their priority.",
        "https://developer.android.com/topic/performance/threads"),
    FrameCause.BINDER: (
        "Move binder (IPC) calls off the main thread or cache their results; StrictMode flags slow "
        "calls.", "https://developer.android.com/reference/android/os/StrictMode"),
    FrameCause.LOCK_CONTENTION: (
        "The UI thread waited for a lock another thread held: shorten that critical section, or "
        "hand the result to the UI thread instead of sharing the lock.",
        "https://developer.android.com/topic/performance/threads"),
    FrameCause.IO: (
        "Move disk and network IO off the main thread (StrictMode detectDiskReads/Writes finds it).",
        "https://developer.android.com/reference/android/os/StrictMode"),
    FrameCause.GC: (
        "Allocate less while drawing and scrolling (no objects per frame in onDraw/onBind); find the "
        "allocations with the Memory Profiler.", "https://developer.android.com/topic/performance/memory"),
    FrameCause.SHADER_COMPILATION: (
        "Shaders were compiled on first use: draw the effect once before it is needed, and ship a "
        "Baseline Profile so first frames are not cold.",
        "https://developer.android.com/topic/performance/baselineprofiles/overview"),
    FrameCause.SURFACEFLINGER: (
        "SurfaceFlinger, not the app, missed the deadline: compare with another device or build "
        "before changing app code.", _JANK_DETECTION),
}
#: When frames are late and no cause could be decided.
NO_CAUSE_SUGGESTION = ("Capture a system trace with atrace (gfx, view) and sched so each late frame can be "
                       "explained; the Janky frames track shows it.", _JANK_DETECTION)
WITHIN_BUDGET_SUGGESTION = ("Keep it so: a Macrobenchmark FrameTimingMetric test catches regressions.",
                            "https://developer.android.com/topic/performance/benchmarking/macrobenchmark-metrics")
#: Recording a Perfetto trace on a device with a config (developer.android.com).
MISSING_LINK = "https://developer.android.com/tools/perfetto"
FAMILY = "frames"
APP_RULES = frozenset({CHOSEN_BY_USER, CHOSEN_BY_LAUNCH, CHOSEN_BY_SURFACE_FRAMES, CHOSEN_BY_FRAMES})


def is_jank_trace(fs: FrameStats | None) -> bool:
    """An app's frames (metrics/scope.py chose the app) are janky enough to be a finding: what
    a system trace is about when it holds no app startup. Frames of no identified app (a web
    page's compositor, one gfxinfo dump) do not decide what the answer leads with."""
    return bool(fs and fs.count and fs.jank_ratio is not None and fs.jank_ratio >= JANK_RATIO
                and fs.chosen_by in APP_RULES)


def _app(fs: FrameStats) -> str:
    if fs.process and fs.pid is not None:
        return f"{fs.process} ({fs.pid})"
    return fs.process or (f"pid {fs.pid}" if fs.pid is not None else "the app")


def _types_text(fs: FrameStats) -> str:
    """The user-visible types first, then the ones that are not counted."""
    seen = [(k, v) for k, v in fs.jank_types.items() if k not in ("None", "Unspecified")]
    vis = [(k, v) for k, v in seen if k in USER_VISIBLE_LABELS][:TYPES_SHOWN]
    rest = [(k, v) for k, v in seen if k not in USER_VISIBLE_LABELS][:TYPES_SHOWN]
    out = ", ".join(f"{k} {v:,}" for k, v in vis)
    if rest:
        out += ("; " if out else "") + "not counted: " + ", ".join(f"{k} {v:,}" for k, v in rest)
    return out


def _top_cause(fs: FrameStats) -> FrameCause | None:
    if fs.causes:
        return FrameCause(next(iter(fs.causes)))
    for w in fs.worst:
        if w.cause is not None:
            return w.cause
    return None


def _worst_text(w: WorstFrame) -> str:
    s = f"worst {_fms(w.dur_ms)} at {_fms(w.start_ms)}"
    if w.cause is not None:
        s += f", {FRAME_CAUSE_LABELS[w.cause]}"
        if w.evidence:
            s += f" ({w.evidence[0]})"
    return s


def janky_frames(fs: FrameStats | None, source: str | None) -> list[Finding]:
    """The app's janky frames — by FrameTimeline's user-visible jank types where the trace has
    them, else by duration over the budget — or, with enough frames and few janky, that they
    are fine. The suggestion is the top cause's."""
    if not fs or fs.jank_ratio is None or not fs.count:
        return []
    app = _app(fs) if fs.pid is not None or fs.process else None
    of = f" of {app}" if app else ""
    if fs.jank_ratio >= JANK_RATIO:
        sev = "high" if fs.jank_ratio >= JANK_RATIO_HIGH else "medium"
        w = fs.worst[0] if fs.worst else None
        if fs.jank_source == "frame timeline":
            what = f"{fs.jank_count:,} of {fs.count:,} frames{of} carry a user-visible FrameTimeline jank type"
            types = _types_text(fs)
            if types:
                what += f" ({types})"
        elif fs.jank_source == "reported":
            what = f"{fs.jank_count:,} of {fs.count:,} frames{of} missed their deadline (each row's own verdict)"
        else:
            what = (f"{fs.jank_count:,} of {fs.count:,} frames{of} exceeded the {_fms(fs.budget_ms)} budget "
                    f"({fs.budget_source})")
        causes = ""
        if fs.causes:
            causes = "; causes: " + ", ".join(f"{FRAME_CAUSE_LABELS[FrameCause(c)]} {n:,}" for c, n in fs.causes.items())
        cause = _top_cause(fs)
        sugg, link = CAUSE_SUGGESTIONS[cause] if cause else NO_CAUSE_SUGGESTION
        return [finding(
            f"Janky frames: {_fpct(fs.jank_ratio * 100)}" + (f" of {fs.process}" if fs.process else ""), sev,
            what + f"; p90 {_fms(fs.p90_ms)}, p99 {_fms(fs.p99_ms)}" + causes + (f"; {_worst_text(w)}" if w else "") + ".",
            source,
            start_ms=w.start_ms if w else None,
            end_ms=round(w.start_ms + w.dur_ms, 3) if w else None,
            events=((w.evidence or w.ran)[:5] if w else []),
            metric={"jank_ratio": fs.jank_ratio, "count": fs.count, "budget_ms": fs.budget_ms,
                    "jank_source": fs.jank_source, **({"cause": cause.value} if cause else {})},
            suggestion=sugg, link=link, family=FAMILY,
        )]
    if fs.count >= WITHIN_BUDGET_MIN_FRAMES:
        how = ("carry a user-visible jank type" if fs.jank_source == "frame timeline"
               else f"over the {_fms(fs.budget_ms)} budget")
        return [finding("Frames within budget", "info",
                        f"{fs.count:,} frames{of}, {_fpct(fs.jank_ratio * 100)} {how}.",
                        source, metric={"jank_ratio": fs.jank_ratio},
                        suggestion=WITHIN_BUDGET_SUGGESTION[0], link=WITHIN_BUDGET_SUGGESTION[1], family=FAMILY)]
    return []


def frame_causes(fs: FrameStats | None, source: str | None) -> list[Finding]:
    """Each cause behind a good share of the app's janky frames, with the worst such frame as
    evidence and what to do about it."""
    if not fs or not fs.causes or not fs.jank_count:
        return []
    explained = sum(fs.causes.values())
    out = []
    for c, n in list(fs.causes.items())[:MAX_CAUSE_FINDINGS]:
        if n < 1 or n / explained < CAUSE_SHARE:
            continue
        cause = FrameCause(c)
        w = next((x for x in fs.worst if x.cause == cause), None)
        detail = (f"{n:,} of the {fs.jank_count:,} janky frames{' of ' + _app(fs) if fs.process else ''} {'was' if n == 1 else 'were'} late "
                  f"because of {FRAME_CAUSE_LABELS[cause]}")
        if explained < fs.jank_count:
            detail += f" ({counted(fs.jank_count - explained, 'janky frame')} had no evidence either way)"
        if w is not None:
            detail += f"; e.g. the {_fms(w.dur_ms)} frame at {_fms(w.start_ms)}: " + "; ".join(w.evidence[:3])
        sugg, link = CAUSE_SUGGESTIONS[cause]
        high = n >= CAUSE_HIGH_FRAMES and n / explained >= CAUSE_HIGH_SHARE and (fs.jank_ratio or 0) >= JANK_RATIO_HIGH
        out.append(finding(
            f"Late frames: {FRAME_CAUSE_LABELS[cause]}", "high" if high else "medium",
            detail + ".", source,
            start_ms=w.start_ms if w else None, end_ms=round(w.start_ms + w.dur_ms, 3) if w else None,
            events=(w.evidence[:5] if w else []),
            metric={"cause": c, "frames": float(n), "explained": float(explained)},
            suggestion=sugg, link=link, family=FAMILY,
        ))
    return out


def missing_frame_data(fs: FrameStats | None, source: str | None) -> list[Finding]:
    """What the trace lacks to judge the frames (no frame timeline, no sched, no atrace), with
    the Perfetto config lines that capture it."""
    if not fs or not fs.missing:
        return []
    m = fs.missing[0]
    rest = "; ".join(x.what for x in fs.missing[1:])
    return [finding(
        "Frame analysis is missing data", "info",
        f"Not in the trace: {m.what} — {m.why}." + (f" Also missing: {rest}." if rest else ""),
        source, metric={"missing": float(len(fs.missing))},
        suggestion=("Record again with: " + " ".join(x.capture for x in fs.missing if x.capture)) if any(
            x.capture for x in fs.missing) else "Record a trace while the app draws frames.",
        link=MISSING_LINK, family=FAMILY,
    )]


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
        suggestion="Record a system trace of the same interaction to see which frames are late and why.",
        link=_JANK_DETECTION, family=FAMILY,
    )]
