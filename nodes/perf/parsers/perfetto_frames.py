"""SurfaceFlinger's frame timeline (``TracePacket`` field 76) → frames with budget and jank.

The ``perfetto`` 0.59.1 wheel's ``perfetto_trace_pb2`` no longer declares
``TracePacket.frame_timeline_event`` (upstream turned it into an extension), so protobuf
keeps it as an unknown field. Rather than hand-decode its varints, the message is declared
here from Perfetto's published ``protos/perfetto/trace/android/frame_timeline_event.proto``
(same field numbers) and parsed with protobuf like any other message.

Pairing: each frame is a ``*_start`` message and a ``frame_end`` with the same cookie. The
app's work is an *actual surface frame*; its budget is the *expected surface frame* with the
same token. Display frames (SurfaceFlinger's own) are counted, not reported as app frames,
unless a trace has no surface frames at all.
"""

from __future__ import annotations

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.unknown_fields import UnknownFieldSet

from nodes.perf.model import Frame, PerfData

FRAME_TIMELINE_FIELD = 76

JANK_BITS = {
    1: "None",
    2: "SurfaceFlinger Scheduling",
    4: "Prediction Error",
    8: "Display HAL",
    16: "SurfaceFlinger CPU Deadline Missed",
    32: "SurfaceFlinger GPU Deadline Missed",
    64: "App Deadline Missed",
    128: "Buffer Stuffing",
    256: "Unknown Jank",
    512: "SurfaceFlinger Stuffing",
    1024: "Dropped Frame",
}
#: Buffer stuffing is a *consequence* of an earlier late frame, not jank of this frame
#: (Perfetto's own jank metrics leave it out); "None" and unspecified are on time.
_NOT_JANK = {0, 1, 128}

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


def _build_message_class():
    """FrameTimelineEvent as a real protobuf class, in a private pool (no name clashes)."""
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


FrameTimelineEvent = _build_message_class()


def jank_label(bits: int) -> str:
    if bits == 0:
        return "Unspecified"
    return ", ".join(label for bit, label in JANK_BITS.items() if bits & bit) or f"0x{bits:x}"


def timeline_payloads(packet) -> list[bytes]:
    """The raw field-76 payloads of a packet (usually one), read from its unknown fields."""
    out = []
    for f in UnknownFieldSet(packet):
        if f.field_number == FRAME_TIMELINE_FIELD and f.wire_type == 2:
            out.append(bytes(f.data))
    return out


class FrameTimelineState:
    def __init__(self) -> None:
        self._open: dict[int, tuple[str, int, object]] = {}  # cookie → (kind, ts, start msg)
        self._expected_surface: dict[tuple[int, int], int] = {}  # (pid, token) → dur_ns
        self.surface: list[tuple[int, int, object]] = []  # (ts, dur, actual start)
        self.display: list[tuple[int, int, object]] = []
        self.events = 0
        self.decode_errors = 0
        self.unmatched = 0

    def packet(self, payload: bytes, ts: int) -> None:
        self.events += 1
        ev = FrameTimelineEvent()
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
                self._expected_surface[(smsg.pid, smsg.token)] = dur
            elif skind == "actual_surface_frame_start":
                self.surface.append((t0, dur, smsg))
            elif skind == "actual_display_frame_start":
                self.display.append((t0, dur, smsg))
            return
        if len(self._open) < 100_000:
            self._open[msg.cookie] = (kind, ts, msg)

    def finish(self, data: PerfData) -> None:
        source = self.surface or self.display
        for t0, dur, m in sorted(source, key=lambda x: x[0]):
            bits = m.jank_type
            budget = None
            layer = None
            if source is self.surface:
                exp = self._expected_surface.get((m.pid, m.token))
                budget = exp / 1000.0 if exp else None
                layer = m.layer_name or None
            data.add_frame(
                Frame(
                    ts_us=t0 / 1000.0,
                    dur_us=dur / 1000.0,
                    budget_us=budget,
                    janky=None if bits == 0 else bits not in _NOT_JANK,
                    jank_type=jank_label(bits),
                    pid=m.pid or None,
                    # An app's frame is driven by its UI thread, which on Android is pid == tid.
                    tid=(m.pid or None) if source is self.surface else None,
                    layer=layer,
                )
            )
        self.unmatched += len(self._open)
        data.frame_summary["frame_timeline_surface_frames"] = float(len(self.surface))
        data.frame_summary["frame_timeline_display_frames"] = float(len(self.display))
        if self.display:
            janky = sum(1 for _, _, m in self.display if m.jank_type not in _NOT_JANK)
            data.frame_summary["frame_timeline_janky_display_frames"] = float(janky)
