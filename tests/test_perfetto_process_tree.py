"""Process trees read from the packet's bytes (perfetto_system.SystemState.process_tree with the
raw packet: _bundlec.c ``process_tree``) against upb's message (``process_tree_upb``, the path
it replaces): the same process and thread names (values and order of first naming), the same
tid → tgid columns and process count — on every real capture's process_tree packets, one after
the other as the reader reads them, on made-up edge shapes (names not UTF-8, an empty first
cmdline, a name written twice, a negative pid, processes after threads) and on hypothesis-mutated
packets (where upb reads them; the walk may decline, never differ).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from google.protobuf.message import DecodeError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

from nodes.perf.model import PerfData
from nodes.perf.parsers import perfetto_system
from nodes.perf.parsers.perfetto_stream import StreamReport, iter_packets_from_bytes
from nodes.perf.parsers.perfetto_system import SystemState
from tests.helpers.mutations import mutate, mutation
from tests.protowire import field as _ld
from tests.protowire import varint as _vint

ROOT = Path(__file__).resolve().parent.parent
CAPTURES = sorted(p for p in (ROOT / "tests" / "data" / "perfetto").iterdir() if p.suffix in (".perfetto-trace", ".pftrace"))
native = pytest.mark.skipif(perfetto_system._tree_walk is None,
                            reason="no C extension (no compiler, or PERFSCOUT_PURE_PYTHON_WIRE=1)")
_TREE_FIELD = pb.TracePacket.DESCRIPTOR.fields_by_name["process_tree"].number


def _tree_packets(path: Path) -> list[bytes]:
    return [raw for raw in iter_packets_from_bytes(path.read_bytes(), StreamReport())
            if pb.TracePacket.FromString(raw).WhichOneof("data") == "process_tree"]


_PACKETS = {p.name: _tree_packets(p) for p in CAPTURES}
_ALL = [raw for raws in _PACKETS.values() for raw in raws]
_SMALL = sorted(_ALL, key=len)[:20]


def _state(raws: list[bytes], walk: bool):
    s, data = SystemState(), PerfData("perfetto", "x")
    for raw in raws:
        tree = pb.TracePacket.FromString(raw).process_tree
        if walk:
            s.process_tree(tree, data, raw)
        else:
            s.process_tree_upb(tree, data)
    return (list(s.tree_tids), list(s.tree_tgids), s.processes_seen, list(data.processes.items()),
            [(k, t.name, t.is_main) for k, t in data.threads.items()])


@native
@pytest.mark.parametrize("name", sorted(n for n in _PACKETS if _PACKETS[n]))
def test_walk_is_upb_on_real_captures(name):
    raws = _PACKETS[name]
    assert all(perfetto_system._tree_walk(raw, *perfetto_system._TREE_ARGS) is not None for raw in raws)
    assert _state(raws, True) == _state(raws, False)


def _v(num: int, value: int) -> bytes:
    return _vint(num << 3) + _vint(value & ((1 << 64) - 1))


def _tree(body: bytes) -> bytes:
    return _ld(_TREE_FIELD, body)


EDGES = {
    "names not UTF-8": _tree(_ld(1, _v(1, 5) + _ld(3, b"\xffapp\xc3")) + _ld(2, _v(1, 6) + _v(3, 5) + _ld(2, b"w\xfe"))),
    "empty first cmdline": _tree(_ld(1, _v(1, 5) + _ld(3, b"") + _ld(3, b"second"))),
    "name written twice, tgid twice": _tree(_ld(2, _v(1, 6) + _ld(2, b"a") + _v(3, 1) + _ld(2, b"b") + _v(3, 7))),
    "empty name": _tree(_ld(2, _v(1, 6) + _ld(2, b"") + _v(3, 1))),
    "negative pid, pid over 32 bits": _tree(_ld(1, _v(1, -3) + _ld(3, b"n")) + _ld(1, _v(1, (1 << 33) + 4))),
    "threads before processes, interleaved": _tree(_ld(2, _v(1, 9) + _v(3, 8)) + _ld(1, _v(1, 8) + _ld(3, b"p"))
                                                   + _ld(2, _v(1, 10) + _v(3, 8) + _ld(2, b"t"))),
    "unknown and other fields": _tree(_v(3, 77) + _ld(1, _v(2, 1) + _ld(6, b"\x01\x02") + _v(1, 4) + _v(900, 1))
                                      + _ld(9, b"x")) + _v(8, 123),
    "no processes or threads": _tree(b""),
}
DECLINED = {  # shapes the walk leaves to upb
    "tree twice": _tree(_ld(1, _v(1, 5))) + _tree(_ld(1, _v(1, 6))),
    "pid as fixed32": _tree(_ld(1, _vint(1 << 3 | 5) + b"\x05\0\0\0")),
    "name as a varint": _tree(_ld(2, _v(1, 6) + _v(2, 1))),
    "threads as a varint": _tree(_v(2, 1)),
    "a group": _tree(_ld(1, _v(1, 5)) + _vint(7 << 3 | 3) + _vint(7 << 3 | 4)),
}


@native
@pytest.mark.parametrize("name", sorted(EDGES))
def test_walk_is_upb_on_edge_shapes(name):
    raw = EDGES[name]
    assert perfetto_system._tree_walk(raw, *perfetto_system._TREE_ARGS) is not None
    assert _state([raw], True) == _state([raw], False)


@native
@pytest.mark.parametrize("name", sorted(DECLINED))
def test_walk_declines_what_upb_reads_otherwise(name):
    raw = DECLINED[name]
    pb.TracePacket.FromString(raw)  # upb reads it
    assert perfetto_system._tree_walk(raw, *perfetto_system._TREE_ARGS) is None
    assert _state([raw], True) == _state([raw], False)


@native
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(range(len(_SMALL))), st.lists(mutation, max_size=4)), min_size=1,
                max_size=3))
def test_walk_is_upb_on_mutated_packets(picks):
    raws = []
    for i, muts in picks:
        raw = mutate(_SMALL[i], muts)
        try:
            pkt = pb.TracePacket.FromString(raw)
        except DecodeError:
            continue
        if pkt.HasField("process_tree"):
            raws.append(raw)
    assert _state(raws, True) == _state(raws, False)
