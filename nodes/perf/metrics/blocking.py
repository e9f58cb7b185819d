"""What the app's main thread waited on: binder calls, lock contention, uninterruptible sleep —
and whether each wait fell inside the startup or a janky frame, so "why was this frame late"
can name the binder call or the lock.

* Binder: the thread's synchronous calls (``nodes/perf/parsers/perfetto_binder_calls.py``,
  paired as trace_processor's BinderTracker does; its ``android_binder_txns`` has the same
  client / server / duration columns), with the server process and thread.
* Locks: ART's contention slices, parsed as trace_processor's ``android_monitor_contention``
  (``stdlib/android/monitor_contention.sql``) reads ``monitor contention with owner <thread>
  (<tid>) at <method> waiters=<n> blocking from <method>``; ``Lock contention on <lock>
  (owner tid: <tid>)`` for ART's other locks (the ``… on a monitor lock`` parent of a monitor
  slice is not counted twice).
* D state: ``thread_state`` ``D`` intervals, with ``io_wait`` from ``sched_blocked_reason``. The
  blocked function is that event's ``caller``, a kernel address: without the kernel's symbols
  in the trace it cannot be named, and ``missing`` says so.
"""

from __future__ import annotations

import re
from collections import defaultdict

from nodes.perf.metrics.slice_find import find_slices, name_ids
from nodes.perf.sched_state import SchedState
from nodes.perf.model import (
    BinderServer, BinderWait, BlockingOverlap, BlockingStats, LockWait, MissingData, PerfData,
    StateWait,
)
from nodes.perf.units import counted

TOP = 20
_D = int(SchedState.D)
_MONITOR = re.compile(
    r"^monitor contention with owner (?P<owner>.+?) \((?P<owner_tid>\d+)\)"
    r"(?: at (?P<owner_method>.+?))?(?: waiters=(?P<waiters>\d+))?(?: blocking from (?P<blocked>.+))?$"
)
_LOCK = re.compile(r"^Lock contention on (?P<lock>.+?) \(owner tid: (?P<owner_tid>\d+)\)$")
CAPTURE_BLOCKED = """data_sources { config { name: "linux.ftrace" ftrace_config {
  ftrace_events: "sched/sched_blocked_reason" symbolize_ksyms: true } } }"""
CAPTURE_BINDER = """data_sources { config { name: "linux.ftrace" ftrace_config {
  ftrace_events: "binder/binder_transaction" ftrace_events: "binder/binder_transaction_received"
  atrace_categories: "dalvik" } } }"""


class _Windows:
    """The app's startup and janky frames (µs), to say which ones a wait overlapped."""

    def __init__(self, ctx):
        pd: PerfData = ctx.pd
        self.t0 = ctx.t0
        self.startups = []
        st = ctx.res.startup
        if st is not None:
            for r in st.runs:
                if r.start_ms is not None:
                    a = self.t0 + r.start_ms * 1000.0
                    self.startups.append((a, a + r.total_ms * 1000.0))
        app = ctx.scope.pid if ctx.scope is not None else None
        end = pd.end_us if pd.end_us is not None else 0.0
        # a frame whose end never arrived lasts to the end of the trace
        self.frames = sorted((f.ts_us, f.ts_us + f.dur_us if f.dur_us is not None else max(f.ts_us, end))
                             for f in pd.frames if f.janky and (app is None or f.pid in (None, app)))

    def of(self, a: float, b: float) -> BlockingOverlap:
        return BlockingOverlap(
            in_startup=any(a < e and b > s for s, e in self.startups),
            janky_frames=[round((s - self.t0) / 1000.0, 3) for s, e in self.frames if a < e and b > s][:10],
        )


def _label(pd: PerfData, pid: int | None, tid: int | None) -> str | None:
    if tid is None:
        return None
    return pd.thread_label(pid if pid is not None else tid, tid)


def _lock(pd: PerfData, name: str, pid: int, tid: int, ts: float, dur: float, w: _Windows, ctx) -> LockWait | None:
    m = _MONITOR.match(name)
    if m:
        return LockWait(
            thread=pd.thread_label(pid, tid), tid=tid, start_ms=ctx.rel(ts), dur_ms=round(dur / 1000.0, 3),
            lock="monitor", owner=m["owner"], owner_tid=int(m["owner_tid"]), owner_method=m["owner_method"],
            blocked_method=m["blocked"], waiters=int(m["waiters"]) if m["waiters"] else None,
            overlap=w.of(ts, ts + dur),
        )
    m = _LOCK.match(name)
    if m and m["lock"] != "a monitor lock":
        owner_tid = int(m["owner_tid"])
        owner = next((t.name for (p, t_), t in pd.threads.items() if t_ == owner_tid and t.name), None) if owner_tid else None
        return LockWait(
            thread=pd.thread_label(pid, tid), tid=tid, start_ms=ctx.rel(ts), dur_ms=round(dur / 1000.0, 3),
            lock=m["lock"], owner=owner, owner_tid=owner_tid or None, overlap=w.of(ts, ts + dur),
        )
    return None


def blocking(ctx) -> BlockingStats | None:
    """None when the data holds none of binder calls, lock contention slices or the main
    thread's scheduler intervals."""
    pd: PerfData = ctx.pd
    if ctx.main is None or pd.format not in ("perfetto", "atrace"):
        return None
    pid, tid = ctx.main
    w = _Windows(ctx)
    out = BlockingStats(thread=pd.thread_label(pid, tid), pid=pid, tid=tid)
    # binder
    mine = [c for c in pd.binder_calls if c.client_tid == tid and not c.oneway and c.dur_us is not None]
    out.binder_calls = len(mine)
    out.binder_ms = round(sum(c.dur_us for c in mine) / 1000.0, 3)
    servers: dict[str, list[float]] = defaultdict(list)
    for c in mine:
        servers[pd.processes.get(c.server_pid, f"pid {c.server_pid}") if c.server_pid else "unknown"].append(c.dur_us)
    out.binder_servers = [
        BinderServer(server=s, calls=len(d), total_ms=round(sum(d) / 1000.0, 3), max_ms=round(max(d) / 1000.0, 3))
        for s, d in sorted(servers.items(), key=lambda kv: -sum(kv[1]))[:10]
    ]
    for c in sorted(mine, key=lambda c: -c.dur_us)[:TOP]:
        out.binder.append(BinderWait(
            client=pd.thread_label(pid, tid), client_tid=tid,
            server=pd.processes.get(c.server_pid) if c.server_pid else None,
            server_thread=_label(pd, c.server_pid, c.server_tid), server_tid=c.server_tid,
            start_ms=ctx.rel(c.ts_us), dur_ms=round(c.dur_us / 1000.0, 3), overlap=w.of(c.ts_us, c.ts_us + c.dur_us),
        ))
    # locks
    main_locks: list[LockWait] = []
    other: list[LockWait] = []
    ids = name_ids(pd, lambda s: s.startswith("monitor contention with owner") or s.startswith("Lock contention on "))
    for (p, t), ts, dur, nid in find_slices(pd, ids, keys=[k for k in pd.slices if k[0] == pid]):
        lw = _lock(pd, pd.strings[nid], p, t, ts, dur, w, ctx)
        if lw is not None:
            (main_locks if t == tid else other).append(lw)
    out.lock_waits = len(main_locks)
    out.lock_ms = round(sum(x.dur_ms for x in main_locks), 3)
    out.locks = sorted(main_locks, key=lambda x: -x.dur_ms)[:TOP]
    out.other_locks = sorted(other, key=lambda x: -x.dur_ms)[:10]
    # D state
    iv = pd.sched_intervals.get((pid, tid))
    if iv is None and not pd.binder_calls and not main_locks and not other:
        return None  # nothing this lens reads is in the data: the lens says what is missing
    if iv is not None:
        d_all = [(ts, dur, io) for ts, dur, st, io in zip(iv.ts, iv.dur, iv.state, iv.io_wait) if st == _D]
        out.d_ms = round(sum(d for _, d, _ in d_all) / 1000.0, 3)
        if any(io >= 0 for _, _, io in d_all):
            out.io_wait_ms = round(sum(d for _, d, io in d_all if io == 1) / 1000.0, 3)
        for ts, dur, io in sorted(d_all, key=lambda x: -x[1])[:TOP]:
            out.d_state.append(StateWait(start_ms=ctx.rel(ts), dur_ms=round(dur / 1000.0, 3),
                                         io_wait=None if io < 0 else bool(io), overlap=w.of(ts, ts + dur)))
        if d_all:
            out.missing.append(MissingData(
                what="the kernel function each uninterruptible sleep blocked in",
                why="sched_blocked_reason gives it as a kernel address and the trace has no kernel symbols",
                capture=CAPTURE_BLOCKED,
            ))
    else:
        out.missing.append(MissingData(what="the main thread's uninterruptible sleep (D) and IO wait",
                                       why="the trace has no scheduler events for it", capture=CAPTURE_BLOCKED))
    if not pd.binder_calls:
        out.missing.append(MissingData(what="binder calls with their server",
                                       why="the trace has no binder_transaction ftrace events", capture=CAPTURE_BINDER))
    return out


def summarize_blocking(b: BlockingStats | None) -> str:
    """One sentence with the numbers: the longest waits on the main thread and what they waited
    on; what the trace did not record is said, never shown as 0 ms."""
    if b is None:
        return "No blocking data: no main thread with scheduler or binder events."
    lacking = {m.what for m in b.missing}
    no_binder = "binder calls with their server" in lacking
    no_sched = "the main thread's uninterruptible sleep (D) and IO wait" in lacking
    if no_binder:
        bits = [f"{b.thread}: binder calls not recorded"]
    else:
        bits = [f"{b.thread} waited {b.binder_ms:.0f} ms in {counted(b.binder_calls, 'binder call')}"]
        if b.binder:
            top = b.binder[0]
            bits[0] += f" (longest {top.dur_ms:.1f} ms to {top.server or 'an unknown process'})"
    if b.lock_waits or b.other_locks:
        bits.append(f"{b.lock_ms:.0f} ms on {counted(b.lock_waits, 'lock')}" + (
            f" (longest {b.locks[0].dur_ms:.1f} ms, owner {b.locks[0].owner or f'tid {b.locks[0].owner_tid}'})"
            if b.locks else ""))
    else:
        # no contention slice in the whole app: "0 ms on 0 locks" would read as measured, and ART
        # writes them only with atrace category dalvik (trace_processor android_monitor_contention)
        bits.append("no lock contention slices in the trace (ART writes them with atrace category dalvik)")
    if no_sched:
        bits.append("uninterruptible sleep not recorded (no scheduler events)")
    else:
        d = f"{b.d_ms:.0f} ms in uninterruptible sleep"
        if b.io_wait_ms is not None:
            d += f", {b.io_wait_ms:.0f} ms of it IO"
        bits.append(d)
    return ", ".join(bits) + "."
