"""Perfetto SDK ``track_event`` packets: tracks, interned names, slice stacks, counters.

SDK producers (Chrome, apps using the Perfetto SDK) send a name once per *packet sequence*
as ``interned_data`` and afterwards only its id; a packet flagged
``SEQ_INCREMENTAL_STATE_CLEARED`` wipes that table (and the sequence's defaults) and a lost
packet makes the sequence's ids untrustworthy until the next clear. Getting this wrong
does not fail loudly — it names slices after the wrong strings — so the rules are kept
here, in one place, per sequence.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from nodes.perf.model import MAIN_THREAD_NAMES, MAX_COUNTER_POINTS, PerfData
from nodes.perf.parsers import perfetto_chrome_latency as chrome_latency
from nodes.perf.parsers.perfetto_ftrace import MAX_ASYNC, AsyncSlice
from nodes.perf.parsers.perfetto_wire import text

SEQ_INCREMENTAL_STATE_CLEARED = 1
SEQ_NEEDS_INCREMENTAL_STATE = 2

TYPE_SLICE_BEGIN, TYPE_SLICE_END, TYPE_INSTANT, TYPE_COUNTER = 1, 2, 3, 4


@dataclass
class Sequence:
    """The incremental state of one ``trusted_packet_sequence_id``."""

    names: dict[int, str] = field(default_factory=dict)
    categories: dict[int, str] = field(default_factory=dict)
    defaults: object | None = None
    #: False until the first clear, and again after a packet loss: ids cannot be trusted.
    valid: bool = False

    def clear(self) -> None:
        self.names.clear()
        self.categories.clear()
        self.defaults = None
        self.valid = True


@dataclass
class Track:
    kind: str  # "thread" | "process" | "counter" | "async"
    name: str | None = None
    pid: int | None = None
    tid: int | None = None
    unit: str | None = None


class TrackEventState:
    def __init__(self) -> None:
        self.sequences: dict[int, Sequence] = {}
        self.tracks: dict[int, Track] = {}
        self.stacks: dict[object, list[tuple[int, str]]] = {}
        self.async_slices: list[AsyncSlice] = []
        #: (pid or None, name) → [(ts_ns, value)], with units in ``counter_units``.
        self.counters: dict[tuple[int | None, str], list[tuple[int, float]]] = {}
        self.counter_units: dict[tuple[int | None, str], str] = {}
        self.tgid_of: dict[int, int] = {}
        self.categories: Counter[str] = Counter()
        self.events = 0
        self.skipped_no_state = 0
        self.unknown_iids = 0
        self.unknown_tracks = 0
        self.unmatched_ends = 0
        self.legacy_ignored = 0

    # --- sequence state ----------------------------------------------------------------
    def sequence(self, seq_id: int) -> Sequence:
        """The state of sequence ``seq_id``, new (not valid yet) on its first packet."""
        seq = self.sequences.get(seq_id)
        if seq is None:
            seq = self.sequences[seq_id] = Sequence()
        return seq

    def sequence_packet(self, packet) -> Sequence:
        """Apply a packet's effect on its sequence's incremental state; return that state."""
        seq = self.sequence(packet.trusted_packet_sequence_id)
        if packet.previous_packet_dropped:
            seq.valid = False
        if packet.incremental_state_cleared or packet.sequence_flags & SEQ_INCREMENTAL_STATE_CLEARED:
            seq.clear()
        if packet.HasField("trace_packet_defaults"):
            seq.defaults = packet.trace_packet_defaults
        if packet.HasField("interned_data"):
            idata = packet.interned_data
            for e in idata.event_names:
                seq.names[e.iid] = text(e.name)
            for e in idata.event_categories:
                seq.categories[e.iid] = text(e.name)
        return seq

    def usable(self, packet, seq: Sequence) -> bool:
        """A packet that depends on incremental state is dropped while the state is unknown."""
        if packet.sequence_flags & SEQ_NEEDS_INCREMENTAL_STATE and not seq.valid:
            self.skipped_no_state += 1
            return False
        return True

    # --- descriptors -------------------------------------------------------------------
    def descriptor(self, td, data: PerfData) -> None:
        name = text(td.name or td.static_name or td.atrace_name) or None
        if td.HasField("thread"):
            t = td.thread
            self.tracks[td.uuid] = Track("thread", name, t.pid, t.tid)
            self.tgid_of[t.tid] = t.pid
            tname = text(t.thread_name) or name
            if tname:
                data.set_thread_name(t.pid, t.tid, tname)
            if t.pid == t.tid or tname in MAIN_THREAD_NAMES:
                data.mark_main_thread(t.pid, t.tid)
        elif td.HasField("process"):
            p = td.process
            self.tracks[td.uuid] = Track("process", name, p.pid)
            pname = text(p.process_name or (p.cmdline[0] if p.cmdline else "")) or name
            if pname:
                data.set_process_name(p.pid, pname)
        elif td.HasField("counter"):
            parent = self.tracks.get(td.parent_uuid) if td.parent_uuid else None
            unit = td.counter.unit_name or None
            self.tracks[td.uuid] = Track("counter", name, parent.pid if parent else None, unit=unit)
        else:
            parent = self.tracks.get(td.parent_uuid) if td.parent_uuid else None
            self.tracks[td.uuid] = Track("async", name, parent.pid if parent else None)

    # --- events ------------------------------------------------------------------------
    def _name(self, seq: Sequence, te) -> str:
        if te.HasField("name"):
            return text(te.name)
        iid = te.name_iid
        if not iid and te.HasField("legacy_event"):
            iid = te.legacy_event.name_iid
        if iid:
            n = seq.names.get(iid)
            if n is not None:
                return n
            self.unknown_iids += 1
        return "[unknown name]"

    def _category(self, seq: Sequence, te) -> str:
        if te.categories:
            return ",".join(te.categories)
        cats = []
        for iid in te.category_iids:
            c = seq.categories.get(iid)
            if c is None:
                self.unknown_iids += 1
                c = "?"
            cats.append(c)
        return ",".join(cats)

    def event(self, packet, seq: Sequence, ts: int, data: PerfData) -> None:
        te = packet.track_event
        self.events += 1
        if te.HasField("track_uuid"):
            uuid = te.track_uuid
        elif seq.defaults is not None and seq.defaults.track_event_defaults.HasField("track_uuid"):
            uuid = seq.defaults.track_event_defaults.track_uuid
        else:
            uuid = None
        etype = te.type
        if etype == 0 and te.HasField("legacy_event"):
            self._legacy(packet, seq, te, ts, uuid, data)
            return
        track = self.tracks.get(uuid) if uuid is not None else None
        if track is None:
            # No descriptor: Perfetto falls back to the writing thread's own track.
            if packet.HasField("trusted_pid") and uuid is None:
                track = Track("thread", None, packet.trusted_pid, packet.trusted_pid)
            else:
                self.unknown_tracks += 1
                track = Track("async", None, packet.trusted_pid or None)
        if etype == TYPE_COUNTER:
            value = te.double_counter_value if te.HasField("double_counter_value") else te.counter_value
            key = (track.pid, track.name or "counter")
            pts = self.counters.setdefault(key, [])
            if len(pts) < MAX_COUNTER_POINTS:
                pts.append((ts, float(value)))
            if track.unit:
                self.counter_units[key] = track.unit
            return
        stack_key = uuid if uuid is not None else ("pid", track.pid)
        if etype == TYPE_SLICE_BEGIN:
            self.categories[self._category(seq, te) or "(none)"] += 1
            name = self._name(seq, te)
            self.stacks.setdefault(stack_key, []).append((ts, name))
            if track.kind == "async" and chrome_latency.wanted(name):  # Chrome's scroll spans
                chrome_latency.begin(data, name, te, stack_key, ts, track.pid or 0)
        elif etype == TYPE_SLICE_END:
            stack = self.stacks.get(stack_key)
            if not stack:
                self.unmatched_ends += 1
                return
            t0, name = stack.pop()
            self._emit(track, t0, ts - t0, name, data)
            if track.kind == "async" and chrome_latency.wanted(name):
                chrome_latency.end(data, name, stack_key, ts, track.pid or 0)
        elif etype == TYPE_INSTANT:
            self.categories[self._category(seq, te) or "(none)"] += 1
            if track.kind == "thread" and track.tid is not None:
                data.add_instant(track.pid or 0, track.tid, ts / 1000.0, self._name(seq, te))

    def _legacy(self, packet, seq: Sequence, te, ts: int, uuid, data: PerfData) -> None:
        """Pre-typed Chrome events: B/E/X on a thread are slices, the rest are not analysed."""
        le = te.legacy_event
        phase = chr(le.phase) if 0 < le.phase < 128 else ""
        track = self.tracks.get(uuid) if uuid is not None else None
        if le.HasField("tid_override") or le.HasField("pid_override"):
            pid = le.pid_override or (track.pid if track else 0) or 0
            tid = le.tid_override or (track.tid if track else 0) or 0
            track = Track("thread", None, pid, tid)
        if track is None or track.kind != "thread":
            self.legacy_ignored += 1
            return
        key = ("legacy", track.pid, track.tid)
        if phase == "X":
            self.categories[self._category(seq, te) or "(none)"] += 1
            self._emit(track, ts, le.duration_us * 1000, self._name(seq, te), data)
        elif phase == "B":
            self.stacks.setdefault(key, []).append((ts, self._name(seq, te)))
        elif phase == "E":
            stack = self.stacks.get(key)
            if stack:
                t0, name = stack.pop()
                self._emit(track, t0, ts - t0, name, data)
            else:
                self.unmatched_ends += 1
        else:
            self.legacy_ignored += 1

    def _emit(self, track: Track, ts: int, dur: int, name: str, data: PerfData) -> None:
        if track.kind == "thread" and track.tid is not None:
            data.add_slice(track.pid or 0, track.tid, ts / 1000.0, dur / 1000.0, name)
        elif len(self.async_slices) < MAX_ASYNC:
            self.async_slices.append(AsyncSlice(track.pid or 0, name, ts, dur, track.name))

    def unfinished(self) -> int:
        return sum(len(s) for s in self.stacks.values())
