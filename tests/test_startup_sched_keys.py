"""startup_reasons._sched_keys_of tests each process name once (nodes/perf/metrics/startup_reasons.py)
and lists the same threads, in the same order, as testing each thread's process name: on
generated names (missing, None, empty, the suffix inside or at the end) and the real captures."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nodes.perf.metrics import startup_reasons

DATA = Path(__file__).parent / "data" / "perfetto"
CAPTURES = sorted(p for p in DATA.iterdir() if p.name.endswith((".perfetto-trace", ".pftrace")))


def _each_thread(pd, suffix: str) -> list:
    return [key for key in pd.sched_intervals if (pd.processes.get(key[0]) or "").endswith(suffix)]


def _both(pd, suffix: str):
    return startup_reasons._sched_keys_of(SimpleNamespace(pd=pd), suffix), _each_thread(pd, suffix)


_names = st.sampled_from([None, "", "installd", "/system/bin/installd", "installd:x", "dex2oat64", "app", "dex2oat"])


@settings(max_examples=200, deadline=None)
@given(procs=st.dictionaries(st.integers(0, 8), _names, max_size=8),
       keys=st.lists(st.tuples(st.integers(0, 10), st.integers(0, 5)), unique=True, max_size=20),
       suffix=st.sampled_from(["installd", "dex2oat64", ""]))
def test_once_a_process_as_once_a_thread(procs, keys, suffix):
    pd = SimpleNamespace(processes=procs, sched_intervals=dict.fromkeys(keys))
    got, want = _both(pd, suffix)
    assert got == want


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.name)
def test_on_real_captures(path):
    from nodes.perf.formats import load

    pd = load(str(path))
    for suffix in ("installd", "dex2oat64", "system_server", ""):
        got, want = _both(pd, suffix)
        assert got == want
