"""Chrome's scroll and frame spans, kept with their arguments for the scroll lens: ``EventLatency``
(one input event from arrival to the frame that showed it; Chrome writes its ``event_type`` and,
for scroll updates, its own verdict ``is_janky_scrolled_frame``), ``ScrollJankV4`` (Chrome's v4
jank verdict ``is_janky`` per presented scroll frame) and ``PipelineReporter`` (each frame's
fate: ``STATE_PRESENTED_ALL`` / ``_PARTIAL``, ``STATE_DROPPED`` …). Perfetto's chrome stdlib
reads the same events (``chrome/event_latency.sql``, ``chrome/scroll_jank_v4.sql``,
``chrome/chrome_frame_info``).

Fed from the Trace Event reader's async-span path (``trace_event/phases.py``), one call per
``b`` / ``e``, and from a Perfetto protobuf trace's TrackEvent slices
(``perfetto_chrome_latency.py``); paired by the metric (``nodes/perf/metrics/scroll.py``).
"""

from __future__ import annotations

import functools
import re

from nodes.perf.model import PerfData

SPAN_NAMES = frozenset({"EventLatency", "ScrollJankV4", "PipelineReporter"})
#: EventLatency's stages are its child spans (same async id, inside it). Chrome names most
#: "<from>To<to>" (GenerationToBrowserMain, SubmitCompositorFrameToPresentationCompositorFrame …),
#: a few not (these); Perfetto's ``chrome/event_latency_description.sql`` lists the ones it knows.
STAGE_WORDS = frozenset({"RendererCompositorQueueingDelay", "RendererCompositorProcessing",
                         "RendererMainProcessing", "Commit", "Activation"})
_STAGE = re.compile(r"[A-Z][A-Za-z]*To[A-Z][A-Za-z]*\Z")
#: At most this many span ends are kept (a minute of scrolling at 120 Hz is a few 10 000)…
MAX_SCROLL_EVENTS = 400_000
#: …of them at most this many stages, so that stages never crowd out the verdicts.
MAX_STAGE_EVENTS = 300_000


@functools.lru_cache(maxsize=4096)
def is_stage(name: str) -> bool:
    """A span name that is an EventLatency stage (PipelineReporter's stages are named alike: the
    metric keeps only the spans inside an EventLatency of their async id)."""
    return name in STAGE_WORDS or _STAGE.match(name) is not None


def record(pd: PerfData, name: str, begin: bool, key: object, ts: float, pid: int, args: object) -> None:
    """One ``b`` (with its args) or ``e`` of a span in :data:`SPAN_NAMES` or a stage (stages stop
    at :data:`MAX_STAGE_EVENTS`, so they never crowd out the verdicts)."""
    pd.add_scroll_span(ts, begin, name, key, pid, args if begin and isinstance(args, dict) else None,
                       limit=MAX_SCROLL_EVENTS if name in SPAN_NAMES else MAX_STAGE_EVENTS)
