"""process_stats rows (nodes/perf/parsers/perfetto_process_stats.py): the C walk of the packet's
bytes (_bundlec.c ``process_stats``) against the rows read from upb's parse, the reference it
replaces — on every real capture's snapshots, on mutated ones, and on hand-written shapes at
the edges (int32 pids, 64-bit values, fields written twice, wire types upb keeps as unknown).
Then the reader's whole output with the walk and without.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from google.protobuf.message import DecodeError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import TracePacket

from nodes.perf.parsers import perfetto as reader
from nodes.perf.parsers import perfetto_process_stats as ps
from nodes.perf.parsers.perfetto_stream import StreamReport, iter_packets_from_bytes
from tests.helpers.differential import perfdata_digest
from tests.helpers.mutations import mutate, mutation
from tests.protowire import field as _ld
from tests.protowire import varint as _vint

ROOT = Path(__file__).resolve().parent.parent
CAPTURES = sorted(p for p in (ROOT / "tests" / "data" / "perfetto").iterdir() if p.suffix in (".perfetto-trace", ".pftrace"))
walk = ps._walk
native = pytest.mark.skipif(walk is None, reason="no C extension (no compiler, or PERFSCOUT_PURE_PYTHON_WIRE=1)")


def _stats_packets(path: Path) -> list[bytes]:
    return [raw for raw in iter_packets_from_bytes(path.read_bytes(), StreamReport())
            if TracePacket.FromString(raw).WhichOneof("data") == "process_stats"]


_PACKETS = {p.name: _stats_packets(p) for p in CAPTURES}
_ALL = [raw for raws in _PACKETS.values() for raw in raws]


def _agrees(raw: bytes) -> bool:
    """Where upb takes ``raw`` as a process_stats packet, the walk's rows are upb's (or it is
    unsure); True when the walk answered."""
    try:
        pkt = TracePacket.FromString(raw)
    except DecodeError:
        return False
    if pkt.WhichOneof("data") != "process_stats":
        return False
    out = walk(raw, *ps._ARGS)
    if out is None:
        return False
    assert out == ps.rows_upb(pkt.process_stats)
    assert ps.rows(pkt.process_stats, raw) == out
    return True


@native
def test_every_real_snapshot_walks_to_upbs_rows():
    assert _ALL
    for raw in _ALL:
        assert _agrees(raw), "a real snapshot left to upb"


def test_rows_are_each_process_fields_in_order():
    """rows_upb: per process in order, per field of FIELDS it has (k its index), the value."""
    raw = max(_ALL, key=len)
    stats = TracePacket.FromString(raw).process_stats
    want = [(p.pid, k, getattr(p, f)) for p in stats.processes for k, (f, _n) in enumerate(ps.FIELDS)
            if p.HasField(f)]
    assert list(zip(*ps.rows_upb(stats))) == want
    assert ps.NAMES[:2] == ("mem.rss", "mem.rss.anon")  # what SystemState.process_counters keeps


_SMALL = sorted(_ALL, key=len)[:6]


@native
@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(which=st.integers(0, max(len(_SMALL) - 1, 0)), muts=st.lists(mutation, min_size=1, max_size=4))
def test_mutated_real_snapshots(which, muts):
    _agrees(mutate(_SMALL[which], muts))


_PROC = 1  # ProcessStats.processes
_STATS = 9  # TracePacket.process_stats


def _proc(*fields: bytes) -> bytes:
    return _ld(_PROC, b"".join(fields))


def _v(no: int, value: int) -> bytes:
    return _vint(no << 3) + _vint(value)


SHAPES = {  # packet bytes: True when the walk must answer, False when it must leave it to upb
    "negative pid (10-byte varint)": (_ld(_STATS, _proc(_v(1, (1 << 64) - 5), _v(3, 100))), True),
    "pid over 32 bits": (_ld(_STATS, _proc(_v(1, (1 << 40) + 7), _v(4, 1))), True),
    "64-bit value": (_ld(_STATS, _proc(_v(1, 3), _v(3, (1 << 64) - 1))), True),
    "fields written twice: the last wins": (_ld(_STATS, _proc(_v(3, 1), _v(1, 2), _v(3, 9), _v(1, 4))), True),
    "fields out of order, unknown ones between": (
        _ld(_STATS, _proc(_v(9, 5), _ld(11, _v(1, 7)), _v(99, 1), b"\x7d\x01\x02\x03\x04", _v(1, 8))), True),
    "no processes": (_ld(_STATS, b""), True),
    "other packet fields around": (_v(8, 1234) + _ld(_STATS, _proc(_v(1, 2), _v(5, 3))) + _v(10, 1), True),
    "a wanted field as bytes (upb: unknown)": (_ld(_STATS, _proc(_v(1, 2), _ld(3, b"\x01"))), False),
    "pid as fixed32 (upb: unknown)": (_ld(_STATS, _proc(b"\x0d\x01\x00\x00\x00", _v(3, 2))), False),
    "processes as a varint (upb: unknown)": (_ld(_STATS, _v(_PROC, 3)), False),
    "process_stats twice (upb merges)": (_ld(_STATS, _proc(_v(1, 1))) + _ld(_STATS, _proc(_v(1, 2))), False),
    "a group in a process": (_ld(_STATS, _proc(_vint(50 << 3 | 3), _vint(50 << 3 | 4))), False),
}


@native
@pytest.mark.parametrize("name", sorted(SHAPES))
def test_edge_shapes(name):
    raw, answers = SHAPES[name]
    assert TracePacket.FromString(raw).WhichOneof("data") == "process_stats"
    assert _agrees(raw) == answers


@native
@pytest.mark.parametrize("path", [p for p in CAPTURES if _PACKETS[p.name]], ids=lambda p: p.name)
def test_reader_output_same_with_and_without_the_walk(path, monkeypatch):
    walked = perfdata_digest(reader.parse(str(path)))
    monkeypatch.setattr(ps, "_walk", None)
    assert perfdata_digest(reader.parse(str(path))) == walked
