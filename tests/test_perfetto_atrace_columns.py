"""The batch reader's atrace columns (nodes/perf/parsers/perfetto_atrace_columns.py, read by
perfetto_ftrace_batch._atrace) against the event-by-event reader (FtraceState.bundle) on random
ftrace bundles of print lines, zero events, new tasks and renames: the same FtraceState (slice
log in arrival order, first-wins thread groups, name ids, counters, async slices, instants,
failure counts) and the same PerfData once finished."""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

from nodes.perf.model import PerfData
from nodes.perf.parsers import perfetto_atrace_columns as columns
from nodes.perf.parsers import perfetto_ftrace, perfetto_ftrace_batch
from nodes.perf.parsers.perfetto_ftrace import FtraceState
from nodes.perf.parsers.perfetto_ftrace_batch import read_batch
from tests.helpers.ftrace_events import event as _event
from tests.helpers.ftrace_events import finished as _finished
from tests.helpers.ftrace_events import state as _state
from tests.helpers.ftrace_events import v as _v
from tests.protowire import field

def _items(bundles) -> list:
    out = []
    for cpu, events in bundles:
        raw_bundle = _v(1, cpu) + b"".join(field(2, _event(*e)) for e in events)
        raw = field(1, raw_bundle)  # TracePacket.ftrace_events
        out.append((pb.TracePacket.FromString(raw).ftrace_events, raw))
    return out


_phase = st.sampled_from([b"B", b"E", b"C", b"S", b"F", b"G", b"H", b"I", b"N", b"X", b"", b"Bx", b"Cy",
                          b"trace_event_clock_sync: parent_ts=1"])
_piece = st.sampled_from([b"", b"12", b"7", b"007", b"x1", "١٢".encode(), b"99999999999999999999", b"-3", b" 4",
                          b"a", b"a b", "é".encode(), b"1.5", b"1_0", b"-0", b"-", b"\xff\xfe", b"\xe2", b"c"])
_tail = st.sampled_from([b"", b"\n", b"\0", b"\n\0\n"])
_odd_line = st.builds(lambda ph, ps, t: b"|".join([ph, *ps]) + t, _phase, st.lists(_piece, max_size=5), _tail)
# well-formed lines from a small vocabulary, so that series, names and cookies meet again
_tgid = st.sampled_from([b"7", b"12"])
_name = st.sampled_from([b"a", b"c", b"", "é".encode(), b"\xff"])
_value = st.sampled_from([b"1", b"-2", b" 4", b"1.5"])  # " 4" and "1.5": counters left to the line parser
_good_line = st.one_of(
    st.builds(lambda g, n, t: b"B|" + g + b"|" + n + t, _tgid, _name, _tail),
    st.just(b"E"),
    st.builds(lambda g, n, v, t: b"C|" + g + b"|" + n + b"|" + v + t, _tgid, _name, _value, _tail),
    st.builds(lambda ph, g, n, c: ph + b"|" + g + b"|" + n + b"|" + c, st.sampled_from([b"S", b"F"]), _tgid,
              _name, st.sampled_from([b"1", b"2"])),
)
_line = st.one_of(_good_line, _odd_line)
_tid = st.integers(1, 5)
_ts = st.integers(0, 30)
_zero = st.tuples(st.sampled_from([0, 1, 2, 3, 4, 5, 6, 8, -1]), st.sampled_from([b"", b"z", b"a", b"\xff", b"12"]),
                  st.sampled_from([0, 7, 12, -2]), st.sampled_from([0, 1, -3, 1 << 40, (1 << 53) + 1]))
_newtask = st.tuples(st.integers(1, 7), st.sampled_from([b"", b"t", b"u"]), st.sampled_from([0, 0x10000]))
_rename = st.tuples(st.integers(1, 7), st.sampled_from([b"", b"r"]))
_event_spec = st.one_of(
    st.tuples(st.just("print"), _ts, _tid, st.one_of(_line, st.none())),
    st.tuples(st.just("zero"), _ts, _tid, _zero),
    st.tuples(st.just("newtask"), _ts, _tid, _newtask),
    st.tuples(st.just("rename"), _ts, _tid, _rename),
)
_bundles = st.lists(st.tuples(st.integers(0, 2), st.lists(_event_spec, max_size=12)), max_size=6)


@settings(max_examples=600, deadline=None)
@given(_bundles, st.integers(0, 6), st.booleans())
def test_batch_reader_equals_the_event_by_event_reader(bundles, cut, small_cap):
    items = _items(bundles)
    with mock.patch.object(perfetto_ftrace, "MAX_COUNTER_POINTS", 2 if small_cap else 20_000), \
            mock.patch.object(perfetto_ftrace_batch, "MAX_COUNTER_POINTS", 2 if small_cap else 20_000):
        want = FtraceState()
        assert sum(want.bundle_checked(b) for b, _ in items) == 0
        got = FtraceState()
        # two batches: the second finds thread groups, names and counters the first stored
        assert read_batch(got, items[:cut]) + read_batch(got, items[cut:]) == 0
    assert _state(got) == _state(want)
    assert _finished(got) == _finished(want)


def test_the_common_shapes_are_read_as_columns_and_the_rest_left_to_the_line_parser():
    lines = [b"B|12|draw", b"E", b"C|7|queue|-5\n", b"B|12", b"B|x|n", b"S|1|a|3", b"C|7|q|1.5", b"E|1\0",
             "B|١٢|n".encode(), b"B|12|a|b\n\0", b"", b"C|1|n|99999999999999999999"]
    joined = b"".join(lines)
    ln = np.array([len(x) for x in lines], np.int64)
    off = np.cumsum(ln) - ln
    sh = columns.print_lines(np.frombuffer(joined + b"\0" * 16, np.uint8), off, ln)
    assert sh.b.tolist() == [0, 3, 9] and sh.b_tgid.tolist() == [12, 12, 12]
    assert [joined[a:b] for a, b in zip(*[x.tolist() for x in sh.b_name])] == [b"draw", b"", b"a|b"]
    assert sh.c.tolist() == [2] and sh.c_tgid.tolist() == [7] and sh.c_value.tolist() == [-5]
    assert sh.e.tolist() == [1, 7]
    assert sh.rest.tolist() == [4, 5, 6, 8, 10, 11]


_EDGES = [b"C|7|n|", b"C|7|n|\n", b"C|7|n|-", b"C|7|n|-\0", b"C|7|", b"C|", b"C", b"B|7|", b"B|7", b"B|", b"B",
          b"B\n", b"E", b"", b"\n", b"C|7|n|12|", b"B|1234567890123456789|x", b"C|7|n|1234567890123456789"]


@pytest.mark.parametrize("line", _EDGES)
def test_a_line_at_the_edge_of_the_buffer_reads_as_the_line_parser_reads_it(line):
    """Each shape alone and last in its batch, where a separator or sign lookup one byte too far
    would leave the buffer."""
    items = _items([(0, [("print", 1, 5, b"B|5|a"), ("print", 2, 5, line)])])
    want = FtraceState()
    assert want.bundle_checked(items[0][0]) == 0
    got = FtraceState()
    assert read_batch(got, items) == 0
    assert _state(got) == _state(want)


def test_a_line_that_fails_mid_run_keeps_what_came_before_it():
    """A cookie ``int`` refuses after ``_is_int`` accepted it ends the run as the old batch loop
    did: its bundles count as dropped, thread groups and counter points from events before the
    failing line stay, those after it do not, and no slice row of the run is kept."""
    items = _items([(0, [("print", 1, 5, b"C|5|c|1"), ("print", 2, 5, b"B|5|x"), ("zero", 3, 6, (4, b"z", 0, 9))]),
                    (1, [("print", 4, 5, b"S|5|n|--5"), ("print", 5, 5, b"C|5|c|2"), ("print", 6, 8, b"B|8|y")])])
    s = FtraceState()
    assert read_batch(s, items) == 2
    assert dict(s.counters.items()) == {(5, "c"): [(1, 1.0)], (6, "z"): [(3, 9.0)]}
    assert s.tgid_of == {5: 5}
    assert len(s.atrace) == 0


def test_counter_cap_counts_the_points_earlier_batches_stored():
    items = _items([(0, [("print", 1, 5, b"C|7|c|1")]),
                    (0, [("print", 2, 5, b"C|7|c|2"), ("zero", 3, 7, (4, b"c", 0, 3)), ("print", 4, 5, b"C|7|d|4")])])
    with mock.patch.object(perfetto_ftrace, "MAX_COUNTER_POINTS", 2), \
            mock.patch.object(perfetto_ftrace_batch, "MAX_COUNTER_POINTS", 2):
        want = FtraceState()
        for b, _ in items:
            want.bundle_checked(b)
        got = FtraceState()
        read_batch(got, items[:1])
        read_batch(got, items[1:])
    assert dict(got.counters.items()) == dict(want.counters.items()) == {(7, "c"): [(1, 1.0), (2, 2.0)],
                                                                         (7, "d"): [(4, 4.0)]}


@pytest.mark.parametrize("line", [b"B|99999999999999999999|n", b"C|99999999999999999999|n|1",
                                  b"S|99999999999999999999|n|1", b"I|99999999999999999999|n"])
def test_a_tgid_beyond_64_bits_is_a_malformed_line_not_a_crash(line):
    """Found by the property test above: ``B|<20 digits>`` was kept as a process id and the
    end-of-trace assembly raised OverflowError putting it into int64 columns (an uncaught
    error out of ``perfscout analyze``). Both readers now count it as a malformed line."""
    items = _items([(0, [("print", 1, 5, line), ("print", 2, 5, b"E")])])
    for read in (lambda s: s.bundle_checked(items[0][0]), lambda s: read_batch(s, items)):
        s = FtraceState()
        assert read(s) == 0
        assert s.print_failures == 1 and s.tgid_of == {}
        data = PerfData("perfetto", "t.perfetto-trace")
        s.finish(data, {})
        assert not data.slices


_NATIVE = pytest.mark.skipif(columns.wire.NATIVE is None, reason="the C extension is not built")


@_NATIVE
@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=64), st.lists(st.tuples(st.integers(0, 64), st.integers(0, 8)), max_size=40))
def test_native_intern_equals_the_python_reference(buf, cuts):
    """The C intern (_wirec.c) gives the Python one's distinct strings, order and indices."""
    cuts = [(a, min(a + n, len(buf))) for a, n in cuts if a <= len(buf)]
    start = np.array([a for a, _ in cuts], np.int64)
    end = np.array([b for _, b in cuts], np.int64)
    uniq, idx = columns.intern(buf, start, end)
    ref_uniq, ref_idx = columns.intern_python(buf, start, end)
    assert uniq == ref_uniq and idx.tolist() == ref_idx.tolist()
    assert [uniq[i] for i in idx.tolist()] == [buf[a:b] for a, b in cuts]


@_NATIVE
def test_native_intern_refuses_a_slice_outside_the_buffer():
    with pytest.raises(ValueError):
        columns.wire.NATIVE.intern(b"abc", np.array([2], np.int64), np.array([4], np.int64))
    with pytest.raises(ValueError):
        columns.wire.NATIVE.intern(b"abc", np.array([2], np.int64), np.array([1], np.int64))
