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

import re
from array import array
from itertools import accumulate
from dataclasses import dataclass

import numpy as np

from nodes.perf.model import PerfData, SchedIntervals
from nodes.perf.parsers import perfetto_sched
from nodes.perf.parsers.perfetto_binder import BinderState
from nodes.perf.parsers.perfetto_sched import SchedLog
from nodes.perf.parsers.perfetto_slices import AtraceLog, pair

# Event codes in the per-thread atrace columns.
_B, _E = 1, 2
# Event codes in the per-thread sched columns.
_IN, _OUT_RUNNABLE, _OUT_SLEEPING, _OUT_DEAD, _WAKE, _BLOCKED = 0, 1, 2, 3, 4, 5
# Interval state codes: indices into nodes.perf.model.SCHED_STATES.
_S_RUNNING, _S_R, _S_RPLUS, _S_S, _S_D, _S_OTHER = 0, 1, 2, 3, 4, 5
#: prev_state bits of a blocked task: TASK_INTERRUPTIBLE (S), TASK_UNINTERRUPTIBLE (D).
_INTERRUPTIBLE, _UNINTERRUPTIBLE = 0x1, 0x2

#: prev_state bits that mean the task is gone (EXIT_DEAD, EXIT_ZOMBIE, TASK_DEAD).
_DEAD_BITS = 0x10 | 0x20 | 0x80
#: Kernels >= 4.14 report a preempted task as 0x100 ("R+"): still runnable.
_PREEMPT_BIT = 0x100


def decode_prev_state(raw: int, kernel: tuple[int, int] | None) -> tuple[str | None, int]:
    """``sched_switch.prev_state`` → (coarse state, interval state code).

    The coarse state is "runnable", "sleeping" or None (the task died). The bits moved between
    kernels, as trace_processor's ftrace_utils knows: from 4.14 the reported state is R 0,
    S 1, D 2, T 4, t 8, X 16, Z 32, P 64, I 128 and preemption is 0x100; before, X and Z are
    16/32, TASK_DEAD 64, TASK_WAKEKILL 128 (D|K = 130 is a killable sleep, not a death) and
    preemption is TASK_STATE_MAX (1024 on 3.x, 2048 on 4.0–4.13). With no kernel version the
    old reading stays: a dead bit of either layout, else runnable when no low state bit is set.
    """
    if kernel is not None and kernel >= (4, 14):
        preempt, dead, low = _PREEMPT_BIT, 0x10 | 0x20, 0xFF
    elif kernel is not None:
        preempt = 1024 if kernel < (4, 0) else 2048
        dead, low = 0x10 | 0x20 | 0x40, preempt - 1
    else:
        if raw & _DEAD_BITS:
            return None, _S_OTHER
        if raw & 0xFF == 0 or raw == _PREEMPT_BIT:
            return "runnable", (_S_RPLUS if raw & (_PREEMPT_BIT | 1024 | 2048) else _S_R)
        return "sleeping", (_S_D if raw & _UNINTERRUPTIBLE else _S_S if raw & _INTERRUPTIBLE else _S_OTHER)
    if raw & preempt:
        return "runnable", _S_RPLUS
    state = raw & low
    if state & dead:
        return None, _S_OTHER
    if state == 0:
        return "runnable", _S_R
    return "sleeping", (_S_D if state & _UNINTERRUPTIBLE else _S_S if state & _INTERRUPTIBLE else _S_OTHER)


def kernel_version(uname: str | None) -> tuple[int, int] | None:
    """(major, minor) from a ``Linux 5.10.107-android13 …`` line, None when it says none."""
    m = re.search(r"(\d+)\.(\d+)", uname or "")
    return (int(m.group(1)), int(m.group(2))) if m else None
_CLONE_THREAD = 0x00010000

MAX_ASYNC = 100_000
#: Scheduler intervals kept for the whole trace (18 bytes each): beyond this the rest is
#: dropped with a warning; the per-thread totals still cover everything.
MAX_SCHED_INTERVALS = 4_000_000
#: atrace instants ("I|pid|name") kept: Android marks launch completion with one.
MAX_ATRACE_INSTANTS = 50_000


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
        #: (tgid, counter name) → [(ts_ns, value)]
        self.counters: dict[tuple[int, str], list[tuple[int, float]]] = {}
        self.sched = SchedLog()  # every scheduler event, in arrival order
        self._cpu_current: dict[int, int] = {}  # cpu → tid running on it (compact sched)
        self.names: dict[str, int] = {}
        self.name_list: list[str] = []
        self.prints = 0
        self.print_failures = 0
        self.zero_events = 0
        self.switches = 0
        self.compact_switches = 0
        self.wakings = 0
        self.unmatched_ends = 0
        self.unfinished = 0
        self.sched_first_ns: int | None = None
        self.sched_last_ns: int | None = None
        self.unknown_clock = False
        self._saw_waking = False
        self.blocked_reasons = 0
        #: (tgid, tid, ts_ns, name) of atrace instants.
        self.instants: list[tuple[int, int, int, str]] = []
        #: binder_transaction / _received → "binder transaction" / "binder reply" slices.
        self.binder = BinderState()
        self.sched_intervals_dropped = 0

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
    def bundle(self, b, to_ns) -> None:
        """One ``FtraceEventBundle``; ``to_ns(ts)`` maps the ftrace clock onto the trace clock."""
        cpu = b.cpu
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
                buf = e.print.buf
                if isinstance(buf, bytes):  # protobuf hands invalid UTF-8 back as bytes
                    buf = buf.decode("utf-8", "replace")
                ts = e.timestamp if same_clock else to_ns(e.timestamp)
                if buf[:1] == "E" and buf.isascii():  # half of all prints: a slice end, nothing to parse
                    push_atrace(tid, ts, _E)
                else:
                    self._atrace_line(ts, tid, buf)
            elif kind == "sched_switch":
                self._switch(cpu, to_ns(e.timestamp), e.sched_switch)
            elif kind == "sched_waking":
                self._saw_waking = True
                w = e.sched_waking
                self._wake(to_ns(e.timestamp), w.pid, w.comm)
            elif kind == "sched_wakeup" and not self._saw_waking:
                # Waking and wakeup mark the same transition: use wakeup only when alone.
                w = e.sched_wakeup
                self._wake(to_ns(e.timestamp), w.pid, w.comm)
            elif kind == "sched_wakeup_new":
                w = e.sched_wakeup_new
                self._wake(to_ns(e.timestamp), w.pid, w.comm)
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
            elif kind == "task_newtask":
                nt = e.task_newtask
                if nt.comm:
                    self.comm[nt.pid] = nt.comm
                if nt.clone_flags & _CLONE_THREAD:
                    self.tgid_of.setdefault(nt.pid, self.tgid_of.get(tid, tid))
                else:
                    self.tgid_of.setdefault(nt.pid, nt.pid)
            elif kind == "task_rename":
                if e.task_rename.newcomm:
                    self.comm[e.task_rename.pid] = e.task_rename.newcomm

    def _compact(self, cpu: int, cs, to_ns) -> None:
        """Compact sched: delta-encoded timestamps, comms interned per bundle, prev implicit.

        The columns go to the scheduler log whole (``SchedLog.add_compact``) when they are
        well formed, the clock needs no conversion and the times fit in int64 (every real
        trace); otherwise one switch at a time (:meth:`_compact_each`). Comm names follow the
        same rules either way: a switch names its next task, a wake-up names a task not yet
        named.
        """
        deltas = list(cs.switch_timestamp)
        wdeltas = list(cs.waking_timestamp)
        n, m = len(deltas), len(wdeltas)
        table = list(cs.intern_table)
        nxt = list(cs.switch_next_pid)[:n]
        ci = list(cs.switch_next_comm_index)[:n]
        wpid = list(cs.waking_pid)[:m]
        wci = list(cs.waking_comm_index)[:m]
        ts = list(accumulate(deltas))
        wts = list(accumulate(wdeltas))
        if (to_ns is not identity or len(nxt) < n or len(wpid) < m
                or (n and ts[-1] >= perfetto_sched.SAFE_NS) or (m and wts[-1] >= perfetto_sched.SAFE_NS)
                or (ci and max(ci) >= len(table)) or (wci and max(wci) >= len(table)) or "" in table):
            self._compact_each(cpu, cs, to_ns)
            return
        if n:
            comm = self.comm
            had_zero = comm.get(0, _MISSING)
            comm.update(zip(nxt[: len(ci)], map(table.__getitem__, ci)))  # a switch names its next task
            if had_zero is _MISSING:  # ... unless it is the idle task
                comm.pop(0, None)
            else:
                comm[0] = had_zero
            states = list(cs.switch_prev_state)[:n]
            if len(states) < n:
                states += [1] * (n - len(states))
            self._sched_seen(min(ts))
            self._sched_seen(max(ts))
            prev0 = self._cpu_current.get(cpu) or 0
            self._cpu_current[cpu] = nxt[-1]
            self.compact_switches += n
        else:
            states, prev0 = [], 0
        if m:
            named = dict(zip(reversed(wpid[: len(wci)]), reversed(wci)))  # each tid's first name
            named.pop(0, None)
            comm = self.comm
            for tid, i in named.items():
                comm.setdefault(tid, table[i])
            real = wts if 0 not in wpid else [t for t, p in zip(wts, wpid) if p]
            if real:
                self._sched_seen(min(real))
                self._sched_seen(max(real))
            self.wakings += len(real)
        self.sched.add_compact(prev0, ts, nxt, states, wts, wpid)

    def _compact_each(self, cpu: int, cs, to_ns) -> None:
        """Compact sched one event at a time: times beyond int64 or on a converted clock."""
        table = list(cs.intern_table)
        ts = 0
        prev_states = cs.switch_prev_state
        next_pids = cs.switch_next_pid
        comm_idx = cs.switch_next_comm_index
        for i, delta in enumerate(cs.switch_timestamp):
            ts += delta
            t = to_ns(ts)
            nxt = next_pids[i]
            if i < len(comm_idx) and comm_idx[i] < len(table) and nxt:
                self.comm[nxt] = table[comm_idx[i]]
            prev = self._cpu_current.get(cpu)
            self._switch_pair(cpu, t, prev, prev_states[i] if i < len(prev_states) else 1, nxt)
            self.compact_switches += 1
        ts = 0
        wake_pids = cs.waking_pid
        wake_comm = cs.waking_comm_index
        for i, delta in enumerate(cs.waking_timestamp):
            ts += delta
            comm = table[wake_comm[i]] if i < len(wake_comm) and wake_comm[i] < len(table) else ""
            self._wake(to_ns(ts), wake_pids[i], comm)

    def _switch(self, cpu: int, ts: int, sw) -> None:
        self.switches += 1
        if sw.prev_pid and sw.prev_comm:
            self.comm.setdefault(sw.prev_pid, sw.prev_comm)
        if sw.next_pid and sw.next_comm:
            self.comm[sw.next_pid] = sw.next_comm
        self._switch_pair(cpu, ts, sw.prev_pid, sw.prev_state, sw.next_pid)

    def _switch_pair(self, cpu: int, ts: int, prev: int | None, prev_state: int, nxt: int) -> None:
        self._sched_seen(ts)
        if prev:  # tid 0 is the idle task: not a thread anyone asks about
            if prev_state & _DEAD_BITS:
                code = _OUT_DEAD
            elif prev_state & 0xFF == 0 or prev_state == _PREEMPT_BIT:
                code = _OUT_RUNNABLE
            else:
                code = _OUT_SLEEPING
            self.sched.push(prev, ts, code, prev_state)
        if nxt:
            self.sched.push(nxt, ts, _IN)
        self._cpu_current[cpu] = nxt

    def _wake(self, ts: int, tid: int, comm: str) -> None:
        if not tid:
            return
        self.wakings += 1
        self._sched_seen(ts)
        if comm:
            self.comm.setdefault(tid, comm)
        self.sched.push(tid, ts, _WAKE)

    def _zero(self, ts: int, tid: int, z) -> None:
        """Kernel ``systrace/0`` events: atrace in a kernel tracepoint (flag bits B=1, E=2, C=4)."""
        self.zero_events += 1
        tgid = z.pid or tid
        if z.flag & 1:
            self.tgid_of.setdefault(tid, tgid)
            self.atrace.push(tid, ts, _B, self._name_id(z.name or "[empty slice name]"))
        elif z.flag & 2:
            self.atrace.push(tid, ts, _E)
        elif z.flag & 4:
            self._counter(tgid, z.name, ts, float(z.value))

    def _counter(self, tgid: int, name: str, ts: int, value: float) -> None:
        pts = self.counters.setdefault((tgid, name), [])
        if len(pts) < 20_000:
            pts.append((ts, value))

    def _atrace_line(self, ts: int, tid: int, buf: str) -> None:
        """One ``tracing_mark_write`` line, in the formats Perfetto's systrace parser accepts."""
        line = buf.rstrip("\n\0")
        if line[:1] == "B":  # the common case first: B|tgid|name
            p = line.split("|", 2)
            if len(p) > 1 and p[1].isdigit():
                tgid = int(p[1])
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

    def finish(self, data: PerfData, known_tgid: dict[int, int]) -> None:
        """Rebuild per-thread slice stacks and scheduler states in time order, into ``data``."""
        kernel = kernel_version(data.meta.get("kernel"))
        threads, unmatched, unfinished = pair(self.atrace)
        self.unmatched_ends += unmatched
        self.unfinished += unfinished
        names = self.name_list
        for tid, t0, t1, nid in threads:
            if len(t0):
                data.add_slices(self.pid_for(tid, known_tgid), tid, (t0 / 1000.0).tolist(),
                                ((t1 - t0) / 1000.0).tolist(), [names[i] for i in nid.tolist()])
        self.atrace = AtraceLog()
        self.binder.finish(data, lambda t: self.pid_for(t, known_tgid))
        if self.binder.dropped:
            data.warn(f"{self.binder.dropped:,} binder events beyond the first were not read")
        for tgid, tid, ts, name in self.instants:
            data.add_instant(self.pid_for(tid, known_tgid) if tgid is None else tgid, tid, ts / 1000.0, name)
        end = self.sched_last_ns
        kept = 0
        rows = perfetto_sched.thread_states(self.sched, kernel, end)
        if rows is None:  # times numpy cannot hold: the reference walk, thread by thread
            rows = []
            for tid in self.sched.tids():
                totals, iv = self._thread_states(*self.sched.thread_events(tid), kernel, end)
                rows.append((tid, [totals[k] for k in perfetto_sched.COARSE], iv))
        for tid, totals, iv in rows:
            pid = self.pid_for(tid, known_tgid)
            for k, v in zip(perfetto_sched.COARSE, totals):
                if v:
                    data.add_thread_state(pid, tid, k, v / 1000.0)
            if iv is None:
                continue
            if not isinstance(iv, SchedIntervals):
                iv = SchedIntervals(*perfetto_sched.as_arrays(iv))
            if len(iv):
                if kept + len(iv) <= MAX_SCHED_INTERVALS:
                    data.sched_intervals[(pid, tid)] = iv
                    kept += len(iv)
                else:
                    self.sched_intervals_dropped += len(iv)
        self.sched = SchedLog()
        if self.sched_intervals_dropped:
            data.warn(f"{self.sched_intervals_dropped:,} scheduler intervals beyond {MAX_SCHED_INTERVALS:,} were "
                      "not kept; per-thread totals still cover them")

    @staticmethod
    def _thread_states(ts_col, code_col, arg_col, kernel: tuple[int, int] | None, end: int | None):
        """One thread's events (in arrival order) taken in time order → (totals ns by coarse
        state, SchedIntervals): the reference for perfetto_sched.thread_states, which builds the
        same for every thread at once.

        An interval is [since, ts) in one state. ``sched_blocked_reason`` says whether the last
        blocked (S/D) interval waited on IO — the open one when it comes while still asleep.
        """
        totals = {"running": 0, "runnable": 0, "sleeping": 0}
        starts: list[int] = []
        ends: list[int] = []
        codes: list[int] = []
        ios: list[int] = []
        state: str | None = None
        detail = _S_OTHER
        since = 0
        open_io = -1  # IO verdict for the open interval
        last_blocked = -1  # index of the last closed blocked interval
        blocked_codes = (_S_S, _S_D, _S_OTHER)
        for i in sorted(range(len(ts_col)), key=ts_col.__getitem__):
            ts, code = ts_col[i], code_col[i]
            if code == _BLOCKED:
                if state == "sleeping":
                    open_io = arg_col[i]
                elif last_blocked >= 0:
                    ios[last_blocked] = arg_col[i]
                continue
            if code == _WAKE and state is not None and state != "sleeping":
                continue
            if state is not None:
                totals[state] += ts - since
                if ts > since:
                    starts.append(since)
                    ends.append(ts)
                    codes.append(detail)
                    ios.append(open_io)
                    if detail in blocked_codes:
                        last_blocked = len(codes) - 1
            open_io = -1
            since = ts
            if code == _WAKE:
                state, detail = "runnable", _S_R
            elif code == _IN:
                state, detail = "running", _S_RUNNING
            else:  # switched out: what it left as, read with this kernel's bit layout
                state, detail = decode_prev_state(arg_col[i], kernel)
        if state is not None and end is not None:
            totals[state] += end - since
            if end > since:
                starts.append(since)
                ends.append(end)
                codes.append(detail)
                ios.append(open_io)
        iv = SchedIntervals(
            ts=array("d", [t / 1000.0 for t in starts]),
            dur=array("d", [(e - t) / 1000.0 for t, e in zip(starts, ends)]),
            state=array("b", codes), io_wait=array("b", ios),
        )
        return totals, iv


_MISSING = object()
#: The ftrace event kinds FtraceState.bundle reads; every other kind is skipped.
_HANDLED = frozenset({
    "print", "sched_switch", "sched_waking", "sched_wakeup", "sched_wakeup_new", "zero",
    "sched_blocked_reason", "binder_transaction", "binder_transaction_received", "task_newtask",
    "task_rename",
})


def identity(t: int) -> int:
    """The ftrace clock is the trace clock: times pass unchanged."""
    return t


def _sums_fit(deltas: np.ndarray) -> bool:
    """Do the running sums of these unsigned deltas stay well inside int64?"""
    return not len(deltas) or int(deltas.max()) * len(deltas) < perfetto_sched.SAFE_NS


def _is_int(s: str) -> bool:
    return s.lstrip("-").isdigit()
