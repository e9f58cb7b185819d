"""CPU callstack samples: ``perf_sample`` packets (traced_perf, simpleperf converted to
Perfetto, Linux eBPF tracers) with their interned callstacks, frames, function names and
mappings, as trace_processor reads them (``stack_profile_callsite`` / ``_frame`` /
``_mapping``; ``linux.perf.samples`` in its stdlib).

Interning is scoped to a packet sequence and reset when a packet says its incremental state
was cleared (``SEQ_INCREMENTAL_STATE_CLEARED``): the tables here are per sequence and cleared
with it, and a sample is resolved when it arrives, against its own sequence's tables. A
``Callstack``'s ``frame_ids`` run root first ("bottom frame first"), as PerfData's stacks do.

Each sample weighs one sampling period: ``1 / timebase.frequency`` from the trace's
``perf_event_config`` when the trace says it; otherwise the samples are counted and their
time is left unstated (a warning says so) rather than guessed.

Bad input, counted and named in the warnings: a sample whose callstack id was never interned
on its sequence, a callstack naming a frame that was not interned (the frame is shown as
``<unknown frame>``), samples the producer could not unwind (``unwind_error``), samples in a
sequence that lost its interning state.
"""

from __future__ import annotations

import os
from collections import Counter

from nodes.perf.model import PerfData
from nodes.perf.parsers.perfetto_wire import text

_SEQ_INCREMENTAL_STATE_CLEARED = 1
_SEQ_NEEDS_INCREMENTAL_STATE = 2
#: At most this many distinct (thread, stack) pairs are kept (bounded memory).
MAX_STACKS = 100_000


class _Tables:
    __slots__ = ("functions", "mapping_paths", "mappings", "frames", "callstacks", "resolved")

    def __init__(self) -> None:
        self.functions: dict[int, str] = {}
        self.mapping_paths: dict[int, str] = {}
        self.mappings: dict[int, str] = {}  # mapping iid → path
        self.frames: dict[int, tuple[int, int, int]] = {}  # iid → (function id, mapping id, rel_pc)
        self.callstacks: dict[int, tuple[int, ...]] = {}
        #: callstack iid → frame names root first, resolved once per interning generation.
        self.resolved: dict[int, tuple[str, ...]] = {}




class SampleState:
    def __init__(self) -> None:
        self.tables: dict[int, _Tables] = {}
        self.counts: Counter[tuple[int, int, tuple[str, ...]]] = Counter()
        self.samples = 0
        self.uninterned = 0
        self.unknown_frames = 0
        self.unwind_errors = 0
        self.no_state = 0
        self.dropped = 0
        self.frequency_hz: float | None = None
        self.period_events: int | None = None

    def sequence(self, pkt) -> None:
        """Every packet: reset on a cleared incremental state, then take its interned data."""
        seq = pkt.trusted_packet_sequence_id
        if pkt.sequence_flags & _SEQ_INCREMENTAL_STATE_CLEARED:
            self.tables[seq] = _Tables()
        if not pkt.HasField("interned_data"):
            return
        d = pkt.interned_data
        if not (d.function_names or d.frames or d.callstacks or d.mappings or d.mapping_paths):
            return
        t = self.tables.get(seq)
        if t is None:
            t = self.tables[seq] = _Tables()
        for s in d.function_names:
            t.functions[s.iid] = text(s.str)
        for s in d.mapping_paths:
            t.mapping_paths[s.iid] = text(s.str)
        for m in d.mappings:
            t.mappings[m.iid] = "/".join(t.mapping_paths.get(i, "") for i in m.path_string_ids)
        for f in d.frames:
            t.frames[f.iid] = (f.function_name_id, f.mapping_id, f.rel_pc)
        for c in d.callstacks:
            t.callstacks[c.iid] = tuple(c.frame_ids)
            t.resolved.pop(c.iid, None)

    def config(self, trace_config) -> None:
        for ds in trace_config.data_sources:
            pe = ds.config.perf_event_config
            if ds.config.name == "linux.perf" and pe.HasField("timebase"):
                tb = pe.timebase
                if tb.frequency:
                    self.frequency_hz = float(tb.frequency)
                elif tb.period:
                    self.period_events = int(tb.period)
            elif ds.config.name == "linux.perf" and pe.sampling_frequency:
                self.frequency_hz = float(pe.sampling_frequency)

    def sample(self, pkt) -> None:
        s = pkt.perf_sample
        if not s.HasField("callstack_iid"):
            if s.HasField("unwind_error") or s.HasField("sample_skipped_reason"):
                self.unwind_errors += 1
            return  # counter-only records (kernel_records_lost, …) carry no stack
        self.samples += 1
        seq = pkt.trusted_packet_sequence_id
        t = self.tables.get(seq)
        if t is None:
            self.no_state += 1
            return
        names = t.resolved.get(s.callstack_iid)
        if names is None:
            ids = t.callstacks.get(s.callstack_iid)
            if ids is None:
                self.uninterned += 1
                return
            names = t.resolved[s.callstack_iid] = tuple(self._frame_name(t, i) for i in ids)
        key = (s.pid, s.tid, names)
        if key not in self.counts and len(self.counts) >= MAX_STACKS:
            self.dropped += 1
            return
        self.counts[key] += 1

    def _frame_name(self, t: _Tables, frame_iid: int) -> str:
        f = t.frames.get(frame_iid)
        if f is None:
            self.unknown_frames += 1
            return "<unknown frame>"
        fn, mapping, rel_pc = f
        name = t.functions.get(fn, "")
        if name:
            return name
        path = t.mappings.get(mapping, "")
        return f"{os.path.basename(path) or '<unknown mapping>'}+0x{rel_pc:x}"

    def finish(self, data: PerfData) -> None:
        if not self.samples and not self.unwind_errors:
            return
        weight_us = 1e6 / self.frequency_hz if self.frequency_hz else 1.0
        for (pid, tid, names), n in self.counts.items():
            if pid and tid:
                data.thread(pid, tid)
            stack = [data.frame_id(name) for name in names]
            data.add_sample(stack, weight_us * n, pid, tid, samples=n)
        data.meta.note("perfetto.cpu_samples", str(self.samples))
        if self.frequency_hz:
            data.meta.note("perfetto.cpu_sampling_hz", f"{self.frequency_hz:g}")
        else:
            data.warn("CPU samples: the trace does not give the sampling frequency; each sample is counted as "
                      "1 µs, so compare sampled hot spots by their sample counts, not their times")
        data.warn_counts(
            (self.uninterned, "CPU samples: {n} sample(s) named a callstack id never interned on their sequence, "
                              "and were left out"),
            (self.no_state, "CPU samples: {n} sample(s) came on a sequence with no interning state, left out"),
            (self.unknown_frames, "CPU samples: {n} frame id(s) were not interned (shown as <unknown frame>)"),
            (self.unwind_errors, "CPU samples: {n} sample(s) could not be unwound by the producer"),
            (self.dropped, f"CPU samples: {{n}} sample(s) beyond {MAX_STACKS:,} distinct stacks were not kept"),
        )
