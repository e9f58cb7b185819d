"""The batch reader's scheduler-side kinds (perfetto_ftrace_batch._apply: blocked reasons,
binder, cpu frequency / idle, rss_stat) against the event-by-event reader (FtraceState.bundle)
on random bundles: the same CPU series and drop counts, the same memory series, mm_id owners
and unowned count, the same binder and scheduler rows, and the same PerfData once finished —
with caps of a few points, read in two batches so that the second meets series (and mm_id
owners) the first stored and the caps count what it kept."""

from __future__ import annotations

from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

from nodes.perf.parsers import perfetto_cpu, perfetto_ftrace_batch, perfetto_memory
from nodes.perf.parsers.perfetto_ftrace import FtraceState
from nodes.perf.parsers.perfetto_ftrace_batch import read_batch
from tests.helpers.ftrace_events import finished as _finished
from tests.helpers.ftrace_events import state as _state
from tests.helpers.ftrace_events import v as _v
from tests.protowire import field

# kind → (FtraceEvent field number, the inner fields drawn: (number, values))
_KINDS = {
    "cpu_frequency": (11, [(1, st.sampled_from([0, 300, 1800, (1 << 32) - 1])), (2, st.integers(0, 3))]),
    "cpu_idle": (13, [(1, st.sampled_from([0, 1, (1 << 32) - 1])), (2, st.integers(0, 3))]),
    "rss_stat": (313, [(1, st.sampled_from([0, 1, 2, 3, 4, 5, -1])), (2, st.sampled_from([0, 4096, 1 << 30, -8])),
                       (3, st.sampled_from([0, 1, 2])), (4, st.sampled_from([0, 7, 9, 1 << 32]))]),
    "sched_blocked_reason": (18, [(1, st.sampled_from([0, 3, 4, -1])), (3, st.sampled_from([0, 1, 2]))]),
    "binder_transaction": (50, [(1, st.integers(0, 3)), (5, st.sampled_from([0, 1])), (7, st.sampled_from([0, 1, 16]))]),
    "binder_transaction_received": (51, [(1, st.integers(0, 3))]),
}


@st.composite
def _event(draw) -> bytes:
    kind = draw(st.sampled_from(sorted(_KINDS)))
    num, fields = _KINDS[kind]
    # each field present or not (a missing mm_id, a missing io_wait read as their defaults)
    body = b"".join(_v(f, draw(values)) for f, values in fields if draw(st.booleans()) or f == 1)
    return _v(1, draw(st.integers(0, 40))) + _v(2, draw(st.integers(1, 5))) + field(num, body)


_bundles = st.lists(st.tuples(st.integers(0, 2), st.lists(_event(), max_size=12)), max_size=6)


def _items(bundles) -> list:
    out = []
    for cpu, events in bundles:
        raw = field(1, _v(1, cpu) + b"".join(field(2, e) for e in events))
        out.append((pb.TracePacket.FromString(raw).ftrace_events, raw))
    return out


def _view(s: FtraceState) -> dict:
    return {**_state(s), "cpu": (sorted(s.cpu.cpus), list(s.cpu.frequency.items()), list(s.cpu.idle.items()),
                                 s.cpu.dropped),
            "memory": (list(s.memory.rss_by_tid.items()), list(s.memory.mm_owner.items()), s.memory.rss_unowned,
                       s.memory.dropped),
            "blocked": s.blocked_reasons}


@settings(max_examples=400, deadline=None)
@given(_bundles, st.integers(0, 6), st.sampled_from([1, 3, 1000]))
def test_batch_kinds_equal_the_event_by_event_reader(bundles, cut, cap):
    items = _items(bundles)
    with mock.patch.object(perfetto_cpu, "MAX_POINTS", cap), mock.patch.object(perfetto_memory, "MAX_POINTS", cap), \
            mock.patch.object(perfetto_ftrace_batch, "CPU_MAX_POINTS", cap), \
            mock.patch.object(perfetto_ftrace_batch, "MEMORY_MAX_POINTS", cap):
        want = FtraceState()
        assert sum(want.bundle_checked(b) for b, _ in items) == 0
        got = FtraceState()
        assert read_batch(got, items[:cut]) + read_batch(got, items[cut:]) == 0
        assert _view(got) == _view(want)
        assert _finished(got) == _finished(want)
