"""metrics/scope.py's column passes give what its per-process and per-thread loops gave: the
harness processes found by slice names (_pids_with_names, one lookup over every thread's
names), and find_process's exact match by full or kernel-truncated name."""

from __future__ import annotations

from array import array
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nodes.perf.formats import load
from nodes.perf.metrics import scope
from nodes.perf.model import PerfData, SliceColumns

DATA = Path(__file__).resolve().parent / "data" / "perfetto"
CAPTURES = sorted(p for p in DATA.iterdir() if p.name.endswith((".perfetto-trace", ".pftrace")))


def _loop(pd: PerfData, app_pids: frozenset[int], marks: set[int]) -> set[int]:
    out: set[int] = set()
    for (pid, _tid), cols in pd.slices.items():
        if pid in app_pids or pid in out or pid <= 0:
            continue
        if marks and not marks.isdisjoint(cols.name):
            out.add(pid)
    return out


@settings(max_examples=200, deadline=None)
@given(threads=st.lists(st.tuples(st.integers(-2, 6), st.lists(st.integers(0, 12), max_size=20)), max_size=15),
       marks=st.sets(st.integers(0, 12), max_size=4), app=st.sets(st.integers(-2, 6), max_size=3),
       out_of_range=st.booleans())
def test_pids_with_names_is_the_loop(threads, marks, app, out_of_range):
    pd = PerfData("generated", "generated")
    for i in range(13 if not out_of_range else 5):
        pd.intern(f"s{i}")
    for tid, (pid, names) in enumerate(threads):
        pd.slices[(pid, 100 + tid)] = SliceColumns(array("d", [0.0] * len(names)), array("d", [1.0] * len(names)),
                                                   array("l", names))
    app_pids = frozenset(app)
    assert scope._pids_with_names(pd, app_pids, marks) == _loop(pd, app_pids, marks)


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.name)
def test_real_captures(path):
    pd = load(str(path))
    marks = {i for i, s in enumerate(pd.strings) if s.startswith(scope.HARNESS_SLICE_PREFIXES)}
    for app in (frozenset(), frozenset(k[0] for k in list(pd.slices)[:3])):
        assert scope._pids_with_names(pd, app, marks or {0, 1}) == _loop(pd, app, marks or {0, 1})
    for name in list(pd.processes.values())[:20] + ["com.example.a.very.long.package.name"]:
        want = [p for p, n in pd.processes.items() if scope._name_matches(n, name)]
        assert scope.find_process(pd, name) == (min(want) if want else scope.find_process(pd, name))
