"""atrace lines (ftrace ``print``) and kernel atrace events (``zero``) split into columns.

Nine in ten ``tracing_mark_write`` lines of a system trace are ``B|tgid|name``, ``E…`` or
``C|tgid|name|value`` (about 690 k in the 100 MB benchmark capture, beside 290 k zero events).
Parsing each one in Python (``FtraceState._atrace_line``) was the largest per-event cost of the
batch reader, so those three shapes are read here for a whole batch at once. :func:`split` does
it in one C pass over the lines and zero events in arrival order (nodes/perf/parsers/_atracec.c:
a hash probe per name, a Python object only per distinct name); :func:`split_python` is its
reference and the fallback (no compiler, ``PERFSCOUT_PURE_PYTHON_WIRE=1``): the lines' bytes
read in numpy passes (:func:`print_lines`: the ``|`` separators found with ``searchsorted``,
digit runs checked and read by place value), names sliced out and interned once per distinct
bytes string (:func:`intern`), the first begins found by sorting (:func:`first_of`). Only
distinct names are ever decoded. :func:`counters` puts a run's counter points into their series.

Only the strict forms are taken: a tgid of 1–18 ASCII digits, a counter value of an optional
``-`` and 1–18 ASCII digits. Anything else — no tgid, a tgid ``str.isdigit`` and ``int`` read
differently (non-ASCII digits), a value ``int`` reads with spaces or underscores, ``S``/``F``/
``G``/``H``/``I``/``N`` lines, ``trace_event_clock_sync`` — is left to ``_atrace_line``, which
defines what every line means (``rest``). Trailing ``\\n`` and ``\\0`` are stripped as
``_atrace_line`` strips them; ``|`` and digits are ASCII, so splitting the bytes and decoding
the pieces with ``errors="replace"`` gives what decoding the line and splitting it gives.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from nodes.perf.parsers import perfetto_wire as wire
from nodes.perf.parsers.perfetto_series import SeriesTable


def _native():
    """nodes/perf/parsers/_atracec.c, or None (perfetto_wire.compiled)."""
    return wire.compiled("_atracec")


#: The C pass when it is used (tests switch it off to run the numpy code).
NATIVE = _native()

_PIPE, _MINUS, _B, _C, _E = ord("|"), ord("-"), ord("B"), ord("C"), ord("E")
#: ``split``'s line shapes, and its zero-event codes (BEGIN, COUNTER).
REST, BEGIN, COUNTER, END = 0, 1, 2, 3
_MAX_DIGITS = 18  # below 2^63: every strict number fits an int64
_POW10 = 10 ** np.arange(_MAX_DIGITS + 1, dtype=np.int64)
_NONE = 1 << 62  # "no such separator": beyond any line, and +1 does not overflow


@dataclass
class PrintLines:
    """A batch's print lines by shape; every array indexes the lines given to :func:`print_lines`.

    ``b``: the strict begins, with their ``tgid`` and name bytes ``b_name`` (start, end in the
    event buffer). ``c``: the strict counters, ``c_tgid``, ``c_name``, ``c_value``. ``e``: the
    ends (any line whose first byte is ``E``: ``_atrace_line`` reads nothing more of them).
    ``rest``: every other line, for ``_atrace_line``, in order.
    """

    b: np.ndarray
    b_tgid: np.ndarray
    b_name: tuple[np.ndarray, np.ndarray]
    c: np.ndarray
    c_tgid: np.ndarray
    c_name: tuple[np.ndarray, np.ndarray]
    c_value: np.ndarray
    e: np.ndarray
    rest: np.ndarray


def print_lines(buf: np.ndarray, off: np.ndarray, ln: np.ndarray) -> PrintLines:
    """Split the print lines at ``buf[off:off + ln]`` (uint8 buffer, int64 offsets) by shape."""
    n = len(off)
    off = off.astype(np.int64)
    ln = ln.astype(np.int64)
    first = np.where(ln > 0, buf[np.minimum(off, len(buf) - 1)], 0)
    e = np.flatnonzero((ln > 0) & (first == _E))
    cand = np.flatnonzero((ln > 0) & ((first == _B) | (first == _C)))
    none = np.zeros(0, np.int64)
    strict_b = np.zeros(n, bool)
    strict_c = np.zeros(n, bool)
    out = dict(b_tgid=none, b_name=(none, none), c_tgid=none, c_name=(none, none), c_value=none)
    if len(cand):
        # Positions are the buffer's own: the separators are found over the whole buffer (one
        # byte compare each) rather than over the candidate lines gathered into a copy.
        sub = buf
        starts = off[cand]
        end = starts + ln[cand]
        while True:  # rstrip("\n\0"), a byte at a time (lines end in at most a few); B or C stays
            last = sub[end - 1]
            cut = (last == 10) | (last == 0)
            if not cut.any():
                break
            end = end - cut
        pipes = np.concatenate((np.flatnonzero(sub == _PIPE), np.full(4, _NONE, np.int64)))
        k = np.searchsorted(pipes, starts)
        p1, p2, p3, p4 = (pipes[k + j] for j in range(4))
        has1, has2, has3, has4 = (p < end for p in (p1, p2, p3, p4))

        def number(a, b, ok):
            """Where ``ok`` and sub[a:b] is 1–18 ASCII digits: True and its value (one pass over
            a lines × digits matrix)."""
            w = np.where(ok, b - a, 0)
            ok = ok & (w >= 1) & (w <= _MAX_DIGITS)
            val = np.zeros(len(a), np.int64)
            r = np.flatnonzero(ok)
            if not len(r):
                return ok, val
            w, a = w[r], a[r]
            j = np.arange(int(w.max()))
            take = j < w[:, None]
            dig = sub[np.where(take, a[:, None] + j, 0)].astype(np.int64) - 48
            good = (((dig >= 0) & (dig <= 9)) | ~take).all(1)
            ok[r] = good
            take &= good[:, None]
            val[r] = (np.where(take, dig, 0) * _POW10[np.where(take, w[:, None] - 1 - j, 0)]).sum(1)
            return ok, val

        is_b = sub[starts] == _B
        # B|tgid|name: the tgid runs to the second '|' (or the end), the name is the rest
        t_end = np.where(has2, p2, end)
        ok_b, b_tgid = number(p1 + 1, t_end, is_b & has1)
        # C|tgid|name|value: the value runs to the fourth '|' (or the end)
        is_c = ~is_b & has1 & has2 & has3
        ok_c, c_tgid = number(p1 + 1, p2, is_c)
        neg = is_c & (p3 + 1 < end) & (sub[np.where(is_c & (p3 + 1 < end), p3 + 1, 0)] == _MINUS)
        v_start = p3 + 1 + neg
        ok_v, mag = number(v_start, np.where(has4, p4, end), is_c)
        ok_c &= ok_v
        sb, sc = np.flatnonzero(ok_b), np.flatnonzero(ok_c)
        strict_b[cand[sb]] = True
        strict_c[cand[sc]] = True
        n_start = np.where(has2, p2 + 1, end)
        out["b_tgid"] = b_tgid[sb]
        out["b_name"] = (n_start[sb], end[sb])
        out["c_tgid"] = c_tgid[sc]
        out["c_name"] = (p2[sc] + 1, p3[sc])
        out["c_value"] = np.where(neg[sc], -mag[sc], mag[sc])
    rest = np.ones(n, bool)
    rest[e] = False
    rest &= ~strict_b & ~strict_c
    return PrintLines(b=np.flatnonzero(strict_b), c=np.flatnonzero(strict_c), e=e, rest=np.flatnonzero(rest), **out)


def intern(joined: bytes, start: np.ndarray, end: np.ndarray) -> tuple[list[bytes], np.ndarray]:
    """The distinct byte strings ``joined[start:end]`` in order of first appearance, and each
    slice's index among them: in C when the extension is built (one bytes object and one dict
    look-up per slice, ~1 M a batch at 100 MB), else :func:`intern_python`, its reference."""
    native = getattr(wire.NATIVE, "intern", None)
    if native is None:
        return intern_python(joined, start, end)
    uniq, at = native(joined, np.ascontiguousarray(start, np.int64), np.ascontiguousarray(end, np.int64))
    return uniq, np.frombuffer(at, np.int64)


def intern_python(joined: bytes, start: np.ndarray, end: np.ndarray) -> tuple[list[bytes], np.ndarray]:
    """:func:`intern` by slicing and a dict."""
    raw = [joined[a:b] for a, b in zip(start.tolist(), end.tolist())]
    uniq = list(dict.fromkeys(raw))
    at = {k: i for i, k in enumerate(uniq)}
    return uniq, np.fromiter(map(at.__getitem__, raw), np.int64, len(raw))


def first_of(pos: np.ndarray, key: np.ndarray) -> np.ndarray:
    """Indices of each distinct ``key``'s smallest ``pos`` (one per key), in ``pos`` order."""
    if not len(pos):
        return np.zeros(0, np.int64)
    order = np.lexsort((pos, key))
    k = key[order]
    head = np.ones(len(k), bool)
    head[1:] = k[1:] != k[:-1]
    at = order[head]
    return at[np.argsort(pos[at], kind="stable")]


def split(joined: bytes, buf: np.ndarray, pr: tuple, zero: tuple, names: dict, tgid_of: dict, empty: str) -> dict:
    """A run's print lines and zero begins/counters as columns, in arrival order, with what of
    them depends on order noted for the ordered loop: in one C pass (nodes/perf/parsers/_atracec.c)
    when it is built, else :func:`split_python`, its reference.

    ``pr``: the print events' (event index, line offset, line length, tid); ``zero``: the zero
    events' (event index, flag, name offset, name length, tid, pid, value), flag, pid and value
    as their varints (int64 views). Event indices ascend within each. Returns ``shape`` (per
    print line: REST, BEGIN, COUNTER or END), ``ends`` (the print and zero ends' event indices),
    ``rest_c`` (lines beginning with ``C`` left to the line parser), ``listed``
    (the run's begin and counter names, str, decoded as ``perfetto_wire.text`` decodes them;
    a begin's empty name is ``empty``), the begins ``b_ev``/``b_tid``/``b_tgid``/``b_vid`` (name
    as index into ``listed``) and counters ``c_ev``/``c_tgid``/``c_vid``/``c_value``/``c_zero``
    (from a zero event) in arrival order, the first begin of each thread not in ``tgid_of``
    (``t_ev``, ``t_pairs`` [(tid, tgid)]) and of each name not in ``names`` (``n_ev``,
    ``n_names``)."""
    if NATIVE is None:
        return split_python(joined, buf, pr, zero, names, tgid_of, empty)
    c64 = np.ascontiguousarray
    r = NATIVE.split(joined, *(c64(a, np.int64) for a in pr), *(c64(a, np.int64) for a in zero), names, tgid_of,
                     empty)
    for k in ("b_ev", "b_tid", "b_tgid", "b_vid", "c_ev", "c_tgid", "c_vid", "c_value", "c_zero", "t_ev", "n_ev",
              "ends"):
        r[k] = np.frombuffer(r[k], np.int64)
    r["shape"] = np.frombuffer(r["shape"], np.int8)
    return r


def split_python(joined: bytes, buf: np.ndarray, pr: tuple, zero: tuple, names: dict, tgid_of: dict,
                 empty: str) -> dict:
    """:func:`split` with numpy (:func:`print_lines`, :func:`intern`, :func:`first_of`)."""
    pr_ev, pr_off, pr_len, pr_tid = (np.asarray(a, np.int64) for a in pr)
    z_ev, z_flag, z_off, z_len, z_tid, z_pid, z_value = (np.asarray(a, np.int64) for a in zero)
    # the flags as perfetto_ftrace._zero_values reads them: B=1, else E=2, else C=4
    flag, zpid = (wire.as_int32(a.view(np.uint64)) for a in (z_flag, z_pid))
    z_tgid = np.where(zpid != 0, zpid, z_tid)
    z_code = np.where((flag & 1) != 0, BEGIN, np.where((flag & 2) != 0, END, np.where((flag & 4) != 0, COUNTER, REST)))
    sh = print_lines(buf, pr_off, pr_len)
    shape = np.zeros(len(pr_ev), np.int8)
    shape[sh.b], shape[sh.c], shape[sh.e] = BEGIN, COUNTER, END
    rest_c = int(((pr_len[sh.rest] > 0) & (buf[pr_off[sh.rest]] == _C)).sum()) if len(sh.rest) else 0
    values: dict = {}

    def ids(keys: list[bytes], empty_: str | None) -> np.ndarray:
        out = np.empty(len(keys), np.int64)
        for i, k in enumerate(keys):  # once per distinct name
            v = wire.text(k)
            if empty_ is not None and not v:
                v = empty_
            out[i] = values.setdefault(v, len(values))
        return out

    def named(ev, off, end, empty_, *cols):
        uniq, idx = intern(joined, off, end)
        return (ev, *cols, ids(uniq, empty_)[idx])

    zb, zc = np.flatnonzero(z_code == BEGIN), np.flatnonzero(z_code == COUNTER)
    begins = [named(pr_ev[sh.b], *sh.b_name, empty, pr_tid[sh.b], sh.b_tgid),
              named(z_ev[zb], z_off[zb], z_off[zb] + z_len[zb], empty, z_tid[zb], z_tgid[zb])]
    counts = [named(pr_ev[sh.c], *sh.c_name, None, sh.c_tgid, sh.c_value, np.zeros(len(sh.c), np.int64)),
              named(z_ev[zc], z_off[zc], z_off[zc] + z_len[zc], None, z_tgid[zc], z_value[zc],
                    np.ones(len(zc), np.int64))]

    def merged(parts):  # the print and zero rows in arrival order
        cols = [np.concatenate([p[c] for p in parts]).astype(np.int64) for c in range(len(parts[0]))]
        o = np.argsort(cols[0], kind="stable")
        return [c[o] for c in cols]

    b_ev, b_tid, b_tgid, b_vid = merged(begins)
    c_ev, c_tgid, c_value, c_zero, c_vid = merged(counts)
    listed = list(values)
    at = first_of(b_ev, b_tid)
    at = at[np.array([t not in tgid_of for t in b_tid[at].tolist()], bool)]
    t_ev, t_pairs = b_ev[at], list(zip(b_tid[at].tolist(), b_tgid[at].tolist()))
    at = first_of(b_ev, b_vid)
    at = at[np.array([listed[v] not in names for v in b_vid[at].tolist()], bool)]
    ends = np.sort(np.concatenate((pr_ev[sh.e], z_ev[z_code == END])))
    return {"shape": shape, "ends": ends, "rest_c": rest_c, "listed": listed, "b_ev": b_ev, "b_tid": b_tid,
            "b_tgid": b_tgid, "b_vid": b_vid, "c_ev": c_ev, "c_tgid": c_tgid, "c_vid": c_vid, "c_value": c_value,
            "c_zero": c_zero,
            "t_ev": t_ev, "t_pairs": t_pairs, "n_ev": b_ev[at], "n_names": [listed[v] for v in b_vid[at].tolist()]}


def counters(table: SeriesTable, listed: list, tgid: np.ndarray, vid: np.ndarray, ts: np.ndarray,
             value: np.ndarray, cap: int) -> None:
    """Counter points in arrival order into ``table`` (key (tgid, name), float values) as
    ``FtraceState._counter`` adds them one by one — a series numbered at its first point, at
    most ``cap`` points: the points sorted by series, each series extended once
    (:meth:`SeriesTable.extend_runs`)."""
    if not len(tgid):
        return
    ev = np.arange(len(tgid))
    order = np.lexsort((ev, vid, tgid))
    g, v = tgid[order], vid[order]
    cut = np.flatnonzero((g[1:] != g[:-1]) | (v[1:] != v[:-1])) + 1
    lo = np.concatenate(([0], cut))
    hi = np.concatenate((cut, [len(order)]))
    keys = [(t, listed[n]) for t, n in zip(g[lo].tolist(), v[lo].tolist())]
    table.extend_runs(cap, keys, order[lo], lo, hi, ts[order], value[order].astype(np.float64))
