"""An independent model of trace_processor's ``thread_state`` table, for tests only.

Written from perfetto's sources, not from ``nodes/perf/parsers/perfetto_ftrace.py``:
src/trace_processor/importers/common/thread_state_tracker.cc (the state machine),
importers/ftrace/ftrace_sched_event_tracker.cc (compact sched: the first switch per CPU is
skipped, a compact waking before the CPU's first switch is dropped), importers/ftrace/
ftrace_parser.cc (``sched_waking`` opens R; ``sched_wakeup`` is only an instant;
``task_newtask`` opens R) and types/task_state.cc (``prev_state`` → state string).

Unlike the reader it decodes the whole trace with protobuf, puts every event of every CPU in
one list sorted by time, and replays it through one state machine — the order
trace_processor's sorter hands events to its parser.
"""

from __future__ import annotations

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb


def task_state(raw: int, kernel: tuple[int, int] | None) -> str | None:
    """types/task_state.cc: the string trace_processor stores, None when invalid."""
    version = kernel or (4, 4)
    letters = [(0x1, "S"), (0x2, "D"), (0x4, "T"), (0x8, "t"), (0x10, "X"), (0x20, "Z")]
    flags = {c for bit, c in letters if raw & bit}
    preempted = False
    if version >= (4, 14):
        if raw & 0x40:
            flags.add("P")
        if raw & 0x80:
            flags.add("I")
        preempted = bool(raw & 0x100)
        if raw & 0xFE00:
            return None
    else:
        for bit, c in ((0x40, "x"), (0x80, "K"), (0x100, "W"), (0x200, "P"), (0x400, "N")):
            if raw & bit:
                flags.add(c)
        if flags == {"D", "N"}:
            flags = {"I"}
        preempted = bool(raw & (0x1000 if version >= (4, 8) else 0x800))
    if not flags:
        return "R+" if preempted else "R"
    return "".join(c for c in "SDTtXZPxKWNI" if c in flags)


def _kernel(uname: str) -> tuple[int, int] | None:
    parts = uname.split(".")
    try:
        return int(parts[0]), int(parts[1])
    except (IndexError, ValueError):
        return None


def thread_states(path: str) -> dict[int, list[list]]:
    """tid → rows [ts_ns, dur_ns (-1 while open), state, io_wait (None/True/False)]."""
    trace = pb.Trace()
    with open(path, "rb") as f:
        trace.ParseFromString(f.read())
    kernel = None
    events: list[tuple] = []  # (ts, arrival, kind, cpu, a, b)
    n = 0
    for p in trace.packet:
        if p.HasField("system_info") and p.system_info.utsname.release:
            kernel = _kernel(p.system_info.utsname.release)
        if not p.HasField("ftrace_events"):
            continue
        bundle = p.ftrace_events
        cpu = bundle.cpu
        if bundle.HasField("compact_sched"):
            cs = bundle.compact_sched
            ts = 0
            for i, d in enumerate(cs.switch_timestamp):
                ts += d
                events.append((ts, n, "cswitch", cpu, cs.switch_prev_state[i], cs.switch_next_pid[i]))
                n += 1
            ts = 0
            for i, d in enumerate(cs.waking_timestamp):
                ts += d
                events.append((ts, n, "cwaking", cpu, cs.waking_pid[i], 0))
                n += 1
        for e in bundle.event:
            kind = e.WhichOneof("event")
            if kind == "sched_switch":
                s = e.sched_switch
                events.append((e.timestamp, n, "switch", cpu, (s.prev_pid, s.prev_state), s.next_pid))
            elif kind == "sched_waking":
                events.append((e.timestamp, n, "waking", cpu, e.sched_waking.pid, 0))
            elif kind == "task_newtask":
                events.append((e.timestamp, n, "newtask", cpu, e.task_newtask.pid, 0))
            elif kind == "sched_blocked_reason" and e.sched_blocked_reason.HasField("io_wait"):
                events.append((e.timestamp, n, "blocked", cpu, e.sched_blocked_reason.pid,
                               bool(e.sched_blocked_reason.io_wait)))
            n += 1
    events.sort(key=lambda x: (x[0], x[1]))

    rows: dict[int, list[list]] = {}
    last_blocked: dict[int, list] = {}
    cpu_last: dict[int, int] = {}

    def last(tid):
        r = rows.get(tid)
        return r[-1] if r else None

    def close(ts, tid, data_loss=False):
        r = last(tid)
        if r is not None and not data_loss:
            r[1] = ts - r[0]

    def open_(ts, tid, state):
        if tid == 0:  # the swapper
            return
        row = [ts, -1, state, None]
        rows.setdefault(tid, []).append(row)
        if state == "Running":
            last_blocked.pop(tid, None)  # RelatedRows{nullopt, row}: no blocked row to patch
        elif state != "R":
            last_blocked[tid] = row

    def switch(ts, prev, state, nxt):
        r = last(prev)
        close(ts, prev, data_loss=r is not None and r[2] != "Running")
        open_(ts, prev, state)
        close(ts, nxt)
        open_(ts, nxt, "Running")

    def waking(ts, tid):
        r = last(tid)
        if r is None:
            open_(ts, tid, "R")
            return
        if r[2] in ("Running", "R"):
            return
        close(ts, tid)
        open_(ts, tid, "R")

    for ts, _, kind, cpu, a, b in events:
        if kind == "cswitch":
            if cpu not in cpu_last:
                cpu_last[cpu] = b
                continue
            prev = cpu_last[cpu]
            cpu_last[cpu] = b
            switch(ts, prev, task_state(a, kernel), b)
        elif kind == "cwaking":
            if cpu in cpu_last:
                waking(ts, a)
        elif kind == "switch":
            prev_pid, prev_state = a
            switch(ts, prev_pid, task_state(prev_state, kernel), b)
        elif kind == "waking":
            waking(ts, a)
        elif kind == "newtask":
            open_(ts, a, "R")
        elif kind == "blocked":
            row = last_blocked.get(a)
            if row is not None:
                row[3] = b
    return rows


def time_in_states(rows: list[list], start: int, end: int) -> dict[str, int]:
    """ns per state of one thread's closed rows, clipped to [start, end)."""
    out: dict[str, int] = {}
    for ts, dur, state, _io in rows:
        if dur < 0:
            continue
        a, b = max(ts, start), min(ts + dur, end)
        if b > a:
            out[state] = out.get(state, 0) + b - a
    return out
