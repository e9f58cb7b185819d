"""Stream the TracePackets out of a Perfetto ``Trace`` one at a time.

A Perfetto trace file is a serialized ``Trace`` message, i.e. nothing but a run of
``field 1, length-delimited`` records, each one ``TracePacket``. Parsing the whole ``Trace``
with protobuf would hold every packet (and its Python objects) at once; reading the outer
records ourselves keeps memory to one packet plus a read buffer, whatever the file size.

The outer framing is the only protobuf wire format decoded by hand here: the packets
themselves are parsed by the ``perfetto`` package's generated classes.
"""

from __future__ import annotations

import io
import zlib
from dataclasses import dataclass, field
from typing import BinaryIO, Iterator

#: A packet bigger than this is skipped (and the result marked partial): real packets are
#: well under 1 MiB (an ftrace bundle is a few hundred KiB), so anything this large is a
#: corrupt length or a file that is not a trace.
DEFAULT_PACKET_LIMIT = 64 * 1024 * 1024

_READ_CHUNK = 1 << 20
_WIRE_VARINT, _WIRE_I64, _WIRE_LEN, _WIRE_I32 = 0, 1, 2, 5
_PACKET_TAG = (1 << 3) | _WIRE_LEN  # 0x0A


class StreamCorrupt(Exception):
    """The outer framing is broken at ``offset``: what follows cannot be located."""

    def __init__(self, offset: int, problem: str):
        self.offset = offset
        super().__init__(f"{problem} at byte {offset}")


@dataclass
class StreamReport:
    """How the framing went: filled while iterating, read after it."""

    packets: int = 0
    bytes_read: int = 0
    oversized: int = 0
    other_fields: int = 0
    truncated: bool = False
    problems: list[str] = field(default_factory=list)


class GunzipStream(io.RawIOBase):
    """Gunzip on the fly, keeping what decompressed before a cut instead of failing.

    ``gzip.GzipFile`` raises on a stream that ends early and drops the data of the last
    read; a capture cut off during ``adb pull`` would then lose whole packets that are
    intact. Here the decompressor hands out everything it can, and ``truncated`` says
    whether the stream ended before its end-of-stream marker. ``cap`` bounds the
    decompressed size (a gzip bomb stops with ``OverflowError``).
    """

    def __init__(self, raw: BinaryIO, cap: int):
        self._raw = raw
        self._cap = cap
        self._out = 0
        self._d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        self._pending = b""
        self._tail = b""
        self.truncated = False
        self.error: str | None = None

    def readable(self) -> bool:
        return True

    def _input(self) -> bytes:
        if self._tail:
            data, self._tail = self._tail, b""
            return data
        return self._raw.read(_READ_CHUNK)

    def readinto(self, b) -> int:  # type: ignore[override]
        while not self._pending:
            if self._d.eof:
                rest = self._d.unused_data or self._input()
                if not rest.strip(b"\0"):
                    return 0  # clean end (trailing zero padding is allowed)
                self._d = zlib.decompressobj(16 + zlib.MAX_WBITS)  # the next gzip member
                data = rest
            else:
                data = self._input()
                if not data:
                    self.truncated = True
                    self._pending = self._d.flush()
                    if not self._pending:
                        return 0
                    break
            try:
                self._pending = self._d.decompress(data, max(len(b), 1 << 16))
            except zlib.error as e:
                self.truncated = True
                self.error = str(e)
                return 0
            self._tail = self._d.unconsumed_tail
        n = min(len(b), len(self._pending))
        b[:n] = self._pending[:n]
        self._pending = self._pending[n:]
        self._out += n
        if self._out > self._cap:
            raise OverflowError(f"decompresses to more than {self._cap} bytes")
        return n

    def close(self) -> None:
        try:
            self._raw.close()
        finally:
            super().close()


def read_varint(buf: bytes | memoryview, pos: int) -> tuple[int, int]:
    """Decode a base-128 varint at ``pos``; returns (value, next position).

    Raises IndexError when the buffer ends inside the varint, ValueError past 10 bytes.
    """
    result = 0
    shift = 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7
        if shift >= 70:
            raise ValueError("varint longer than 10 bytes")


class _Reader:
    """A forward-only byte source with a small look-ahead buffer.

    A record's length is claimed by the file itself, so it is never trusted for a read size:
    on a seekable input the bytes left are known and a claim beyond them fails at once
    without reading; on a stream (gunzip) data is pulled in chunks of at most
    ``_READ_CHUNK`` and appended, so memory follows the bytes that exist, not the claim.
    """

    def __init__(self, f: BinaryIO):
        self.f = f
        #: One buffer for the whole read: ``buf[pos:end]`` is what is not consumed yet; a chunk is
        #: read into the buffer after it (``readinto``), the tail moved to the front first. (A
        #: new bytes per chunk, the tail joined to the next read, came from fresh pages each
        #: time: ~15,000 page faults and ~40 ms of system time per 100 MB.)
        self.buf = bytearray()
        self.end = 0
        self.pos = 0
        self.offset = 0  # offset of buf[0], counted from where the stream stood at the start
        self.eof = False
        #: Bytes of ``f`` not read into ``buf`` yet; None when the input cannot tell (a pipe, gunzip).
        self.left = _bytes_left(f)

    def _fill(self, need: int) -> bool:
        """Make at least ``need`` bytes available from ``pos``; False at end of file.

        Each read asks for one chunk, or on a seekable input for what is missing but never
        more than the file still holds; whatever arrives before the end stays in ``buf``.
        """
        have = self.end - self.pos
        if have >= need:
            return True
        if self.eof:
            return False
        if self.pos:
            self.buf[:have] = self.buf[self.pos : self.end]  # the same length: in place
        self.offset += self.pos
        self.pos = 0
        self.end = have
        while have < need:
            if self.left is None:
                want = _READ_CHUNK
            else:
                want = max(_READ_CHUNK, min(need - have, self.left))
            if self.end + want > len(self.buf):
                self.buf += bytes(self.end + want - len(self.buf))
            got = self._read_into(want)
            if not got:
                self.eof = True
                break
            if self.left is not None:
                self.left = max(0, self.left - got)
            self.end += got
            have += got
        return have >= need

    def _read_into(self, want: int) -> int:
        """Read at most ``want`` bytes to ``buf[end:]``; how many came (0 at the end)."""
        with memoryview(self.buf) as view:
            try:
                return self.f.readinto(view[self.end : self.end + want]) or 0
            except (AttributeError, NotImplementedError, io.UnsupportedOperation):
                pass
        chunk = self.f.read(want)  # a stream with read() alone
        self.buf[self.end : self.end + len(chunk)] = chunk
        return len(chunk)

    def at_end(self) -> bool:
        return not self._fill(1)

    def tell(self) -> int:
        return self.offset + self.pos

    def varint(self) -> int | None:
        """The next varint, or None when the file ends inside it.

        Raises :class:`StreamCorrupt` past 10 bytes: no 64-bit value is that long, so the
        framing is lost from here on.
        """
        buf = self.buf
        if self.end - self.pos < 10:
            self._fill(10)
            buf = memoryview(self.buf)[: self.end]  # an index past the data raises, as at its end
        try:
            value, self.pos = read_varint(buf, self.pos)
        except IndexError:
            return None
        except ValueError:
            raise StreamCorrupt(self.tell(), "varint longer than 10 bytes") from None
        return value

    def take(self, n: int) -> bytes | None:
        """The next ``n`` bytes, or None when the input holds fewer (known up front if it seeks)."""
        pos = self.pos
        end = pos + n
        if end > self.end:
            if not self._holds(n) or not self._fill(n):
                return None
            pos, end = self.pos, self.pos + n
        self.pos = end
        return bytes(memoryview(self.buf)[pos:end])  # one copy

    def skip(self, n: int) -> bool:
        """Drop ``n`` bytes without keeping them (an oversized record stays off the heap)."""
        have = self.end - self.pos
        if n <= have:
            self.pos += n
            return True
        if not self._holds(n):
            return False
        if self.left is not None and not self.eof:
            rest = n - have
            self.f.seek(rest, io.SEEK_CUR)
            self.left -= rest
            self.offset += self.end + rest
            self.end = self.pos = 0
            return True
        while n > 0:
            if not self._fill(1):
                return False
            step = min(n, self.end - self.pos)
            self.pos += step
            n -= step
        return True

    def _holds(self, n: int) -> bool:
        """False when the input is known to end before ``n`` more bytes (nothing is read)."""
        missing = n - (self.end - self.pos)
        if missing <= 0 or self.left is None or missing <= self.left:
            return True
        if self.eof:
            return False
        self.left = _bytes_left(self.f)  # the file may have grown since the last look
        return self.left is None or missing <= self.left


def _bytes_left(f: BinaryIO) -> int | None:
    """Bytes between the position of ``f`` and its end, or None when ``f`` cannot seek.

    Asked by seeking, not by ``fstat``: a decompressor's ``fileno`` is the compressed file's.
    (A seekable decompressor such as ``gzip.GzipFile`` would inflate everything to answer;
    gzip input goes through :class:`GunzipStream`, which does not seek.)
    """
    try:
        if not f.seekable():
            return None
        here = f.tell()
        end = f.seek(0, io.SEEK_END)
        f.seek(here)
    except (OSError, ValueError, AttributeError):
        return None
    return max(0, end - here)


def iter_packets(
    f: BinaryIO, report: StreamReport, limit: int = DEFAULT_PACKET_LIMIT
) -> Iterator[bytes]:
    """Yield each TracePacket's bytes; framing problems end up in ``report``.

    A file cut inside a packet yields every whole packet before the cut and sets
    ``report.truncated``; so does a length claiming more bytes than the file holds, which is
    found out without reading (or allocating) the claimed size. A record with an impossible
    wire type or a varint over 10 bytes raises :class:`StreamCorrupt` (the caller decides
    whether what came before is worth keeping).
    """
    r = _Reader(f)
    while not r.at_end():
        start = r.tell()
        tag = r.varint()
        if tag is None:
            report.truncated = True
            report.problems.append(f"file ends inside a record header at byte {start}")
            return
        field_no, wire = tag >> 3, tag & 7
        if field_no == 0:
            raise StreamCorrupt(start, "record with field number 0")
        if wire == _WIRE_LEN:
            size = r.varint()
            if size is None:
                report.truncated = True
                report.problems.append(f"file ends inside a record length at byte {start}")
                return
            if field_no != 1:
                # Not a packet: nothing here reads it, so it is skipped whatever its size.
                if not r.skip(size):
                    report.truncated = True
                    report.problems.append(
                        f"file ends inside a {size}-byte field-{field_no} record that starts at byte {start}"
                    )
                    return
                report.other_fields += 1
                continue
            if size > limit:
                report.oversized += 1
                report.problems.append(
                    f"packet of {size} bytes at byte {start} is over the {limit}-byte limit; skipped"
                )
                if not r.skip(size):
                    report.truncated = True
                    report.problems.append(f"file ends inside the oversized packet that starts at byte {start}")
                    return
                continue
            data = r.take(size)
            if data is None:
                report.truncated = True
                report.problems.append(
                    f"file ends inside a {size}-byte packet that starts at byte {start}"
                )
                return
            report.bytes_read = r.tell()
            report.packets += 1
            yield data
        elif wire == _WIRE_VARINT:
            if r.varint() is None:
                report.truncated = True
                return
            report.other_fields += 1
        elif wire in (_WIRE_I64, _WIRE_I32):
            if not r.skip(8 if wire == _WIRE_I64 else 4):
                report.truncated = True
                return
            report.other_fields += 1
        else:
            raise StreamCorrupt(start, f"record with unsupported wire type {wire}")
    report.bytes_read = r.tell()


def iter_packets_from_bytes(data: bytes, report: StreamReport, limit: int = DEFAULT_PACKET_LIMIT):
    """Same as :func:`iter_packets` over an in-memory buffer (sniffing, tests)."""
    return iter_packets(io.BytesIO(data), report, limit)
