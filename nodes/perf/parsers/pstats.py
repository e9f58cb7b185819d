"""cProfile / profile output (``python -m cProfile -o out.prof …``, ``Profile.dump_stats``).

The file is a ``marshal`` dump of ``{(file, line, function): (primitive calls, calls, tottime,
cumtime, callers)}``. It is validated entry by entry before the stdlib :mod:`pstats` reads it,
so a damaged or foreign marshal file is a PerfDataError, never a crash. Each function becomes
a :class:`~nodes.perf.model.CallStat` (self = tottime, total = cumtime, µs); built-ins
(``~``, line 0) have no file.
"""

from __future__ import annotations

import marshal
import math
import pstats as _pstats
from typing import Any

from nodes.perf.errors import PerfDataError
from nodes.perf.formats import read_all
from nodes.perf.model import PerfData

FORMAT = "pstats"

#: marshal: a dict (TYPE_DICT, maybe FLAG_REF), whose first key is a tuple, or an empty dict
_DICT = (0x7B, 0xFB)
_FIRST_KEY = (0x28, 0x29, 0xA8, 0xA9, 0x30)


def sniff(head: bytes, name: str) -> bool:
    return len(head) >= 2 and head[0] in _DICT and head[1] in _FIRST_KEY


class _Loaded:
    """What pstats.Stats accepts besides a file name: an object with create_stats() and .stats."""

    def __init__(self, stats: dict):
        self.stats = stats

    def create_stats(self) -> None:
        pass


def _num(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    v = float(v)
    return v if math.isfinite(v) and v >= 0 else None


_FIXED = {ord("0"): 0, ord("N"): 0, ord("F"): 0, ord("T"): 0, ord("i"): 4, ord("I"): 8, ord("g"): 8, ord("r"): 4}
_LEN4 = {ord("s"), ord("t"), ord("u"), ord("a"), ord("A")}
_LEN1 = {ord("z"), ord("Z"), ord("f")}


def _check_marshal(data: bytes) -> str | None:
    """Walk the marshal stream before ``marshal.loads`` sees it: only the types a pstats
    file uses, and no count larger than the bytes left (marshal would allocate it first —
    a 20-byte file could ask for a 16 GB tuple). Returns the problem, or None."""
    n = len(data)
    pos = 0
    # stack of remaining item counts; -1 = a dict (key/value pairs until TYPE_NULL)
    todo: list[int] = []
    first = True
    while first or todo:
        first = False
        if todo:
            if todo[-1] == 0:
                todo.pop()
                continue
            if todo[-1] > 0:
                todo[-1] -= 1
        if pos >= n:
            return "truncated"
        code = data[pos] & 0x7F  # without FLAG_REF
        pos += 1
        if code in _FIXED:
            if code == ord("0"):
                if todo and todo[-1] == -1:
                    todo.pop()
                    continue
                return "unexpected NULL"
            pos += _FIXED[code]
        elif code in _LEN4:
            if pos + 4 > n:
                return "truncated"
            size = int.from_bytes(data[pos : pos + 4], "little", signed=True)
            pos += 4 + size
            if size < 0 or pos > n:
                return "bad string length"
        elif code in _LEN1:
            if pos >= n:
                return "truncated"
            pos += 1 + data[pos]
        elif code == ord("l"):
            if pos + 4 > n:
                return "truncated"
            size = abs(int.from_bytes(data[pos : pos + 4], "little", signed=True))
            pos += 4 + 2 * size
        elif code == ord("(") or code == ord(")"):
            if code == ord(")"):
                if pos >= n:
                    return "truncated"
                size = data[pos]
                pos += 1
            else:
                if pos + 4 > n:
                    return "truncated"
                size = int.from_bytes(data[pos : pos + 4], "little", signed=True)
                pos += 4
            if size < 0 or size > n - pos:
                return "bad tuple length"
            if len(todo) > 64:
                return "nested too deeply"
            todo.append(size)
        elif code == ord("{"):
            if len(todo) > 64:
                return "nested too deeply"
            todo.append(-1)
        else:
            return f"marshal type {chr(code)!r} does not occur in pstats files"
        if pos > n:
            return "truncated"
    if pos != n:
        return "trailing bytes"
    return None


def parse(path: str) -> PerfData:
    data = read_all(path)
    problem = _check_marshal(data)
    if problem:
        raise PerfDataError(path, f"not a cProfile/pstats file ({problem})")
    try:
        raw = marshal.loads(data)
    except Exception as e:  # EOFError, ValueError, TypeError: whatever marshal says
        raise PerfDataError(path, f"not a cProfile/pstats file ({type(e).__name__}: {str(e)[:80]})") from None
    if not isinstance(raw, dict):
        raise PerfDataError(path, "not a cProfile/pstats file (no stats table)")
    clean: dict = {}
    bad = 0
    for key, val in raw.items():
        if not (
            isinstance(key, tuple)
            and len(key) == 3
            and isinstance(key[0], str)
            and isinstance(key[1], int)
            and isinstance(key[2], str)
            and isinstance(val, tuple)
            and len(val) == 5
        ):
            bad += 1
            continue
        cc, nc, tt, ct = (_num(x) for x in val[:4])
        callers = val[4] if isinstance(val[4], dict) else {}
        if cc is None or nc is None or tt is None or ct is None:
            bad += 1
            continue
        ok_callers = {}
        for ck, cv in callers.items():
            if (
                isinstance(ck, tuple)
                and len(ck) == 3
                and isinstance(cv, tuple)
                and len(cv) == 4
                and all(_num(x) is not None for x in cv)
            ):
                ok_callers[ck] = cv
        clean[key] = (int(cc), int(nc), tt, ct, ok_callers)
    if not clean:
        raise PerfDataError(path, "cProfile/pstats file without a single readable function")
    try:
        st = _pstats.Stats(_Loaded(clean))
    except Exception as e:
        raise PerfDataError(path, f"pstats could not read it ({type(e).__name__}: {str(e)[:80]})") from None
    pd = PerfData(FORMAT, path)
    for (file, line, func), (cc, nc, tt, ct, _callers) in st.stats.items():  # type: ignore[attr-defined]
        builtin = file == "~" or line == 0
        pd.add_call(
            _text(func),
            None if builtin else _text(file),
            None if builtin else line,
            nc,
            cc,
            tt * 1e6,
            ct * 1e6,
        )
    total = float(getattr(st, "total_tt", 0.0) or 0.0)
    pd.extend_bounds(0.0, total * 1e6)
    pd.meta.note("functions", str(len(pd.calls)))
    pd.meta.note("total calls", str(getattr(st, "total_calls", "")))
    if bad:
        pd.mark_partial()
        pd.skip(bad)
        pd.warn(f"{bad} malformed pstats entries were skipped")
    return pd


def _text(s: str) -> str:
    try:
        s.encode("utf-8")
        return s
    except UnicodeEncodeError:
        return s.encode("utf-8", "replace").decode("utf-8")
