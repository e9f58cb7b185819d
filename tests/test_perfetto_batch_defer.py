"""Batches larger than the 1 MiB between event-cap checks (nodes/perf/parsers/perfetto.py
``_TraceReader.held``, FtraceState.may_defer): the reader's whole output is what it is when
every check reads the queued bundles first, with or without the cap stopping the read, and the
row bound the deferral counts on is never below what a bundle adds."""

from __future__ import annotations

from pathlib import Path

import pytest

from nodes.perf import limits
from nodes.perf.formats import load
from nodes.perf.parsers import perfetto_ftrace
from nodes.perf.parsers.perfetto_bundle_view import parse_packet, rows_bound
from nodes.perf.parsers.perfetto_stream import iter_packets
from tests.helpers.differential import perfdata_digest

DATA = Path(__file__).resolve().parent / "data" / "perfetto"
TRACES = sorted(p for p in DATA.iterdir() if p.suffix in (".perfetto-trace", ".pftrace"))


def _digest(path: Path, cap: int | None, monkeypatch) -> tuple[dict, int]:
    """(PerfData digest, how many batches were read) of one file."""
    batches = []
    read_batch = perfetto_ftrace.read_batch
    monkeypatch.setattr(perfetto_ftrace, "read_batch",
                        lambda state, items, *rows: batches.append(1) or read_batch(state, items, *rows))
    with limits.using(**({} if cap is None else {"max_events": cap})):
        return perfdata_digest(load(str(path))), len(batches)


@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.name)
@pytest.mark.parametrize("cap", [None, 5000, 40000, 150000])
@pytest.mark.parametrize("batch_bytes", [256 << 10, 64 << 20])
def test_deferred_batches_read_as_checked_ones(path, cap, batch_bytes, monkeypatch):
    monkeypatch.setattr(perfetto_ftrace, "BATCH_BYTES", batch_bytes)
    deferred, n_deferred = _digest(path, cap, monkeypatch)
    monkeypatch.setattr(perfetto_ftrace.FtraceState, "may_defer", lambda self, room: False)
    checked, n_checked = _digest(path, cap, monkeypatch)
    assert deferred == checked
    if cap is None and batch_bytes > 1 << 20 and n_checked > 1:
        assert n_deferred < n_checked  # the deferral is what is tested


@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.name)
def test_rows_bound_covers_each_bundle(path):
    """Each ftrace bundle read alone adds at most rows_bound rows (view and upb's bundle)."""
    from nodes.perf.parsers.perfetto_bundle_view import full
    from nodes.perf.parsers.perfetto_stream import StreamReport

    seen = 0
    with open(path, "rb") as f:
        for raw in iter_packets(f, StreamReport()):
            pkt, view = parse_packet(raw)
            bundle = view if view is not None else (pkt.ftrace_events if pkt.HasField("ftrace_events") else None)
            if bundle is None:
                continue
            for b in [x for x in (view, full(bundle)) if x is not None]:
                state = perfetto_ftrace.FtraceState()
                state.queue(b, raw)
                bound = state.batch_rows
                state.flush()
                assert state.held_rows() <= bound
                assert bound == rows_bound(b)
            seen += 1
    assert seen or path.suffix == ".pftrace"
