"""PerfData.thread_states as columns (model.ThreadStates, what add_thread_state_totals makes of
an empty table) reads exactly as the dict of dicts add_thread_state fills; and the scheduler
replay's columns (perfetto_sched.StateColumns) store in FtraceState.finish what its rows did."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nodes.perf.model import PerfData, ThreadStates
from nodes.perf.parsers import perfetto, perfetto_ftrace
from nodes.perf.parsers.perfetto_sched import COARSE

STATES = ("running", "runnable", "sleeping")
DATA = Path(__file__).parent / "data" / "perfetto"
CAPTURES = sorted(DATA.glob("*.perfetto-trace")) + sorted(DATA.glob("*.pftrace"))

keys = st.tuples(st.integers(-3, 3), st.integers(1, 6))
totals = st.lists(st.one_of(st.integers(-5000, 10 ** 13), st.sampled_from([0, 0, 1, -1, 999, 1000, 1 << 62])),
                  min_size=3, max_size=3)


def _one_by_one(rows) -> PerfData:
    pd = PerfData("x", "x")
    for key, tot in rows:
        for s, v in zip(STATES, tot):
            if v:
                pd.add_thread_state(*key, s, v / 1000.0)
    return pd


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(keys, totals), max_size=12, unique_by=lambda r: r[0]), st.booleans())
def test_columns_read_as_the_dicts_add_thread_state_fills(rows, as_array):
    want = _one_by_one(rows)
    got = PerfData("x", "x")
    tot = np.array([t for _, t in rows], np.int64).reshape(-1, 3) if as_array else [t for _, t in rows]
    got.add_thread_state_totals([k for k, _ in rows], tot, STATES)
    ts, ws = got.thread_states, want.thread_states
    if rows and any(any(t) for _, t in rows):
        assert type(ts) is ThreadStates
    assert list(got.threads) == list(want.threads)
    assert list(ts) == list(ws) and len(ts) == len(ws) and bool(ts) == bool(ws)
    assert [repr(v) for v in ts.values()] == [repr(v) for v in ws.values()]  # same floats, same key order
    assert [repr(kv) for kv in ts.items()] == [repr(kv) for kv in ws.items()]
    assert repr(ts) == repr(ws) and ts == ws and ws == ts
    for key in [k for k, _ in rows] + [(9, 9)]:
        assert (key in ts) == (key in ws)
        assert repr(ts.get(key, {})) == repr(ws.get(key, {}))
        if key in ws:
            assert repr(ts[key]) == repr(ws[key])
        else:
            with pytest.raises(KeyError):
                ts[key]
    # one more state added one at a time: the table becomes the dict, in its order, and adds
    for pd in (got, want):
        pd.add_thread_state(1, 1, "runnable", 2.5)
        pd.add_thread_state_totals([(2, 2)], [[3000, 0, 7]], STATES)
    assert type(got.thread_states) is dict
    assert repr(got.thread_states) == repr(want.thread_states) and list(got.threads) == list(want.threads)


def test_keys_repeated_or_a_table_not_empty_add_as_the_dicts_do():
    rows = [((1, 1), [1000, 0, 0]), ((1, 1), [500, 2000, 0])]
    for before in (False, True):
        want, got = _one_by_one([]), PerfData("x", "x")
        for pd in (want, got):
            if before:
                pd.add_thread_state(1, 1, "running", 1.0)
        for key, tot in rows:
            for s, v in zip(STATES, tot):
                if v:
                    want.add_thread_state(*key, s, v / 1000.0)
        got.add_thread_state_totals([k for k, _ in rows], [t for _, t in rows], STATES)
        assert type(got.thread_states) is dict and got.thread_states == want.thread_states


def _finish_both(path: Path, monkeypatch) -> list[tuple]:
    """What FtraceState.finish stores from the replay's columns, and what the replay's rows
    (perfetto_sched.thread_states, the tuples it stored before) store."""
    out = []
    orig = perfetto_ftrace.FtraceState.finish

    def spy(self, data, known):
        log = perfetto_ftrace.SchedLog()
        log.extend(*(c.copy() for c in self.sched.columns()))
        orig(self, data, known)
        from nodes.perf.parsers.perfetto_sched import thread_states
        from nodes.perf.sched_state import kernel_version
        rows = thread_states(log, kernel_version(data.facts.kernel), self.sched_last_ns,
                             perfetto_ftrace.MAX_SCHED_INTERVALS)
        ref = PerfData("x", "x")
        state_tids = [t for t, _, _, _ in rows]
        keys = list(zip(self.pids_for(state_tids, known), state_tids))
        for key, (_, tot, _, _) in zip(keys, rows):
            for s, v in zip(COARSE, tot):
                if v:
                    ref.add_thread_state(*key, s, v / 1000.0)
        want_iv = {k: iv for k, (_, _, iv, n) in zip(keys, rows) if n and iv is not None}
        out.append((data, ref, want_iv))

    monkeypatch.setattr(perfetto_ftrace.FtraceState, "finish", spy)
    perfetto.parse(str(path))
    return out


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.name)
def test_finish_stores_the_replays_rows(path, monkeypatch):
    for data, ref, want_iv in _finish_both(path, monkeypatch):
        assert repr(dict(data.thread_states.items())) == repr(dict(ref.thread_states.items()))
        assert list(data.sched_intervals) == list(want_iv)
        assert all(data.sched_intervals[k] == iv for k, iv in want_iv.items())


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), max_size=10))
def test_state_columns_keep_and_drop_as_finish_did_with_the_rows(threads):
    """kept()/dropped()/intervals() against the rule FtraceState.finish applied to the rows:
    a thread's intervals stored when it has some and they are not None, those of a None counted
    dropped. A thread's (count, rows written) as the C replay leaves them: all or none."""
    from nodes.perf.parsers.perfetto_sched import StateColumns

    counts = [c for c, _ in threads]
    written = [c if w % 2 else 0 for c, w in threads]  # the cap cut the others
    hi = np.cumsum(written, dtype=np.int64)
    lo = hi - np.array(written, np.int64)
    n = int(hi[-1]) if len(hi) else 0
    cols = (np.arange(n, dtype=np.float64), np.ones(n), np.zeros(n, np.int8), np.full(n, -1, np.int8))
    c = np.array(counts, np.int64)
    sc = StateColumns(list(range(len(threads))), np.zeros((len(threads), 3), np.int64), c, (hi > lo) | (c == 0),
                      lo, hi, cols)
    rows = sc.rows()
    assert sc.kept() == [i for i, (_, _, iv, k) in enumerate(rows) if k and iv is not None]
    assert sc.dropped() == sum(k for _, _, iv, k in rows if iv is None)
    assert [iv.ts.tolist() for iv in sc.intervals(sc.kept())] == [list(range(int(lo[i]), int(hi[i]))) for i in sc.kept()]


@pytest.mark.parametrize("states", [("a", "b"), ("w", "x", "y", "z"), ("only",)])
def test_columns_of_other_widths_read_as_the_dicts(states):
    rows = [((1, 1), [0] * len(states)), ((1, 2), list(range(-1, len(states) - 1))),
            ((2, 3), [1000 * (k + 1) for k in range(len(states))]), ((2, 4), [7] + [0] * (len(states) - 1))]
    want, got = PerfData("x", "x"), PerfData("x", "x")
    for key, tot in rows:
        for s, v in zip(states, tot):
            if v:
                want.add_thread_state(*key, s, v / 1000.0)
    got.add_thread_state_totals([k for k, _ in rows], [t for _, t in rows], states)
    assert type(got.thread_states) is ThreadStates
    assert repr(got.thread_states) == repr(want.thread_states) and list(got.threads) == list(want.threads)
    assert [repr(got.thread_states.get(k)) for k, _ in rows] == [repr(want.thread_states.get(k)) for k, _ in rows]
    keys, names, tot = got.thread_states.columns()
    assert keys == list(want.thread_states) and names == states and tot.shape == (len(keys), len(states))
    assert [{s: v for s, v in zip(names, row) if v >= 0.0} for row in tot.tolist()] == list(want.thread_states.values())


def test_every_threads_values_read_in_blocks():
    """values()/items() make the dicts a block of 2^14 threads at a time: rows across blocks."""
    n = (1 << 14) * 2 + 5
    keys = [(k // 7, k) for k in range(n)]
    totals = np.arange(3 * n, dtype=np.int64).reshape(n, 3) * 1000 - 5000
    totals[1 << 14] = 0  # a thread with no time in any state: no entry
    pd = PerfData("x", "x")
    pd.add_thread_state_totals(keys, totals, STATES)
    ts = pd.thread_states
    got = list(ts.values())
    assert len(got) == len(ts) == n - 1 and (keys[1 << 14] not in ts) and ts[keys[0]] == dict.fromkeys(STATES, 0.0)
    assert got == [ts[k] for k in ts] and [k for k, _ in ts.items()] == list(ts)
