"""The C wire walks (nodes/perf/parsers/_wirec.c) against the numpy code they replace
(nodes/perf/parsers/perfetto_wire.py, perfetto_ftrace_batch._walk_numpy): the same arrays, and
WireError on the same inputs, on real captures' bytes and on random, mutated and truncated
bytes; the reader's whole output the same with either.

The extension is optional at install time; on a machine with a C compiler it must have been
built (a silently missing build would leave these tests comparing the numpy code with itself).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st
from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import TracePacket

from nodes.perf.parsers import perfetto_ftrace_batch as batch
from nodes.perf.parsers import perfetto_wire as wire
from nodes.perf.parsers.perfetto_stream import StreamReport, iter_packets_from_bytes
from tests.helpers.differential import perfdata_digest
from tests.helpers.mutations import mutate, mutation
from tests.protowire import varint as _vint

ROOT = Path(__file__).resolve().parent.parent
CAPTURES = sorted(p for p in (ROOT / "tests" / "data" / "perfetto").iterdir() if p.suffix in (".perfetto-trace", ".pftrace"))
C = wire.NATIVE

if C is None:
    if shutil.which("cc") or shutil.which("gcc"):
        if os.environ.get("PERFSCOUT_PURE_PYTHON_WIRE") != "1":
            raise AssertionError("a C compiler is here but nodes/perf/parsers/_wirec is not built: pip install -e .")
pytestmark = pytest.mark.skipif(C is None, reason="no C extension (no compiler, or PERFSCOUT_PURE_PYTHON_WIRE=1)")

#: The field sets perfetto_ftrace_batch reads from kind payloads, and the event's own.
WANTED = [{1: 0, 2: 0}, {1: 0, 3: 0}, {1: 0, 5: 0, 7: 0}, {1: 0}, {1: 0, 2: 0, 3: 0, 4: 0}, {2: 2},
          {1: 0, 2: 2, 3: 0, 4: 0}, {1: 0, 2: 2, 3: 0}, {1: 0, 3: 2}]


def _ftrace_items(path: Path) -> list[tuple]:
    """(bundle, raw packet) of every ftrace packet of a capture, as the reader queues them."""
    out = []
    for raw in iter_packets_from_bytes(path.read_bytes(), StreamReport()):
        p = TracePacket.FromString(raw)
        if p.WhichOneof("data") == "ftrace_events":
            out.append((p.ftrace_events, raw))
    return out


_ITEMS = {p.name: _ftrace_items(p) for p in CAPTURES}
_SMALL = [raw for items in _ITEMS.values() for _, raw in items if len(raw) < 600][:300]


def _outcome(fn, *args):
    try:
        return fn(*args)
    except wire.WireError:
        return "WireError"


def _same_fields(a, b) -> None:
    if isinstance(a, str) or isinstance(b, str):
        assert a == b
        return
    assert a.keys() == b.keys()
    for f in a:
        for x, y in zip(a[f], b[f], strict=True):
            assert x.dtype == y.dtype and np.array_equal(x, y), f


def _payloads(w) -> list[bytes]:
    j = w["joined"]
    return [bytes(j[o:o + n]) for o, n in zip(w["k_off"].tolist(), w["k_len"].tolist())]


def _same_walk(a, b) -> None:
    """Two walks (or _decode results) alike in everything but where in their buffer a kind's
    bytes are: the numpy walk joins the events, the C walk keeps the packets."""
    if isinstance(a, str) or isinstance(b, str):
        assert a == b
        return
    skip = {"buf", "joined", "k_off", "k_end", "compact"}
    assert a.keys() == b.keys()
    for k in a.keys() - skip:
        assert a[k].dtype == b[k].dtype and np.array_equal(a[k], b[k]), k
    for c in wire.COMPACT:
        for x, y in zip(a["compact"][c], b["compact"][c], strict=True):
            assert np.array_equal(x, y) and x.dtype == y.dtype, c
    if "k_len" in a:
        assert _payloads(a) == _payloads(b)
    else:
        assert [bytes(a["joined"][o:e]) for o, e in zip(a["k_off"].tolist(), a["k_end"].tolist())] == \
            [bytes(b["joined"][o:e]) for o, e in zip(b["k_off"].tolist(), b["k_end"].tolist())]


def _decode_both(items, monkeypatch):
    native = _outcome(batch._decode, items)
    with monkeypatch.context() as m:
        m.setattr(wire, "NATIVE", None)
        ref = _outcome(batch._decode, items)
    return native, ref


# --- real captures -------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(_ITEMS))
def test_real_captures_walk_alike(name, monkeypatch):
    items = _ITEMS[name]
    assert items or name.startswith("chrome"), "a capture with ftrace bundles"
    for i in range(0, len(items), 150):  # batches, as the reader makes them
        part = items[i:i + 150]
        _same_walk(batch._walk_native(part), batch._walk_numpy(part))
        native, ref = _decode_both(part, monkeypatch)
        assert not isinstance(native, str)
        _same_walk(native, ref)
        # every event's kind payload read with every field set the batch reader asks for, in
        # the buffers of both walks
        for dec in (native, ref):
            for wanted in WANTED:
                native_f = _outcome(wire.fields_native, dec["buf"], dec["k_off"], dec["k_end"], wanted)
                _same_fields(native_f, _outcome(wire.fields_numpy, dec["buf"], dec["k_off"], dec["k_end"], wanted))
                _same_without_last(native_f, _outcome(wire.fields_native, dec["buf"], dec["k_off"], dec["k_end"],
                                                      wanted, False))


@pytest.mark.parametrize("path", CAPTURES[:2], ids=lambda p: p.name)
def test_reader_output_same_with_either_walk(path, monkeypatch):
    from nodes.perf.parsers.perfetto import parse

    native = perfdata_digest(parse(str(path)))
    monkeypatch.setattr(wire, "NATIVE", None)
    assert perfdata_digest(parse(str(path))) == native


def _strings_both(buf: bytes, off, ln):
    off, ln = np.asarray(off, np.int64), np.asarray(ln, np.int64)
    got = wire.strings(buf, off, ln)
    ref = [wire.text(buf[o:o + n]) for o, n in zip(off.tolist(), ln.tolist())]
    assert [type(x) for x in got] == [type(x) for x in ref]
    assert got == ref
    return got


@pytest.mark.parametrize("name", sorted(_ITEMS))
def test_real_captures_strings_alike(name):
    items = _ITEMS[name]
    if not items:
        return
    dec = batch._decode(items[:400])
    f = wire.fields(dec["buf"], dec["k_off"], dec["k_end"], {2: 2, 3: 2})  # print's buf, rename's comm …
    for k in (2, 3):
        _strings_both(dec["joined"], f[k][2], f[k][3])


@settings(max_examples=300, deadline=None)
@given(buf=st.one_of(st.binary(max_size=40), st.text(max_size=20).map(lambda t: t.encode("utf-8", "surrogatepass"))),
       ranges=st.lists(st.tuples(st.integers(0, 50), st.integers(0, 50)), max_size=8))
@example(buf="é€😀".encode() + b"\xc3\x28\xed\xa0\x80\xf8\x88\x80\x80\x80\xc0\xaf", ranges=[(0, 2), (0, 1), (2, 7), (9, 30)])
def test_strings_random_bytes_alike(buf, ranges):
    """UTF-8 or not (cut characters, surrogates, overlong forms), ranges past the end clipped."""
    _strings_both(buf, [o for o, _ in ranges], [n for _, n in ranges])


# --- fields on made-up bytes ---------------------------------------------------------------

def _fields_both(msgs: list[bytes], wanted, tail: bytes = b""):
    """Both fields() on messages laid end to end (then ``tail``, then the pad)."""
    joined = b"".join(msgs)
    buf = np.frombuffer(joined + tail + bytes(wire.PAD), np.uint8)
    ends = np.cumsum([len(m) for m in msgs]).astype(np.int64)
    starts = ends - np.array([len(m) for m in msgs], np.int64)
    native = _outcome(wire.fields_native, buf, starts, ends, wanted)
    _same_without_last(native, _outcome(wire.fields_native, buf, starts, ends, wanted, False))
    return native, _outcome(wire.fields_numpy, buf, starts, ends, wanted)


def _same_without_last(full, short) -> None:
    """fields without key -1 (``last=False``, the batch reader's kind fields): the rest alike,
    the same messages rejected."""
    if isinstance(full, str) or isinstance(short, str):
        assert full == short
        return
    assert -1 not in short
    _same_fields({k: v for k, v in full.items() if k != -1}, short)


CASES = {
    "plain": [b"\x08\x05\x10\x96\x01\x1a\x02AB"],
    "last wins": [b"\x08\x05\x08\x07\x1a\x01A\x1a\x02BC"],
    "fixed widths": [b"\x09" + bytes(8) + b"\x15" + bytes(4) + b"\x08\x01"],
    "64-bit value": [b"\x08" + b"\xff" * 9 + b"\x01"],
    "over 64 bits": [b"\x08" + b"\xff" * 9 + b"\x7f"],
    "11-byte varint": [b"\x08" + b"\xff" * 10 + b"\x01"],
    "truncated varint": [b"\x08\x96"],
    "truncated tag": [b"\x80"],
    "length past end": [b"\x1a\x05AB"],
    "length 2^40": [b"\x1a" + _vint(1 << 40)],
    "group": [b"\x0b\x0c"],
    "end group": [b"\x0c"],
    "wire type 6": [b"\x0e"],
    "wire type 7": [b"\x0f"],
    "field 0": [b"\x00\x01"],
    "fixed64 past end": [b"\x09\x00"],
    "huge field number": [_vint((1 << 61) << 3) + b"\x01"],
    "empty": [b"", b"\x08\x01", b""],
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fields_cases(name):
    a, b = _fields_both(CASES[name], {1: 0, 2: 0, 3: 2})
    _same_fields(a, b)


def test_fields_cases_decode_as_protobuf_does():
    """Not only alike: right (what upb gives for the valid ones, an error for the others)."""
    a, _ = _fields_both(CASES["last wins"], {1: 0, 3: 2})
    assert a[1][1].tolist() == [7] and a[3][3].tolist() == [2] and a[-1][0].tolist() == [2]
    a, _ = _fields_both(CASES["over 64 bits"], {1: 0})
    assert a[1][1].tolist() == [(1 << 64) - 1]
    for bad in ("11-byte varint", "truncated varint", "length past end", "length 2^40", "group", "field 0"):
        assert _fields_both(CASES[bad], {1: 0})[0] == "WireError", bad


_fno = st.one_of(st.integers(1, 6), st.integers(62, 66), st.integers(1, 1 << 29))  # 62-66: around _wirec's table of 64
_field = st.one_of(
    st.builds(lambda f, v: _vint(f << 3) + _vint(v), _fno, st.integers(0, (1 << 70))),
    st.builds(lambda f, s: _vint(f << 3 | 2) + _vint(len(s)) + s, _fno, st.binary(max_size=12)),
    st.builds(lambda f, w: _vint(f << 3 | w) + bytes(8 if w == 1 else 4), _fno, st.sampled_from([1, 5])),
    st.binary(min_size=1, max_size=4),  # noise
)
_message = st.lists(_field, max_size=6).map(b"".join)


@settings(max_examples=400, deadline=None)
@given(msgs=st.lists(st.one_of(_message, st.binary(max_size=20)), min_size=1, max_size=8),
       cut=st.integers(0, 8), tail=st.binary(max_size=12),
       wanted=st.dictionaries(st.one_of(st.integers(1, 6), st.integers(62, 66)), st.sampled_from([0, 2, 1, 5]),
                              max_size=4))
@example(msgs=[b"\x08\x96"], cut=0, tail=b"\xff" * 12, wanted={1: 0})
def test_fields_random_bytes_alike(msgs, cut, tail, wanted):
    msgs = [m[:len(m) - cut] if i == 0 else m for i, m in enumerate(msgs)]  # one truncated
    a, b = _fields_both(msgs, wanted, tail)
    _same_fields(a, b)


def test_fields_never_reads_past_the_buffer():
    """Ranges running to the very end of an unpadded buffer: an error, never a read beyond."""
    buf = np.frombuffer(b"\x08\xff\xff", np.uint8)
    with pytest.raises(wire.WireError):
        wire.fields_native(buf, np.array([0]), np.array([3]), {1: 0})
    with pytest.raises(wire.WireError):
        wire.fields_native(buf, np.array([0]), np.array([50]), {1: 0})


# --- whole packets: made-up shapes and mutated real ones ------------------------------------

def _ld(field: int, payload: bytes) -> bytes:
    return _vint(field << 3 | 2) + _vint(len(payload)) + payload


def _event(ts: int, pid: int, kind: int, payload: bytes) -> bytes:
    return _vint(1 << 3) + _vint(ts) + _vint(2 << 3) + _vint(pid) + _ld(kind, payload)


def _packet(*bundles: bytes, extra: bytes = b"") -> bytes:
    return extra + b"".join(_ld(1, b) for b in bundles)


def _items(raws: list[bytes]) -> list[tuple]:
    out = []
    for raw in raws:
        p = TracePacket.FromString(raw)
        assert p.WhichOneof("data") == "ftrace_events"
        out.append((p.ftrace_events, raw))
    return out


PRINT = 3  # FtraceEvent.print
_B_PRINT = _ld(2, _event(100, 7, PRINT, _ld(2, b"B|7|x"))) + _ld(2, _event(120, 7, PRINT, _ld(2, b"E|7")))
_COMPACT = _ld(4, _ld(1, _vint(5) + _vint(300)) + _ld(3, _vint(7) + _vint(8)) + _ld(2, _vint(1) + _vint(0)))
PACKETS = {
    "plain": [_packet(_vint(1 << 3) + _vint(0) + _B_PRINT)],
    "ftrace_events twice (merged)": [_packet(_B_PRINT, _B_PRINT + _COMPACT)],
    "compact twice (columns joined)": [_packet(_COMPACT + _COMPACT)],
    "unpacked column": [_packet(_ld(4, _ld(1, _vint(5)) + _vint(1 << 3) + _vint(9) + _ld(3, _vint(1) + _vint(2))))],
    "short column": [_packet(_ld(4, _ld(1, _vint(5) + _vint(6)) + _ld(3, _vint(1))))],
    "group in an unknown field": [_packet(_B_PRINT, extra=_vint(900 << 3 | 3) + _vint(1 << 3) + b"\x05"
                                          + _vint(901 << 3 | 3) + _vint(901 << 3 | 4) + _vint(900 << 3 | 4))],
    "event with a group": [_packet(_ld(2, _event(1, 2, PRINT, b"") + b"\x5b\x5c"))],
    "event with two kinds": [_packet(_ld(2, _event(1, 2, PRINT, b"") + _ld(5, b"")))],
    "sched_switch (slow kind)": [_packet(_ld(2, _event(1, 2, 4, b"")))],
    "time of 64 bits": [_packet(_ld(2, _event((1 << 64) - 1, 2, PRINT, _ld(2, b"E"))))],
    "huge compact times": [_packet(_ld(4, _ld(1, _vint(1 << 62) + _vint(1)) + _ld(3, _vint(1) + _vint(2))))],
    "several bundles": [_packet(_B_PRINT), _packet(_COMPACT), _packet(b""), _packet(_B_PRINT + _COMPACT)],
}


@pytest.mark.parametrize("name", sorted(PACKETS))
def test_packet_shapes_alike(name, monkeypatch):
    items = _items(PACKETS[name])
    native, ref = _decode_both(items, monkeypatch)
    _same_walk(native, ref)
    walk = _outcome(batch._walk_native, items)
    _same_walk(walk, _outcome(batch._walk_numpy, items))


def test_packet_shapes_read_as_upb_reads_them():
    """The C walk's own answers where upb's full parse is the judge."""
    merged = batch._walk_native(_items(PACKETS["ftrace_events twice (merged)"]))
    assert merged["ev_count"].tolist() == [4] and merged["compact"]["switch_timestamp"][0].tolist() == [5, 300]
    assert batch._walk_native(_items(PACKETS["unpacked column"]))["slow"].tolist() == [True]
    assert batch._walk_native(_items(PACKETS["short column"]))["slow"].tolist() == [True]
    assert batch._walk_native(_items(PACKETS["group in an unknown field"]))["ev_count"].tolist() == [2]
    for bad in ("event with a group", "event with two kinds"):
        assert _outcome(batch._decode, _items(PACKETS[bad])) == "WireError", bad


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.filter_too_much,
                                                                  HealthCheck.function_scoped_fixture])
@given(which=st.integers(0, len(_SMALL) - 1), muts=st.lists(mutation, min_size=1, max_size=3),
       neighbours=st.integers(0, 2))
def test_mutated_real_packets_alike(which, muts, neighbours, monkeypatch):
    raw = mutate(_SMALL[which], muts)
    try:
        p = TracePacket.FromString(raw)
    except Exception:
        p = None
    assume(p is not None and p.WhichOneof("data") == "ftrace_events")  # only what upb let through is queued
    raws = [_SMALL[(which + k + 1) % len(_SMALL)] for k in range(neighbours)] + [raw]
    items = _items(raws)
    native, ref = _decode_both(items, monkeypatch)
    _same_walk(native, ref)


def _lite_reference(raws: list[bytes]):
    """What _walk_numpy reads from packets, without upb's full parse: the lite schema's events
    and packed chunks, perfetto_wire.packed and fields_numpy (DecodeError when upb refuses)."""
    evs, cols, counts = [], {c: [] for c in wire.COMPACT}, []
    for raw in raws:
        lite = wire.LitePacket.FromString(raw).ftrace_events
        e = list(lite.event)
        evs += e
        counts.append(len(e))
        for c in wire.COMPACT:
            cols[c].append(b"".join(getattr(lite.compact_sched, c)))
    compact = {c: wire.packed(ch) for c, ch in cols.items()}
    joined = b"".join(evs)
    ends = np.cumsum([len(e) for e in evs]).astype(np.int64)
    f = wire.fields_numpy(np.frombuffer(joined + bytes(wire.PAD), np.uint8), ends - [len(e) for e in evs], ends,
                          {1: 0, 2: 0})
    n, kno, off, ln = f[-1]
    return {"ev_count": counts, "ts": f[1][1].tolist(), "pid": f[2][1].tolist(), "nlen": n.tolist(),
            "kind_no": kno.tolist(), "kinds": [joined[o:o + k] for o, k in zip(off.tolist(), ln.tolist())],
            "compact": {c: (v.tolist(), list(k)) for c, (v, k) in compact.items()}}


def _bundles_plain(raws: list[bytes]):
    w = wire.bundles(raws)
    return {"ev_count": w["ev_count"].tolist(), "ts": w["ts"].tolist(), "pid": w["pid"].tolist(),
            "nlen": w["nlen"].tolist(), "kind_no": w["kind_no"].tolist(),
            "kinds": [w["buf"][o:o + k] for o, k in zip(w["k_off"].tolist(), w["k_len"].tolist())],
            "compact": {c: (v.tolist(), k.tolist()) for c, (v, k) in w["compact"].items()}}


@settings(max_examples=400, deadline=None)
@given(which=st.integers(0, len(_SMALL) - 1), muts=st.lists(mutation, max_size=3),
       junk=st.binary(max_size=30))
@example(which=0, muts=[], junk=_packet(_ld(4, _ld(1, b"\x96")) + _ld(4, _ld(1, b"\x01"))))  # varint over 2 chunks
@example(which=0, muts=[], junk=_packet(_ld(4, _ld(1, b"\x96"))))  # a column ending inside a varint
@example(which=0, muts=[], junk=_packet(_ld(4, _ld(1, b"\xff" * 10 + b"\x01"))))  # 11-byte packed varint
@example(which=0, muts=[], junk=_packet(_ld(2, _ld(1000, b"") + _ld(3, b""))))  # two kinds
@example(which=0, muts=[], junk=_packet(_ld(2, _event(1, 2, 1000, b"x"))))  # a kind numbered 1000
def test_bundles_on_bytes_upb_never_checked(which, muts, junk):
    """wire.bundles on any bytes: never a crash; where the lite parse reads them, its values
    (or a WireError where packed / fields_numpy raise one)."""
    raws = [mutate(_SMALL[which], muts), junk]
    got = _outcome(_bundles_plain, raws)
    try:
        ref = _outcome(_lite_reference, raws)
    except Exception:  # upb refuses the packet (the reader never queues it): no reference
        assert got == "WireError" or isinstance(got, dict)
        return
    assert got == ref


def _nested_groups(depth: int) -> bytes:
    g = b""
    for _ in range(depth):
        g = _vint(5 << 3 | 3) + g + _vint(5 << 3 | 4)
    return g


BROKEN = {
    "group closed by another number": _vint(900 << 3 | 3) + _vint(901 << 3 | 4),
    "group not closed": _vint(900 << 3 | 3) + b"\x08\x01",
    "end group outside a group": _vint(900 << 3 | 4),
    "field 0": b"\x00\x01",
    "wire type 6": b"\x0e",
    "length past the packet": b"\x0a\x05\x12",
    "truncated tag": b"\x80",
    "truncated fixed64": b"\x09\x00\x00",
    "groups 101 deep": _nested_groups(101),  # upb stops at 100, and so does the C walk
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_bundles_rejects_what_upb_rejects(name):
    with pytest.raises(Exception):
        TracePacket.FromString(BROKEN[name])
    with pytest.raises(wire.WireError):
        wire.bundles([_packet(_B_PRINT), BROKEN[name]])
    assert wire.bundles([_packet(_B_PRINT, extra=_nested_groups(100))])["ev_count"].tolist() == [2]


# --- which walk runs ---------------------------------------------------------------------------

def test_env_var_forces_the_numpy_walk():
    code = "from nodes.perf.parsers import perfetto_wire as w; print(w.NATIVE is None)"
    env = dict(os.environ)
    runs = {}
    for value in ("1", "0"):
        env["PERFSCOUT_PURE_PYTHON_WIRE"] = value
        runs[value] = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                                     text=True, check=True).stdout.strip()
    assert runs == {"1": "True", "0": "False"}


# --- name_threads: the thread names of compact sched, from the packets' own bytes ---------------

#: comm as a run may find it: empty, or holding some of the pids the rows name (a waking's
#: name does not replace one, a switch's does).
_COMMS = st.dictionaries(st.integers(0, 4), st.sampled_from(["old", "", "é"]), max_size=3)


def _names_args(rows, events) -> tuple:
    """The compact rows (six columns) and the events' [(b, pid, name)] as name_threads takes them."""
    ev = [np.array([e[k] for e in events], np.int64) for k in (0, 1)]
    return (*(np.array(c, np.int64) for c in rows), *ev, [e[2] for e in events])


def _names_reference(raws: list[bytes], base: int, rows, comm: dict, events=()) -> list:
    """comm's items, in order, after _name_threads_python."""
    comm = dict(comm)
    tables = [[wire.text(n) for n in TracePacket.FromString(r).ftrace_events.compact_sched.intern_table] for r in raws]
    batch._name_threads_python(comm, tables, base, *_names_args(rows, events))
    return list(comm.items())


def _names_native(raws: list[bytes], base: int, rows, comm: dict, events=()) -> list:
    comm = dict(comm)
    assert C.name_threads(comm, raws, base, *_names_args(rows, events)) is None
    return list(comm.items())


_TABLED = [raw for items in _ITEMS.values() for b, raw in items if len(b.compact_sched.intern_table)
           and len(raw) < 20000][:40]
_NAMES = [b"", b"a", b"bb", "é".encode(), b"\xff\xfe", b"\xc3"]
NAME_PACKETS = [
    _packet(_ld(4, b"".join(_ld(5, n) for n in _NAMES))),
    _packet(_ld(4, _ld(5, b"x")), _ld(4, _ld(5, b"y") + _ld(1, _vint(3)))),  # bundle twice: tables joined
    _packet(_ld(4, _ld(5, b"x") + _vint(5 << 3) + _vint(1) + _ld(5, b"z"))),  # field 5 as a varint: unknown
    _packet(_ld(4, b""), extra=_ld(901, _ld(4, _ld(5, b"not a name"))) + _vint(900 << 3 | 3) + _vint(900 << 3 | 4)),
    _packet(b""),
]


def _rows(base: int, n_packets: int):
    """(bundle, pid, index) rows in arrival order: bundles never decrease, base.. base + n - 1."""
    b = st.lists(st.tuples(st.integers(base, base + max(n_packets - 1, 0)), st.integers(0, 4), st.integers(-1, 8)),
                 max_size=12)
    return b.map(lambda rs: [[r[i] for r in sorted(rs, key=lambda r: r[0])] for i in range(3)])


def _events(base: int, n_packets: int):
    """New tasks' and renames' (bundle, pid, name) rows in arrival order."""
    e = st.lists(st.tuples(st.integers(base, base + max(n_packets - 1, 0)), st.integers(0, 4),
                           st.sampled_from(["n", "a", "é", b"\xff"])), max_size=6)
    return e.map(lambda rs: sorted(rs, key=lambda r: r[0]))


@settings(max_examples=400, deadline=None)
@given(data=st.data(), base=st.integers(0, 5), comm=_COMMS)
def test_name_threads_alike(data, base, comm):
    """C and _name_threads_python leave the same comm (names, key order, first-wins wakings,
    names already there, the events' names after their bundle's compact ones), on real packets
    with intern tables and on made-up ones (names empty, not UTF-8, tables over two bundle
    occurrences, an intern-table field of the wrong wire type)."""
    pool = _TABLED + NAME_PACKETS
    raws = data.draw(st.lists(st.sampled_from(pool), min_size=1, max_size=4))
    rows = data.draw(_rows(base, len(raws))), data.draw(_rows(base, len(raws)))
    if data.draw(st.booleans()):  # indices a real table has
        rows = tuple([r[0], r[1], [i % 3 for i in r[2]]] for r in rows)
    sw, wk = rows
    events = data.draw(_events(base, len(raws)))
    assert (_names_native(raws, base, (*sw, *wk), comm, events)
            == _names_reference(raws, base, (*sw, *wk), comm, events))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(which=st.integers(0, len(_TABLED + NAME_PACKETS) - 1), muts=st.lists(mutation, min_size=1, max_size=3),
       data=st.data(), comm=_COMMS)
def test_name_threads_on_mutated_packets(which, muts, data, comm):
    """Mutated packets: where upb reads them, the same comm; where it does not, a WireError
    (comm untouched) or a result, never a crash."""
    raw = mutate((_TABLED + NAME_PACKETS)[which], muts)
    rows = (*data.draw(_rows(0, 1)), *data.draw(_rows(0, 1)))
    got = _outcome(_names_native, [raw], 0, rows, comm)
    try:
        ref = _names_reference([raw], 0, rows, comm)
    except Exception:
        assert got == "WireError" or isinstance(got, list)
        return
    assert got == ref


def _names_spanned(raws: list[bytes], base: int, rows, comm: dict, events=()) -> list:
    """name_threads told where each plain packet's compact_sched is (the bundle check's view,
    perfetto_ftrace_batch._compact_spans) instead of walking the packets for it."""
    from nodes.perf.parsers import perfetto_bundle_view as view

    items = [(view.parse_packet(r)[1] if view.split is not None else None, r) for r in raws]
    comm = dict(comm)
    assert C.name_threads(comm, raws, base, *_names_args(rows, events), batch._compact_spans(items)) is None
    return list(comm.items())


def test_real_packets_have_spans():
    """The spans test reads the checked spans, not the walk, for real (plain) packets."""
    from nodes.perf.parsers import perfetto_bundle_view as view

    if view.split is None:
        pytest.skip("no bundle check")
    items = [(view.parse_packet(r)[1], r) for r in _TABLED]
    spans = batch._compact_spans(items)
    plain = np.array([b is not None and b.seq >= 0 for b, _ in items])
    assert plain.sum() >= len(items) - 1  # one capture's first packet says the previous was dropped
    assert (spans[plain, 0] >= 0).all() and (spans[plain, 1] > 0).all() and (spans[~plain] == -1).all()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(data=st.data(), base=st.integers(0, 5), comm=_COMMS, muts=st.lists(mutation, max_size=3))
def test_name_threads_from_the_checks_spans(data, base, comm, muts):
    """The intern tables read where the bundle check found the compact_sched are the packet walk's,
    on real packets, made-up ones and mutated ones (where the check passes; others are walked)."""
    pool = _TABLED + NAME_PACKETS
    raws = data.draw(st.lists(st.sampled_from(pool), min_size=1, max_size=4))
    raws[0] = mutate(raws[0], muts)
    try:
        TracePacket.FromString(raws[0])
    except Exception:
        assume(False)
    sw, wk = data.draw(_rows(base, len(raws))), data.draw(_rows(base, len(raws)))
    if data.draw(st.booleans()):
        sw, wk = ([r[0], r[1], [i % 3 for i in r[2]]] for r in (sw, wk))
    events = data.draw(_events(base, len(raws)))
    want = _outcome(_names_native, raws, base, (*sw, *wk), comm, events)
    assert _outcome(_names_spanned, raws, base, (*sw, *wk), comm, events) == want


def test_name_threads_refuses_rows_out_of_order_or_range_before_writing():
    raws = [NAME_PACKETS[0]] * 2
    tables = [[wire.text(n) for n in TracePacket.FromString(r).ftrace_events.compact_sched.intern_table] for r in raws]
    bad = ([[1, 0], [5, 5], [1, 1]], [[2], [5], [1]], [[-1], [5], [1]], [[0, 1, 0], [1, 2, 3], [1, 1, 1]])
    for sw in bad:
        for rows, events in (((*sw, [], [], []), []), (([], [], [], *sw), []),
                             (([0], [1], [0], [], [], []), [(b, 1, "n") for b in sw[0]])):
            args = _names_args(rows, events)
            for apply in (lambda comm: C.name_threads(comm, raws, 0, *args),
                          lambda comm: batch._name_threads_python(comm, tables, 0, *args)):
                comm = {9: "x"}
                with pytest.raises(ValueError):
                    apply(comm)
                assert comm == {9: "x"}
    with pytest.raises(ValueError):
        C.name_threads({}, raws, 0, *_names_args(([0], [1, 2], [1], [], [], []), []))