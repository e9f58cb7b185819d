"""Kernel-side data: atrace userspace slices (ftrace ``print``/``zero``) and the scheduler.

Why events are buffered per thread instead of handled on arrival: ftrace arrives as one
bundle per CPU per read cycle, and a thread that migrates between CPUs can have its ``E``
(or its wake-up) in a bundle written *before* the bundle holding its ``B`` (or its switch
out). Per CPU the order is right; per thread it is not. So each thread keeps two compact
columns (time, event code) — 9 bytes an event — which are sorted once at the end. That is
the bounded "small multiple of the event count" the model promises, never a Python object
per event.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from nodes.perf.model import MAX_COUNTER_POINTS, MAX_OPEN_SLICES, PerfData
from nodes.perf.parsers.perfetto_wire import text
from nodes.perf.parsers.perfetto_binder import BinderState, debug_id_order, pids_of
from nodes.perf.parsers.perfetto_binder_calls import pair_calls
from nodes.perf.parsers.perfetto_bundle_view import new_rows, rows_bound
from nodes.perf.parsers.perfetto_cpu import CpuState
from nodes.perf.parsers.perfetto_ftrace_batch import read_batch
from nodes.perf.parsers.perfetto_heap import give_back
from nodes.perf.parsers.perfetto_memory import MemoryState
from nodes.perf.parsers.perfetto_series import SeriesTable
from nodes.perf.parsers.perfetto_slices import AtraceLog, pair_rows, thread_blocks
from nodes.perf.parsers.perfetto_sched import BLOCKED as _BLOCKED
from nodes.perf.parsers.perfetto_sched import COARSE, SchedLog, thread_state_columns
from nodes.perf.parsers.perfetto_sched import IN as _IN
from nodes.perf.parsers.perfetto_sched import NEW as _NEW
from nodes.perf.parsers.perfetto_sched import OUT as _OUT
from nodes.perf.parsers.perfetto_sched import WAKE as _WAKE
from nodes.perf.sched_state import kernel_version

#: Packet bytes queued at most before the batch reader reads them. While it reads, its arrays
#: hold ~5 bytes per packet byte besides the packets (tracemalloc, 20 MB trace), so the batch
#: sets the peak of a small trace: 20 MB peak RSS 153 MB at 8 MiB, 125 at 4, 115 at 2. The
#: instructions per batch are few now (callgrind, whole command: 20 MB +0.03 % at 4 MiB against
#: 8, +0.8 % at 2; 100 MB +0.15 % at 4).
BATCH_BYTES = 4 << 20


# Event codes in the per-thread atrace columns.
_B, _E = 1, 2
_CLONE_THREAD = 0x00010000

MAX_ASYNC = 100_000
#: Scheduler intervals kept for the whole trace (18 bytes each): beyond this the rest is
#: dropped with a warning; the per-thread totals still cover everything.
MAX_SCHED_INTERVALS = 4_000_000
#: atrace instants ("I|pid|name") kept: Android marks launch completion with one.
MAX_ATRACE_INSTANTS = 50_000
#: atrace slices stored per PerfData.add_slice_rows call (whole threads, at least one).
SLICE_BLOCK = 1 << 18


@dataclass
class AsyncSlice:
    """A process-scoped atrace slice (``S``/``F``, ``G``/``H``): not part of any thread's stack."""

    pid: int
    name: str
    ts_ns: int
    dur_ns: int
    track: str | None = None


class FtraceState:
    """Everything the ftrace bundles say, kept until :meth:`finish` writes it into PerfData."""

    def __init__(self) -> None:
        self.atrace = AtraceLog()  # every B/E, in arrival order (arg = name id)
        self.tgid_of: dict[int, int] = {}  # tid → tgid, learnt from prints and clones
        self.comm: dict[int, str] = {}  # tid → last known command name
        self.async_open: dict[tuple, tuple[int, str]] = {}
        self.async_slices: list[AsyncSlice] = []
        #: (tgid, counter name) → (ts_ns, value) points, as columns (perfetto_series.py)
        self.counters = SeriesTable("d")
        self.sched = SchedLog()  # every scheduler event, arrival order (perfetto_sched.py)
        self._cpu_current: dict[int, int] = {}  # cpu → tid running on it (compact sched)
        self._cpu_first_switch: dict[int, int] = {}  # cpu → time of its first compact switch
        self.compact_wakings_skipped = 0
        self.names: dict[str, int] = {}
        self.name_list: list[str] = []
        self.prints = 0
        self.print_failures = 0
        self.switches = 0
        self.compact_switches = 0
        self.wakings = 0
        self.unmatched_ends = 0
        self.unfinished = 0
        self.sched_first_ns: int | None = None
        self.sched_last_ns: int | None = None
        self.unknown_clock = False
        self.blocked_reasons = 0
        #: (tgid, tid, ts_ns, name) of atrace instants.
        self.instants: list[tuple[int, int, int, str]] = []
        #: binder_transaction / _received → "binder transaction" / "binder reply" slices.
        self.binder = BinderState()
        #: CPUs seen, cpu_frequency and cpu_idle (perfetto_cpu.py).
        self.cpu = CpuState()
        #: rss_stat (perfetto_memory.py).
        self.memory = MemoryState()
        self.sched_intervals_dropped = 0
        self._batch: list = []  # bundles queued for the batch reader
        self._batch_bytes = 0
        #: what the bundle check recorded of the bundles it accepted (perfetto_bundle_view.new_rows),
        #: for the batch reader when the queue is exactly those bundles (``_rows_ok``)
        self.rows = new_rows()
        self._rows_ok = True
        #: at most how many rows the queued bundles add to what :meth:`held_rows` counts
        self.batch_rows = 0

    # --- helpers -----------------------------------------------------------------------
    def _name_id(self, name: str) -> int:
        i = self.names.get(name)
        if i is None:
            i = self.names[name] = len(self.name_list)
            self.name_list.append(name)
        return i

    def _sched_seen(self, ts: int) -> None:
        if self.sched_first_ns is None or ts < self.sched_first_ns:
            self.sched_first_ns = ts
        if self.sched_last_ns is None or ts > self.sched_last_ns:
            self.sched_last_ns = ts

    # --- input -------------------------------------------------------------------------
    def queue(self, b, raw: bytes) -> None:
        """A bundle on the trace clock (upb's, or a perfetto_bundle_view.BundleView), read with
        the next batch (perfetto_ftrace_batch.py)."""
        if getattr(b, "row", -1) != len(self._batch):
            self._rows_ok = False  # not the recorder's next packet: the batch reader walks the bytes itself
        self._batch.append((b, raw))
        self._batch_bytes += len(raw)
        self.batch_rows += rows_bound(b)

    def unqueued(self, b) -> None:
        """``b``, a view the bundle check recorded, was not queued after all (its packet was
        dropped): its rows are taken back, so the next bundle's rows follow the queue's."""
        row = getattr(b, "row", -1)
        rows = self.rows
        if row >= 0 and rows is not None and row == rows.packets - 1 and not (self._batch and self._batch[-1][0] is b):
            rows.drop(row)

    def may_defer(self, room: int) -> bool:
        """Whether the queued bundles may wait for a later batch: they are under BATCH_BYTES and
        cannot add ``room`` rows (what the event cap leaves). Fewer, larger batches: the batch
        reader's numpy calls are per batch (callgrind, 20 MB whole command: 1 MiB +2 % against
        4 MiB)."""
        return self._batch_bytes < BATCH_BYTES and self.batch_rows < room

    def held_rows(self) -> int:
        """Rows read and not yet stored (the event cap counts them), without the queued bundles."""
        return len(self.atrace) + self.sched.rows + len(self.async_slices) + self.counters.points()

    def flush(self) -> int:
        """Read the queued bundles; returns how many were dropped as malformed. The recorder is
        emptied either way: a packet it holds beyond the queue was not queued (read otherwise,
        or dropped)."""
        rows, ok = self.rows, self._rows_ok
        self._rows_ok = True
        if not self._batch or not ok:
            if rows is not None:
                rows.reset()
            rows = None
        if not self._batch:
            return 0
        items, self._batch, self._batch_bytes, self.batch_rows = self._batch, [], 0, 0
        return read_batch(self, items, rows.take() if rows is not None else None)

    def bundle_checked(self, b) -> int:
        """:meth:`bundle` on the trace clock; 1 when the bundle held nonsense and was dropped
        (what the reader does with such a packet), else 0."""
        try:
            self.bundle(b, identity)
        except (TypeError, ValueError, KeyError, IndexError, OverflowError):
            return 1
        return 0

    def bundle(self, b, to_ns) -> None:
        """One ``FtraceEventBundle``, event by event; ``to_ns(ts)`` maps the ftrace clock onto
        the trace clock."""
        cpu = b.cpu
        self.cpu.cpus.add(cpu)
        if b.HasField("compact_sched"):
            self._compact(cpu, b.compact_sched, to_ns)
        same_clock = to_ns is identity
        push_atrace = self.atrace.push
        for e in b.event:
            kind = e.WhichOneof("event")
            if kind not in _HANDLED:  # most events of a system trace: one set lookup each
                continue
            tid = e.pid
            if kind == "print":
                self.prints += 1
                buf = text(e.print.buf)
                ts = e.timestamp if same_clock else to_ns(e.timestamp)
                if buf[:1] == "E" and buf.isascii():  # half of all prints: a slice end, nothing to parse
                    push_atrace(tid, ts, _E)
                else:
                    self._atrace_line(ts, tid, buf)
            elif kind == "sched_switch":
                self._switch(cpu, to_ns(e.timestamp), e.sched_switch)
            elif kind == "sched_waking":
                # Only sched_waking opens a runnable interval: trace_processor's ftrace_parser
                # keeps sched_wakeup and sched_wakeup_new as instants, not thread states.
                w = e.sched_waking
                self._wake(to_ns(e.timestamp), w.pid, text(w.comm))
            elif kind == "zero":
                self._zero(to_ns(e.timestamp), tid, e.zero)
            elif kind == "sched_blocked_reason":
                # Emitted when a blocked task is woken: says whether it waited on IO. Applies
                # to the task's last blocked interval, as trace_processor's thread_state does.
                br = e.sched_blocked_reason
                if br.pid and br.HasField("io_wait"):
                    self.blocked_reasons += 1
                    self.sched.push(br.pid, to_ns(e.timestamp), _BLOCKED, 1 if br.io_wait else 0)
            elif kind == "binder_transaction":
                self.binder.transaction(to_ns(e.timestamp), tid, e.binder_transaction)
            elif kind == "binder_transaction_received":
                self.binder.received(to_ns(e.timestamp), tid, e.binder_transaction_received)
            elif kind == "cpu_frequency":
                self.cpu.frequency_event(to_ns(e.timestamp), e.cpu_frequency)
            elif kind == "cpu_idle":
                self.cpu.idle_event(to_ns(e.timestamp), e.cpu_idle)
            elif kind == "rss_stat":
                self.memory.rss_stat(to_ns(e.timestamp), tid, e.rss_stat)
            elif kind == "task_newtask":
                nt = e.task_newtask
                if nt.comm:
                    self.comm[nt.pid] = text(nt.comm)
                if nt.pid:  # a new task starts runnable (ThreadStateTracker::PushNewTaskEvent)
                    self._sched_seen(to_ns(e.timestamp))
                    self.sched.push(nt.pid, to_ns(e.timestamp), _NEW)
                if nt.clone_flags & _CLONE_THREAD:
                    self.tgid_of.setdefault(nt.pid, self.tgid_of.get(tid, tid))
                else:
                    self.tgid_of.setdefault(nt.pid, nt.pid)
            elif kind == "task_rename":
                if e.task_rename.newcomm:
                    self.comm[e.task_rename.pid] = text(e.task_rename.newcomm)

    def _compact(self, cpu: int, cs, to_ns) -> None:
        """Compact sched: delta-encoded timestamps, comms interned per bundle, prev implicit.

        As trace_processor's FtraceSchedEventTracker reads it: the first switch of a CPU only
        says who runs next (its previous task is unknown, so no state is written), and a
        waking record before the CPU's first switch is dropped (``compact_sched_waking_skipped``).
        Every other waking record opens a runnable interval like a ``sched_waking`` event.
        The columns are read whole (upb's repeated fields into numpy), never record by record.
        """
        table = [text(s) for s in cs.intern_table]
        n = len(cs.switch_timestamp)
        if n:
            t = _times(cs.switch_timestamp, to_ns)
            nxt = np.array(cs.switch_next_pid, np.int64)[:n]
            if len(nxt) < n:  # a short column: the reader's IndexError drops the packet
                raise IndexError("compact sched: switch_next_pid shorter than switch_timestamp")
            prev_state = np.ones(n, np.int64)
            ps = np.array(cs.switch_prev_state, np.int64)[:n]
            prev_state[:len(ps)] = ps
            idx = np.array(cs.switch_next_comm_index, np.int64)[:n]
            named = np.flatnonzero((idx < len(table)) & (nxt[:len(idx)] != 0))
            if len(named):
                self.comm.update(zip(nxt[named].tolist(), [table[i] for i in idx[named].tolist()]))
            self.compact_switches += n
            self._sched_seen(int(t.min()))
            self._sched_seen(int(t.max()))
            prev = np.empty(n, np.int64)
            prev[1:] = nxt[:-1]
            if cpu in self._cpu_current:
                prev[0] = self._cpu_current[cpu]
                first = 0
            else:
                self._cpu_first_switch[cpu] = int(t[0])
                first = 1
            self._cpu_current[cpu] = int(nxt[-1])
            self._cpu_first_switch.setdefault(cpu, int(t[0]))
            if n > first:
                # each switch: the task leaving (its raw prev_state), then the one coming in
                tid = np.stack([prev[first:], nxt[first:]], 1).ravel()
                keep = tid != 0  # tid 0 is the idle task: not a thread anyone asks about
                m = n - first
                codes = np.tile(np.array([_OUT, _IN], np.int8), m)
                args = np.stack([prev_state[first:], np.zeros(m, np.int64)], 1).ravel()
                self.sched.extend(tid[keep], np.repeat(t[first:], 2)[keep], codes[keep], args[keep])
        nw = len(cs.waking_timestamp)
        if nw:
            t = _times(cs.waking_timestamp, to_ns)
            pids = np.array(cs.waking_pid, np.int64)[:nw]
            if len(pids) < nw:
                raise IndexError("compact sched: waking_pid shorter than waking_timestamp")
            first_t = self._cpu_first_switch.get(cpu)
            ok = np.zeros(nw, bool) if first_t is None else t >= first_t
            self.compact_wakings_skipped += int(nw - ok.sum())
            ok &= pids != 0
            sel = np.flatnonzero(ok)
            if len(sel):
                self.wakings += len(sel)
                self._sched_seen(int(t[sel].min()))
                self._sched_seen(int(t[sel].max()))
                widx = np.array(cs.waking_comm_index, np.int64)[:nw]
                named = sel[sel < len(widx)]
                named = named[widx[named] < len(table)]
                if len(named):
                    comm = self.comm
                    for p, c in zip(pids[named].tolist(), [table[i] for i in widx[named].tolist()]):
                        if c and p not in comm:
                            comm[p] = c
                self.sched.extend(pids[sel], t[sel], np.full(len(sel), _WAKE, np.int8), np.zeros(len(sel), np.int64))

    def _switch(self, cpu: int, ts: int, sw) -> None:
        self.switches += 1
        if sw.prev_pid and sw.prev_comm:
            self.comm.setdefault(sw.prev_pid, text(sw.prev_comm))
        if sw.next_pid and sw.next_comm:
            self.comm[sw.next_pid] = text(sw.next_comm)
        self._switch_pair(cpu, ts, sw.prev_pid, sw.prev_state, sw.next_pid)

    def _switch_pair(self, cpu: int, ts: int, prev: int | None, prev_state: int, nxt: int) -> None:
        self._sched_seen(ts)
        if prev:  # tid 0 is the idle task: not a thread anyone asks about
            # prev_state is decoded once, at the end, with the kernel's bit layout
            self.sched.push(prev, ts, _OUT, prev_state)
        if nxt:
            self.sched.push(nxt, ts, _IN)
        self._cpu_current[cpu] = nxt
        self._cpu_first_switch.setdefault(cpu, ts)

    def _wake(self, ts: int, tid: int, comm: str) -> None:
        if not tid:
            return
        self.wakings += 1
        self._sched_seen(ts)
        if comm:
            self.comm.setdefault(tid, comm)
        self.sched.push(tid, ts, _WAKE)

    def _zero(self, ts: int, tid: int, z) -> None:
        self._zero_values(ts, tid, z.flag, text(z.name), z.pid, z.value)

    def _zero_values(self, ts: int, tid: int, flag: int, name: str, pid: int, value: int) -> None:
        """Kernel ``systrace/0`` events: atrace in a kernel tracepoint (flag bits B=1, E=2, C=4)."""
        tgid = pid or tid
        if flag & 1:
            self.tgid_of.setdefault(tid, tgid)
            self.atrace.push(tid, ts, _B, self._name_id(name or "[empty slice name]"))
        elif flag & 2:
            self.atrace.push(tid, ts, _E)
        elif flag & 4:
            self._counter(tgid, name, ts, float(value))

    def _counter(self, tgid: int, name: str, ts: int, value: float) -> None:
        self.counters.add((tgid, name), ts, value, MAX_COUNTER_POINTS)

    def _atrace_line(self, ts: int, tid: int, buf: str) -> None:
        """One ``tracing_mark_write`` line, in the formats Perfetto's systrace parser accepts."""
        line = buf.rstrip("\n\0")
        if line[:1] == "B":  # the common case first: B|tgid|name
            p = line.split("|", 2)
            if len(p) > 1 and p[1].isdigit() and (tgid := int(p[1])) < _TGID_LIMIT:
                self.tgid_of.setdefault(tid, tgid)
                self.atrace.push(tid, ts, _B, self._name_id((p[2] if len(p) > 2 else "") or "[empty slice name]"))
            else:
                self.print_failures += 1
            return
        if not line:
            self.print_failures += 1
            return
        phase = line[0]
        parts = line.split("|")
        tgid_s = parts[1] if len(parts) > 1 else ""
        tgid = int(tgid_s) if tgid_s.isdigit() else None
        if tgid is not None and tgid >= _TGID_LIMIT:
            tgid = None  # no process id: a malformed line, as one with no digits
        if phase == "B":
            if tgid is None:
                self.print_failures += 1
                return
            name = line.split("|", 2)[2] if len(parts) > 2 else ""
            self.tgid_of.setdefault(tid, tgid)
            self.atrace.push(tid, ts, _B, self._name_id(name or "[empty slice name]"))
        elif phase == "E":
            self.atrace.push(tid, ts, _E)
        elif tgid is None:
            if not line.startswith("trace_event_clock_sync:"):
                self.print_failures += 1
        elif phase in "SF" and len(parts) >= 4 and _is_int(parts[3]):
            key = (tgid, parts[2], int(parts[3]))
            if phase == "S":
                self.async_open[key] = (ts, parts[2])
            else:
                self._async_end(key, ts, None)
        elif phase == "G" and len(parts) >= 5 and _is_int(parts[4]):
            self.async_open[(tgid, "track:" + parts[2], int(parts[4]))] = (ts, parts[3])
        elif phase == "H" and len(parts) >= 4:
            cookie = parts[4] if len(parts) >= 5 and parts[4] else parts[3]
            if _is_int(cookie):
                self._async_end((tgid, "track:" + parts[2], int(cookie)), ts, parts[2])
        elif phase == "C" and len(parts) >= 4:
            try:
                value = float(int(parts[3]))
            except ValueError:
                self.print_failures += 1
                return
            self._counter(tgid, parts[2], ts, value)
        elif phase == "I" and len(parts) >= 3:
            if len(self.instants) < MAX_ATRACE_INSTANTS:
                self.instants.append((tgid, tid, ts, line.split("|", 2)[2]))
        elif phase in "IN":
            pass  # track instants carry nothing the analysis uses
        else:
            self.print_failures += 1

    def _async_end(self, key: tuple, ts: int, track: str | None) -> None:
        start = self.async_open.pop(key, None)
        if start is None:
            self.unmatched_ends += 1
            return
        if len(self.async_slices) < MAX_ASYNC:
            self.async_slices.append(AsyncSlice(key[0], start[1], start[0], ts - start[0], track))

    # --- output ------------------------------------------------------------------------
    def pid_for(self, tid: int, known: dict[int, int]) -> int:
        return known.get(tid) or self.tgid_of.get(tid) or tid

    def pids_for(self, tids: list[int], known) -> list[int]:
        """``[self.pid_for(t, known) for t in tids]``, the process trees (``known``, a
        perfetto_system.ThreadGroups) asked about all of them at once."""
        get_many = getattr(known, "get_many", None)
        if get_many is None:
            return [self.pid_for(t, known) for t in tids]
        tgid_of = self.tgid_of
        return [k or tgid_of.get(t) or t for t, k in zip(tids, get_many(tids))]

    def finish(self, data: PerfData, known_tgid: dict[int, int]) -> None:
        """Rebuild per-thread slice stacks and scheduler states in time order, into ``data``."""
        kernel = kernel_version(data.facts.kernel)
        # the scheduler replay first, its results stored below where they always were (the
        # order of the threads, and what the event cap leaves out, unchanged): the log (~200 MB
        # at 1 GB) is let go before the pairing, add_slice_rows and the binder pass, which held
        # it, and the replay runs before they add their objects; the intervals kept wait
        states = thread_state_columns(self.sched, kernel, self.sched_last_ns, MAX_SCHED_INTERVALS)
        self.sched.clear()
        give_back()  # the replay's columns
        p = pair_rows(self.atrace, release=True)  # the log emptied once paired
        self.unmatched_ends += p.unmatched
        self.unfinished += p.unfinished
        names = self.name_list
        pid_of = dict(zip(p.threads, self.pids_for(p.threads, known_tgid)))
        # the open slices of the threads the event cap lets add_slices reach (the thread it
        # stops in, and those after, add none); threads in order, each thread's rows together
        u = np.array(p.threads, np.int64)
        by_tid = np.argsort(u)
        # the rows come thread by thread, threads in p.threads order (pair_rows): the thread the
        # cap stops in is that of the row at the cap
        room = max(data.max_events - data.stored, 0)
        reached = int(by_tid[np.searchsorted(u[by_tid], p.tid[room])]) if room < len(p.tid) else len(u)
        if len(p.open_t0):
            o_place = by_tid[np.searchsorted(u[by_tid], p.open_tid)]
            k = int(np.searchsorted(o_place, reached, side="left"))
            k = min(k, max(MAX_OPEN_SLICES - len(data.open_slices), 0))
            for tid, t, i in zip(p.open_tid[:k].tolist(), p.open_t0[:k].tolist(), p.open_nid[:k].tolist()):
                data.add_open_slice(pid_of[tid], tid, t / 1000.0, names[i])
        if len(p.t0):
            heads = np.flatnonzero(np.concatenate(([True], p.tid[1:] != p.tid[:-1])))
            head_pids = np.array([pid_of[t] for t in p.tid[heads].tolist()], np.int64)
            # whole threads a block at a time, stored as one call would store them (threads, names
            # and the event cap in row order): add_slice_rows' temporaries, ~100 bytes a row,
            # stay bounded (a 1 GB trace pairs 4 M slices), the pid column made a block at a time
            for lo, hi in thread_blocks(heads, len(p.tid), SLICE_BLOCK):
                t0 = p.t0[lo:hi]
                a, b = np.searchsorted(heads, [lo, hi])
                pids = np.repeat(head_pids[a:b], np.diff(np.append(heads[a:b], hi)))
                data.add_slice_rows(pids, p.tid[lo:hi], t0 / 1000.0, (p.t1[lo:hi] - t0) / 1000.0, p.nid[lo:hi], names)
        del p  # the paired columns: stored now
        self.atrace = AtraceLog()  # emptied by pair_rows already, but for times beyond its numpy pass
        give_back()  # the pairing's and add_slice_rows' temporaries, before the scheduler replay's
        binder = self.binder.columns()
        binder_pid_for = lambda t: self.pid_for(t, known_tgid)  # noqa: E731
        pids = None if binder is None else pids_of(binder[2], binder_pid_for,  # asked once for both
                                                   lambda tids: self.pids_for(tids, known_tgid))
        by_key = debug_id_order(binder)  # sorted once for the three previous_in_group passes
        pair_calls(self.binder, data, binder_pid_for, binder, pids, by_key)
        self.binder.finish(data, binder_pid_for, binder, pids, by_key)
        del binder, pids, by_key
        give_back()  # the binder passes' columns
        if self.binder.dropped:
            data.warn(f"{self.binder.dropped:,} binder events beyond the first were not read")
        for tgid, tid, ts, name in self.instants:
            data.add_instant(self.pid_for(tid, known_tgid) if tgid is None else tgid, tid, ts / 1000.0, name)
        # the intervals kept thread by thread while they fit (the replay drops the others'), as
        # columns: no Python object per thread but its key
        keys = list(zip(self.pids_for(states.tids, known_tgid), states.tids))
        data.add_thread_state_totals(keys, states.totals, COARSE)
        kept = states.kept()
        data.add_sched_intervals_many([keys[i] for i in kept], states.intervals(kept))
        self.sched_intervals_dropped += states.dropped()
        del states, keys, kept
        give_back()  # what the keys' and totals' conversions freed
        if self.sched_intervals_dropped:
            data.warn(f"{self.sched_intervals_dropped:,} scheduler intervals beyond {MAX_SCHED_INTERVALS:,} were "
                      "not kept; per-thread totals still cover them")


def _times(deltas, to_ns) -> np.ndarray:
    """A delta-encoded compact-sched time column → trace-clock ns (int64)."""
    if sum(deltas) >= 1 << 63:
        raise OverflowError("compact sched timestamps beyond 64 bits")
    t = np.cumsum(np.array(deltas, np.uint64)).astype(np.int64)
    if to_ns is identity:
        return t
    return np.array([to_ns(x) for x in t.tolist()], np.int64)


def identity(t: int) -> int:
    """The ftrace clock is the trace clock: times pass unchanged."""
    return t


#: The ftrace event kinds FtraceState.bundle reads; every other kind is skipped. A kind added
#: to bundle goes here too (tests/test_perfetto_slice_pairing.py checks that they agree).
_HANDLED = frozenset({
    "print", "sched_switch", "sched_waking", "zero", "sched_blocked_reason", "binder_transaction",
    "binder_transaction_received", "cpu_frequency", "cpu_idle", "rss_stat", "task_newtask", "task_rename",
})


#: An atrace tgid at or beyond this is no process id (Linux's pid_max is at most 2^22) and would
#: not fit the int64 columns the slices are assembled in: the line counts as malformed.
_TGID_LIMIT = 1 << 63


def _is_int(s: str) -> bool:
    return s.lstrip("-").isdigit()
