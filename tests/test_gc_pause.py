"""The cyclic GC is paused while the Perfetto and Trace Event readers run, and restored after —
also when the read fails, and left off when the caller had it off (nodes/perf/gc_pause.py)."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from nodes.perf.errors import PerfDataError
from nodes.perf.parsers import perfetto
from nodes.perf.parsers import trace_event

DATA = Path(__file__).resolve().parent / "data"
WARM = DATA / "perfetto" / "api32_startup_warm.perfetto-trace"


@pytest.fixture
def gc_on():
    was = gc.isenabled()
    gc.enable()
    yield
    # the state before, whatever the test left (one switches it off): later tests expect it
    (gc.enable if was else gc.disable)()


def test_perfetto_read_runs_with_the_collector_off_and_restores_it(gc_on, monkeypatch):
    seen = []
    real = perfetto._TraceReader.packet

    def packet(self, raw):
        seen.append(gc.isenabled())
        return real(self, raw)

    monkeypatch.setattr(perfetto._TraceReader, "packet", packet)
    pd = perfetto.parse(str(WARM))
    assert pd.threads  # the trace was read
    assert seen and not any(seen)
    assert gc.isenabled()


def test_collector_restored_after_a_failed_read(gc_on, tmp_path):
    bad = tmp_path / "bad.perfetto-trace"
    bad.write_bytes(b"\x0a\x05garbage-that-is-no-packet")
    with pytest.raises(PerfDataError):
        perfetto.parse(str(bad))
    assert gc.isenabled()
    bad_json = tmp_path / "bad.json"
    bad_json.write_text('{"traceEvents": [ {"ph": ')
    try:
        trace_event.parse(str(bad_json))
    except PerfDataError:
        pass
    assert gc.isenabled()


def test_collector_left_off_when_the_caller_had_it_off(gc_on):
    gc.disable()
    perfetto.parse(str(WARM))
    assert not gc.isenabled()


def test_metrics_run_with_the_collector_off_and_restore_it(gc_on, monkeypatch):
    """metrics.compute pauses it too (nodes/perf/metrics/__init__.py), and switches it back on."""
    from nodes.perf import metrics
    from nodes.perf.metrics import hotspots

    seen = []
    real = hotspots.walk_all

    def walk_all(ctx):
        seen.append(gc.isenabled())
        return real(ctx)

    monkeypatch.setattr(hotspots, "walk_all", walk_all)
    res = metrics.compute(perfetto.parse(str(WARM)))
    assert res.hotspots and seen == [False]
    assert gc.isenabled()
