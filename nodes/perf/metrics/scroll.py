"""Chrome scrolling: scroll updates, Chrome's own jank verdicts, input-to-frame latency and the
fate of each frame — the scroll lens on a Chrome trace (Android's frames stay FrameTimeline's).

Chrome judges its scroll frames itself and writes the verdict into the trace; those verdicts
are the reference, counted here, not recomputed:

* ``EventLatency`` spans (one input event, from its arrival to the frame that presented it;
  perfetto ``stdlib/chrome/event_latency.sql``): ``event_type`` FIRST_GESTURE_SCROLL_UPDATE /
  GESTURE_SCROLL_UPDATE / INERTIAL_GESTURE_SCROLL_UPDATE are scroll updates; their duration is
  the input-to-frame latency; Chrome writes ``is_janky_scrolled_frame`` — its scroll jank v3
  verdict on the presented frame (``chrome/scroll_jank/scroll_jank_v3.sql``: janky frames /
  frames presenting a scroll update) — on the one update each presented frame is judged by.
  Frames are counted by those verdicts, not by ``display_trace_id``: Chrome's JSON writer
  prints that 64-bit id as a double, so distinct frames collide in a JSON trace.
* ``ScrollJankV4`` spans: Chrome's v4 verdict ``is_janky`` on each frame it judged
  (``chrome/scroll_jank_v4.sql``).
* ``PipelineReporter`` spans: each frame's ``frame_reporter.state`` — STATE_PRESENTED_ALL,
  STATE_PRESENTED_PARTIAL, STATE_DROPPED, STATE_NO_UPDATE_DESIRED (``chrome/chrome_frame_info``).

A span whose end never came is counted as an update but has no latency (named in warnings).
"""

from __future__ import annotations

import math

from nodes.perf.model import MAX_SCROLL_UPDATES, MissingData, PerfData, ScrollStats, ScrollUpdate

UPDATES = ("FIRST_GESTURE_SCROLL_UPDATE", "GESTURE_SCROLL_UPDATE", "INERTIAL_GESTURE_SCROLL_UPDATE")
CAPTURE = ('Record with the categories "input", "benchmark", "latencyInfo", "input.scrolling", '
           '"graphics.pipeline" (DevTools Tracing.start includedCategories, or chrome://tracing)')


def _pct(sorted_vals: list[float], q: float) -> float | None:
    if not sorted_vals:
        return None
    k = max(0, min(len(sorted_vals) - 1, math.ceil(q / 100.0 * len(sorted_vals)) - 1))
    return round(sorted_vals[k], 3)


def spans(pd: PerfData) -> tuple[list[tuple[str, float, float | None, dict]], int]:
    """(name, ts µs, dur µs or None, args) of each span, its b paired with the next e of the
    same name and async id; and how many ends had no begin."""
    open_: dict[tuple, list[tuple[float, dict]]] = {}
    out: list[tuple[str, float, float | None, dict]] = []
    orphans = 0
    for ts, begin, name, key, _pid, args in sorted(pd.scroll_spans, key=lambda s: s[0]):
        k = (name, key)
        if begin:
            open_.setdefault(k, []).append((ts, args or {}))
        else:
            stack = open_.get(k)
            if not stack:
                orphans += 1
                continue
            t0, a = stack.pop(0)
            out.append((name, t0, ts - t0, a))
    for (name, _key), rest in open_.items():
        out.extend((name, t0, None, a) for t0, a in rest)
    out.sort(key=lambda s: s[1])
    return out, orphans


def scroll(ctx) -> ScrollStats | None:
    pd: PerfData = ctx.pd
    if not pd.scroll_spans:
        return None
    all_spans, orphans = spans(pd)
    out = ScrollStats()
    latencies: list[float] = []
    judged = janky = 0
    unended = 0
    for name, ts, dur, args in all_spans:
        if name == "EventLatency":
            el = args.get("event_latency") or {}
            kind = el.get("event_type")
            if kind == "GESTURE_SCROLL_BEGIN":
                out.scrolls += 1
            if kind not in UPDATES:
                continue
            out.update_count += 1
            if dur is None:
                unended += 1
            else:
                latencies.append(dur / 1000.0)
            verdict = None
            if "is_janky_scrolled_frame" in el:  # the update a presented frame was judged by
                verdict = bool(el["is_janky_scrolled_frame"])
                judged += 1
                janky += verdict
            if len(out.updates) < MAX_SCROLL_UPDATES:
                out.updates.append(ScrollUpdate(start_ms=ctx.rel(ts), type=kind, janky=verdict,
                                                latency_ms=round(dur / 1000.0, 3) if dur is not None else None))
        elif name == "ScrollJankV4":
            v4 = args.get("scroll_jank_v4") or {}
            if "is_janky" in v4:
                out.v4_frames += 1
                out.v4_janky_frames += bool(v4["is_janky"])
        elif name == "PipelineReporter":
            state = (args.get("frame_reporter") or args.get("chrome_frame_reporter") or {}).get("state")
            if state:
                out.frame_states[state] = out.frame_states.get(state, 0) + 1
    out.presented_frames, out.janky_frames = judged, janky
    out.janky_ratio = round(janky / judged, 4) if judged else None
    latencies.sort()
    out.latency_p50_ms, out.latency_p90_ms = _pct(latencies, 50), _pct(latencies, 90)
    out.latency_p99_ms, out.latency_max_ms = _pct(latencies, 99), (round(latencies[-1], 3) if latencies else None)
    out.frame_states = dict(sorted(out.frame_states.items(), key=lambda kv: -kv[1]))
    out.dropped_frames = out.frame_states.get("STATE_DROPPED", 0)
    out.partial_frames = out.frame_states.get("STATE_PRESENTED_PARTIAL", 0)
    if not out.update_count:
        out.missing.append(MissingData(what="scroll updates", why="the trace has EventLatency spans but no scroll",
                                       capture=CAPTURE))
    if unended:
        ctx.res.warnings.append(f"{unended} scroll update(s) had no end (EventLatency): counted, no latency")
    if orphans:
        ctx.res.warnings.append(f"{orphans} scroll span end(s) had no begin, left out")
    if pd.scroll_spans_dropped:
        ctx.res.warnings.append(f"{pd.scroll_spans_dropped:,} scroll spans beyond the cap were not read")
    return out


def summarize_scroll(s: ScrollStats | None) -> str:
    """One sentence with the numbers: janky scroll frames and input-to-frame latency."""
    if s is None or not s.update_count:
        return "No scrolling in the trace: no EventLatency scroll updates."
    ratio = f" ({s.janky_ratio:.1%})" if s.janky_ratio is not None else ""
    lat = f"; input-to-frame latency p50 {s.latency_p50_ms:.1f} ms, p99 {s.latency_p99_ms:.1f} ms" if s.latency_p50_ms is not None else ""
    return (f"{s.janky_frames} of {s.presented_frames} scroll frames janky by Chrome's scroll jank v3{ratio}, "
            f"{s.v4_janky_frames} of {s.v4_frames} by v4, over {s.update_count} scroll updates in {s.scrolls} scroll(s)"
            f"{lat}; {s.dropped_frames} frame(s) dropped, {s.partial_frames} presented partially.")
