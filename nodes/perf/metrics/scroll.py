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
  (``chrome/scroll_jank_v4.sql``), and on a janky one its reasons
  (``missed_vsyncs_per_jank_reason``: MISSED_VSYNC_DURING_FAST_SCROLL, …), counted per reason.
* ``PipelineReporter`` spans: each frame's ``frame_reporter.state`` — STATE_PRESENTED_ALL,
  STATE_PRESENTED_PARTIAL, STATE_DROPPED, STATE_NO_UPDATE_DESIRED (``chrome/chrome_frame_info``).

* EventLatency's stages: its direct child spans (same async id, inside it —
  ``chrome/event_latency.sql`` walks them as descendant slices): GenerationToBrowserMain,
  RendererCompositorQueueingDelay, … SubmitCompositorFrameToPresentationCompositorFrame. Over
  the updates Chrome's v3 judged janky, each stage's p50 / p90 and share of their latency; the
  stage with the most of it is the dominant one. Per janky update its cause is the stage that
  grew the most over the previous judged frame of the same scroll (a stage that frame lacks
  counts from 0), as ``chrome_get_v3_jank_cause_id`` in
  ``chrome/scroll_jank/scroll_jank_v3_cause.sql`` picks ``cause_of_jank``; Perfetto takes that
  previous frame from presentation times it recomputes, here it is the previous update Chrome
  judged, the one its own verdict sits on.

Both formats feed these spans: Chrome's JSON (``parsers/chrome_scroll.py``) and a Perfetto
protobuf trace (``parsers/perfetto_chrome_latency.py``).

A span whose end never came is counted as an update but has no latency (named in warnings).
"""

from __future__ import annotations

import math

from bisect import bisect_left

from nodes.perf.model import MAX_SCROLL_UPDATES, MissingData, PerfData, ScrollStage, ScrollStats, ScrollUpdate
from nodes.perf.parsers.chrome_scroll import SPAN_NAMES
from nodes.perf.units import counted

UPDATES = ("FIRST_GESTURE_SCROLL_UPDATE", "GESTURE_SCROLL_UPDATE", "INERTIAL_GESTURE_SCROLL_UPDATE")
CAPTURE = ('Record with the categories "input", "benchmark", "latencyInfo", "input.scrolling", '
           '"graphics.pipeline" (DevTools Tracing.start includedCategories, or chrome://tracing)')


def _pct(sorted_vals: list[float], q: float) -> float | None:
    if not sorted_vals:
        return None
    k = max(0, min(len(sorted_vals) - 1, math.ceil(q / 100.0 * len(sorted_vals)) - 1))
    return round(sorted_vals[k], 3)


Span = tuple[str, float, "float | None", dict, object]


def spans(pd: PerfData) -> tuple[list[Span], int]:
    """(name, ts µs, dur µs or None, args, async key) of each span, its b paired with the next e
    of the same name and async id; and how many ends had no begin."""
    open_: dict[tuple, list[tuple[float, dict]]] = {}
    out: list[Span] = []
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
            out.append((name, t0, ts - t0, a, key))
    for (name, key), rest in open_.items():
        out.extend((name, t0, None, a, key) for t0, a in rest)
    out.sort(key=lambda s: s[1])
    return out, orphans


def stages_of(all_spans: list[Span]) -> dict[int, list[tuple[str, float]]]:
    """Index of each ended EventLatency span → its direct child stages (name, ms) in time order:
    the ended stage spans of its async key inside it, less those inside another of them."""
    by_key: dict[object, list[tuple[float, float, str]]] = {}
    for name, ts, dur, _a, key in all_spans:
        if name not in SPAN_NAMES and dur is not None:
            by_key.setdefault(key, []).append((ts, -dur, name))
    for v in by_key.values():
        v.sort()
    out: dict[int, list[tuple[str, float]]] = {}
    eps = 1e-6
    for i, (name, ts, dur, _a, key) in enumerate(all_spans):
        cand = by_key.get(key)
        if name != "EventLatency" or dur is None or not cand:
            continue
        end, cur_end, kids = ts + dur, None, []
        for j in range(bisect_left(cand, (ts - eps,)), len(cand)):
            s_ts, neg, s_name = cand[j]
            if s_ts > end + eps:
                break
            s_end = s_ts - neg
            if s_end > end + eps or (cur_end is not None and s_ts < cur_end - eps and s_end <= cur_end + eps):
                continue  # outside this EventLatency, or a sub-stage of the previous stage
            kids.append((s_name, -neg / 1000.0))
            cur_end = s_end
        out[i] = kids
    return out


def _cause(cur: list[tuple[str, float]], prev: list[tuple[str, float]] | None) -> str | None:
    """The stage of ``cur`` that grew the most over ``prev``'s same-named stage (absent: 0)."""
    before = dict(prev or ())
    best = None
    for name, ms in cur:
        d = ms - before.get(name, 0.0)
        if best is None or d > best[0]:
            best = (d, name)
    return best[1] if best else None


def janky_stages(janky: list[list[tuple[str, float]]], every: list[list[tuple[str, float]]],
                 janky_latency_ms: float) -> list[ScrollStage]:
    """Per stage over the janky updates' stages: p50 / p90 / total and share; most time first."""
    per: dict[str, list[float]] = {}
    for kids in janky:
        for name, ms in kids:
            per.setdefault(name, []).append(ms)
    allp: dict[str, list[float]] = {}
    for kids in every:
        for name, ms in kids:
            allp.setdefault(name, []).append(ms)
    out = []
    for name, vals in per.items():
        vals.sort()
        tot = sum(vals)
        out.append(ScrollStage(name=name, janky_updates=len(vals), p50_ms=_pct(vals, 50), p90_ms=_pct(vals, 90),
                               total_ms=round(tot, 3), share_of_janky_latency=round(tot / janky_latency_ms, 4) if janky_latency_ms else 0.0,
                               all_p50_ms=_pct(sorted(allp.get(name, ())), 50)))
    out.sort(key=lambda st: -st.total_ms)
    return out


def scroll(ctx) -> ScrollStats | None:
    pd: PerfData = ctx.pd
    if not pd.scroll_spans:
        return None
    all_spans, orphans = spans(pd)
    out = ScrollStats()
    latencies: list[float] = []
    judged = janky = 0
    unended = 0
    kids_of = stages_of(all_spans)
    every: list[list[tuple[str, float]]] = []
    janky_kids: list[list[tuple[str, float]]] = []
    janky_latency = 0.0
    prev_judged: list[tuple[str, float]] | None = None  # the previous judged update's stages, this scroll
    for i, (name, ts, dur, args, _key) in enumerate(all_spans):
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
            if kind == "FIRST_GESTURE_SCROLL_UPDATE":  # a new scroll (Perfetto's scroll_id rule)
                prev_judged = None
            kids = kids_of.get(i)
            if kids:
                every.append(kids)
            verdict, cause = None, None
            if "is_janky_scrolled_frame" in el:  # the update a presented frame was judged by
                verdict = bool(el["is_janky_scrolled_frame"])
                judged += 1
                janky += verdict
                if verdict and kids:
                    janky_kids.append(kids)
                    janky_latency += dur / 1000.0
                    cause = _cause(kids, prev_judged)
                    if cause:
                        out.jank_causes[cause] = out.jank_causes.get(cause, 0) + 1
                if kids:
                    prev_judged = kids
            if len(out.updates) < MAX_SCROLL_UPDATES:
                out.updates.append(ScrollUpdate(start_ms=ctx.rel(ts), type=kind, janky=verdict, jank_cause=cause,
                                                latency_ms=round(dur / 1000.0, 3) if dur is not None else None))
        elif name == "ScrollJankV4":
            v4 = args.get("scroll_jank_v4") or {}
            if "is_janky" in v4:
                out.v4_frames += 1
                out.v4_janky_frames += bool(v4["is_janky"])
                if v4["is_janky"]:
                    for r in v4.get("missed_vsyncs_per_jank_reason") or ():
                        reason = r.get("jank_reason") if isinstance(r, dict) else None
                        if reason:
                            out.jank_reasons[reason] = out.jank_reasons.get(reason, 0) + 1
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
    out.jank_reasons = dict(sorted(out.jank_reasons.items(), key=lambda kv: -kv[1]))
    out.jank_causes = dict(sorted(out.jank_causes.items(), key=lambda kv: -kv[1]))
    out.janky_stages = janky_stages(janky_kids, every, janky_latency)
    out.dominant_stage = out.janky_stages[0].name if out.janky_stages else None
    out.dropped_frames = out.frame_states.get("STATE_DROPPED", 0)
    out.partial_frames = out.frame_states.get("STATE_PRESENTED_PARTIAL", 0)
    if not out.update_count:
        out.missing.append(MissingData(what="scroll updates", why="the trace has EventLatency spans but no scroll",
                                       capture=CAPTURE))
    if unended:
        ctx.res.warnings.append(f"{counted(unended, 'scroll update')} had no end (EventLatency): counted, no latency")
    if orphans:
        ctx.res.warnings.append(f"{counted(orphans, 'scroll span end')} had no begin, left out")
    if pd.scroll_spans_dropped:
        ctx.res.warnings.append(f"{pd.scroll_spans_dropped:,} scroll spans beyond the cap were not read")
    return out


def summarize_scroll(s: ScrollStats | None) -> str:
    """One sentence with Chrome's numbers: janky scroll frames (v3, v4), input-to-frame latency
    p50 / p90 / p99, dropped and partial frames, the EventLatency stage the janky updates spent
    the most in, and Chrome's top reasons where it wrote them."""
    if s is None or not s.update_count:
        return "No scrolling in the trace: no EventLatency scroll updates."
    ratio = f" ({s.janky_ratio:.1%})" if s.janky_ratio is not None else ""
    lat = ""
    if s.latency_p50_ms is not None:
        lat = (f"; input-to-frame latency p50 {s.latency_p50_ms:.1f} ms, p90 {s.latency_p90_ms:.1f} ms, "
               f"p99 {s.latency_p99_ms:.1f} ms")
    stage = ""
    if s.janky_stages:
        st = s.janky_stages[0]
        usual = f", {st.all_p50_ms:.1f} ms over all updates" if st.all_p50_ms is not None else ""
        stage = (f"; the janky updates' time went mostly to {st.name} ({st.share_of_janky_latency:.0%}; p50 {st.p50_ms:.1f} ms, "
                 f"p90 {st.p90_ms:.1f} ms{usual})")
    why = ""
    if s.jank_reasons:
        top = list(s.jank_reasons.items())[:2]
        why = "; Chrome's jank reasons: " + ", ".join(f"{r} ({n} frame{'s' if n != 1 else ''})" for r, n in top)
    return (f"{s.janky_frames} of {s.presented_frames} scroll frames janky by Chrome's scroll jank v3{ratio}, "
            f"{s.v4_janky_frames} of {s.v4_frames} by v4, over {counted(s.update_count, 'scroll update')} in {counted(s.scrolls, 'scroll')}"
            f"{lat}; {counted(s.dropped_frames, 'frame')} dropped, {s.partial_frames} presented partially{stage}{why}.")
