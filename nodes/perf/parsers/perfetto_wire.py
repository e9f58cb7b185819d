"""Protobuf wire format decoded in vectorised passes over many messages at once (numpy), for
the ftrace bundles: the per-event Python work of reading millions of small messages is what
made the Perfetto reader ~15× slower than upb itself (issue #25).

upb still checks and splits the packets: a lite schema (:data:`LiteBundle`) has upb hand
back each ``FtraceEvent`` as its bytes and each packed compact-sched column as its bytes; the
fields inside are then read here for all events of a batch of bundles together. Only the
shapes Perfetto writes are read this way — anything else (a varint over 10 bytes, a group, a
field that ends past its message) is reported so the caller can read that bundle with the
generated classes instead.

The walks that are sequential by nature (a message's fields, one varint after another) run in C
when the extension ``_wirec`` (nodes/perf/parsers/_wirec.c, built by ``pip install``) imports:
:func:`fields` and :func:`bundles`. The numpy code here stays as the fallback for a machine
without a compiler and as the reference the C is tested against
(tests/test_perfetto_wire_native.py); ``PERFSCOUT_PURE_PYTHON_WIRE=1`` forces it.
"""

from __future__ import annotations

import numpy as np
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import FtraceEvent

from nodes.perf import compiled_parts

_F = descriptor_pb2.FieldDescriptorProto
#: Compact-sched columns read (all packed varints on the wire), by field number.
COMPACT = {"switch_timestamp": 1, "switch_prev_state": 2, "switch_next_pid": 3, "switch_next_comm_index": 6,
           "waking_timestamp": 7, "waking_pid": 8, "waking_comm_index": 11}


def _lite_classes():
    fdp = descriptor_pb2.FileDescriptorProto(name="perfscout_lite_ftrace.proto", package="perfscout_lite",
                                             syntax="proto2")

    def msg(name, fields):
        m = fdp.message_type.add(name=name)
        for fname, num, typ, label, tname in fields:
            f = m.field.add(name=fname, number=num, type=typ, label=label)
            if tname:
                f.type_name = ".perfscout_lite." + tname

    rep, opt = _F.LABEL_REPEATED, _F.LABEL_OPTIONAL
    msg("Packet", [("ftrace_events", 1, _F.TYPE_MESSAGE, opt, "Bundle")])
    msg("Bundle", [("event", 2, _F.TYPE_BYTES, rep, None), ("compact_sched", 4, _F.TYPE_MESSAGE, opt, "Compact")])
    msg("Compact", [(name, num, _F.TYPE_BYTES, rep, None) for name, num in COMPACT.items()])
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("perfscout_lite.Packet"))


#: A TracePacket seen as: its ftrace bundle's events as bytes, its compact columns as bytes.
LitePacket = _lite_classes()
#: FtraceEvent's oneof ``event``: field number → kind name.
KINDS = {f.number: f.name for f in FtraceEvent.DESCRIPTOR.oneofs_by_name["event"].fields}

PAD = 16  # zero bytes after a buffer, so a 10-byte gather never runs off its end


class WireError(ValueError):
    """Bytes that are not the shape this reader decodes in bulk."""


def compiled(name: str):
    """The reader's C part ``nodes.perf.parsers.<name>`` (setup.py), or None: not built, or
    ``PERFSCOUT_PURE_PYTHON_WIRE=1`` (nodes/perf/compiled_parts.py, the one place that switch
    is read) — then the caller uses its Python reference."""
    return compiled_parts.compiled(f"nodes.perf.parsers.{name}")


def _native():
    """The C walks (_wirec.c), or None."""
    mod = compiled("_wirec")
    if mod is not None:
        mod.set_error(WireError)
    return mod


#: The C extension when it is used (tests switch it off to run the numpy code).
NATIVE = _native()


def varints(buf: np.ndarray, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The varint at each position: (value as uint64, its length in bytes). Byte by byte over
    the varints still going: most are one byte, a timestamp six or seven."""
    b = buf[pos]
    val = (b & 0x7F).astype(np.uint64)
    length = np.ones(len(pos), np.int64)
    more = np.flatnonzero(b >= 0x80)
    k = 1
    while len(more):
        if k == 10:
            raise WireError("varint longer than 10 bytes")
        bb = buf[pos[more] + k]
        val[more] |= (bb & 0x7F).astype(np.uint64) << np.uint64(7 * k)
        length[more] += 1
        more = more[bb >= 0x80]
        k += 1
    return val, length


def fields(buf: np.ndarray, start: np.ndarray, end: np.ndarray, wanted: dict[int, int], last: bool = True):
    """:func:`fields_numpy`'s result, from the C walk when it is built. ``buf`` must end with
    :data:`PAD` zero bytes past every message (the numpy code reads ahead into them). Without
    ``last`` the result may lack key -1 (the batch reader's kind fields never read it: four
    zeroed columns per call less)."""
    if NATIVE is None:
        return fields_numpy(buf, start, end, wanted)
    return fields_native(buf, start, end, wanted, last)


def fields_native(buf, start, end, wanted: dict[int, int], last: bool = True):
    """:func:`fields_numpy` in C: the same arrays (writable), the same messages rejected."""
    rows, last_row = NATIVE.fields(buf, np.ascontiguousarray(start, np.int64), np.ascontiguousarray(end, np.int64),
                                   tuple(wanted.items()), last)
    out = {f: _row(r) for f, r in zip(wanted, rows)}
    if last:
        out[-1] = _row(last_row, np.int64)
    return out


def _row(r, count=bool):
    return [np.frombuffer(r[0], count), np.frombuffer(r[1], np.uint64), np.frombuffer(r[2], np.int64),
            np.frombuffer(r[3], np.int64)]


def bundles(packets: list[bytes]) -> dict:
    """TracePackets' ftrace bundles in one C walk, as the lite parse + :func:`packed` +
    :func:`fields_numpy` read them, without a bytes object per event: ``buf`` the packets joined
    (plus PAD zero bytes), per bundle ``ev_count`` and ``unpacked`` (a compact column written
    unpacked, which the packed read does not count), per event ``ts``, ``pid`` (fields 1 and 2),
    ``nlen``, ``kind_no``, ``k_off``, ``k_len`` (as key -1 of :func:`fields`, offsets into
    ``buf``), and ``compact`` {column: (values, count per bundle)}. Needs the extension."""
    r = NATIVE.bundles(packets, tuple(COMPACT.values()), PAD)
    u64, i64 = np.uint64, np.int64
    out = {"buf": r["buf"], "ev_count": np.frombuffer(r["ev_count"], i64),
           "unpacked": np.frombuffer(r["unpacked"], bool)}
    for k, t in (("ts", u64), ("pid", u64), ("nlen", i64), ("kind_no", u64), ("k_off", i64), ("k_len", i64)):
        out[k] = np.frombuffer(r[k], t)
    out["compact"] = {c: (np.frombuffer(v, u64), np.frombuffer(n, i64)) for c, (v, n) in zip(COMPACT, r["compact"])}
    return out


_PADDING = bytes(PAD)


def recorded(packets: list[bytes], rows: dict) -> dict:
    """:func:`bundles` of ``packets`` from what the bundle check recorded while it checked them
    (``rows``: a ``_bundlec.Rows.take()``, packets in the same order, perhaps more after them):
    the same arrays without walking the bytes again; ``buf`` the packets joined, as there."""
    n = len(packets)
    if rows["packets"] < n:
        raise ValueError("recorded: fewer packets recorded than given")
    u64, i64 = np.uint64, np.int64
    ev_count = np.frombuffer(rows["ev_count"], i64)[:n]
    ne = int(ev_count.sum())
    out = {"buf": b"".join([*packets, _PADDING]), "ev_count": ev_count,
           "unpacked": np.frombuffer(rows["unpacked"], bool)[:n]}
    for k, t in (("ts", u64), ("pid", u64), ("nlen", i64), ("kind_no", u64), ("k_off", i64), ("k_len", i64)):
        out[k] = np.frombuffer(rows[k], t)[:ne]
    compact = {}
    for c, (v, cnt) in zip(COMPACT, rows["compact"]):
        counts = np.frombuffer(cnt, i64)[:n]
        compact[c] = (np.frombuffer(v, u64)[:int(counts.sum())], counts)
    out["compact"] = compact
    return out


def text(raw: bytes | str) -> str:
    """A proto2 string field as text, from the wire's bytes or from upb (which hands a string
    that is not UTF-8 back as bytes). Not UTF-8 — a kernel comm cut at 16 bytes inside a
    character, a damaged trace — is still a name: decoded with errors="replace", so one bad
    byte never fails the whole read. The C parts decode alike (_wirec.c ``strings`` and
    ``name_threads``; _atracec.c ``intern``)."""
    return raw if isinstance(raw, str) else raw.decode("utf-8", "replace")


def strings(buf: bytes, off: np.ndarray, ln: np.ndarray) -> list:
    """``text(buf[o:o + n])`` for each (o, n): the strings of a batch's events in one call."""
    if NATIVE is None:
        return [text(buf[o:o + n]) for o, n in zip(off.tolist(), ln.tolist())]
    return NATIVE.strings(buf, np.ascontiguousarray(off, np.int64), np.ascontiguousarray(ln, np.int64))


def fields_numpy(buf: np.ndarray, start: np.ndarray, end: np.ndarray, wanted: dict[int, int]):
    """Decode the messages ``buf[start:end]`` field by field, all messages in each pass.

    ``wanted`` maps a field number to its wire type (0 varint, 2 length-delimited); returns
    {field: (present, value)} — value the varint (uint64) or, for wire type 2, the
    (offset, length) of the bytes — the last occurrence winning, as protobuf reads a singular
    field. Key ``-1`` holds, per message, the last wire-type-2 field of any number: (count of
    such fields, field number, offset, length).
    """
    n = len(start)
    out = {f: [np.zeros(n, bool), np.zeros(n, np.uint64), np.zeros(n, np.int64), np.zeros(n, np.int64)]
           for f in wanted}
    last = [np.zeros(n, np.int64), np.zeros(n, np.uint64), np.zeros(n, np.int64), np.zeros(n, np.int64)]
    pos = start.copy()
    live = np.flatnonzero(pos < end)
    while len(live):
        p = pos[live]
        tag, tl = varints(buf, p)
        fno = (tag >> np.uint64(3)).astype(np.int64)
        wt = (tag & np.uint64(7)).astype(np.int64)
        vpos = p + tl
        nxt = np.empty(len(p), np.int64)
        val = np.zeros(len(p), np.uint64)
        off = np.zeros(len(p), np.int64)
        is_v, is_l = wt == 0, wt == 2
        if is_v.any():
            v, vl = varints(buf, vpos[is_v])
            val[is_v] = v
            nxt[is_v] = vpos[is_v] + vl
        if is_l.any():
            ln, ll = varints(buf, vpos[is_l])
            if (ln >= np.uint64(1 << 40)).any():
                raise WireError("length beyond its message")
            off[is_l] = vpos[is_l] + ll
            val[is_l] = ln
            nxt[is_l] = off[is_l] + ln.astype(np.int64)
        i64 = wt == 1
        nxt[i64] = vpos[i64] + 8
        i32 = wt == 5
        nxt[i32] = vpos[i32] + 4
        if ((wt == 3) | (wt == 4) | (wt > 5)).any() or (fno == 0).any():
            raise WireError("wire type this reader does not decode in bulk")
        if (nxt > end[live]).any():
            raise WireError("field ends past its message")
        if is_l.any():
            rows = live[is_l]
            last[0][rows] += 1
            last[1][rows] = fno[is_l].astype(np.uint64)
            last[2][rows] = off[is_l]
            last[3][rows] = val[is_l].astype(np.int64)
        for f, w in wanted.items():
            hit = (fno == f) & (wt == w)
            if hit.any():
                rows = live[hit]
                o = out[f]
                o[0][rows] = True
                if w == 2:
                    o[2][rows] = off[hit]
                    o[3][rows] = val[hit].astype(np.int64)
                else:
                    o[1][rows] = val[hit]
        pos[live] = nxt
        live = live[nxt < end[live]]
    out[-1] = last
    return out


def packed(chunks: list[bytes]) -> tuple[np.ndarray, list[int]]:
    """Packed varint columns, one chunk of bytes each: (all values as uint64, count per chunk)."""
    counts = []
    for c in chunks:
        if c and c[-1] & 0x80:
            raise WireError("packed column ends inside a varint")
    joined = b"".join(chunks)
    if not joined:
        return np.zeros(0, np.uint64), [0] * len(chunks)
    b = np.frombuffer(joined, np.uint8)
    last = b < 0x80
    ends = np.flatnonzero(last)
    starts = np.concatenate(([0], ends[:-1] + 1))
    if (ends - starts >= 10).any():
        raise WireError("varint longer than 10 bytes")
    shift = (np.arange(len(b)) - np.repeat(starts, ends - starts + 1)) * 7
    vals = (b & 0x7F).astype(np.uint64) << shift.astype(np.uint64)
    values = np.bitwise_or.reduceat(vals, starts)
    # values per chunk: the varints ending inside it
    bounds = np.cumsum([len(c) for c in chunks])
    per = np.searchsorted(ends, bounds, side="left")
    counts = np.diff(np.concatenate(([0], per))).tolist()
    return values, counts


def as_int32(v: np.ndarray) -> np.ndarray:
    """A varint read as protobuf's int32 (the low 32 bits, signed)."""
    return (v & np.uint64(0xFFFFFFFF)).astype(np.int64) - ((v & np.uint64(0x80000000)) != 0) * (1 << 32)


def as_uint32(v: np.ndarray) -> np.ndarray:
    return (v & np.uint64(0xFFFFFFFF)).astype(np.int64)


def as_int64(v: np.ndarray) -> np.ndarray:
    return v.view(np.int64) if v.dtype == np.uint64 else v.astype(np.int64)
