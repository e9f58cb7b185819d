"""Chrome's scroll spans in a Perfetto protobuf trace: ``EventLatency`` with its stages,
``ScrollJankV4`` and ``PipelineReporter`` — the same spans, with the same arguments, that the
JSON reader hands the scroll lens (``nodes/perf/parsers/chrome_scroll.py``).

In a protobuf trace Chrome writes these arguments as typed ``ChromeTrackEvent`` extensions of
``TrackEvent`` (``protos/third_party/chromium/chrome_track_event.proto`` in Perfetto's
repository): ``event_latency`` = 1032, ``frame_reporter`` = 1075 (``ChromeFrameReporter2``),
``scroll_jank_v4`` = 1078. The ``perfetto`` package's ``TracePacket`` does not carry Chrome's
extensions, so protobuf keeps them as unknown fields; they are read here with protobuf's own
``UnknownFieldSet`` (nested messages parsed as an ``Empty`` to reach their fields) and shaped
like Chrome's JSON arguments — enum numbers become the names Chrome's JSON writer prints — so
one metric (``nodes/perf/metrics/scroll.py``) reads both formats.

Only the fields the scroll lens reads are decoded; a span's other arguments are left alone.
"""

from __future__ import annotations

from google.protobuf import empty_pb2
from google.protobuf.message import DecodeError
from google.protobuf.unknown_fields import UnknownFieldSet
from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import ChromeFrameReporter

from nodes.perf.model import PerfData
from nodes.perf.parsers import chrome_scroll

#: ChromeTrackEvent extension field numbers (chrome_track_event.proto).
EVENT_LATENCY, FRAME_REPORTER, SCROLL_JANK_V4 = 1032, 1075, 1078

#: EventLatency.EventType (chrome_track_event.proto), number → the name in Chrome's JSON.
EVENT_TYPES = dict(enumerate((
    "EVENT_TYPE_UNSPECIFIED", "MOUSE_PRESSED", "MOUSE_RELEASED", "MOUSE_WHEEL", "KEY_PRESSED", "KEY_RELEASED",
    "TOUCH_PRESSED", "TOUCH_RELEASED", "TOUCH_MOVED", "GESTURE_SCROLL_BEGIN", "GESTURE_SCROLL_UPDATE",
    "GESTURE_SCROLL_END", "GESTURE_DOUBLE_TAP", "GESTURE_LONG_PRESS", "GESTURE_LONG_TAP", "GESTURE_SHOW_PRESS",
    "GESTURE_TAP", "GESTURE_TAP_CANCEL", "GESTURE_TAP_DOWN", "GESTURE_TAP_UNCONFIRMED", "GESTURE_TWO_FINGER_TAP",
    "FIRST_GESTURE_SCROLL_UPDATE", "MOUSE_DRAGGED", "GESTURE_PINCH_BEGIN", "GESTURE_PINCH_END",
    "GESTURE_PINCH_UPDATE", "INERTIAL_GESTURE_SCROLL_UPDATE", "MOUSE_MOVED_EVENT", "INERTIAL_GESTURE_SCROLL_END")))
#: EventLatency.ScrollJankV4Result.JankReason.
JANK_REASONS = dict(enumerate((
    "JANK_REASON_UNSPECIFIED", "MISSED_VSYNC_DUE_TO_DECELERATING_INPUT_FRAME_DELIVERY",
    "MISSED_VSYNC_DURING_FAST_SCROLL", "MISSED_VSYNC_AT_START_OF_FLING", "MISSED_VSYNC_DURING_FLING")))
#: ChromeFrameReporter2.State has the numbers and names of the package's ChromeFrameReporter.State.
FRAME_STATES = {v.number: v.name for v in ChromeFrameReporter.State.DESCRIPTOR.values}

class _Wanted(dict):
    """name → whether the scroll lens reads that span: EventLatency, ScrollJankV4,
    PipelineReporter or a stage. A dict so that the TrackEvent reader's test per async slice is
    one C-level lookup; at most :data:`MAX_NAMES` names are remembered."""

    MAX_NAMES = 50_000

    def __missing__(self, name: str) -> bool:
        w = name in chrome_scroll.SPAN_NAMES or chrome_scroll.is_stage(name)
        if len(self) < self.MAX_NAMES:
            self[name] = w
        return w


wanted = _Wanted().__getitem__


def _fields(data: bytes) -> list[tuple[int, int, object]]:
    """(field number, wire type, value) of a nested message's fields; [] when it is no message."""
    try:
        return [(f.field_number, f.wire_type, f.data) for f in UnknownFieldSet(empty_pb2.Empty.FromString(data))]
    except DecodeError:
        return []


def _enum(table: dict[int, str], v: object) -> str:
    return table.get(v, str(v)) if isinstance(v, int) else str(v)


def _event_latency(data: bytes) -> dict:
    out: dict = {}
    for num, wt, v in _fields(data):
        if wt != 0:
            continue
        if num == 1:
            out["event_type"] = _enum(EVENT_TYPES, v)
        elif num == 5:
            out["is_janky_scrolled_frame"] = bool(v)
        elif num == 2:
            out["has_high_latency"] = bool(v)
    return out


def _scroll_jank_v4(data: bytes) -> dict:
    out: dict = {}
    reasons = []
    for num, wt, v in _fields(data):
        if num == 1 and wt == 0:
            out["is_janky"] = bool(v)
        elif num == 2 and wt == 2:
            r = {}
            for n2, w2, v2 in _fields(v):
                if n2 == 1 and w2 == 0:
                    r["jank_reason"] = _enum(JANK_REASONS, v2)
                elif n2 == 2 and w2 == 0:
                    r["missed_vsyncs"] = v2
            reasons.append(r)
    if reasons:
        out["missed_vsyncs_per_jank_reason"] = reasons
    return out


def _frame_reporter(data: bytes) -> dict:
    out: dict = {}
    for num, wt, v in _fields(data):
        if num == 1 and wt == 0:
            out["state"] = _enum(FRAME_STATES, v)
    return out


def args(te) -> dict:
    """The JSON-shaped arguments of a ``TrackEvent``: ``event_latency``, ``scroll_jank_v4`` and
    ``frame_reporter`` where Chrome wrote them."""
    out: dict = {}
    try:
        unknown = UnknownFieldSet(te)
    except (DecodeError, TypeError):
        return out
    for f in unknown:
        if f.wire_type != 2:
            continue
        if f.field_number == EVENT_LATENCY:
            out["event_latency"] = _event_latency(f.data)
        elif f.field_number == SCROLL_JANK_V4:
            out["scroll_jank_v4"] = _scroll_jank_v4(f.data)
        elif f.field_number == FRAME_REPORTER:
            out["frame_reporter"] = _frame_reporter(f.data)
    if "frame_reporter" not in out and te.HasField("chrome_frame_reporter"):  # older Chrome: TrackEvent field 32
        out["frame_reporter"] = {"state": _enum(FRAME_STATES, te.chrome_frame_reporter.state)}
    return out


def begin(data: PerfData, name: str, te, key: object, ts_ns: int, pid: int) -> None:
    """A slice begin of a :func:`wanted` span, with its arguments (only spans of the scroll lens
    carry them; stages need none)."""
    chrome_scroll.record(data, name, True, ("perfetto", key), ts_ns / 1000.0, pid,
                         args(te) if name in chrome_scroll.SPAN_NAMES else {})


def end(data: PerfData, name: str, key: object, ts_ns: int, pid: int) -> None:
    chrome_scroll.record(data, name, False, ("perfetto", key), ts_ns / 1000.0, pid, None)
