"""AtraceLog holds thread ids and name ids as int32 until a value does not fit, then as int64
(perfetto_slices.AtraceLog): whatever arrives — one event at a time (``push``) or as numpy
columns (``extend``), in any mix — it reads back as the rows given, and pairs as the stack walk
pairs them."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from nodes.perf.parsers.perfetto_slices import AtraceLog
from tests.helpers.atrace_pairing import assert_pairs_as_the_stack_walk

BIG = 1 << 31
tid_values = st.one_of(st.integers(1, 6), st.integers(BIG - 2, BIG + 2), st.integers(-(BIG + 1), -(BIG - 1)))
event = st.tuples(tid_values, st.integers(0, 30), st.sampled_from([1, 2]), st.one_of(st.integers(0, 5),
                                                                                     st.integers(BIG - 1, BIG)))


def _rows(log: AtraceLog) -> list[tuple[int, int, int, int]]:
    tid, ts, code, arg = log.columns()
    assert len(tid) == len(ts) == len(code) == len(arg) == len(log)
    return list(zip(tid.tolist(), ts.tolist(), code.tolist(), arg.tolist()))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.lists(event, max_size=6)), max_size=8))
def test_rows_read_back_as_given_whatever_their_width(parts):
    log = AtraceLog()
    want = []
    for as_columns, events in parts:
        if as_columns:
            cols = [np.array([e[k] for e in events], np.int64) for k in range(4)]
            log.extend(cols[0], cols[1], cols[2].astype(np.int8), cols[3])
        else:
            for e in events:
                log.push(*e)
        want += events
    assert _rows(log) == want
    fits = all(-BIG <= t < BIG and -BIG <= a < BIG for t, _, _, a in want)
    assert log.tid.typecode == ("i" if fits else "q") == log.arg.typecode
    # the wide log from the start holds the same rows
    wide = AtraceLog(wide=True)
    for e in want:
        wide.push(*e)
    assert _rows(wide) == want and wide.tid.typecode == "q"


@settings(max_examples=200, deadline=None)
@given(st.lists(event, max_size=40))
def test_a_log_narrow_or_widened_pairs_as_the_stack_walk(events):
    assert_pairs_as_the_stack_walk(events)


def test_a_value_beyond_int64_is_refused_as_before():
    """A thread id no int64 holds raises OverflowError (the reader drops the packet) and adds no event."""
    log = AtraceLog()
    log.push(1, 5, 1, 0)
    try:
        log.push(1 << 64, 6, 1, 0)
    except OverflowError:
        pass
    else:
        raise AssertionError("a tid beyond int64 was stored")
    assert len(log) == 1 and list(log.tid) == [1] and list(log.code) == [1]
