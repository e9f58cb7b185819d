"""Ftrace bundles written byte by byte, and the FtraceState / finished PerfData views that the
batch reader's tests compare with the event-by-event reader (tests/test_perfetto_atrace_columns.py,
tests/test_perfetto_batch_names.py)."""

from __future__ import annotations

from nodes.perf.model import PerfData
from nodes.perf.parsers.perfetto_ftrace import FtraceState
from tests.helpers.differential import perfdata_digest
from tests.protowire import field, varint

U64 = (1 << 64) - 1


def v(num: int, value: int) -> bytes:
    return varint(num << 3) + varint(value & U64)


def event(kind: str, ts: int, tid: int, body) -> bytes:
    if kind == "print":
        inner = b"" if body is None else field(2, body)
        payload = field(3, inner)
    elif kind == "zero":
        flag, name, pid, value = body
        payload = field(331, v(1, flag) + field(2, name) + v(3, pid) + v(4, value))
    elif kind == "newtask":
        pid, comm, clone = body
        payload = field(235, v(1, pid) + field(2, comm) + v(3, clone))
    else:
        pid, comm = body
        payload = field(236, v(1, pid) + field(3, comm))
    return v(1, ts) + v(2, tid) + payload


def state(s: FtraceState) -> dict:
    s.sched._flush()
    return {
        "log": [list(c) for c in (s.atrace.tid, s.atrace.ts, s.atrace.code, s.atrace.arg)],
        "tgid_of": list(s.tgid_of.items()), "comm": list(s.comm.items()), "names": list(s.names.items()),
        "name_list": s.name_list, "counters": list(s.counters.items()), "async_open": list(s.async_open.items()),
        "async_slices": s.async_slices, "instants": s.instants, "prints": s.prints,
        "print_failures": s.print_failures, "unmatched_ends": s.unmatched_ends,
        "sched": [sum((chunk[c].tolist() for chunk in s.sched._chunks), []) for c in range(4)],
        "sched_range": (s.sched_first_ns, s.sched_last_ns),
    }


def finished(s: FtraceState) -> dict:
    data = PerfData("perfetto", "random.perfetto-trace")
    s.finish(data, {})
    return perfdata_digest(data)
