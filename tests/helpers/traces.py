"""Direct decodes of real captures that tests compare the readers with."""

from __future__ import annotations

import gzip

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb


def trace_packets(path: str):
    """Every TracePacket of a (gzipped or plain) Perfetto trace, decoded whole by protobuf."""
    raw = open(path, "rb").read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    t = pb.Trace()
    t.ParseFromString(raw)
    return t.packet


def trace_start_ns(res) -> float:
    """The start of an analysed trace in ns, as PerfData has it (the JSON keeps ms from it)."""
    from nodes.perf.formats import load

    return load(res.source).start_us * 1000.0
