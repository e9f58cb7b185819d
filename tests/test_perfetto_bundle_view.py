"""The ftrace bundle's wire check (nodes/perf/parsers/_bundlec.c via perfetto_bundle_view.py)
against upb, the judge it replaces: a bundle upb refuses never passes the check, so the reader
refuses exactly the packets upb refuses (upb judges the packet's other fields, and every packet
the check is unsure of); every real capture's bundles pass, and what a view hands the reader is
what upb's parse holds. Then the reader's whole output, with the check and without.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from google.protobuf.message import DecodeError
from google.protobuf.unknown_fields import UnknownFieldSet
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import FtraceEventBundle, TracePacket

from nodes.perf.parsers import perfetto as reader
from nodes.perf.parsers import perfetto_bundle_view as view
from nodes.perf.parsers import perfetto_wire as wire
from nodes.perf.parsers.perfetto_stream import StreamReport, iter_packets_from_bytes
from tests.helpers.differential import perfdata_digest
from tests.helpers.mutations import mutate, mutation
from tests.protowire import field as _ld
from tests.protowire import varint as _vint

ROOT = Path(__file__).resolve().parent.parent
CAPTURES = sorted(p for p in (ROOT / "tests" / "data" / "perfetto").iterdir() if p.suffix in (".perfetto-trace", ".pftrace"))
split = view.split

if split is None and (shutil.which("cc") or shutil.which("gcc")) and os.environ.get("PERFSCOUT_PURE_PYTHON_WIRE") != "1":
    raise AssertionError("a C compiler is here but nodes/perf/parsers/_bundlec is not built: pip install -e .")
native = pytest.mark.skipif(split is None, reason="no C extension (no compiler, or PERFSCOUT_PURE_PYTHON_WIRE=1)")


def _ftrace_packets(path: Path) -> list[bytes]:
    out = []
    for raw in iter_packets_from_bytes(path.read_bytes(), StreamReport()):
        if TracePacket.FromString(raw).WhichOneof("data") == "ftrace_events":
            out.append(raw)
    return out


_PACKETS = {p.name: _ftrace_packets(p) for p in CAPTURES}
_ALL = [raw for raws in _PACKETS.values() for raw in raws]
_SMALL = sorted(_ALL, key=len)[:200:4] + [r for r in _ALL if 600 < len(r) < 3000][:20]


def _upb(raw: bytes):
    try:
        return TracePacket.FromString(raw)
    except DecodeError:
        return None


def _agrees(raw: bytes) -> None:
    """The reader's verdict on ``raw`` (perfetto_bundle_view.parse_packet) against upb's: the
    same; where the bundle is only viewed, the view and the rest hold what upb's parse holds.
    And the check alone: a bundle upb refuses never passes it."""
    full = _upb(raw)
    cut = split(raw)
    if cut is not None:
        try:
            FtraceEventBundle.FromString(raw[cut[1]:cut[1] + cut[2]])
        except DecodeError:
            raise AssertionError("upb refused a bundle the check accepted") from None
    try:
        pkt, b = view.parse_packet(raw)
    except DecodeError:
        assert full is None, "the reader refused a packet upb accepts"
        return
    assert full is not None, "the reader took a packet upb refuses"
    if b is None:
        assert pkt == full
        return  # unsure: upb parsed it whole, as before
    assert full.WhichOneof("data") == "ftrace_events"
    want = full.ftrace_events
    assert (b.cpu, b.ftrace_clock, b.events) == (want.cpu, want.ftrace_clock, len(want.event))
    assert list(b.compact_sched.intern_table) == list(want.compact_sched.intern_table)
    assert b.parse() == want
    full.ClearField("ftrace_events")
    if pkt is None:  # plain: upb's packet holds the trusted ids alone, its sequence id the view's
        assert {f.name for f, _ in full.ListFields()} <= set(view.PLAIN_FIELDS)
        assert not len(UnknownFieldSet(full))
        assert b.seq == full.trusted_packet_sequence_id
        return
    assert pkt == full


# --- the schema table ----------------------------------------------------------------------------

def test_schema_table_is_the_descriptors():
    tables = view.schema_table()
    bundle = dict((no, kind) for no, kind, _ in tables[0])
    fields = FtraceEventBundle.DESCRIPTOR.fields_by_name
    assert bundle[fields["event"].number] == view.MESSAGE
    assert bundle[fields["cpu"].number] == view.OTHER
    cs = tables[dict((no, child) for no, _, child in tables[0])[fields["compact_sched"].number]]
    kinds = {no: kind for no, kind, _ in cs}
    compact = fields["compact_sched"].message_type.fields_by_name
    assert kinds[compact["switch_timestamp"].number] == view.PACKED_VARINT
    assert kinds[compact["intern_table"].number] == view.OTHER
    # every message reachable from the bundle is in the table, once
    seen, todo = set(), [FtraceEventBundle.DESCRIPTOR]
    while todo:
        d = todo.pop()
        if d.full_name not in seen:
            seen.add(d.full_name)
            todo += [f.message_type for f in d.fields if f.message_type is not None]
    assert len(tables) == len(seen)


# --- the verdict -------------------------------------------------------------------------------

@native
@pytest.mark.parametrize("name", sorted(_PACKETS))
def test_every_real_bundle_passes(name):
    plain = 0
    for raw in _PACKETS[name]:
        assert split(raw) is not None
        _agrees(raw)
        plain += view.parse_packet(raw)[0] is None
    # every packet but the one that says the previous was dropped (field 42, not plain)
    assert plain >= len(_PACKETS[name]) - 1


_BUNDLE = _ld(FtraceEventBundle.DESCRIPTOR.fields_by_name["event"].number, b"\x08\x01")  # one event
_P = {name: TracePacket.DESCRIPTOR.fields_by_name[name].number for name in
      ("trusted_uid", "trusted_packet_sequence_id", "trusted_pid", "previous_packet_dropped", "timestamp")}


def _pv(name: str, value: int) -> bytes:
    return _vint(_P[name] << 3) + _vint(value)


PLAIN = {  # packet bytes: plain (upb need not parse them) or not; the sequence id must be upb's
    "ids before and after": (_pv("trusted_uid", 9) + _ld(1, _BUNDLE) + _pv("trusted_packet_sequence_id", 3), True),
    "bundle alone (sequence 0)": (_ld(1, _BUNDLE), True),
    "sequence id over 32 bits": (_ld(1, _BUNDLE) + _pv("trusted_packet_sequence_id", (1 << 40) + 5), True),
    "sequence id written twice": (_pv("trusted_packet_sequence_id", 7) + _ld(1, _BUNDLE)
                                  + _pv("trusted_packet_sequence_id", 8) + _pv("trusted_pid", (1 << 64) - 1), True),
    "a timestamp": (_ld(1, _BUNDLE) + _pv("timestamp", 5), False),
    "previous packet dropped": (_ld(1, _BUNDLE) + _pv("previous_packet_dropped", 1), False),
    "uid as fixed32 (upb: unknown)": (_ld(1, _BUNDLE) + _vint(_P["trusted_uid"] << 3 | 5) + b"\x01\0\0\0", False),
    "an unknown field": (_ld(1, _BUNDLE) + _vint(900 << 3) + b"\x01", False),
}


@native
@pytest.mark.parametrize("name", sorted(PLAIN))
def test_plain_packets(name):
    raw, plain = PLAIN[name]
    assert (view.parse_packet(raw)[0] is None) == plain
    _agrees(raw)


def _sweep_packets(name: str) -> list[bytes]:
    """A capture's smallest ftrace packets over 150 bytes with events: one with compact sched,
    one without (where it has them)."""
    out = []
    for compact in (True, False):
        raws = [r for r in _PACKETS[name] if len(r) > 150 and TracePacket.FromString(r).ftrace_events.event
                and TracePacket.FromString(r).ftrace_events.HasField("compact_sched") == compact]
        out += sorted(raws, key=len)[:1]
    return out


@native
@pytest.mark.parametrize("name", sorted(n for n, raws in _PACKETS.items() if raws))
def test_every_single_byte_change_of_a_real_packet(name):
    """Exhaustive for real packets of each capture: each truncation, each bit flipped, each byte dropped."""
    refused = 0
    for raw in _sweep_packets(name):
        for i in range(len(raw)):
            variants = [raw[:i], raw[:i] + raw[i + 1:]] + [raw[:i] + bytes([raw[i] ^ 1 << k]) + raw[i + 1:]
                                                           for k in range(8)]
            for v in variants:
                refused += _upb(v) is None
                _agrees(v)
    assert refused > 50  # the sweep reaches upb's refusals (else it could not fail)


@native
@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(which=st.integers(0, len(_SMALL) - 1), muts=st.lists(mutation, min_size=1, max_size=4))
@example(which=49, muts=[("delete", 1, 0), ("delete", 1, 0)])  # an empty bundle, the rest upb refuses
def test_mutated_real_bundles(which, muts):
    _agrees(mutate(_SMALL[which], muts))


def _bundle_packet(bundle: bytes) -> bytes:
    return _ld(1, bundle) + b"\x50\x01"  # + trusted_packet_sequence_id 1


_F = FtraceEventBundle.DESCRIPTOR.fields_by_name
_EV, _CS = _F["event"].number, _F["compact_sched"].number
_TS = _F["compact_sched"].message_type.fields_by_name["switch_timestamp"].number
_PRINT = FtraceEventBundle.DESCRIPTOR.fields_by_name["event"].message_type.fields_by_name["print"].number

BROKEN = {  # bundle bytes upb refuses
    "packed column ends inside a varint": _ld(_CS, _ld(_TS, b"\x05\x96")),
    "packed varint of 11 bytes": _ld(_CS, _ld(_TS, b"\xff" * 10 + b"\x01")),
    "event ends inside a tag": _ld(_EV, b"\x08\x01\x80"),
    "event's print past its event": _ld(_EV, _vint(_PRINT << 3 | 2) + b"\x05ab"),
    "print's buf truncated": _ld(_EV, _ld(_PRINT, b"\x12\x09abc")),
    "field 0 in an event": _ld(_EV, b"\x00\x01"),
    "wire type 7 in a print": _ld(_EV, _ld(_PRINT, b"\x0f")),
    "fixed64 cut in the bundle": b"\x31\x00\x00\x00",
    "varint cut in the bundle": b"\x08\xff\xff",
}
STRICTER = {  # bundle bytes upb accepts and the check leaves to upb
    "group in an event": _ld(_EV, _vint(900 << 3 | 3) + _vint(900 << 3 | 4)),
    "compact_sched twice": _ld(_CS, b"") + _ld(_CS, b""),
    "ftrace_clock outside its enum": b"\x28\x63",
}


@native
@pytest.mark.parametrize("name", sorted(BROKEN))
def test_broken_bundles_refused(name):
    raw = _bundle_packet(BROKEN[name])
    assert _upb(raw) is None
    assert split(raw) is None


@native
@pytest.mark.parametrize("name", sorted(STRICTER))
def test_unsure_bundles_left_to_upb(name):
    raw = _bundle_packet(STRICTER[name])
    assert _upb(raw) is not None
    assert split(raw) is None


@native
def test_bundle_written_twice_left_to_upb():
    raw = _ld(1, _ld(_EV, b"\x08\x01")) + _ld(1, _ld(_EV, b"\x08\x02"))
    assert len(TracePacket.FromString(raw).ftrace_events.event) == 2
    assert split(raw) is None


@native
@settings(max_examples=300, deadline=None)
@given(junk=st.binary(max_size=40))
@example(junk=_bundle_packet(_ld(_EV, b"")))
def test_any_bytes(junk):
    """On bytes no trace wrote: no crash, and never accepted where upb refuses."""
    _agrees(junk)
    _agrees(_ld(1, junk))


def _splits_bytewise(col: bytes) -> bool:
    """The packed-column rule, one byte at a time (what _bundlec.c's check_packed reads a word at
    a time): varints of at most 10 bytes, the 10th 0 or 1, none cut at the end."""
    run = 0
    for c in col:
        if c & 0x80:
            run += 1
            if run >= 10:
                return False
        else:
            if run == 9 and c > 1:
                return False
            run = 0
    return run == 0


_VARINT_BYTES = st.binary(max_size=48).map(lambda b: bytes(b"\x00\x01\x02\x7f\x80\x81\xff"[c % 7] for c in b))


@native
@settings(max_examples=1000, deadline=None)
@given(col=_VARINT_BYTES, lead=st.integers(0, 9))
@example(col=b"\x80" * 8 + b"\x01", lead=0)  # 9 bytes: a run of 8 into the next word
@example(col=b"\x80" * 9 + b"\x01", lead=0)  # 10 bytes, the 10th 1
@example(col=b"\x80" * 9 + b"\x02", lead=0)  # 10 bytes, the 10th over 1
@example(col=b"\x01" * 7 + b"\x80" * 9 + b"\x02", lead=0)  # the run crosses a word
@example(col=b"\x01" * 7 + b"\x80" * 10 + b"\x00", lead=0)
def test_packed_columns_and_varints_word_by_word(col, lead):
    """Columns and event varints of runs that start and end anywhere in a word: the check's
    verdict is the bytewise rule's, and it never passes what upb refuses."""
    column = _ld(_CS, _ld(_TS, col))
    raw = _bundle_packet(b"\x10\x01" * lead + column)  # cpu written `lead` times: shifts the column
    assert (split(raw) is not None) == _splits_bytewise(col)
    _agrees(raw)
    # the same bytes as an event's varint field (timestamp), then a print: a varint skipped
    event = _ld(_EV, b"\x08" + col + _ld(_PRINT, b"\x12\x01a") + b"\x10\x05" * lead)
    _agrees(_bundle_packet(event))


# --- the reader ----------------------------------------------------------------------------------

def _damaged(path: Path, tmp_path: Path) -> Path:
    """``path`` with some ftrace packets cut short or their bundle's length changed, inside
    their framing. (Not bytes flipped at random: a flip inside an atrace counter's name makes
    it bytes, which perfetto_memory.finish does not take, with or without the check.)"""
    out = bytearray()
    k = 0
    for raw in iter_packets_from_bytes(path.read_bytes(), StreamReport()):
        if len(raw) > 100 and TracePacket.FromString(raw).WhichOneof("data") == "ftrace_events":
            k += 1
            if k % 3 == 0:
                raw = raw[:-1 - (k * 7919) % 50]
            elif k % 3 == 1:
                b = bytearray(raw)
                b[1] ^= 1 << (k % 7)  # the bundle's length: ends inside or before an event
                raw = bytes(b)
        out += b"\x0a" + _vint(len(raw)) + raw
    p = tmp_path / path.name
    p.write_bytes(bytes(out))
    return p


@native
@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.name)
@pytest.mark.parametrize("damage", [False, True])
def test_reader_output_same_with_and_without_the_check(path, damage, tmp_path, monkeypatch):
    if damage:
        path = _damaged(path, tmp_path)
    checked = reader.parse(str(path))
    if damage and _PACKETS[path.name]:
        assert any("could not be decoded" in w for w in checked.warnings)
    monkeypatch.setattr(view, "split", None)
    want = perfdata_digest(reader.parse(str(path)))
    assert perfdata_digest(checked) == want
    monkeypatch.setattr(view, "split", split)
    monkeypatch.setattr(wire, "NATIVE", None)  # views through the numpy walk too
    assert perfdata_digest(reader.parse(str(path))) == want


def test_env_var_turns_the_check_off():
    """``1``: no check. Otherwise the check is on exactly when the extension imports."""
    code = ("from nodes.perf.parsers import perfetto_bundle_view as v\n"
            "try:\n    from nodes.perf.parsers import _bundlec\nexcept ImportError:\n    _bundlec = None\n"
            "print(v.split is None, _bundlec is None)")
    env = dict(os.environ)
    runs = {}
    for value in ("1", "0"):
        env["PERFSCOUT_PURE_PYTHON_WIRE"] = value
        runs[value] = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                                     text=True, check=True).stdout.split()
    assert runs["1"][0] == "True"
    assert runs["0"][0] == runs["0"][1]
