"""The stream reader's one reused buffer (perfetto_stream._Reader): every real capture frames into
the packets a plain walk over the whole file finds, through a file (readinto), a stream with
read() alone and the gunzip stream, in small chunks and in the default ones; each packet is
bytes of its own, unchanged by the reads after it."""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import pytest

from nodes.perf.parsers import perfetto_stream
from nodes.perf.parsers.perfetto_stream import GunzipStream, StreamReport, iter_packets, read_varint

ROOT = Path(__file__).resolve().parent.parent
CAPTURES = sorted(p for p in (ROOT / "tests" / "data" / "perfetto").iterdir() if p.suffix in (".perfetto-trace", ".pftrace"))


def _walk(data: bytes) -> list[bytes]:
    """The packets of a whole Trace in memory, field by field (the reference)."""
    out, pos = [], 0
    while pos < len(data):
        tag, pos = read_varint(data, pos)
        assert tag & 7 == 2
        n, pos = read_varint(data, pos)
        if tag >> 3 == 1:
            out.append(data[pos:pos + n])
        pos += n
    return out


class _ReadOnly(io.RawIOBase):
    """A pipe-like stream with read() and no readinto()."""

    def __init__(self, data: bytes):
        self._data = io.BytesIO(data)

    def readable(self) -> bool:
        return True

    def read(self, n=-1):
        return self._data.read(n)


@pytest.mark.parametrize("chunk", [4093, None])
@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.name)
def test_real_captures_frame_as_the_whole_file_walk(path, chunk, monkeypatch):
    if chunk:
        monkeypatch.setattr(perfetto_stream, "_READ_CHUNK", chunk)  # a tail moved at nearly every packet
    data = path.read_bytes()
    want = _walk(data)
    inputs = {"file": lambda: open(path, "rb"), "read only": lambda: _ReadOnly(data),
              "gunzip": lambda: GunzipStream(io.BytesIO(gzip.compress(data)), 1 << 40)}
    for name, make in inputs.items():
        report = StreamReport()
        with make() as f:
            got = list(iter_packets(f, report))
        assert all(type(p) is bytes for p in got), name
        assert got == want, name
        assert (report.packets, report.bytes_read, report.truncated, report.problems) == (len(want), len(data), False, [])
