"""The C pass over a batch's atrace lines and zero events (nodes/perf/parsers/_atracec.c) against
its numpy reference (perfetto_atrace_columns.split_python): the same shapes, rows, names, first
begins and counters on random, mutated and truncated lines, and a
ValueError — never a crash — for offsets outside the buffer.

The whole reader with either is compared by tests/test_perfetto_atrace_columns.py (against the
event-by-event reader) and tests/test_perfetto_differential.py.
"""

from __future__ import annotations

import os
import shutil

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nodes.perf.parsers import perfetto_atrace_columns as columns

C = columns.NATIVE
if C is None and (shutil.which("cc") or shutil.which("gcc")) and os.environ.get("PERFSCOUT_PURE_PYTHON_WIRE") != "1":
    raise AssertionError("a C compiler is here but nodes/perf/parsers/_atracec is not built: pip install -e .")
pytestmark = pytest.mark.skipif(C is None, reason="no C extension (no compiler, or PERFSCOUT_PURE_PYTHON_WIRE=1)")

_EMPTY = "[empty slice name]"
_PAD = bytes(16)

_phase = st.sampled_from([b"B", b"E", b"C", b"S", b"I", b"", b"Bx", b"Cy", b"b", b"c"])
_piece = st.sampled_from([b"", b"12", b"7", b"007", b"x1", "١٢".encode(), b"99999999999999999999",
                          b"999999999999999999", b"1000000000000000000", b"-3", b" 4", b"-", b"--1", b"a", b"a b",
                          "é".encode(), b"1.5", b"\xff\xfe", b"\xe2", b"c", _EMPTY.encode(), b"\n", b"\0"])
_tail = st.sampled_from([b"", b"\n", b"\0", b"\n\0\n", b"\0\0"])
_shaped = st.builds(lambda ph, ps, t: b"|".join([ph, *ps]) + t, _phase, st.lists(_piece, max_size=5), _tail)


@st.composite
def _mutated(draw):
    """A shaped line with bytes flipped, inserted or cut off."""
    line = bytearray(draw(_shaped))
    for _ in range(draw(st.integers(0, 3))):
        op = draw(st.sampled_from(["flip", "insert", "cut"]))
        at = draw(st.integers(0, len(line)))
        byte = draw(st.sampled_from([ord("|"), ord("-"), ord("0"), ord("9"), ord("B"), ord("C"), ord("E"), 0, 10,
                                     0xFF, 0x80, draw(st.integers(0, 255))]))
        if op == "flip" and at < len(line):
            line[at] = byte
        elif op == "insert":
            line.insert(at, byte)
        else:
            del line[at:]
    return bytes(line)


_line = st.one_of(_shaped, _mutated(), st.binary(max_size=24))
_zname = st.one_of(st.sampled_from([b"", b"z", b"a", b"\xff", "é".encode(), _EMPTY.encode()]), st.binary(max_size=6))
# flag, name, tid, pid, value: flag and pid as their varints read as int64 (a negative int32 is
# sign-extended; bits past 32 are dropped when read as int32)
_zero = st.tuples(st.sampled_from([0, 1, 2, 3, 4, 5, 6, 8, -1, 1 << 32, (1 << 32) | 4]), _zname, st.integers(0, 6),
                  st.sampled_from([0, 7, -2, 1 << 32]), st.sampled_from([0, 7, -3, 1 << 40, -(1 << 62), (1 << 63) - 1]))
_event = st.one_of(st.tuples(st.just("print"), st.integers(0, 6), _line), st.tuples(st.just("zero"), _zero))


def _batch(events, gap: int):
    """The events' bytes in one buffer (``gap`` bytes between them, as other fields lie between
    lines in a real batch) and split's arguments."""
    buf = bytearray(b"|9" * gap)
    pr = ([], [], [], [])
    zero = ([], [], [], [], [], [], [])
    for ev, e in enumerate(events):
        if e[0] == "print":
            _, tid, line = e
            cols, vals = pr, (ev, len(buf), len(line), tid)
            buf += line
        else:
            flag, name, tid, pid, value = e[1]
            cols, vals = zero, (ev, flag, len(buf), len(name), tid, pid, value)
            buf += name
        for c, v in zip(cols, vals):
            c.append(v)
        buf += b"|9" * gap
    joined = bytes(buf) + _PAD
    arrays = lambda cs: tuple(np.array(c, np.int64) for c in cs)  # noqa: E731
    return joined, np.frombuffer(joined, np.uint8), arrays(pr), arrays(zero)


def _resolved(r: dict) -> dict:
    """split's result with name indices replaced by the names (the two number names apart)."""
    listed = r["listed"]
    out = {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in r.items() if k not in ("listed",)}
    out["b_vid"] = [(type(listed[v]), listed[v]) for v in r["b_vid"].tolist()]
    out["c_vid"] = [(type(listed[v]), listed[v]) for v in r["c_vid"].tolist()]
    out["n_names"] = [(type(n), n) for n in r["n_names"]]
    return out


@settings(max_examples=800, deadline=None)
@given(st.lists(_event, max_size=30), st.integers(0, 2), st.sets(st.sampled_from(["a", "c", "é", _EMPTY, "z"])),
       st.sets(st.integers(0, 6)))
def test_split_equals_the_numpy_reference(events, gap, known_names, known_tids):
    joined, buf, pr, zero = _batch(events, gap)
    names = {n: i for i, n in enumerate(sorted(known_names))}
    tgid_of = {t: t for t in sorted(known_tids)}
    got = columns.split(joined, buf, pr, zero, names, tgid_of, _EMPTY)
    want = columns.split_python(joined, buf, pr, zero, names, tgid_of, _EMPTY)
    assert got["shape"].dtype == np.int8 and got["b_ev"].dtype == np.int64
    assert _resolved(got) == _resolved(want)
    assert len(set(map(repr, got["listed"]))) == len(got["listed"])  # each name once


def test_split_reads_the_common_shapes():
    lines = [b"B|12|draw", b"E", b"C|7|queue|-5\n", b"B|12", b"B|x|n", b"C|7|q|1.5", b"B|12|a|b\n\0", b"",
             b"C|1|n|99999999999999999999", b"C|1||3|x"]
    joined, buf, pr, zero = _batch([("print", 3, x) for x in lines] + [("zero", (1, b"", 4, 40, 0)),
                                                               ("zero", (2, b"x", 4, 0, 0))], 1)
    r = columns.split(joined, buf, pr, zero, {"draw": 0}, {3: 1}, _EMPTY)
    R, B, Cn, E = columns.REST, columns.BEGIN, columns.COUNTER, columns.END
    assert r["shape"].tolist() == [B, E, Cn, B, R, R, B, R, R, Cn]
    assert r["rest_c"] == 2 and r["ends"].tolist() == [1, 11]
    assert [r["listed"][v] for v in r["b_vid"].tolist()] == ["draw", _EMPTY, "a|b", _EMPTY]
    assert r["b_ev"].tolist() == [0, 3, 6, 10] and r["b_tgid"].tolist() == [12, 12, 12, 40]
    assert r["c_value"].tolist() == [-5, 3] and [r["listed"][v] for v in r["c_vid"].tolist()] == ["queue", ""]
    assert r["t_ev"].tolist() == [10] and r["t_pairs"] == [(4, 40)]  # thread 3 is known
    assert r["n_ev"].tolist() == [3, 6] and r["n_names"] == [_EMPTY, "a|b"]  # "draw" is known


def test_offsets_outside_the_buffer_raise():
    joined = b"B|1|a" + _PAD
    z = tuple(np.zeros(0, np.int64) for _ in range(7))
    for off, ln in ((-1, 2), (0, len(joined) + 1), (len(joined), 1), (3, -1)):
        pr = (np.array([0]), np.array([off]), np.array([ln]), np.array([1]))
        with pytest.raises(ValueError):
            C.split(joined, *pr, *z, {}, {}, _EMPTY)
    zero = (np.array([0]), np.array([1]), np.array([len(joined) - 1]), np.array([2]), np.array([1]), np.array([1]),
            np.array([0]))
    empty = tuple(np.zeros(0, np.int64) for _ in range(4))
    with pytest.raises(ValueError):
        C.split(joined, *empty, *zero, {}, {}, _EMPTY)
    with pytest.raises(ValueError):  # columns of different lengths
        C.split(joined, np.array([0, 1]), np.array([0]), np.array([1]), np.array([1]), *z, {}, {}, _EMPTY)
