"""Protocol Buffers wire format by hand, for tests and benchmarks that build traces byte by byte.

Perfetto's bundled proto does not declare every field a real trace carries (TracePacket field 76,
the frame timeline), and the reader's bounds are tested on deliberately broken framing, so some
bytes must be written without a message class. Used by tests/test_perfetto_reader.py,
tests/test_perfetto_bounds.py, tests/test_frames_analysis.py and benchmarks/_perfetto_concat.py.
"""

from __future__ import annotations


def varint(n: int) -> bytes:
    """``n`` (non-negative) as a base-128 varint."""
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field(num: int, payload: bytes) -> bytes:
    """One length-delimited field ``num`` holding ``payload``."""
    return varint((num << 3) | 2) + varint(len(payload)) + payload
