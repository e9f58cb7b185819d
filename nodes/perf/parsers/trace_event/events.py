"""The decoded event and the value helpers shared by the framing and the phase handlers.

An event is decoded by msgspec into :class:`Ev`, holding only the fields the metrics use;
``args`` stays raw bytes, decoded only for the few events that need it (metadata, counters,
profiles, the page marks in :data:`MARK_NAMES`)."""

from __future__ import annotations

import json
import math
import re
from typing import Any

import msgspec

#: A single event (or the JSON before the event array) may not exceed this.
MAX_EVENT_BYTES = 256 << 20
#: At most this many async begin/end events are kept for matching.
MAX_ASYNC_EVENTS = 2_000_000
#: Top-level keys around the event array are decoded only up to this size.
MAX_SIDE_BYTES = 64 << 20

#: Instant events kept whatever the instant cap: frame and page-load markers the metrics use.
KEEP_INSTANTS = frozenset(
    {
        "DrawFrame",
        "BeginFrame",
        "BeginMainThreadFrame",
        "navigationStart",
        "fetchStart",
        "responseEnd",
        "domInteractive",
        "domContentLoadedEventEnd",
        "loadEventStart",
        "loadEventEnd",
        "firstPaint",
        "firstContentfulPaint",
        "firstMeaningfulPaint",
        "largestContentfulPaint::Candidate",
        "MarkDOMContent",
        "MarkLoad",
        "MarkFirstPaint",
        "TracingStartedInBrowser",
        "TracingStartedInPage",
    }
)


#: Instants kept *with their decoded args* (PerfData.marks) for the web vitals
#: (nodes/perf/metrics/web.py): the events Lighthouse's TraceProcessor reads
#: (lighthouse core/lib/tracehouse/trace-processor.js) to find the main frame, the navigation,
#: the paints, the layout shifts and the network requests.
MARK_NAMES = frozenset(
    {
        "TracingStartedInBrowser",
        "TracingStartedInPage",
        "FrameCommittedInBrowser",
        "ProcessReadyInBrowser",
        "navigationStart",
        "firstPaint",
        "firstContentfulPaint",
        "largestContentfulPaint::Candidate",
        "largestContentfulPaint::Invalidate",
        "domContentLoadedEventEnd",
        "loadEventEnd",
        "LayoutShift",
        "viewport",
        "ResourceSendRequest",
        "ResourceReceiveResponse",
        "ResourceFinish",
        "clock_sync",
    }
)
#: At most this many marks are kept (a page load has a few hundred).
MAX_MARKS = 200_000


class Ev(msgspec.Struct, gc=False):
    ph: str = ""
    name: Any = None
    pid: int | float | str | None = None
    tid: int | float | str | None = None
    ts: float | str | None = None
    dur: float | str | None = None
    #: Thread (CPU) time of an X event, µs (Chrome's ``tdur``; ``tts`` is its thread clock start).
    tdur: Any = None
    id: Any = None
    id2: Any = None
    args: msgspec.Raw = msgspec.Raw()


DEC_LIST = msgspec.json.Decoder(list[Ev])
DEC_ONE = msgspec.json.Decoder(Ev)

WS = b" \t\r\n"
INSTANT_PH = frozenset({"i", "I", "R", "n"})
ASYNC_PH = frozenset({"b", "e", "S", "F"})
_BOUNDARY = re.compile(rb"\}\s*,\s*\{")
_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.S)
_TRAILING = re.compile(r"trailing characters \(byte (\d+)\)")
_LOCATION_IN_NAME = re.compile(r"^(.*\S) \((.+?):(\d+)\)$")


def num(v: Any) -> float | None:
    if v.__class__ is float:
        return v if math.isfinite(v) else None
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, int):
        return float(v)
    if isinstance(v, str):
        try:
            f = float(v)
        except ValueError:
            return None
        return f if math.isfinite(f) else None
    return None


def name_of(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, str):
        return clean_str(v)
    if isinstance(v, (int, float, bool)):
        return str(v)
    return clean_str(json.dumps(v, default=str)[:200])


def clean_str(s: str) -> str:
    """Strings that can be written back as UTF-8 (lone surrogates replaced)."""
    try:
        s.encode("utf-8")
        return s
    except UnicodeEncodeError:
        return s.encode("utf-8", "replace").decode("utf-8")


def clean(v: Any) -> Any:
    if isinstance(v, str):
        return clean_str(v)
    if isinstance(v, dict):
        return {clean_str(str(k)): clean(x) for k, x in v.items()}
    if isinstance(v, list):
        return [clean(x) for x in v]
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v
