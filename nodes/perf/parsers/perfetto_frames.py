"""SurfaceFlinger's frame timeline (``TracePacket`` field 76) → frames with budget and jank.

The ``perfetto`` 0.59.1 wheel's ``perfetto_trace_pb2`` no longer declares
``TracePacket.frame_timeline_event`` (upstream turned it into an extension), so protobuf
keeps it as an unknown field. Rather than hand-decode its varints, the message is declared
here from Perfetto's published ``protos/perfetto/trace/android/frame_timeline_event.proto``
(same field numbers) and parsed with protobuf like any other message.

Pairing: each frame is a ``*_start`` message and a ``frame_end`` with the same cookie. The
app's work is an *actual surface frame*; its budget is the *expected surface frame* with the
same token (its end minus the actual end is the overrun, as stdlib
android/frames/per_frame_metrics.sql computes it). Display frames (SurfaceFlinger's own) are
counted, not reported as app frames, unless a trace has no surface frames at all; each surface
frame carries the jank type of the display frame it was composited into.

Jank types keep trace_processor's names and order, and a frame is janky when it carries a
*user-visible* type (:data:`USER_VISIBLE_JANK`; docs/analyzer.md says why these).
"""

from __future__ import annotations

from functools import cache

from nodes.perf.model import Frame, PerfData

FRAME_TIMELINE_FIELD = 76

#: ``FrameTimelineEvent.JankType`` bits with the names trace_processor gives them, in the order
#: it joins them ("App Deadline Missed, Buffer Stuffing"): perfetto
#: src/trace_processor/importers/proto/frame_timeline_event_parser.cc, JankTypeBitmaskToStringId.
JANK_NONE = 1
JANK_SF_SCHEDULING = 2
JANK_PREDICTION_ERROR = 4
JANK_DISPLAY_HAL = 8
JANK_SF_CPU_DEADLINE_MISSED = 16
JANK_SF_GPU_DEADLINE_MISSED = 32
JANK_APP_DEADLINE_MISSED = 64
JANK_BUFFER_STUFFING = 128
JANK_UNKNOWN = 256
JANK_SF_STUFFING = 512
JANK_DROPPED = 1024
JANK_NON_ANIMATING = 2048
JANK_APP_RESYNCED_JITTER = 4096
JANK_DISPLAY_NOT_ON = 8192
JANK_LABELS: tuple[tuple[int, str], ...] = (
    (JANK_SF_SCHEDULING, "SurfaceFlinger Scheduling"),
    (JANK_PREDICTION_ERROR, "Prediction Error"),
    (JANK_DISPLAY_HAL, "Display HAL"),
    (JANK_SF_CPU_DEADLINE_MISSED, "SurfaceFlinger CPU Deadline Missed"),
    (JANK_SF_GPU_DEADLINE_MISSED, "SurfaceFlinger GPU Deadline Missed"),
    (JANK_APP_DEADLINE_MISSED, "App Deadline Missed"),
    (JANK_APP_RESYNCED_JITTER, "App Resynced Jitter"),
    (JANK_BUFFER_STUFFING, "Buffer Stuffing"),
    (JANK_UNKNOWN, "Unknown Jank"),
    (JANK_SF_STUFFING, "SurfaceFlinger Stuffing"),
    (JANK_DROPPED, "Dropped Frame"),
    (JANK_NON_ANIMATING, "Non Animating"),
    (JANK_DISPLAY_NOT_ON, "Display not ON"),
)

#: The jank types a user sees, i.e. what makes a surface frame janky here:
#: trace_processor's "Self Jank" (App Deadline Missed, Unknown Jank; App Resynced Jitter is
#: app jank in stdlib android/frames/jank_type.sql) and "Other Jank" (SurfaceFlinger CPU/GPU
#: Deadline Missed, SurfaceFlinger Scheduling, Display HAL) — except Prediction Error, which
#: perfetto docs/data-sources/frametimeline.md says is "not usually perceived by the user".
#: Buffer Stuffing and SurfaceFlinger Stuffing are states (extra latency, smooth frames),
#: Dropped Frame is "not related to jank" (same doc). docs/analyzer.md compares the peers.
USER_VISIBLE_JANK = (
    JANK_APP_DEADLINE_MISSED | JANK_APP_RESYNCED_JITTER | JANK_UNKNOWN
    | JANK_SF_CPU_DEADLINE_MISSED | JANK_SF_GPU_DEADLINE_MISSED | JANK_SF_SCHEDULING | JANK_DISPLAY_HAL
)
#: Of those, the ones SurfaceFlinger (not the app) is blamed for.
SF_JANK = JANK_SF_CPU_DEADLINE_MISSED | JANK_SF_GPU_DEADLINE_MISSED | JANK_SF_SCHEDULING | JANK_DISPLAY_HAL
APP_JANK = JANK_APP_DEADLINE_MISSED | JANK_APP_RESYNCED_JITTER | JANK_UNKNOWN

PRESENT_TYPES = ("Unspecified Present", "On-time Present", "Late Present", "Early Present",
                 "Dropped Frame", "Unknown Present")
PREDICTION_TYPES = ("Unspecified Prediction", "Valid Prediction", "Expired Prediction", "Unknown Prediction")

_I64, _I32, _STR, _BOOL, _ENUM = 3, 5, 9, 8, 14  # FieldDescriptorProto.Type values

_MESSAGES = {
    "ExpectedDisplayFrameStart": [("cookie", 1, _I64), ("token", 2, _I64), ("pid", 3, _I32)],
    "ActualDisplayFrameStart": [
        ("cookie", 1, _I64), ("token", 2, _I64), ("pid", 3, _I32), ("present_type", 4, _I32),
        ("on_time_finish", 5, _BOOL), ("gpu_composition", 6, _BOOL), ("jank_type", 7, _I32),
        ("prediction_type", 8, _I32),
    ],
    "ExpectedSurfaceFrameStart": [
        ("cookie", 1, _I64), ("token", 2, _I64), ("display_frame_token", 3, _I64),
        ("pid", 4, _I32), ("layer_name", 5, _STR),
    ],
    "ActualSurfaceFrameStart": [
        ("cookie", 1, _I64), ("token", 2, _I64), ("display_frame_token", 3, _I64),
        ("pid", 4, _I32), ("layer_name", 5, _STR), ("present_type", 6, _I32),
        ("on_time_finish", 7, _BOOL), ("gpu_composition", 8, _BOOL), ("jank_type", 9, _I32),
        ("prediction_type", 10, _I32), ("is_buffer", 11, _BOOL),
    ],
    "FrameEnd": [("cookie", 1, _I64)],
}
_ONEOF = [
    ("expected_display_frame_start", 1, "ExpectedDisplayFrameStart"),
    ("actual_display_frame_start", 2, "ActualDisplayFrameStart"),
    ("expected_surface_frame_start", 3, "ExpectedSurfaceFrameStart"),
    ("actual_surface_frame_start", 4, "ActualSurfaceFrameStart"),
    ("frame_end", 5, "FrameEnd"),
]


@cache
def _message_class():
    """FrameTimelineEvent as a real protobuf class, in a private pool (no name clashes).

    Built on first use, with protobuf imported then: the jank vocabulary above is read by the
    frame metrics of every trace, and a Chrome trace should not pay ~20 ms for protobuf.
    """
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    fd = descriptor_pb2.FileDescriptorProto(
        name="perfscout/frame_timeline_event.proto", package="perfscout.ft", syntax="proto2"
    )
    top = fd.message_type.add(name="FrameTimelineEvent")
    for name, fields in _MESSAGES.items():
        m = top.nested_type.add(name=name)
        for fname, num, ftype in fields:
            m.field.add(name=fname, number=num, type=ftype, label=1)  # LABEL_OPTIONAL
    top.oneof_decl.add(name="event")
    for fname, num, mname in _ONEOF:
        top.field.add(
            name=fname, number=num, type=11, label=1, oneof_index=0,
            type_name=f".perfscout.ft.FrameTimelineEvent.{mname}",
        )
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fd)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("perfscout.ft.FrameTimelineEvent"))


def __getattr__(name: str):
    """``FrameTimelineEvent`` (the protobuf class) on first access (PEP 562)."""
    if name == "FrameTimelineEvent":
        return _message_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def jank_label(bits: int) -> str:
    """The jank type as trace_processor writes it: "Unspecified", "None", or the reasons joined."""
    if bits == 0:
        return "Unspecified"
    if bits == JANK_NONE:
        return "None"
    parts = [label for bit, label in JANK_LABELS if bits & bit]
    rest = bits & ~sum(bit for bit, _ in JANK_LABELS) & ~JANK_NONE
    if rest:
        parts.append(f"0x{rest:x}")
    return ", ".join(parts)


def jank_components(jank_type: str | None) -> list[str]:
    """The components of a combined jank type string, each on its own."""
    if not jank_type:
        return []
    return [p.strip() for p in jank_type.split(",") if p.strip()]


def is_user_visible(bits: int) -> bool:
    return bool(bits & USER_VISIBLE_JANK)


def _label(table: tuple[str, ...], value: int) -> str:
    return table[value] if 0 <= value < len(table) else table[0]


class FrameTimelineState:
    """Pairs start and end events by cookie; the frames are written by :meth:`finish`."""

    def __init__(self) -> None:
        self._open: dict[int, tuple[str, int, object]] = {}  # cookie → (kind, ts, start msg)
        #: (pid, token) → (ts_ns, dur_ns) of the first expected surface frame, as
        #: trace_processor keeps only the first expected slice of a token per process.
        self._expected_surface: dict[tuple[int, int], tuple[int, int]] = {}
        self.surface: list[tuple[int, int | None, object]] = []  # (ts, dur or None, actual start)
        self.display: list[tuple[int, int | None, object]] = []
        self._event = _message_class()
        self.events = 0
        self.decode_errors = 0
        self.unmatched = 0

    def packet(self, payload: bytes, ts: int) -> None:
        self.events += 1
        ev = self._event()
        try:
            ev.ParseFromString(payload)
        except Exception:  # protobuf's DecodeError and friends: a damaged event, not a crash
            self.decode_errors += 1
            return
        kind = ev.WhichOneof("event")
        if kind is None:
            return
        msg = getattr(ev, kind)
        if kind == "frame_end":
            start = self._open.pop(msg.cookie, None)
            if start is None:
                self.unmatched += 1
                return
            skind, t0, smsg = start
            dur = ts - t0
            if skind == "expected_surface_frame_start":
                self._expected_surface.setdefault((smsg.pid, smsg.token), (t0, dur))
            elif skind == "actual_surface_frame_start":
                self.surface.append((t0, dur, smsg))
            elif skind == "actual_display_frame_start":
                self.display.append((t0, dur, smsg))
            return
        if len(self._open) < 100_000:
            self._open[msg.cookie] = (kind, ts, msg)

    def finish(self, data: PerfData) -> None:
        """Surface frames (the apps' work) become ``Frame`` rows with their expected slice,
        verdicts and the jank type of the display frame they were composited into; a trace
        with only display frames gives SurfaceFlinger's frames instead.

        An actual frame whose ``FrameEnd`` never came is kept with an open end (``dur_us``
        None), as trace_processor's frame_timeline_event_parser begins its slice at the start
        event and leaves ``dur`` at -1 until an end that never arrives: it still counts.
        """
        for kind, t0, smsg in self._open.values():
            if kind == "actual_surface_frame_start":
                self.surface.append((t0, None, smsg))
            elif kind == "actual_display_frame_start":
                self.display.append((t0, None, smsg))
        display_jank = {m.token: m.jank_type for _, _, m in self.display}
        source = self.surface or self.display
        for t0, dur, m in sorted(source, key=lambda x: x[0]):
            bits = m.jank_type
            budget = expected_ts = None
            layer = display_token = djank = None
            if source is self.surface:
                exp = self._expected_surface.get((m.pid, m.token))
                if exp is not None:
                    expected_ts = exp[0] / 1000.0
                    budget = exp[1] / 1000.0 if exp[1] > 0 else None
                layer = m.layer_name or None
                display_token = m.display_frame_token
                d = display_jank.get(display_token)
                djank = jank_label(d) if d is not None else None
            data.add_frame(
                Frame(
                    ts_us=t0 / 1000.0,
                    dur_us=dur / 1000.0 if dur is not None else None,
                    budget_us=budget,
                    # Unspecified says nothing either way; otherwise user-visible types only.
                    janky=None if bits == 0 else is_user_visible(bits),
                    jank_type=jank_label(bits),
                    pid=m.pid or None,
                    # An app's frame is driven by its UI thread, which on Android is pid == tid.
                    tid=(m.pid or None) if source is self.surface else None,
                    layer=layer,
                    expected_ts_us=expected_ts,
                    token=m.token,
                    display_token=display_token,
                    present_type=_label(PRESENT_TYPES, m.present_type) if m.HasField("present_type") else None,
                    on_time_finish=m.on_time_finish if m.HasField("on_time_finish") else None,
                    prediction=_label(PREDICTION_TYPES, m.prediction_type) if m.HasField("prediction_type") else None,
                    display_jank_type=djank,
                )
            )
        self.unmatched += sum(1 for kind, _, _ in self._open.values() if not kind.startswith("actual_"))
        data.frame_summary.set("frame_timeline_surface_frames", float(len(self.surface)))
        data.frame_summary.set("frame_timeline_display_frames", float(len(self.display)))
        if self.display:
            janky = sum(1 for _, _, m in self.display if m.jank_type & SF_JANK)
            data.frame_summary.set("frame_timeline_janky_display_frames", float(janky))
