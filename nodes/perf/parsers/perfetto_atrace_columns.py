"""atrace lines (ftrace ``print``) and kernel atrace events (``zero``) split into columns.

Nine in ten ``tracing_mark_write`` lines of a system trace are ``B|tgid|name``, ``E…`` or
``C|tgid|name|value`` (about 550 k in the 100 MB benchmark capture). Parsing each one in Python
(``FtraceState._atrace_line``) was the largest per-event cost of the batch reader, so those
three shapes are read here for a whole batch at once: the lines' bytes are gathered into one
array, the ``|`` separators found with ``searchsorted``, digit runs checked with a running count
of non-digits and read by place value. Names are sliced out and interned once per distinct
bytes string; only distinct names are ever decoded.

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

_PIPE, _MINUS, _B, _C, _E = ord("|"), ord("-"), ord("B"), ord("C"), ord("E")
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
