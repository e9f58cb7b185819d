"""The fast paths of FtraceState.finish (nodes/perf/parsers/perfetto_ftrace.py) against the
slower ones they replace, on random columns and on the real captures' own columns."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nodes.perf.parsers import perfetto, perfetto_ftrace
from nodes.perf.parsers.perfetto_sched import by_thread_time

DATA = Path(__file__).parent / "data" / "perfetto"
CAPTURES = sorted(DATA.glob("*.perfetto-trace")) + sorted(DATA.glob("*.pftrace"))

_int64 = st.integers(-(1 << 63), (1 << 63) - 1)
_small = st.integers(-3, 3)
_rows = st.lists(st.tuples(st.one_of(_small, _int64), st.one_of(_small, _int64)), max_size=60)


@settings(max_examples=300, deadline=None)
@given(_rows)
def test_thread_time_order_is_the_lexsort(rows):
    """One int64 key sorted unstably, ties put back in row order, or the two stable sorts when
    the key would not fit: always np.lexsort((ts, tid))."""
    tid = np.array([r[0] for r in rows], np.int64)
    ts = np.array([r[1] for r in rows], np.int64)
    assert by_thread_time(tid, ts).tolist() == np.lexsort((ts, tid)).tolist()


def _finish_inputs(path: Path, monkeypatch) -> list[perfetto_ftrace.FtraceState]:
    """The FtraceState of each finish while ``path`` is read, before it is emptied (columns copied)."""
    seen = []
    orig = perfetto_ftrace.FtraceState.finish

    def spy(self, data, known):
        tid, ts, code, arg = self.sched.columns()
        seen.append({"sched": (tid.copy(), ts.copy(), code.copy(), arg.copy())})
        return orig(self, data, known)

    monkeypatch.setattr(perfetto_ftrace.FtraceState, "finish", spy)
    perfetto.parse(str(path))
    return seen


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.name)
def test_thread_time_order_of_the_captures_scheduler_rows(path, monkeypatch):
    for seen in _finish_inputs(path, monkeypatch):
        tid, ts, _, _ = seen["sched"]
        assert by_thread_time(tid, ts).tolist() == np.lexsort((ts, tid)).tolist()
