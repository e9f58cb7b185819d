"""The C passes of nodes/perf/parsers/_schedc.c against their numpy references: the
scheduler state machine (perfetto_sched._replay: the same threads, totals and intervals) and
the rows' thread order (perfetto_slices._thread_order), on random rows and on the captures'
own scheduler and atrace rows."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nodes.perf.parsers import perfetto, perfetto_ftrace, perfetto_sched, perfetto_slices
from nodes.perf.parsers.perfetto_sched import BLOCKED, IN, NEW, OUT, WAKE, SchedLog, thread_states

DATA = Path(__file__).parent / "data" / "perfetto"
CAPTURES = sorted(DATA.glob("*.perfetto-trace")) + sorted(DATA.glob("*.pftrace"))

pytestmark = pytest.mark.skipif(perfetto_sched.NATIVE is None, reason="_schedc not built")


def _states(cols, kernel, end, native: bool, chunk: int = perfetto_sched.CHUNK_ROWS, cap=None):
    log = SchedLog()
    log.extend(*(c.copy() for c in cols))
    saved = perfetto_sched.NATIVE, perfetto_sched.CHUNK_ROWS
    perfetto_sched.NATIVE = saved[0] if native else None
    perfetto_sched.CHUNK_ROWS = chunk
    try:
        got = thread_states(log, kernel, end, cap)
    finally:
        perfetto_sched.NATIVE, perfetto_sched.CHUNK_ROWS = saved
    return [(t, totals, None if iv is None else (iv.ts.tolist(), iv.dur.tolist(), iv.state.tolist(),
                                                 iv.io_wait.tolist()), size)
            for t, totals, iv, size in got]


def _capped(states, cap):
    """What FtraceState.finish kept before thread_states took a cap: each thread's intervals
    while they fit with those kept before it, in order."""
    out, kept = [], 0
    for t, totals, iv, size in states:
        if size and kept + size > cap:
            iv = None
        else:
            kept += size
        out.append((t, totals, iv, size))
    return out


def _same(cols, kernel, end):
    """The C pass, the numpy passes, and those a few rows (whole threads) at a time: alike;
    and with a cap on the intervals kept, what the greedy cut of the whole keeps."""
    want = _states(cols, kernel, end, False)
    assert _states(cols, kernel, end, True) == want
    assert _states(cols, kernel, end, False, chunk=5) == want
    sizes = [size for *_, size in want]
    for cap in {0, 1, max(sizes, default=0), sum(sizes) // 2, sum(sizes) - 1, sum(sizes)}:
        capped = _capped(want, cap)
        assert _states(cols, kernel, end, True, cap=cap) == capped
        assert _states(cols, kernel, end, False, chunk=5, cap=cap) == capped


#: prev_state values of both layouts: runnable, preempted, S, D, dead, invalid bits, beyond int16
_RAW = st.sampled_from([0, 1, 2, 0x10, 0x40, 0x80, 0x100, 0x400, 0x800, 0x1000, 0x10000, 1 << 40])
_row = st.tuples(st.integers(0, 4), st.integers(0, 30), st.sampled_from([IN, OUT, WAKE, BLOCKED, NEW]), _RAW,
                 st.integers(-2, 2))


@settings(max_examples=400, deadline=None)
@given(rows=st.lists(_row, max_size=80), kernel=st.sampled_from([None, (4, 4), (4, 19), (3, 18)]),
       end_at=st.one_of(st.none(), st.integers(0, 40)))
def test_native_replay_is_the_numpy_replay(rows, kernel, end_at):
    """Few threads and times, many ties: every rule (lost switch-outs, wakings of a running
    thread, new tasks, blocked reasons before, between and after the intervals they name)."""
    tid = np.array([r[0] for r in rows], np.int64)
    ts = np.array([r[1] for r in rows], np.int64)
    code = np.array([r[2] for r in rows], np.int8)
    arg = np.array([r[3] if r[2] == OUT else r[4] if r[2] == BLOCKED else 0 for r in rows], np.int64)
    end = None if end_at is None else max([end_at] + ts.tolist())
    _same((tid, ts, code, arg), kernel, end)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.integers(-(1 << 62), 1 << 62), st.integers(-(1 << 62), 1 << 62)), min_size=1,
                max_size=20))
def test_native_replay_at_the_ends_of_int64(rows):
    """Times whose differences wrap around int64: both wrap alike."""
    tid = np.array([r[0] % 3 for r in rows], np.int64)
    ts = np.array([r[1] for r in rows], np.int64)
    code = np.array([(IN, OUT, WAKE)[i % 3] for i in range(len(rows))], np.int8)
    arg = np.zeros(len(rows), np.int64)
    _same((tid, ts, code, arg), (4, 19), int(ts.max()))


def _captured(path: Path, monkeypatch):
    """Each FtraceState.finish's scheduler columns and atrace (tid, ts) columns, copied."""
    seen = []
    orig = perfetto_ftrace.FtraceState.finish

    def spy(self, data, known):
        a = self.atrace
        seen.append((tuple(c.copy() for c in self.sched.columns()),
                     (np.array(a.tid, np.int64), np.array(a.ts, np.int64))))
        return orig(self, data, known)

    monkeypatch.setattr(perfetto_ftrace.FtraceState, "finish", spy)
    perfetto.parse(str(path))
    return seen


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.name)
def test_native_replay_of_the_captures_scheduler_rows(path, monkeypatch):
    for cols, _ in _captured(path, monkeypatch):
        for end in (None, int(cols[1].max()) if len(cols[1]) else None):
            _same(cols, (4, 19), end)


def _same_order(tid, ts):
    want_order, want_starts = perfetto_slices._thread_order(tid, ts)
    order, starts = perfetto_slices.thread_order(tid, ts)
    assert order.tolist() == want_order.tolist()
    assert starts.tolist() == want_starts.tolist()


_int64 = st.integers(-(1 << 63), (1 << 63) - 1)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.one_of(st.integers(-3, 3), _int64), st.one_of(st.integers(0, 6), _int64)),
                min_size=1, max_size=80))
def test_native_thread_order_is_the_numpy_order(rows):
    """Threads by first arrival, then time, ties in arrival order: whatever the tids and times
    (int64's ends, many ties, runs in and out of order)."""
    _same_order(np.array([r[0] for r in rows], np.int64), np.array([r[1] for r in rows], np.int64))


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 5000), st.integers(1, 3000), st.integers(0, 1 << 30))
def test_native_thread_order_with_many_threads(n, threads, seed):
    """More threads than the tid map's first size (it grows), runs of time order as per CPU."""
    rng = np.random.default_rng(seed)
    tid = rng.integers(0, threads, n) * 7919 - 5
    ts = np.concatenate([np.sort(rng.integers(0, 1000, len(c))) for c in np.array_split(np.arange(n), 4)])
    _same_order(tid, ts)


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.name)
def test_native_thread_order_of_the_captures_rows(path, monkeypatch):
    for (tid, ts, _, _), atrace in _captured(path, monkeypatch):
        if len(tid):
            _same_order(tid, ts)
        if len(atrace[0]):
            _same_order(*atrace)


def _replay_call(order, starts, n=3):
    col = np.zeros(n, np.int64)
    small = np.zeros(n, np.int8)
    m = len(starts) - 1
    outs = [np.empty(m, np.int64), np.empty(m + 1, np.int64), np.empty(m, np.int64), np.empty(4 * m, np.int64),
            np.empty(n, np.float64), np.empty(n, np.float64), np.empty(n, np.int8), np.empty(n, np.int8)]
    return perfetto_sched.NATIVE.replay(order, np.array(starts, np.int64), col, small, small, small, 0, True, -1,
                                        0, 1, 3, BLOCKED, IN, OUT, WAKE, NEW, *outs)


@pytest.mark.parametrize("width", [np.int32, np.int64])
def test_native_replay_refuses_an_order_out_of_range(width):
    with pytest.raises(ValueError):
        _replay_call(np.array([0, 1, 3], width), [0, 3])
    with pytest.raises(ValueError):
        _replay_call(np.array([0, -1, 2], width), [0, 3])
    assert _replay_call(np.array([0, 1, 2], width), [0, 3]) == (1, 0)  # one thread, no interval of length


@pytest.mark.parametrize("starts", [[0, 2], [1, 3], [0, 2, 1, 3], [0, 4]])
def test_native_replay_refuses_thread_bounds_that_are_not_the_rows(starts):
    with pytest.raises(ValueError):
        _replay_call(np.array([0, 1, 2], np.int64), starts)


_wide = st.sampled_from([0, 7, (1 << 31) - 1, 1 << 31, -(1 << 31), -(1 << 31) - 1, (1 << 32) - 1, 1 << 40])


@settings(max_examples=200, deadline=None)
@given(rows=st.lists(st.tuples(st.one_of(st.integers(1, 3), _wide), st.integers(0, 20),
                               st.sampled_from([IN, OUT, WAKE, BLOCKED, NEW]),
                               st.one_of(st.integers(0, 2), _wide, st.sampled_from([(1 << 15) - 1, 1 << 15, -(1 << 15) - 1])),
                               st.booleans()), max_size=40))
def test_sched_log_keeps_ids_and_arguments_beyond_int32(rows):
    """SchedLog holds thread ids as int32 and arguments as int16, a chunk's column wider when a
    value does not fit (pushed one by one or extended as columns): the columns give back every
    value, and the C pass and the numpy passes replay them alike."""
    log = SchedLog()
    for tid, ts, code, arg, pushed in rows:
        if pushed:
            log.push(tid, ts, code, arg)
        else:
            log.extend(np.array([tid], np.int64), np.array([ts], np.int64), np.array([code], np.int8),
                       np.array([arg], np.int64))
    tid, ts, code, arg = log.columns()
    assert tid.tolist() == [r[0] for r in rows] and arg.tolist() == [r[3] for r in rows]
    assert ts.tolist() == [r[1] for r in rows] and code.tolist() == [r[2] for r in rows]
    fits = all(-(1 << 31) <= v < 1 << 31 for r in rows for v in (r[0], r[3]))
    if rows and fits:
        small = all(-(1 << 15) <= r[3] < 1 << 15 for r in rows)
        assert tid.dtype == np.int32 and arg.dtype == (np.int16 if small else np.int32)
    _same((tid.astype(np.int64), ts, code, arg.astype(np.int64)), (4, 19), 25)
    _same((tid, ts, code, arg), (4, 19), None)


def test_sched_log_pushes_widen_the_buffered_rows():
    log = SchedLog()
    log.push(5, 1, IN)
    log.push(1 << 33, 2, IN)
    log.push(5, 3, OUT, 1 << 35)
    log.push(6, 4, IN)
    tid, ts, code, arg = log.drain()
    assert (tid.tolist(), ts.tolist(), code.tolist(), arg.tolist()) == (
        [5, 1 << 33, 5, 6], [1, 2, 3, 4], [IN, IN, OUT, IN], [0, 0, 1 << 35, 0])
    assert log.rows == 0 and tid.dtype == np.int64


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.floats(allow_nan=False), st.floats(allow_nan=False), st.integers(-128, 127),
                          st.integers(-1, 1)), max_size=30), st.data())
def test_shared_sched_intervals_read_as_their_own_arrays(rows, data):
    """A thread's intervals as rows of shared columns (SchedIntervals.rows, what the reader
    stores) read as the four arrays of its own they replace: fields, len, ==, iteration,
    tolist, np.frombuffer, bytes joined, repr."""
    from array import array

    from nodes.perf.model import SchedIntervals

    lo = data.draw(st.integers(0, len(rows)))
    hi = data.draw(st.integers(lo, len(rows)))
    cols = [np.array([r[k] for r in rows], t) for k, t in enumerate((np.float64, np.float64, np.int8, np.int8))]
    shared = SchedIntervals.rows(tuple(memoryview(c) for c in cols), lo, hi)
    own = SchedIntervals(*(array(code, c[lo:hi].tolist()) for code, c in zip("ddbb", cols)))
    assert shared == own and own == shared and len(shared) == len(own) == hi - lo
    assert repr(shared) == repr(own)
    for name, dtype in (("ts", np.float64), ("dur", np.float64), ("state", np.int8), ("io_wait", np.int8)):
        a, b = getattr(shared, name), getattr(own, name)
        assert list(a) == list(b) and a.tolist() == b.tolist() and len(a) == len(b)
        assert [type(x) for x in a] == [type(x) for x in b]
        assert np.frombuffer(a, dtype).tolist() == np.frombuffer(b, dtype).tolist()
        assert b"".join([a, a]) == b"".join([b, b])
    if hi > lo:
        other = SchedIntervals(*(array(code, c[lo:hi].tolist()) for code, c in zip("ddbb", cols)))
        other.state[0] = other.state[0] ^ 1
        assert shared != other
