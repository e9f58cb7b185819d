"""Perfetto protobuf traces (``.perfetto-trace``, ``.pftrace``, ``.pb``, gzipped too), read in
pure Python: no ``trace_processor_shell``, nothing downloaded.

The file is streamed one ``TracePacket`` at a time (``perfetto_stream``) and each packet is
parsed with the message classes the ``perfetto`` wheel ships; the per-topic modules turn
packets into the shared :class:`~nodes.perf.model.PerfData`:

* ``perfetto_ftrace`` — atrace ``print``/``zero`` slices and counters, ``sched_switch``,
  compact sched and wake-ups → per-thread slices and running/runnable/sleeping time;
  ``perfetto_binder`` — binder transactions → ``binder transaction`` / ``binder reply`` slices;
* ``perfetto_track_event`` — SDK ``track_event`` with interned names per sequence;
* ``perfetto_frames`` — SurfaceFlinger's frame timeline (an unknown field in this proto);
* ``perfetto_system`` — process/thread names, memory and CPU counters, device facts;
* ``perfetto_startup`` — the launched app's pids (its counters are kept; the startups are metrics');
* ``perfetto_power`` — ODPM power rails and battery counters;
* ``perfetto_cpu`` / ``perfetto_memory`` — per CPU frequency and idle; per process memory;
* ``perfetto_samples`` — ``perf_sample`` callstacks → sampled stacks (hot spots, flame graph);
* ``perfetto_clock`` — every timestamp onto the trace clock.

Not read (counted in ``meta`` so a report can say so): Chrome's callstack sampling
(``streaming_profile_packet``), heap profiles (``profile_packet``,
``heap_graph``), logcat, GPU details, binder buffers and locks.
"""

from __future__ import annotations

from collections import Counter

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import DecodeError
from google.protobuf.unknown_fields import UnknownFieldSet
from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import TracePacket

from nodes.perf.errors import PerfDataError
from nodes.perf.formats import is_gzip, max_decompressed, open_input
from nodes.perf.gc_pause import cyclic_gc_paused
from nodes.perf.model import CapacityReached, PerfData
from nodes.perf.parsers import perfetto_process_stats as process_stats
from nodes.perf.parsers.perfetto_bundle_view import BundleView, parse_packet
from nodes.perf.parsers.perfetto_bundle_view import full as full_bundle
from nodes.perf.parsers.perfetto_clock import BOOTTIME, ClockConverter
from nodes.perf.parsers.perfetto_frames import FRAME_TIMELINE_FIELD, FrameTimelineState
from nodes.perf.parsers.perfetto_memory import reads_counter
from nodes.perf.parsers.perfetto_ftrace import FtraceState, identity
from nodes.perf.parsers.perfetto_power import PowerState
from nodes.perf.parsers.perfetto_samples import SampleState
from nodes.perf.parsers.perfetto_startup import launched_pids
from nodes.perf.parsers.perfetto_stream import (
    DEFAULT_PACKET_LIMIT,
    GunzipStream,
    StreamCorrupt,
    StreamReport,
    iter_packets,
    iter_packets_from_bytes,
    read_varint,
)
from nodes.perf.parsers.perfetto_system import PROCESS_UNIT, SystemState
from nodes.perf.parsers.perfetto_track_event import TrackEventState

FORMAT = "perfetto"

_NAME_HINTS = (".perfetto-trace", ".pftrace", ".perfetto", ".pb", ".trace", ".pb.gz", ".pftrace.gz")
#: FtraceClock enum → builtin clock id (UNSPECIFIED means the kernel's boot clock).
_FTRACE_CLOCKS = {0: BOOTTIME, 4: 4}
#: Packet kinds this reader knows and deliberately does not analyse.
_NOT_READ = {
    "streaming_profile_packet": "CPU callstack samples",
    "profile_packet": "native heap profile",
    "heap_graph": "Java heap graph",
    "android_log": "logcat",
    "gpu_counter_event": "GPU counters",
    "gpu_render_stage_event": "GPU render stages",
}
#: How many processes' counters are written out when the trace names no launch.
_COUNTER_PROCESSES = 3


class _TraceReader:
    """Dispatches each packet to the module that understands it, then assembles PerfData."""

    def __init__(self, data: PerfData):
        self.data = data
        self.clock = ClockConverter()
        self.ftrace = FtraceState()
        self.track_events = TrackEventState()
        self.frames = FrameTimelineState()
        self.system = SystemState()
        self.power = PowerState()
        self.samples = SampleState()
        self.kinds: Counter[str] = Counter()
        self.unknown_fields: Counter[int] = Counter()
        self.bad_packets = 0
        #: Trace bounds as the trace processor reports them: every packet and sched event.
        self.first_ns: int | None = None
        self.last_ns: int | None = None

    def flush(self) -> None:
        """Read the ftrace bundles queued for the batch reader."""
        self.bad_packets += self.ftrace.flush()

    def held(self, room: int | None = None) -> int:
        """Events buffered before :meth:`finish` stores them (the event cap counts them too).
        With ``room`` (what the cap leaves), queued ftrace bundles that cannot fill it are not
        read yet and count at their bound (FtraceState.may_defer): the check passes exactly when
        it passes with them read, and only then, so the cap stops the read where it did; batches
        grow past the 1 MiB between checks."""
        ft = self.ftrace
        if room is None:
            self.flush()
        read = self._held_read()
        if room is not None:
            if ft.may_defer(room - read):
                return read + ft.batch_rows
            self.flush()
            read = self._held_read()
        return read

    def _held_read(self) -> int:
        """:meth:`held` without the queued ftrace bundles."""
        te = self.track_events
        return (
            self.ftrace.held_rows()
            + len(te.async_slices)
            + sum(len(v) for v in te.stacks.values())
            + sum(len(v) for v in te.counters.values())
        )

    def packet(self, raw: bytes) -> None:
        try:
            # An ftrace bundle that passes the wire check is not parsed by upb, only viewed
            # (perfetto_bundle_view.py); upb's verdict on the packet stands either way.
            pkt, bundle = parse_packet(raw, self.ftrace.rows)
        except DecodeError:
            self.bad_packets += 1
            return
        try:
            if pkt is None:
                self._plain_bundle(bundle)
            else:
                self._dispatch(pkt, raw, bundle)
        except (TypeError, ValueError, KeyError, IndexError, OverflowError):
            # Fields that decode but hold nonsense (bytes where text belongs, wild values):
            # the packet is dropped and counted rather than ending the whole read.
            self.bad_packets += 1
            if bundle is not None:
                self.ftrace.unqueued(bundle)

    def _dispatch(self, pkt, raw: bytes, view: BundleView | None = None) -> None:
        """``view``: the packet's ftrace bundle when ``pkt`` was parsed without it."""
        seq_id = pkt.trusted_packet_sequence_id
        seq = self.track_events.sequence_packet(pkt)
        self.samples.sequence(pkt)
        kind = "ftrace_events" if view is not None else pkt.WhichOneof("data")
        if kind == "clock_snapshot":
            self.clock.add_snapshot(seq_id, pkt.clock_snapshot)
            self.kinds[kind] += 1
            return
        ts = 0
        if pkt.HasField("timestamp"):
            if pkt.HasField("timestamp_clock_id"):
                clock_id: int | None = pkt.timestamp_clock_id
            elif seq.defaults is not None and seq.defaults.HasField("timestamp_clock_id"):
                clock_id = seq.defaults.timestamp_clock_id
            else:
                clock_id = None
            ts = self.clock.to_ns(seq_id, clock_id, pkt.timestamp)
            if ts > 0:
                self.first_ns = ts if self.first_ns is None else min(self.first_ns, ts)
                self.last_ns = ts if self.last_ns is None else max(self.last_ns, ts)
        if kind is not None:
            self.kinds[kind] += 1
        if kind == "ftrace_events":
            self._bundle(view if view is not None else pkt.ftrace_events, raw)
        elif kind == "track_event":
            if self.track_events.usable(pkt, seq):
                self.track_events.event(pkt, seq, ts, self.data)
        elif kind == "track_descriptor":
            self.track_events.descriptor(pkt.track_descriptor, self.data)
        elif kind == "process_tree":
            self.system.process_tree(pkt.process_tree, self.data, raw)
        elif kind == "process_stats":
            rows = process_stats.rows(pkt.process_stats, raw)
            self.ftrace.memory.process_rows(rows, ts)  # SystemState.process_counters reads it too
        elif kind == "sys_stats":
            self.system.sys_stats(pkt.sys_stats, ts)
        elif kind == "system_info":
            self.system.system_info(pkt.system_info, self.data)
        elif kind == "power_rails":
            self.power.rails(pkt.power_rails, ts, lambda t: self.clock.to_ns(seq_id, BOOTTIME, t))
        elif kind == "battery":
            self.power.battery_packet(pkt.battery, ts)
        elif kind == "perf_sample":
            self.samples.sample(pkt)
        elif kind == "trace_config":
            self.samples.config(pkt.trace_config)
        unknown = UnknownFieldSet(pkt)  # upb's top level only: ~0.5 µs, a scan of a bundle's bytes ~25 µs
        if len(unknown) and (kind is None or b"\xe2\x04" in raw):
            # Field 76 (tag bytes E2 04) is the frame timeline; anything else unknown is counted.
            for f in unknown:
                if f.field_number == FRAME_TIMELINE_FIELD and f.wire_type == 2:
                    self.kinds["frame_timeline_event"] += 1
                    self.frames.packet(bytes(f.data), ts)
                else:
                    self.unknown_fields[f.field_number] += 1

    def _plain_bundle(self, view: BundleView) -> None:
        """A packet of nothing but its bundle and trusted ids (perfetto_bundle_view.PLAIN_FIELDS),
        as :meth:`_dispatch` takes it: its sequence known (no flags, defaults or interned data
        to apply), no timestamp, no unknown fields."""
        self.track_events.sequence(view.seq)
        self.kinds["ftrace_events"] += 1
        self._bundle(view, view.raw)

    def _bundle(self, bundle, raw: bytes) -> None:
        """An ftrace bundle (upb's or a view): queued for the batch reader when on the trace clock."""
        clock_id = _FTRACE_CLOCKS.get(bundle.ftrace_clock)
        if clock_id is None:
            self.ftrace.unknown_clock = True
            clock_id = BOOTTIME
        if self.clock.key(0, clock_id) == self.clock.primary:
            self.ftrace.queue(bundle, raw)
        else:
            self.flush()
            conv = self.clock.to_ns
            self.ftrace.bundle(full_bundle(bundle), lambda t: conv(0, clock_id, t))

    def finish(self, report: StreamReport) -> None:
        self.flush()
        data = self.data
        # tid → tgid, process_tree first, then track events, then ftrace
        known = self.system.thread_groups({**self.ftrace.tgid_of, **self.track_events.tgid_of})
        self.ftrace.finish(data, known)
        data.name_threads(self.ftrace.comm)
        self.ftrace.comm = {}  # read: ~200 k names at 1 GB not held through the memory lens's merge
        self.frames.finish(data)
        self.power.finish(data)
        self.ftrace.cpu.finish(data)
        # the memory lens's atrace counters as columns (no tuple per point), as tuples when wide
        memory_counters = self.ftrace.counters.point_columns(reads_counter)
        if memory_counters is None:
            memory_counters = dict(self.ftrace.counters.items(keep=reads_counter))
        self.system.process_counters(self.ftrace.memory.series)  # before rss_stat joins them
        self.ftrace.memory.finish(data, memory_counters, lambda t: self.ftrace.pid_for(t, known))
        self.samples.finish(data)
        async_slices = self.ftrace.async_slices + self.track_events.async_slices
        for a in async_slices:
            data.add_async_slice(a.pid, a.track or a.name, a.ts_ns / 1000.0, a.dur_ns / 1000.0, a.name)
        focus = launched_pids(data, async_slices)
        self._counters(focus)
        self._meta(report, len(async_slices))
        for t in (self.first_ns, self.last_ns, self.ftrace.sched_first_ns, self.ftrace.sched_last_ns):
            if t is not None:
                data.extend_bounds(t / 1000.0, t / 1000.0)

    def _counters(self, focus: list[int]) -> None:
        data = self.data
        series: dict[tuple[int | None, str], list[tuple[int, float]]] = {}
        units: dict[tuple[int | None, str], str] = {}
        if not focus:
            by_slices: Counter[int] = Counter()
            for (pid, _tid), cols in data.slices.items():
                by_slices[pid] += len(cols)
            focus = [pid for pid, _ in by_slices.most_common(_COUNTER_PROCESSES)]
        wanted = set(focus)
        series.update(self.system.counters)
        units.update(self.system.units)
        units.update((key, PROCESS_UNIT) for key in self.system.process.ids if key[0] in wanted)
        # process_stats' and the atrace counters' points of the focus only: the other processes'
        # series are counted, not read (their tables, perfetto_series.py, hold no tuples)
        for table in (self.system.process, self.ftrace.counters):
            series.update(table.items(keep=lambda key: key[0] in wanted))
            for key in table.ids:
                series.setdefault(key, [])
        series.update(self.track_events.counters)
        units.update(self.track_events.counter_units)
        # the other processes' series (most of them) are counted, not sorted
        kept = [kv for kv in series.items() if kv[0][0] is None or kv[0][0] in wanted]
        dropped = len(series) - len(kept)
        for (pid, name), pts in sorted(kept, key=lambda kv: (kv[0][0] is not None, str(kv[0]))):
            label = name
            if pid is not None:
                label = f"{name}: {data.processes.get(pid, 'pid')} ({pid})"
            data.add_counter_points(label, [(ts / 1000.0, value) for ts, value in sorted(pts)], units.get((pid, name)))
        if dropped:
            data.meta.note("perfetto.counters_other_processes", str(dropped))

    def _meta(self, report: StreamReport, async_count: int) -> None:
        data, ft, te = self.data, self.ftrace, self.track_events
        note = data.meta.note
        note("perfetto.packets", str(report.packets))
        note("perfetto.packet_kinds", ", ".join(f"{k} {v}" for k, v in self.kinds.most_common()))
        note("perfetto.atrace_prints", str(ft.prints))
        note("perfetto.sched_switches", str(ft.switches))
        note("perfetto.compact_sched_switches", str(ft.compact_switches))
        note("perfetto.sched_wakeups", str(ft.wakings))
        data.facts.sched_blocked_reasons = ft.blocked_reasons
        note("perfetto.track_events", str(te.events))
        data.facts.frame_timeline_events = self.frames.events
        note("perfetto.async_slices", str(async_count))
        if te.categories:
            note("perfetto.track_event_categories", ", ".join(
                f"{c} {n}" for c, n in te.categories.most_common(10)
            ))
        not_read = sorted({_NOT_READ[k] for k in self.kinds if k in _NOT_READ})
        if not_read:
            note("perfetto.not_read", ", ".join(not_read))
        if self.unknown_fields:
            fields = ", ".join(f"field {n} ×{c}" for n, c in sorted(self.unknown_fields.items()))
            note("perfetto.unknown_packet_fields", fields)
            data.warn(f"packets carried fields this reader does not know, ignored: {fields}")
        skipped = self.bad_packets + te.skipped_no_state + self.frames.decode_errors
        data.skip(skipped + ft.print_failures)
        if self.bad_packets:
            data.warn(f"{self.bad_packets} packets could not be decoded (or held malformed fields) and were skipped")
            data.mark_partial()
        if te.skipped_no_state:
            data.warn(
                f"{te.skipped_no_state} track events skipped: their sequence lost packets "
                "before its interning state was reset"
            )
        if ft.unmatched_ends or te.unmatched_ends:
            data.warn(f"{ft.unmatched_ends + te.unmatched_ends} slice ends had no matching begin")
        unfinished = ft.unfinished + te.unfinished()
        if unfinished:
            data.warn(f"{unfinished} slices were still open at the end of the trace and are left out")
        if te.unknown_iids:
            data.warn(f"{te.unknown_iids} interned ids were not defined on their sequence")
        data.warn_counts(
            (ft.print_failures, "{n} atrace print lines could not be read and were skipped"),
            (self.frames.decode_errors, "{n} frame timeline events could not be decoded and were skipped"),
            (self.frames.unmatched, "{n} frame timeline events had no partner (an end without its start, "
                                    "or an expected frame that never ended) and were left out"),
            (te.legacy_ignored, "{n} legacy track events were not on a thread's track (or of a phase "
                                "not read) and were left out"),
            (te.unknown_tracks, "{n} track events named a track with no descriptor: kept as async spans"),
            (ft.binder.unfinished, "{n} binder transactions or replies were still open at the end of the "
                                   "trace and are left out"),
        )
        if ft.compact_wakings_skipped:
            note("perfetto.compact_sched_wakings_skipped", str(ft.compact_wakings_skipped))
        if self.clock.unconverted:
            data.warn(f"{self.clock.unconverted} timestamps were on a clock no snapshot relates to the trace clock")
        if ft.unknown_clock:
            data.warn("ftrace used a clock other than boot/mono-raw; its times were taken as boot time")
        for problem in report.problems:
            data.warn(problem)
        if report.truncated or report.oversized:
            data.mark_partial()


def parse(path: str, packet_limit: int = DEFAULT_PACKET_LIMIT) -> PerfData:
    """Read a Perfetto trace into PerfData; bad input raises PerfDataError, nothing else.

    A trace cut short (mid-packet, or a gzip stream that ends early) keeps every whole
    packet before the cut and comes back marked ``partial`` with a warning saying where.
    The cyclic GC is paused for the read (nodes/perf/gc_pause.py: ~2 s of ~10 s at 100 MB).
    """
    with cyclic_gc_paused():
        return _parse(path, packet_limit)


def _parse(path: str, packet_limit: int) -> PerfData:
    f = open_input(path)  # PerfDataError for missing, empty, or non-regular files
    gunzip: GunzipStream | None = None
    if is_gzip(path):  # by content, not by name: our own gunzip keeps what precedes a cut
        f.close()
        try:
            gunzip = GunzipStream(open(path, "rb"), max_decompressed())
        except OSError as e:
            raise PerfDataError(path, f"cannot open ({e.strerror or e})") from None
        f = gunzip
    data = PerfData(FORMAT, path)
    reader = _TraceReader(data)
    report = StreamReport()
    try:
        with f:
            unchecked = 0
            for raw in iter_packets(f, report, packet_limit):
                reader.packet(raw)
                # The event cap (nodes/perf/limits.py), every 1024 packets or MiB of packets
                # (an ftrace bundle holds many events): what is stored plus what is buffered.
                unchecked += len(raw)
                if unchecked >= 1 << 20 or not report.packets & 1023:
                    unchecked = 0
                    data.check_capacity(data.stored + reader.held(data.max_events - data.stored))
    except CapacityReached:
        pass  # marked partial with a warning; what was read is assembled below
    except StreamCorrupt as e:
        if report.packets == 0:
            raise PerfDataError(path, f"not a Perfetto trace ({e})") from None
        report.problems.append(f"trace corrupt after {report.packets} packets ({e}); the rest is unread")
        report.truncated = True
    except OverflowError as e:
        raise PerfDataError(path, f"{e}; refusing (a gzip bomb?). Raise PERFSCOUT_MAX_DECOMPRESSED if it is genuine") from None
    except OSError as e:
        raise PerfDataError(path, f"read failed: {e.strerror or e}") from None
    if gunzip is not None and gunzip.truncated:
        detail = f": {gunzip.error}" if gunzip.error else ""
        report.problems.append(f"gzip stream ends before its end marker{detail}; read what came before")
        report.truncated = True
    if report.packets == 0:
        why = f" ({'; '.join(report.problems[:2])})" if report.problems else ""
        raise PerfDataError(path, f"no trace packets: empty or not a Perfetto trace{why}")
    reader.flush()
    if reader.bad_packets == report.packets:
        raise PerfDataError(path, "not a Perfetto trace: no packet decodes as a TracePacket")
    reader.finish(report)
    return data


#: Whole packets that must decode before a damaged one for the file to count as a Perfetto trace.
GOOD_PACKETS_BEFORE_DAMAGE = 3


def sniff(head: bytes, name: str) -> bool:
    """True when ``head`` (the first bytes, already gunzipped) frames like a Perfetto ``Trace``.

    Every whole packet in ``head`` must decode as a ``TracePacket`` carrying at least one
    field this proto knows; a packet cut by the end of ``head`` is judged by its framing.
    JSON, text and other binaries fail on the first record (``{`` / ``#`` / a digit are not
    the ``0x0A`` packet tag), and a text file that happens to begin with a newline fails on
    its second record.

    A trace whose first :data:`GOOD_PACKETS_BEFORE_DAMAGE` packets decode and a later one does
    not is a damaged Perfetto trace, not an unknown format: the reader reads it up to the damage
    and says where (``trace corrupt after N packets``) — no other format frames that many
    TracePackets by chance.
    """
    if not head or head[0] != 0x0A:
        return False
    report = StreamReport()
    whole = 0
    try:
        for raw in iter_packets_from_bytes(head, report):
            pkt = TracePacket()
            try:
                pkt.ParseFromString(raw)
            except DecodeError:
                return whole >= GOOD_PACKETS_BEFORE_DAMAGE
            if not pkt.ListFields() and not len(UnknownFieldSet(pkt)):
                return whole >= GOOD_PACKETS_BEFORE_DAMAGE
            if not pkt.ListFields() and whole == 0:
                return False
            whole += 1
            if whole >= 16:
                break
    except StreamCorrupt:
        return whole >= GOOD_PACKETS_BEFORE_DAMAGE
    if whole:
        return True
    # The first packet is larger than the head: judge its first field, and the name.
    return report.truncated and name.lower().endswith(_NAME_HINTS) and _plausible_first_field(head)


_WIRE_OF_TYPE = {
    FieldDescriptor.TYPE_MESSAGE: 2, FieldDescriptor.TYPE_STRING: 2, FieldDescriptor.TYPE_BYTES: 2,
    FieldDescriptor.TYPE_DOUBLE: 1, FieldDescriptor.TYPE_FIXED64: 1, FieldDescriptor.TYPE_SFIXED64: 1,
    FieldDescriptor.TYPE_FLOAT: 5, FieldDescriptor.TYPE_FIXED32: 5, FieldDescriptor.TYPE_SFIXED32: 5,
}


def _plausible_first_field(head: bytes) -> bool:
    """Does the first packet open with a TracePacket field of the right wire type?"""
    try:
        _, pos = read_varint(head, 1)  # the packet length
        tag, _ = read_varint(head, pos)
    except (IndexError, ValueError):
        return False
    number, wire = tag >> 3, tag & 7
    if number == FRAME_TIMELINE_FIELD:
        return wire == 2
    fd = TracePacket.DESCRIPTOR.fields_by_number.get(number)
    if fd is None:
        return False
    return wire == _WIRE_OF_TYPE.get(fd.type, 0)
