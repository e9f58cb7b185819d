"""An ftrace bundle the reader does not have upb parse: checked on the wire in C, read lazily.

The bundles are most of a trace's bytes, and upb's full parse of each one (~0.2–0.4 s of CPU
at 100 MB) was paid only for its verdict — the batch reader (perfetto_ftrace_batch.py) walks the
same bytes again in C. That verdict matters: a packet whose bundle does not decode is dropped
whole. So the C check (nodes/perf/parsers/_bundlec.c) walks the bundle with a schema table built
here from the Perfetto descriptors and accepts only what upb accepts; whatever it is unsure of
(:func:`split` returns None) the reader parses with upb as before. upb still parses the packet's
other fields (a few bytes), from the packet without its bundle.

A :class:`BundleView` gives the batch reader what it reads of the bundle object — ``cpu``,
``ftrace_clock``, the event count, the compact-sched intern table — and upb's parse of the whole
bundle (:func:`full`) for the event-by-event path. Without the extension, or with
``PERFSCOUT_PURE_PYTHON_WIRE=1``, :func:`split` is None and every packet is parsed whole.
"""

from __future__ import annotations

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.descriptor import FieldDescriptor as _FD
from google.protobuf.message import DecodeError
from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import FtraceEventBundle, TracePacket

from nodes.perf.parsers import perfetto_wire as wire

# Kinds of the schema table (_bundlec.c's K_*): what a length-delimited payload must be.
OTHER, MESSAGE, PACKED_VARINT, PACKED_FIXED32, PACKED_FIXED64 = range(5)
_VARINT_TYPES = {_FD.TYPE_INT32, _FD.TYPE_INT64, _FD.TYPE_UINT32, _FD.TYPE_UINT64, _FD.TYPE_SINT32,
                 _FD.TYPE_SINT64, _FD.TYPE_BOOL, _FD.TYPE_ENUM}
_FIXED32_TYPES = {_FD.TYPE_FIXED32, _FD.TYPE_SFIXED32, _FD.TYPE_FLOAT}
_FIXED64_TYPES = {_FD.TYPE_FIXED64, _FD.TYPE_SFIXED64, _FD.TYPE_DOUBLE}

_BUNDLE = FtraceEventBundle.DESCRIPTOR
_COMPACT = _BUNDLE.fields_by_name["compact_sched"].message_type


def schema_table(root=_BUNDLE) -> tuple[tuple[tuple[int, int, int], ...], ...]:
    """Per message under ``root`` (``root`` first), its fields as (number, kind, child message
    index): submessages to walk into, repeated scalars whose packed form must split, the rest."""
    order = [root]
    index = {root.full_name: 0}
    tables = []
    k = 0
    while k < len(order):
        rows = []
        for f in order[k].fields:
            if f.type in (_FD.TYPE_MESSAGE, _FD.TYPE_GROUP):
                child = f.message_type
                if child.full_name not in index:
                    index[child.full_name] = len(order)
                    order.append(child)
                rows.append((f.number, MESSAGE, index[child.full_name]))
            elif f.is_repeated and f.type in _VARINT_TYPES:
                rows.append((f.number, PACKED_VARINT, 0))
            elif f.is_repeated and f.type in _FIXED32_TYPES:
                rows.append((f.number, PACKED_FIXED32, 0))
            elif f.is_repeated and f.type in _FIXED64_TYPES:
                rows.append((f.number, PACKED_FIXED64, 0))
            else:
                rows.append((f.number, OTHER, 0))
        tables.append(tuple(rows))
        k += 1
    return tuple(tables)


def _interned_class():
    """CompactSched seen as its intern table alone (the other columns stay unparsed bytes)."""
    field = _COMPACT.fields_by_name["intern_table"]
    fdp = descriptor_pb2.FileDescriptorProto(name="perfscout_interned.proto", package="perfscout_interned",
                                             syntax="proto2")
    m = fdp.message_type.add(name="Interned")
    m.field.add(name=field.name, number=field.number, type=field.type, label=_FD.LABEL_REPEATED)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("perfscout_interned.Interned"))


_Interned = _interned_class()


#: A packet of its bundle and these alone (as varints, what every ftrace packet of the test
#: captures holds) is plain: the reader takes its sequence id from the check and upb parses nothing.
PLAIN_FIELDS = ("trusted_uid", "trusted_packet_sequence_id", "trusted_pid")


def _native():
    """_bundlec's split with the schema loaded, or None: not built, or the pure switch is on."""
    _bundlec = wire.compiled("_bundlec")
    if _bundlec is None:
        return None
    f = _BUNDLE.fields_by_name
    clocks = tuple(v.number for v in f["ftrace_clock"].enum_type.values)
    packet = TracePacket.DESCRIPTOR.fields_by_name
    _bundlec.set_schema(schema_table(), packet["ftrace_events"].number,
                        f["cpu"].number, f["event"].number, f["compact_sched"].number, f["ftrace_clock"].number,
                        clocks, *(packet[name].number for name in PLAIN_FIELDS))
    return _bundlec.split


#: split(raw, rows=None) -> None (upb must parse the whole packet) or (rest, off, size, cpu,
#: ftrace_clock, events, cs_off, cs_len, seq, row); None itself when the extension is not used.
split = _native()


def new_rows():
    """A recorder for :func:`parse_packet` (``_bundlec.Rows``): the check writes down what the
    batch reader's walk reads of each bundle it accepts (perfetto_wire.recorded), so the bytes
    are walked once. None without the extension."""
    if split is None:
        return None
    return wire.compiled("_bundlec").Rows(tuple(wire.COMPACT.values()))


class BundleView:
    """The bundle of packet ``raw`` at ``raw[off:off + size]``, already checked by :func:`split`;
    ``seq`` the packet's sequence id when it is plain (:data:`PLAIN_FIELDS`), else -1; ``row``
    its packet number in the recorder given to :func:`parse_packet`, else -1."""

    __slots__ = ("raw", "off", "size", "cpu", "ftrace_clock", "events", "_cs_off", "_cs_len", "_cs", "seq", "row")

    def __init__(self, raw: bytes, off: int, size: int, cpu: int, ftrace_clock: int, events: int,
                 cs_off: int, cs_len: int, seq: int, row: int = -1):
        self.raw, self.off, self.size = raw, off, size
        self.cpu, self.ftrace_clock, self.events = cpu, ftrace_clock, events
        self._cs_off, self._cs_len, self._cs = cs_off, cs_len, None
        self.seq = seq
        self.row = row

    @property
    def compact_sched(self):
        """Only ``intern_table`` of the compact sched (what the batch reader takes from upb)."""
        if self._cs is None:
            if self._cs_off < 0:
                self._cs = _Interned()
            else:
                self._cs = _Interned.FromString(self.raw[self._cs_off:self._cs_off + self._cs_len])
        return self._cs

    def parse(self) -> FtraceEventBundle:
        return FtraceEventBundle.FromString(self.raw[self.off:self.off + self.size])


def parse_packet(raw: bytes, rows=None) -> tuple[TracePacket | None, BundleView | None]:
    """The packet as the reader takes it: (upb's parse without the bundle, its view) when the
    bundle passes the check — (None, its view) when the packet is plain, nothing upb need parse
    —, else (upb's parse of the whole packet, None). DecodeError exactly when upb refuses the
    whole packet: the bundle's bytes only pass what upb passes, and upb judges the rest (a plain
    rest is varints of known fields, which upb takes) — when it refuses the rest, or the rest
    holds another kind of packet data too, upb parses the whole packet and decides.
    ``rows`` (:func:`new_rows`): the view's bundle recorded there, its number ``view.row``."""
    if split is not None:
        cut = split(raw, rows)
        if cut is not None:
            view = BundleView(raw, *cut[1:])
            if view.seq >= 0:
                return None, view
            pkt = TracePacket()
            try:
                pkt.ParseFromString(cut[0])
            except DecodeError:
                pkt = None
            if pkt is not None and pkt.WhichOneof("data") is None:
                return pkt, view
            if view.row >= 0:
                rows.drop(view.row)  # not read from the view after all
    pkt = TracePacket()
    pkt.ParseFromString(raw)
    return pkt, None


def full(b) -> FtraceEventBundle:
    """The upb bundle: ``b`` itself, or a view's bundle parsed now."""
    return b.parse() if isinstance(b, BundleView) else b


def rows_bound(b) -> int:
    """At most how many rows ``b`` adds to what the reader holds (``_TraceReader.held``): two
    per event (a ``sched_switch`` leaves and enters; an atrace line, zero event or counter is one),
    two per compact switch and one per waking. A view counts its compact sched by bytes (every
    switch and waking has a time of at least one byte), upb's bundle by its columns."""
    if isinstance(b, BundleView):
        return 2 * (b.events + max(b._cs_len, 0))
    cs = b.compact_sched
    return 2 * (len(b.event) + len(cs.switch_timestamp)) + len(cs.waking_timestamp)


def event_count(b) -> int:
    """``len(b.event)`` without parsing a view's bundle."""
    return b.events if isinstance(b, BundleView) else len(b.event)
