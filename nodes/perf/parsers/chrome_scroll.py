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

from nodes.perf.model import PerfData

SPAN_NAMES = frozenset({"EventLatency", "ScrollJankV4", "PipelineReporter"})
#: At most this many span ends are kept (a minute of scrolling at 120 Hz is a few 10 000).
MAX_SCROLL_EVENTS = 400_000


def record(pd: PerfData, name: str, begin: bool, key: object, ts: float, pid: int, args: object) -> None:
    """One ``b`` (with its args) or ``e`` of a span in :data:`SPAN_NAMES`."""
    pd.add_scroll_span(ts, begin, name, key, pid, args if begin and isinstance(args, dict) else None,
                       limit=MAX_SCROLL_EVENTS)
