"""Bigger Perfetto traces from real ones: copies of a capture, shifted so they do not collide.

A concatenation of ``Trace`` messages is a valid ``Trace``, but plain copies would overlap in
time and share pids, thread ids, track uuids and packet sequences (interned strings). Each
copy ``k`` is shifted: every ``timestamp`` field (packets, ftrace events, clock snapshots) and
the first of each delta-encoded compact-sched timestamp list by ``k × (span + 1 s)``; every
pid/tid-like field by ``k × PID_STEP``; every track uuid by ``k × UUID_STEP``; every
``trusted_packet_sequence_id`` by ``k × SEQ_STEP``. Fields are found by name through protobuf
reflection, so whatever the capture holds is shifted alike.

Used by benchmarks/perfetto_read.py (growth from 2 MB to 200 MB).
"""

from __future__ import annotations

import os
from pathlib import Path

from tests.protowire import field

PID_FIELDS = frozenset({
    "pid", "tid", "tgid", "ppid", "prev_pid", "next_pid", "target_pid", "parent_pid", "child_pid",
    "switch_next_pid", "waking_pid", "trusted_pid", "common_pid", "upid", "utid",
})
UUID_FIELDS = frozenset({
    "uuid", "parent_uuid", "track_uuid", "extra_counter_track_uuids", "extra_double_counter_track_uuids",
})
#: delta-encoded lists whose first element is absolute (compact sched)
DELTA_TIMES = frozenset({"switch_timestamp", "waking_timestamp"})
PID_STEP = 1 << 20
UUID_STEP = 1 << 40
SEQ_STEP = 1 << 12
GAP_NS = 1_000_000_000


def _packets(path: str | os.PathLike) -> list[bytes]:
    from nodes.perf.parsers.perfetto_stream import StreamReport, iter_packets

    with open(path, "rb") as f:
        return list(iter_packets(f, StreamReport()))


def _shift(msg, dt: int, dpid: int, duuid: int) -> None:
    from google.protobuf.descriptor import FieldDescriptor as FD

    for fd, value in msg.ListFields():
        name = fd.name
        if fd.type == FD.TYPE_MESSAGE:
            if fd.is_repeated:
                for m in value:
                    _shift(m, dt, dpid, duuid)
            else:
                _shift(value, dt, dpid, duuid)
            continue
        if fd.cpp_type not in (FD.CPPTYPE_INT32, FD.CPPTYPE_INT64, FD.CPPTYPE_UINT32, FD.CPPTYPE_UINT64):
            continue
        if name == "timestamp" and not fd.is_repeated:
            setattr(msg, name, value + dt)
        elif name in DELTA_TIMES and fd.is_repeated and len(value):
            value[0] += dt
        elif name in PID_FIELDS:
            if fd.is_repeated:
                value[:] = [v + dpid if v > 0 else v for v in value]
            elif value > 0:  # 0 is the idle task / "none"
                setattr(msg, name, value + dpid)
        elif name in UUID_FIELDS:
            if fd.is_repeated:
                value[:] = [v + duuid for v in value]
            else:
                setattr(msg, name, value + duuid)
        elif name == "trusted_packet_sequence_id":
            setattr(msg, name, value + SEQ_STEP)


def concat(source: str | os.PathLike, out: str | os.PathLike, target_mb: float) -> dict:
    """Write copies of ``source`` to ``out`` until it holds ``target_mb`` MB; returns {"copies",
    "bytes", "packets"}. Copy 0 is the source byte for byte; each next copy is the previous one
    shifted by one span (+ 1 s), PID_STEP, UUID_STEP and SEQ_STEP."""
    from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import TracePacket

    whole = Path(source).read_bytes()
    pkts = []
    lo = hi = None
    for raw in _packets(source):
        p = TracePacket()
        p.ParseFromString(raw)
        pkts.append(p)
        if p.HasField("timestamp"):
            lo = p.timestamp if lo is None else min(lo, p.timestamp)
            hi = p.timestamp if hi is None else max(hi, p.timestamp)
    span = (hi or 0) - (lo or 0) + GAP_NS
    target = int(target_mb * 1e6)
    written = copies = packets = 0
    with open(out, "wb") as f:
        while written < target:
            if copies == 0:
                data = whole
            else:
                for p in pkts:  # cumulative: the template becomes copy k
                    _shift(p, span, PID_STEP, UUID_STEP)
                data = b"".join(field(1, p.SerializeToString()) for p in pkts)  # Trace.packet is field 1
            f.write(data)
            written += len(data)
            packets += len(pkts)
            copies += 1
    return {"copies": copies, "bytes": written, "packets": packets, "span_ns": span}
