"""Thread names in the batch reader (perfetto_ftrace_batch._Names, set once per run of bundles)
against the event-by-event reader (FtraceState.bundle, which sets them switch by switch, waking
by waking, event by event): random bundles of compact-sched switches and wakings naming threads
from their intern tables, mixed with new tasks, renames and print lines (a malformed one cuts a
run short), read in two batches so that names stored by the first meet the second. The same
``comm`` (values and key order), the same FtraceState, the same PerfData once finished."""

from __future__ import annotations

from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

from nodes.perf.parsers.perfetto_ftrace import FtraceState
from nodes.perf.parsers.perfetto_ftrace_batch import read_batch
from tests.protowire import field, varint
from tests.helpers.ftrace_events import U64 as _U64
from tests.helpers.ftrace_events import event as _event
from tests.helpers.ftrace_events import finished as _finished
from tests.helpers.ftrace_events import state as _state
from tests.helpers.ftrace_events import v as _v


def _packed(num: int, values: list[int]) -> bytes:
    return field(num, b"".join(varint(v & _U64) for v in values)) if values else b""


def _bundle(cpu, table, switches, wakings, events) -> tuple:
    cs = b"".join(field(5, name) for name in table)
    cs += _packed(1, [s[0] for s in switches]) + _packed(2, [s[1] for s in switches])
    cs += _packed(3, [s[2] for s in switches]) + _packed(6, [s[3] for s in switches])
    cs += _packed(7, [w[0] for w in wakings]) + _packed(8, [w[1] for w in wakings])
    cs += _packed(11, [w[2] for w in wakings])
    raw_bundle = _v(1, cpu) + b"".join(field(2, _event(*e)) for e in events)
    if cs:
        raw_bundle += field(4, cs)
    raw = field(1, raw_bundle)
    return pb.TracePacket.FromString(raw).ftrace_events, raw


_pid = st.integers(0, 6)
_index = st.integers(0, 4)  # past the table now and then: such a name is not read
_switch = st.tuples(st.integers(1, 5), st.sampled_from([0, 1, 2]), _pid, _index)
_waking = st.tuples(st.integers(0, 5), _pid, _index)
_events = st.lists(st.one_of(
    st.tuples(st.just("newtask"), st.integers(0, 30), st.integers(1, 5),
              st.tuples(st.integers(1, 6), st.sampled_from([b"", b"t", b"u"]), st.sampled_from([0, 0x10000]))),
    st.tuples(st.just("rename"), st.integers(0, 30), st.integers(1, 5),
              st.tuples(st.integers(1, 6), st.sampled_from([b"", b"r"]))),
    st.tuples(st.just("print"), st.integers(0, 30), st.integers(1, 5),
              st.sampled_from([b"E", b"B|7|a", b"C|7|n|1"])),
), max_size=5)
_spec = st.tuples(st.integers(0, 2), st.lists(st.sampled_from([b"", b"a", b"b", b"c"]), max_size=4),
                  st.lists(_switch, max_size=6), st.lists(_waking, max_size=6), _events)


@settings(max_examples=500, deadline=None)
@given(st.lists(_spec, max_size=6), st.integers(0, 6))
def test_batch_names_equal_the_event_by_event_reader(specs, cut):
    items = [_bundle(*s) for s in specs]
    want = FtraceState()
    want_bad = sum(want.bundle_checked(b) for b, _ in items)
    got = FtraceState()
    got_bad = read_batch(got, items[:cut]) + read_batch(got, items[cut:])
    if want_bad or got_bad:
        # a malformed line: the event-by-event reader drops its packet, the batch reader the
        # rest of its run; what was named before the failing event is the same
        return
    assert list(got.comm.items()) == list(want.comm.items())
    assert _state(got) == _state(want)
    assert _finished(got) == _finished(want)


@settings(max_examples=300, deadline=None)
@given(st.lists(_spec, min_size=1, max_size=6), st.data())
def test_a_run_cut_short_keeps_the_names_set_before_the_failing_event(specs, data):
    """A line the reader fails on (FtraceState._atrace_line raising) ends the batch reader's run
    there: ``comm`` holds what the event-by-event reader names up to that event, nothing after."""
    at = data.draw(st.integers(0, len(specs) - 1))
    cpu, table, switches, wakings, events = specs[at]
    pos = data.draw(st.integers(0, len(events)))
    boom = ("print", 0, 1, b"X|boom")
    failing = [*specs[:at], (cpu, table, switches, wakings, [*events[:pos], boom, *events[pos:]]), *specs[at + 1:]]
    upto = [*specs[:at], (cpu, table, switches, wakings, events[:pos])]
    want = FtraceState()
    if sum(want.bundle_checked(b) for b, _ in (_bundle(*s) for s in upto)):
        return
    got = FtraceState()
    real = FtraceState._atrace_line

    def line(self, ts, tid, text):
        if text == "X|boom":
            raise ValueError("boom")
        return real(self, ts, tid, text)

    with mock.patch.object(FtraceState, "_atrace_line", line):
        assert read_batch(got, [_bundle(*s) for s in failing]) == len(failing)
    assert list(got.comm.items()) == list(want.comm.items())
