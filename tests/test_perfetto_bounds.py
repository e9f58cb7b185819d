"""The Perfetto reader against lengths and varints the file itself lies about.

A record's length comes from the input, so a damaged or hostile trace can claim gigabytes in a
few bytes. The reader must find out the claim cannot be met without allocating it (bytes left
in a file, bounded chunks from a gzip stream), and a varint longer than 10 bytes must end as a
``PerfDataError`` or a partial result that names where it happened — never ``MemoryError`` or a
bare ``ValueError``.
"""

from __future__ import annotations

import gzip
import io
import os
import re
import subprocess
import sys
import textwrap
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from perfetto.trace_builder.proto_builder import TraceProtoBuilder

from nodes.perf.errors import PerfDataError
from nodes.perf.parsers import perfetto, perfetto_stream
from nodes.perf.parsers.perfetto_stream import DEFAULT_PACKET_LIMIT, StreamCorrupt, StreamReport, iter_packets
from tests.protowire import varint

ROOT = Path(__file__).resolve().parents[1]
#: The claims below are far beyond anything the tests could allocate under the 1 GB cap.
HUGE = 1 << 40
#: A claim under the packet limit but far over the bytes present: must not be allocated either.
BIG_UNDER_LIMIT = 60 * 1024 * 1024
#: What a bounded read may hold at once: a few read chunks (1 MiB each) and the packets.
PEAK_BOUND = 16 * 1024 * 1024


def _good_trace() -> bytes:
    """Three packets: a process name and two complete atrace slices on thread 100."""
    b = TraceProtoBuilder()
    pkt = b.add_packet()
    pkt.trusted_packet_sequence_id = 7
    pr = pkt.process_tree.processes.add()
    pr.pid = 100
    pr.cmdline.append("app")
    for ts, name in ((1000, "first"), (3000, "second")):
        pkt = b.add_packet()
        pkt.trusted_packet_sequence_id = 7
        for t, line in ((ts, f"B|100|{name}"), (ts + 1000, "E|100")):
            e = pkt.ftrace_events.event.add()
            e.timestamp, e.pid = t, 100
            e.print.buf = line + "\n"
    return b.serialize()


def _names(data) -> list[str]:
    return [data.strings[i] for i in data.slices[(100, 100)].name]


def _write(tmp_path, name: str, raw: bytes) -> str:
    p = tmp_path / name
    p.write_bytes(raw)
    return str(p)


def _peak_while(fn):
    """(result or exception, peak bytes Python allocated while ``fn`` ran)."""
    tracemalloc.start()
    try:
        try:
            out = fn()
        except PerfDataError as e:
            out = e
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


# --- claimed lengths ----------------------------------------------------------------------


@pytest.mark.parametrize("claim", [BIG_UNDER_LIMIT, HUGE])
def test_packet_longer_than_the_file_keeps_what_came_before_without_allocating_it(tmp_path, claim):
    good = _good_trace()
    path = _write(tmp_path, "t.pftrace", good + b"\x0a" + varint(claim) + b"\x08\x01" * 8)
    data, peak = _peak_while(lambda: perfetto.parse(path))
    assert data.partial and _names(data) == ["first", "second"]
    assert any(f"packet that starts at byte {len(good)}" in w and "file ends inside" in w for w in data.warnings)
    assert peak < PEAK_BOUND


@pytest.mark.parametrize("claim", [BIG_UNDER_LIMIT, HUGE])
def test_truncated_gzip_with_a_huge_claim_is_partial_and_reads_in_bounded_chunks(tmp_path, claim):
    good = _good_trace()
    gz = gzip.compress(good + b"\x0a" + varint(claim) + os.urandom(4096))
    path = _write(tmp_path, "t.pftrace.gz", gz[: len(gz) - 100])
    data, peak = _peak_while(lambda: perfetto.parse(path))
    assert data.partial and _names(data) == ["first", "second"]
    assert any("gzip stream ends before its end marker" in w for w in data.warnings)
    assert peak < PEAK_BOUND


def test_non_packet_field_with_a_huge_length_is_a_clear_error_naming_the_offset(tmp_path):
    # Field 1 as fixed32, then field 5 length-delimited claiming ~25 GB (the fuzzer's input).
    raw = b"\x0d\x00\x00\x00\x00" + b"\x2a" + varint(95 << 28) + b"\x00" * 5
    path = _write(tmp_path, "t.pftrace", raw)
    err, peak = _peak_while(lambda: perfetto.parse(path))
    assert isinstance(err, PerfDataError)
    msg = str(err)
    assert msg.startswith(path) and "\n" not in msg
    assert f"{95 << 28}-byte field-5 record that starts at byte 5" in msg
    assert peak < PEAK_BOUND


def test_length_over_the_packet_limit_is_skipped_and_the_rest_read(tmp_path):
    """A real packet over the limit, present in full: skipped (seek on a file, chunks on gzip)."""
    good = _good_trace()
    big_payload = b"\x08\x01" * 700  # a valid TracePacket (field 1 repeated), 1400 bytes
    raw = b"\x0a" + varint(len(big_payload)) + big_payload + good
    for name, content in (("t.pftrace", raw), ("t.pftrace.gz", gzip.compress(raw))):
        data = perfetto.parse(_write(tmp_path, name, content), packet_limit=1000)
        assert data.partial and _names(data) == ["first", "second"], name
        assert any("packet of 1400 bytes at byte 0 is over the 1000-byte limit" in w for w in data.warnings)


def test_claim_over_the_default_limit_with_no_packet_before_is_one_clear_error(tmp_path):
    path = _write(tmp_path, "t.pftrace", b"\x0a" + varint(HUGE) + b"\x08\x01" * 4)
    with pytest.raises(PerfDataError) as e:
        perfetto.parse(path)
    msg = str(e.value)
    assert msg.startswith(path) and "\n" not in msg
    assert f"over the {DEFAULT_PACKET_LIMIT}-byte limit" in msg and "file ends inside" in msg


class _Unseekable(io.RawIOBase):
    """A pipe-like stream: no size to ask, so every read size is visible."""

    def __init__(self, data: bytes):
        self._data = io.BytesIO(data)
        self.largest_read = 0

    def readable(self) -> bool:
        return True

    def read(self, n=-1):
        self.largest_read = max(self.largest_read, n if n is not None and n >= 0 else 1 << 62)
        return self._data.read(n)


@pytest.mark.parametrize("claim", [BIG_UNDER_LIMIT, HUGE])
def test_unseekable_stream_is_never_asked_for_the_claimed_size(claim):
    good = _good_trace()
    f = _Unseekable(good + b"\x0a" + varint(claim) + b"\x00" * 3000)
    report = StreamReport()
    assert len(list(iter_packets(f, report))) == 3
    assert report.truncated
    assert f.largest_read <= 1 << 20


def _frame_all(f, limit: int):
    report = StreamReport()
    packets: list[bytes] = []
    try:
        for p in iter_packets(f, report, limit):
            packets.append(p)
    except StreamCorrupt as e:
        return packets, ("corrupt", str(e))
    return packets, (report.truncated, report.oversized, report.other_fields, tuple(report.problems))


_RECORD = st.one_of(
    st.binary(max_size=40).map(lambda b: b"\x0a" + varint(len(b)) + b),  # a whole packet
    st.tuples(st.sampled_from([b"\x0a", b"\x2a"]), st.integers(0, 1 << 45)).map(lambda t: t[0] + varint(t[1])),
    st.sampled_from([b"\x0d\x01\x02\x03\x04", b"\x09" + b"\x00" * 8, b"\x10\x96\x01", b"\xff" * 11]),
    st.binary(max_size=8),
)


@pytest.fixture
def monkeypatch_chunk(monkeypatch):
    monkeypatch.setattr(perfetto_stream, "_READ_CHUNK", 7)  # every record crosses a chunk edge


# The patched chunk size holds for every example, which is what is wanted here.
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_RECORD, max_size=12).map(b"".join), st.sampled_from([16, 64, DEFAULT_PACKET_LIMIT]))
def test_seekable_and_streamed_inputs_frame_the_same(monkeypatch_chunk, raw, limit):
    """Knowing the file size (fail fast, seek over skips) must not change what is read: the same
    bytes through a pipe-like stream, in tiny chunks, give the same packets and the same report."""
    assert _frame_all(io.BytesIO(raw), limit) == _frame_all(_Unseekable(raw), limit)


def test_second_oversized_packet_cut_by_the_end_is_truncation_not_a_clean_end(monkeypatch_chunk):
    """After seeking over one oversized packet, the bytes left must shrink by what was skipped:
    a second claim that runs past the end is truncation, for a file and for a stream alike."""
    raw = b"\x0a" + varint(30) + b"\x08\x01" * 15 + b"\x0a" + varint(25) + b"\x08\x01" * 5
    for f in (io.BytesIO(raw), _Unseekable(raw)):
        packets, (truncated, oversized, _, problems) = _frame_all(f, 16)
        assert packets == [] and truncated and oversized == 2
        assert problems[-1] == "file ends inside the oversized packet that starts at byte 32"


# --- overlong varints ---------------------------------------------------------------------


def test_overlong_varint_at_the_start_is_a_perf_data_error_with_the_offset(tmp_path):
    for raw, offset in ((b"\xff" * 13 + b"\n", 0), (b"\x0a" + b"\x80" * 11 + b"\x01", 1)):
        path = _write(tmp_path, "t.pftrace", raw)
        with pytest.raises(PerfDataError) as e:
            perfetto.parse(path)
        msg = str(e.value)
        assert msg.startswith(path) and "\n" not in msg
        assert f"varint longer than 10 bytes at byte {offset}" in msg


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("where", ["tag", "length"])
def test_overlong_varint_in_the_middle_keeps_the_packets_before_it(tmp_path, gz, where):
    good = _good_trace()
    if where == "tag":
        bad, offset = b"\xff" * 12 + b"\x01", len(good)
    else:
        bad, offset = b"\x0a" + b"\xff" * 12 + b"\x01", len(good) + 1
    raw = good + bad + good
    path = _write(tmp_path, "t.pftrace.gz" if gz else "t.pftrace", gzip.compress(raw) if gz else raw)
    data = perfetto.parse(path)
    assert data.partial and _names(data) == ["first", "second"]
    assert any(f"varint longer than 10 bytes at byte {offset}" in w and "3 packets" in w for w in data.warnings)


def test_ten_byte_varint_is_still_read():
    """The longest legal varint (a 64-bit value) frames normally: the bound is not off by one."""
    payload = b"\x08" + b"\xff" * 9 + b"\x01"  # TracePacket field 1 = 2**64 - 1
    raw = b"\x0a" + varint(len(payload)) + payload + b"\x10" + b"\xff" * 9 + b"\x01"
    report = StreamReport()
    assert list(iter_packets(io.BytesIO(raw), report)) == [payload]
    assert report.other_fields == 1 and not report.truncated


# --- memory capped for real ---------------------------------------------------------------

_CHILD = textwrap.dedent(
    """
    import resource, sys
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
    from nodes.perf.errors import PerfDataError
    from nodes.perf.parsers import perfetto
    try:
        data = perfetto.parse(sys.argv[1])
    except PerfDataError as e:
        sys.stderr.write(f"perfscout: {e}\\n")
        sys.exit(2)
    print(f"partial={data.partial} slices={data.slice_count}")
    """
)


def _under_1gb(path: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", _CHILD, path], cwd=ROOT, capture_output=True, text=True, timeout=120,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )


@pytest.mark.parametrize("gz", [False, True])
def test_huge_claim_under_a_1gb_address_space_is_one_clean_line(tmp_path, gz):
    raw = b"\x0d\x00\x00\x00\x00" + b"\x2a" + varint(HUGE) + b"\x00" * 64
    path = _write(tmp_path, "t.pftrace.gz" if gz else "t.pftrace", gzip.compress(raw) if gz else raw)
    proc = _under_1gb(path)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr and "MemoryError" not in proc.stderr
    assert lines[0].startswith(f"perfscout: {path}: no trace packets")
    assert f"{HUGE}-byte field-5 record that starts at byte 5" in lines[0]


def test_huge_claim_after_good_packets_under_a_1gb_address_space_is_partial(tmp_path):
    good = _good_trace()
    path = _write(tmp_path, "t.pftrace.gz", gzip.compress(good + b"\x2a" + varint(HUGE) + b"\x00" * 64))
    proc = _under_1gb(path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "partial=True slices=2"


REAL_WARM = Path(__file__).parent / "data" / "perfetto" / "api32_startup_warm.perfetto-trace"


def test_damage_among_the_first_packets_is_a_damaged_perfetto_trace_not_an_unknown_format(tmp_path):
    """100 bytes overwritten 5 KB in (inside the first 16 packets, which format detection reads):
    the trace is still recognised and read around the damaged packet, and says so."""
    from nodes.perf.analysis import analyze_file
    from nodes.perf.formats import detect

    data = bytearray(REAL_WARM.read_bytes())
    data[5000:5100] = b"\xff" * 100
    p = tmp_path / "damaged.perfetto-trace"
    p.write_bytes(bytes(data))
    assert detect(str(p))[0] == "perfetto"
    res = analyze_file(str(p))
    assert any("could not be decoded" in w for w in res.warnings)
    assert res.startup is not None and res.startup.runs  # the warm start is still there


@pytest.mark.parametrize("name, needle", [("bad.perfetto-trace", "named like a Perfetto trace, but its first bytes"),
                                          ("bad.bin", "unrecognised format (binary data)")])
def test_a_trace_damaged_at_its_start_is_named_as_such_when_its_name_says_perfetto(tmp_path, name, needle):
    from nodes.perf.formats import detect

    data = bytearray(REAL_WARM.read_bytes())
    data[:16] = b"\xff" * 16
    p = tmp_path / name
    p.write_bytes(bytes(data))
    with pytest.raises(PerfDataError, match=re.escape(needle)):
        detect(str(p))


def test_a_trace_cut_short_says_it_is_partial_without_counting_zero_skipped_events(tmp_path):
    from nodes.perf.analysis import analyze_file

    p = tmp_path / "cut.perfetto-trace"
    p.write_bytes(REAL_WARM.read_bytes()[: REAL_WARM.stat().st_size // 2])
    res = analyze_file(str(p))
    [inc] = [f for f in res.findings if f.title == "Incomplete data"]
    assert res.partial and inc.detail.startswith("The data is partial; the results cover what was read. ")
    assert not inc.detail.startswith("0 ") and any("packet" in w for w in res.warnings)  # where the file ends
