"""Chrome's scroll and frame spans, kept with their arguments for the scroll lens: ``EventLatency``
(one input event from arrival to the frame that showed it; Chrome writes its ``event_type`` and,
for scroll updates, its own verdict ``is_janky_scrolled_frame``), ``ScrollJankV4`` (Chrome's v4
jank verdict ``is_janky`` per presented scroll frame) and ``PipelineReporter`` (each frame's
fate: ``STATE_PRESENTED_ALL`` / ``_PARTIAL``, ``STATE_DROPPED`` …). Perfetto's chrome stdlib
reads the same events (``chrome/event_latency.sql``, ``chrome/scroll_jank_v4.sql``,
``chrome/chrome_frame_info``).

Fed from the Trace Event reader's async-span path (``trace_event/phases.py``), one call per
``b`` / ``e``; paired by the metric (``nodes/perf/metrics/scroll.py``).
"""

from __future__ import annotations

import re

from nodes.perf.model import PerfData

SPAN_NAMES = frozenset({"EventLatency", "ScrollJankV4", "PipelineReporter"})
#: EventLatency's stages are its child spans (same async id, inside it): Chrome names them
#: "<from>To<to>" (GenerationToBrowserMain, RendererCompositorQueueingDelay is the exception
#: below, SubmitCompositorFrameToPresentationCompositorFrame …); Perfetto's
#: ``chrome/event_latency_description.sql`` lists the stages it knows.
STAGE_WORDS = frozenset({"RendererCompositorQueueingDelay", "RendererCompositorProcessing",
                         "RendererMainProcessing", "Commit", "Activation"})
_STAGE = re.compile(r"[A-Z][A-Za-z]*To[A-Z][A-Za-z]*\Z")
#: At most this many span ends are kept (a minute of scrolling at 120 Hz is a few 10 000).
MAX_SCROLL_EVENTS = 400_000


def is_stage(name: str) -> bool:
    """A span name that is an EventLatency stage (or a PipelineReporter stage: the metric keeps
    only those inside an EventLatency)."""
    return name in STAGE_WORDS or _STAGE.match(name) is not None


def record(pd: PerfData, name: str, begin: bool, key: object, ts: float, pid: int, args: object) -> None:
    """One ``b`` (with its args) or ``e`` of a span in :data:`SPAN_NAMES`."""
    if len(pd.scroll_spans) >= MAX_SCROLL_EVENTS:
        pd.scroll_spans_dropped += 1
        return
    pd.scroll_spans.append((ts, begin, name, key, pid, args if begin and isinstance(args, dict) else None))
