"""Matching at the end of the read: ``B``/``E`` pairs per thread and async begin/end spans.

Files are not always in time order, so both are matched once everything is read, in time
order. B/E of one thread: vectorised (:func:`pair_nested`) when well nested, else with a stack
as Chrome does. Async: by (scope, category, id), the innermost open span of the same name."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np


if TYPE_CHECKING:
    from nodes.perf.parsers.trace_event.phases import EventSink


def match_begin_end(sink: EventSink, end: float) -> None:
    unclosed = unmatched = 0
    for (pid, tid), (ts_col, code_col) in sink.stacks.items():
        if not len(ts_col):
            continue
        t = np.frombuffer(ts_col, dtype=np.float64).copy()
        c = np.frombuffer(code_col, dtype=np.int64).copy()
        if len(t) > 1 and bool((t[1:] < t[:-1]).any()):
            order = np.argsort(t, kind="stable")
            t = t[order]
            c = c[order]
        got = pair_nested(t, c)
        if got is not None:
            starts, durs, names, open_starts, open_names = got
            cols = sink.pd.slice_columns(pid, tid)
            cols.extend_raw(starts.tobytes(), np.maximum(durs, 0.0).tobytes(),
                            names.astype(np.dtype(cols.name.typecode)).tobytes())
            for b_ts, nid in zip(open_starts.tolist(), open_names.tolist()):
                sink._slice(pid, tid, b_ts, max(0.0, end - b_ts), sink.pd.strings[nid])
                unclosed += 1
            continue
        # an E without its B somewhere: match with a stack, as Chrome does
        stack: list[tuple[float, int]] = []
        for ts, code in zip(t.tolist(), c.tolist()):
            if code >= 0:
                stack.append((ts, code))
            elif stack:
                b_ts, nid = stack.pop()
                sink._slice(pid, tid, b_ts, ts - b_ts, sink.pd.strings[nid])
            else:
                unmatched += 1
        for b_ts, nid in stack:
            sink._slice(pid, tid, b_ts, max(0.0, end - b_ts), sink.pd.strings[nid])
            unclosed += 1
    sink.stacks.clear()
    if unmatched:
        sink.problem("E without a matching B", unmatched)
    if unclosed:
        sink.pd.warn(f"{unclosed} B events never ended: closed at the end of the trace")

def match_async(sink: EventSink, end: float) -> None:
    sink.async_events.sort(key=lambda a: (a[0], a[1]))
    open_: dict[tuple, list[tuple[float, str, int, str]]] = {}
    unmatched = 0
    for ts, _seq, begin, key, name, pid, cat in sink.async_events:
        if begin:
            open_.setdefault(key, []).append((ts, name, pid, cat))
            continue
        st = open_.get(key)
        if not st:
            unmatched += 1
            continue
        idx = len(st) - 1
        if name:
            for i in range(len(st) - 1, -1, -1):
                if st[i][1] == name:
                    idx = i
                    break
        b_ts, b_name, b_pid, b_cat = st.pop(idx)
        sink.pd.add_async_slice(b_pid, b_name or b_cat or "async", b_ts, ts - b_ts, b_name)
    sink.async_events = []
    still = 0
    for st in open_.values():
        for b_ts, b_name, b_pid, b_cat in st:
            sink.pd.add_async_slice(b_pid, b_name or b_cat or "async", b_ts, max(0.0, end - b_ts), b_name)
            still += 1
    if unmatched:
        sink.problem("async end without its begin", unmatched)
    if still:
        sink.pd.warn(f"{still} async spans never ended: closed at the end of the trace")


def pair_nested(t: np.ndarray, c: np.ndarray):
    """Match B (c >= 0, the name id) and E (c == -1) events of one thread, in time order.

    Vectorised: in a well-nested sequence the events that open or close nesting level L
    alternate B, E, B, E …, so a stable sort by level pairs each B with the next event of its
    level. Returns (starts, durations, name ids, unclosed starts, unclosed name ids), or None
    when some E has no B (the caller then matches with a stack)."""
    isb = c >= 0
    depth = np.cumsum(np.where(isb, 1, -1))
    if len(depth) and depth.min() < 0:
        return None
    level = np.where(isb, depth - 1, depth)
    idx = np.argsort(level, kind="stable")
    lv = level[idx]
    b = isb[idx]
    nxt_same = np.zeros(len(idx), dtype=bool)
    nxt_same[:-1] = lv[1:] == lv[:-1]
    nxt_is_e = np.zeros(len(idx), dtype=bool)
    nxt_is_e[:-1] = ~b[1:]
    pair = b & nxt_same & nxt_is_e
    pos = np.flatnonzero(pair)
    bi = idx[pos]
    ei = idx[pos + 1]
    open_ = idx[b & ~pair]
    return t[bi], t[ei] - t[bi], c[bi], t[open_], c[open_]

