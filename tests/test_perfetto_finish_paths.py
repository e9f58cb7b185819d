"""The fast paths of FtraceState.finish (nodes/perf/parsers/perfetto_ftrace.py) against the
slower ones they replace, on random columns and on the real captures' own columns."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nodes.perf.parsers import perfetto, perfetto_ftrace, perfetto_slices
from nodes.perf.parsers.perfetto_slices import by_thread_time
from nodes.perf.parsers.perfetto_slices import AtraceLog, _pair_reference, pair

DATA = Path(__file__).parent / "data" / "perfetto"
CAPTURES = sorted(DATA.glob("*.perfetto-trace")) + sorted(DATA.glob("*.pftrace"))

_int64 = st.integers(-(1 << 63), (1 << 63) - 1)
_small = st.integers(-3, 3)
_rows = st.lists(st.tuples(st.one_of(_small, _int64), st.one_of(_small, _int64)), max_size=60)


@settings(max_examples=300, deadline=None)
@given(_rows)
def test_thread_time_order_is_the_lexsort(rows):
    """The stable sort by ts, then by tid: np.lexsort((ts, tid)), whatever the values."""
    tid = np.array([r[0] for r in rows], np.int64)
    ts = np.array([r[1] for r in rows], np.int64)
    assert by_thread_time(tid, ts).tolist() == np.lexsort((ts, tid)).tolist()


def test_thread_time_key_wraps_on_the_way_and_fits_at_the_end():
    """Times and tids at the ends of int64 (where a packed (tid, ts) key would overflow)."""
    top = (1 << 63) - 1
    tid = np.array([5, 0, 5, 0, 3], np.int64)
    ts = np.array([top, top - 9, top - 9, top, top - 4], np.int64)
    assert by_thread_time(tid, ts).tolist() == np.lexsort((ts, tid)).tolist()


def _finish_inputs(path: Path, monkeypatch) -> list[perfetto_ftrace.FtraceState]:
    """The FtraceState of each finish while ``path`` is read, before it is emptied (columns copied)."""
    seen = []
    orig = perfetto_ftrace.FtraceState.finish

    def spy(self, data, known):
        tid, ts, code, arg = self.sched.columns()
        log = AtraceLog(wide=self.atrace.tid.typecode == "q")
        for c in ("tid", "ts", "code", "arg"):
            getattr(log, c).extend(getattr(self.atrace, c))
        seen.append({"sched": (tid.copy(), ts.copy(), code.copy(), arg.copy()), "atrace": log})
        return orig(self, data, known)

    monkeypatch.setattr(perfetto_ftrace.FtraceState, "finish", spy)
    perfetto.parse(str(path))
    return seen


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.name)
def test_thread_time_order_of_the_captures_scheduler_and_atrace_rows(path, monkeypatch):
    for seen in _finish_inputs(path, monkeypatch):
        tid, ts, _, _ = seen["sched"]
        assert by_thread_time(tid, ts).tolist() == np.lexsort((ts, tid)).tolist()
        log = seen["atrace"]
        tid, ts, _, _ = log.columns()
        assert by_thread_time(tid, ts).tolist() == np.lexsort((ts, tid)).tolist()


def _as_lists(got):
    return [(t, list(zip(a.tolist(), b.tolist(), c.tolist())), list(zip(d.tolist(), e.tolist())))
            for t, a, b, c, d, e in got]


atrace_event = st.tuples(st.integers(1, 4), st.integers(0, 12), st.sampled_from([1, 2]), st.integers(0, 5))


@settings(max_examples=300, deadline=None)
@given(st.lists(atrace_event, max_size=50), st.integers(1, 8))
def test_pairing_in_chunks_of_whole_threads_equals_the_stack_walk(events, chunk):
    """pair_rows pairs whole threads CHUNK_EVENTS at a time (a thread longer than that alone):
    with chunks of 1 to 8 events, the same slices as the stack walk."""
    log = AtraceLog()
    for tid, ts, code, nid in events:
        log.push(tid, ts, code, nid if code == 1 else 0)
    want, w_unmatched, w_unfinished = _pair_reference(log)
    saved = perfetto_slices.CHUNK_EVENTS
    perfetto_slices.CHUNK_EVENTS = chunk
    try:
        got, unmatched, unfinished = pair(log)
    finally:
        perfetto_slices.CHUNK_EVENTS = saved
    assert (unmatched, unfinished) == (w_unmatched, w_unfinished)
    assert _as_lists(got) == want


@settings(max_examples=200, deadline=None)
@given(st.lists(atrace_event, max_size=50), st.integers(1, 8))
def test_pairing_that_releases_the_log_pairs_the_same(events, chunk):
    """pair_rows(log, release=True) (what FtraceState.finish calls) gives the columns of
    pair_rows(log) and leaves the log empty."""
    logs = AtraceLog(), AtraceLog()
    for log in logs:
        for tid, ts, code, nid in events:
            log.push(tid, ts, code, nid if code == 1 else 0)
    saved = perfetto_slices.CHUNK_EVENTS
    perfetto_slices.CHUNK_EVENTS = chunk
    try:
        want, got = perfetto_slices.pair_rows(logs[0]), perfetto_slices.pair_rows(logs[1], release=True)
    finally:
        perfetto_slices.CHUNK_EVENTS = saved
    assert len(logs[0]) == len(events) and (len(logs[1]) == 0 or not events)
    for a, b in zip(want, got):
        assert (a.tolist() if isinstance(a, np.ndarray) else a) == (b.tolist() if isinstance(b, np.ndarray) else b)


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.name)
def test_pairing_of_the_captures_atrace_in_chunks_equals_the_stack_walk(path, monkeypatch):
    for seen in _finish_inputs(path, monkeypatch):
        log = seen["atrace"]
        want, w_unmatched, w_unfinished = _pair_reference(log)
        for chunk in (97, perfetto_slices.CHUNK_EVENTS):
            monkeypatch.setattr(perfetto_slices, "CHUNK_EVENTS", chunk)
            got, unmatched, unfinished = pair(log)
            assert (unmatched, unfinished) == (w_unmatched, w_unfinished)
            assert _as_lists(got) == want


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 4)), max_size=40), st.integers(1, 5))
def test_thread_time_order_found_in_blocks_of_the_sorted_key(rows, block):
    """Many ties; BLOCK_ROWS (the block size of _thread_order's offsets) changes nothing."""
    tid = np.array([r[0] for r in rows], np.int64)
    ts = np.array([r[1] for r in rows], np.int64)
    saved = perfetto_slices.BLOCK_ROWS
    perfetto_slices.BLOCK_ROWS = block
    try:
        assert by_thread_time(tid, ts).tolist() == np.lexsort((ts, tid)).tolist()
    finally:
        perfetto_slices.BLOCK_ROWS = saved


_sched_row = st.tuples(st.one_of(st.integers(0, 9), st.just(1 << 33)), st.integers(0, 1 << 40), st.integers(0, 6),
                       st.one_of(st.integers(0, 1 << 20), st.just(-(1 << 35))))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.lists(_sched_row, max_size=6)), max_size=12), st.sampled_from([1, 64, 32 << 20]))
def test_sched_log_drained_holds_what_columns_gave(steps, give_back_at):
    """SchedLog.drain copies a column at a time, chunk by chunk (int32 and int64 chunks mixed),
    giving memory back as it goes, and empties the log: the columns() values."""
    from nodes.perf.parsers import perfetto_sched
    from nodes.perf.parsers.perfetto_sched import SchedLog


    logs = SchedLog(), SchedLog()
    for as_chunk, rows in steps:
        for log in logs:
            if as_chunk:
                cols = [np.array([r[k] for r in rows], dt) for k, dt in enumerate((np.int64, np.int64, np.int8, np.int64))]
                log.extend(*cols)
            else:
                for r in rows:
                    log.push(*r)
    want = logs[0].columns()
    saved, perfetto_sched.DRAIN_GIVE_BACK = perfetto_sched.DRAIN_GIVE_BACK, give_back_at
    try:
        got = logs[1].drain()
    finally:
        perfetto_sched.DRAIN_GIVE_BACK = saved
    assert [g.dtype for g in got] == [w.dtype for w in want]
    assert [g.tolist() for g in got] == [w.tolist() for w in want]
    assert logs[1].rows == 0 and [c.tolist() for c in logs[1].columns()] == [[], [], [], []]


@pytest.mark.parametrize("share", [0.0, 0.3, 0.7, 1.0])
def test_scheduler_intervals_beyond_the_cap_are_dropped_thread_by_thread(share, monkeypatch):
    """All threads' intervals go in in one step when they fit under MAX_SCHED_INTERVALS; past
    it, thread after thread as before: a thread is kept while its intervals still fit."""
    path = DATA / "api32_startup_warm.perfetto-trace"
    whole = perfetto.parse(str(path))
    total = sum(len(iv) for iv in whole.sched_intervals.values())
    cap = int(total * share)
    kept, want, dropped = 0, [], 0
    for key, iv in whole.sched_intervals.items():
        if kept + len(iv) <= cap:
            want.append(key)
            kept += len(iv)
        else:
            dropped += len(iv)
    monkeypatch.setattr(perfetto_ftrace, "MAX_SCHED_INTERVALS", cap)
    capped = perfetto.parse(str(path))
    assert list(capped.sched_intervals) == want
    assert all(capped.sched_intervals[k] == whole.sched_intervals[k] for k in want)
    assert [w for w in capped.warnings if "scheduler intervals beyond" in w] == (
        [f"{dropped:,} scheduler intervals beyond {cap:,} were not kept; per-thread totals still cover them"]
        if dropped else [])


@pytest.mark.parametrize("cap", [None, 5_000, 20_000])
def test_small_blocks_store_what_one_block_stores(cap, monkeypatch):
    """Pairing, slice storing and the scheduler replay go whole threads a block at a time (and
    the replay's decoding, the log's join and the memory merge a block of rows at a time): with
    blocks of a few rows the capture's PerfData is the same, the event cap included."""
    from nodes.perf.parsers import perfetto_memory, perfetto_sched

    path = DATA / "api32_startup_warm.perfetto-trace"
    want = _digest(path, cap)
    monkeypatch.setattr(perfetto_slices, "CHUNK_EVENTS", 5)
    monkeypatch.setattr(perfetto_slices, "BLOCK_ROWS", 7)
    monkeypatch.setattr(perfetto_ftrace, "SLICE_BLOCK", 3)
    monkeypatch.setattr(perfetto_sched, "CHUNK_ROWS", 11)
    monkeypatch.setattr(perfetto_sched, "AFTER_BLOCK", 5)
    monkeypatch.setattr(perfetto_sched, "DRAIN_GIVE_BACK", 64)
    monkeypatch.setattr(perfetto_memory, "_MERGE_BLOCK", 2)
    assert _digest(path, cap) == want


def _digest(path: Path, cap: int | None):
    from nodes.perf import limits
    from tests.helpers.differential import perfdata_digest

    with limits.using(**({} if cap is None else {"max_events": cap})):
        from nodes.perf.formats import load

        return perfdata_digest(load(str(path)))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.one_of(st.integers(0, 1 << 12), st.integers(-(1 << 31), (1 << 31) - 1))),
                max_size=40), st.integers(1, 7))
def test_after_states_in_blocks_equal_the_whole_pass(rows, block):
    """perfetto_sched._after_states a few rows at a time (AFTER_BLOCK) decodes as one pass over
    all rows (the block size of the whole trace's log)."""
    from nodes.perf.parsers import perfetto_sched

    code = np.array([r[0] for r in rows], np.int8)
    arg = np.array([r[1] for r in rows], np.int32)
    saved = perfetto_sched.AFTER_BLOCK
    try:
        perfetto_sched.AFTER_BLOCK = 1 << 30
        want = perfetto_sched._after_states(code, arg, (5, 10))
        perfetto_sched.AFTER_BLOCK = block
        got = perfetto_sched._after_states(code, arg, (5, 10))
    finally:
        perfetto_sched.AFTER_BLOCK = saved
    assert [g.tolist() for g in got] == [w.tolist() for w in want]
