"""What the bundle check records while it checks (``_bundlec.split(raw, rows)``, a ``Rows``)
against the walk it replaces (``perfetto_wire.bundles``, _wirec.c): for the packets the check
accepts, ``perfetto_wire.recorded`` gives the walk's arrays exactly — on every real capture's
ftrace packets, on hypothesis-mutated ones (accepted and refused mixed, a refused packet leaving
nothing behind), and after ``drop``. Then the reader: the same PerfData with the recorder and
without it, and the walk not called when every queued bundle was recorded.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import TracePacket

from nodes.perf.parsers import perfetto as reader
from nodes.perf.parsers import perfetto_bundle_view as view
from nodes.perf.parsers import perfetto_ftrace
from nodes.perf.parsers import perfetto_wire as wire
from nodes.perf.parsers.perfetto_stream import StreamReport, iter_packets_from_bytes
from tests.helpers.differential import perfdata_digest
from tests.helpers.mutations import mutate, mutation
from tests.protowire import field as _ld
from tests.protowire import varint as _vint

ROOT = Path(__file__).resolve().parent.parent
CAPTURES = sorted(p for p in (ROOT / "tests" / "data" / "perfetto").iterdir() if p.suffix in (".perfetto-trace", ".pftrace"))
native = pytest.mark.skipif(view.split is None or wire.NATIVE is None,
                            reason="no C extension (no compiler, or PERFSCOUT_PURE_PYTHON_WIRE=1)")


def _ftrace_packets(path: Path) -> list[bytes]:
    return [raw for raw in iter_packets_from_bytes(path.read_bytes(), StreamReport())
            if TracePacket.FromString(raw).WhichOneof("data") == "ftrace_events"]


_PACKETS = {p.name: _ftrace_packets(p) for p in CAPTURES}
_ALL = [raw for raws in _PACKETS.values() for raw in raws]
_SMALL = sorted(_ALL, key=len)[:200:4] + [r for r in _ALL if 600 < len(r) < 3000][:20]


def _same(got: dict, want: dict) -> None:
    assert bytes(got["buf"]) == bytes(want["buf"])
    for k in ("ev_count", "unpacked", "ts", "pid", "nlen", "kind_no", "k_off", "k_len"):
        assert got[k].dtype == want[k].dtype, k
        assert np.array_equal(got[k], want[k]), k
    assert list(got["compact"]) == list(want["compact"])
    for c, (values, counts) in want["compact"].items():
        assert np.array_equal(got["compact"][c][0], values), c
        assert np.array_equal(got["compact"][c][1], counts), c


def _record(raws: list[bytes]) -> tuple[list[bytes], dict]:
    """The packets the check accepts, and what it recorded of them (numbered in order)."""
    rows = view.new_rows()
    kept = []
    for raw in raws:
        cut = view.split(raw, rows)
        if cut is None:
            assert rows.packets == len(kept), "a refused packet left rows behind"
        else:
            assert cut[-1] == len(kept)
            kept.append(raw)
    return kept, rows.take()


@native
@pytest.mark.parametrize("name", sorted(_PACKETS))
def test_recorded_rows_are_the_walk_on_real_captures(name):
    kept, taken = _record(_PACKETS[name])
    assert kept == _PACKETS[name]
    assert taken["packets"] == len(kept) and taken["bytes"] == sum(map(len, kept))
    _same(wire.recorded(kept, taken), wire.bundles(kept))


@native
def test_recorded_rows_of_the_first_packets():
    """More packets recorded than queued (the last ones were not queued): the first n alone."""
    raws = _SMALL[:12]
    kept, taken = _record(raws)
    _same(wire.recorded(kept[:7], taken), wire.bundles(kept[:7]))
    with pytest.raises(ValueError):
        wire.recorded(kept + kept[:1], taken)


@native
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(range(len(_SMALL))), st.lists(mutation, max_size=4)), min_size=1,
                max_size=6))
def test_recorded_rows_are_the_walk_on_mutated_packets(picks):
    raws = [mutate(_SMALL[i], muts) for i, muts in picks]
    kept, taken = _record(raws)
    if kept:
        _same(wire.recorded(kept, taken), wire.bundles(kept))
    else:
        assert taken["packets"] == 0 and len(taken["ts"]) == 0


@native
@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(range(len(_SMALL))), min_size=2, max_size=6), st.integers(1, 5))
def test_drop_takes_back_the_last_packet(picks, at):
    raws = [_SMALL[i] for i in picks]
    at = min(at, len(raws) - 1)
    rows = view.new_rows()
    for k, raw in enumerate(raws[:at + 1]):
        assert view.split(raw, rows)[-1] == k
    with pytest.raises(ValueError):
        rows.drop(0 if at else 1)  # not the last one
    rows.drop(at)
    for k, raw in enumerate(raws[at + 1:], at):
        assert view.split(raw, rows)[-1] == k
    kept = raws[:at] + raws[at + 1:]
    _same(wire.recorded(kept, rows.take()), wire.bundles(kept))


_BUNDLE = _ld(2, b"\x08\x01")  # one event: timestamp 1


@native
def test_a_packet_not_read_from_its_view_is_dropped():
    """The check accepts the bundle but upb reads the packet whole (it holds other packet data,
    or its other fields do not decode): nothing of it stays recorded."""
    rows = view.new_rows()
    view.parse_packet(_ld(1, _BUNDLE), rows)
    assert rows.packets == 1
    other = TracePacket.DESCRIPTOR.fields_by_name["process_tree"].number
    pkt, b = view.parse_packet(_ld(1, _BUNDLE) + _ld(other, b""), rows)
    assert b is None and pkt.WhichOneof("data") is not None
    assert rows.packets == 1
    with pytest.raises(Exception):
        view.parse_packet(_ld(1, _BUNDLE) + _vint(3 << 3 | 2) + b"\x05", rows)  # a timestamp as a cut string
    assert rows.packets == 1
    taken = rows.take()
    _same(wire.recorded([_ld(1, _BUNDLE)], taken), wire.bundles([_ld(1, _BUNDLE)]))


@native
@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.name)
def test_reader_same_with_and_without_the_recorder(path, monkeypatch):
    with_rows = perfdata_digest(reader.parse(str(path)))
    walked = []
    real = wire.bundles
    monkeypatch.setattr(wire, "bundles", lambda packets: walked.append(len(packets)) or real(packets))
    monkeypatch.setattr(perfetto_ftrace, "new_rows", lambda: None)
    assert perfdata_digest(reader.parse(str(path))) == with_rows
    assert walked or not _PACKETS[path.name]


@native
@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.name)
def test_reader_does_not_walk_recorded_bundles(path, monkeypatch):
    def refuse(packets):
        raise AssertionError("walked bundles the check had recorded")

    monkeypatch.setattr(wire, "bundles", refuse)
    reader.parse(str(path))


@native
def test_a_dropped_packet_gives_its_rows_back(monkeypatch):
    """A packet the reader drops after the check recorded its bundle (FtraceState.unqueued): the
    next bundles' rows still follow the queue, and the batch reads them from the recorder."""
    from nodes.perf.parsers.perfetto_ftrace import FtraceState

    raws = _SMALL[:3]
    state = FtraceState()
    views = [view.parse_packet(raw, state.rows)[1] for raw in raws[:2]]
    state.queue(views[0], raws[0])
    state.unqueued(views[0])  # queued: kept
    state.unqueued(views[1])  # not queued: taken back
    assert state.rows.packets == 1
    v = view.parse_packet(raws[2], state.rows)[1]
    assert v.row == 1
    state.queue(v, raws[2])
    walked = []
    real = wire.bundles
    monkeypatch.setattr(wire, "bundles", lambda packets: walked.append(1) or real(packets))
    got = FtraceState()
    for b, raw in ((views[0], raws[0]), (v, raws[2])):
        got.queue(view.full(b), raw)
    assert state.flush() == got.flush() == 0
    assert len(walked) == 1  # only the upb bundles were walked
    assert state.held_rows() == got.held_rows()
    assert list(state.atrace.ts) == list(got.atrace.ts) and state.sched.rows == got.sched.rows
