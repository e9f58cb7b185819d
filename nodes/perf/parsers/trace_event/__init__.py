"""Chrome / Perfetto Trace Event Format JSON: ``{"traceEvents": [...]}`` or the bare array.

Written by Chrome DevTools, Perfetto UI's JSON export, Android systrace JSON, viztracer,
Flutter's timeline, catapult. Phases read: ``X`` (complete), ``B``/``E`` (nested, per thread),
``i``/``I``/``n``/``R`` (instants, marks), ``C`` (counters), ``M`` (process/thread names),
``b``/``e`` and ``S``/``F`` (async spans), ``P`` (V8 CPU profile chunks → sampled stacks).
Timestamps are microseconds.

Speed and memory: the file is never held whole. It is read in blocks of :data:`CHUNK` bytes;
each block is cut at the last event boundary (``}`` ``,`` ``{`` outside any nesting — a cut in
the wrong place always makes the piece invalid JSON, so a bad guess is detected and an earlier
boundary tried) and decoded by msgspec into small Structs holding only the fields the metrics
use; ``args`` stays raw bytes and is decoded only for the few events that need it. The events
then go into PerfData's columnar store. Memory is one block plus the columns (24 bytes a
slice). Pieces that do not decode (corrupt bytes, wrong types, invalid UTF-8, a truncated tail)
are split exactly into single events by a slow scanner and decoded one by one: what cannot be
read is counted in ``skipped_events`` and the result is marked ``partial``.

The reader is split by concern: :mod:`.framing` (blocks, cuts, salvage, the keys around the
array), :mod:`.phases` (per-phase handlers into the columns), :mod:`.nesting` (B/E and async
matching at the end), :mod:`.v8_profile` (CPU profile chunks), :mod:`.events` (the decoded
event, the caps, the helpers). This module runs them and finishes the PerfData.
"""

from __future__ import annotations

import re

import numpy as np

from nodes.perf.errors import PerfDataError
from nodes.perf.formats import open_input, strip_json_start
from nodes.perf.gc_pause import cyclic_gc_paused
from nodes.perf.model import PerfData
from nodes.perf.parsers.trace_event.events import (  # noqa: F401  (re-exported: the reader's caps)
    KEEP_INSTANTS,
    MARK_NAMES,
    MAX_ASYNC_EVENTS,
    MAX_EVENT_BYTES,
    MAX_MARKS,
    MAX_SIDE_BYTES,
)
from nodes.perf.parsers.trace_event.framing import Framer
from nodes.perf.parsers.trace_event.nesting import match_async, match_begin_end, pair_nested
from nodes.perf.parsers.trace_event.phases import EventSink
from nodes.perf.units import counted

FORMAT = "trace_event"

#: Bytes read per block (the decoder sees one block at a time). Read at each parse() call, so
#: a test may change it here.
CHUNK = 1 << 20

_LOCATION_IN_NAME = re.compile(r"^(.*\S) \((.+?):(\d+)\)$")
_pair_nested = pair_nested  # (the name the reader's tests use)


def sniff(head: bytes, name: str) -> bool:
    h = strip_json_start(head)
    if h[:1] == b"{":
        if b'"traceEvents"' in head or b'"systemTraceEvents"' in head:
            return True
        # a large "metadata" (or other key) may come first: events still show in the head
        return b'"ph"' in head and b'"ts"' in head and b'"pid"' in head
    if h[:1] == b"[":
        rest = h[1:].lstrip()
        if rest[:1] in (b"]", b""):
            return True
        return rest[:1] == b"{" and b'"ph"' in head
    return False



def parse(path: str) -> PerfData:
    pd = PerfData(FORMAT, path)
    with open_input(path) as f:
        sink = EventSink(pd)
        framer = Framer(f, path, pd, sink, CHUNK)
        with cyclic_gc_paused():  # millions of short-lived Structs: the cyclic GC only costs time here
            framer.run()
        _finish(sink, framer, path)
    return pd


def _finish(sink: EventSink, framer: Framer, path: str) -> None:
    """Time bounds, B/E and async matching, profiles, locations in names, systrace text,
    the warnings; a trace with nothing timed is an error."""
    pd = sink.pd
    for cols in pd.slices.values():
        if len(cols):
            bad = cols.clamp_durations()
            if bad:
                sink.problem("X event with a negative or infinite dur (taken as 0)", bad)
            t = np.frombuffer(cols.ts, dtype=np.float64)
            d = np.frombuffer(cols.dur, dtype=np.float64)
            fin = np.isfinite(t)
            if fin.any():
                sink.min_ts = min(sink.min_ts, float(t[fin].min()))
                sink.max_ts = max(sink.max_ts, float((t[fin] + d[fin]).max()))
            del t, d, fin  # release the buffer views: the columns grow again below
    for ts_col, _codes in sink.stacks.values():
        if len(ts_col):
            t = np.frombuffer(ts_col, dtype=np.float64)
            sink.min_ts = min(sink.min_ts, float(t.min()))
            sink.max_ts = max(sink.max_ts, float(t.max()))
            del t
    if sink.min_ts <= sink.max_ts:
        pd.extend_bounds(sink.min_ts, sink.max_ts)
    end = pd.end_us or 0.0
    match_begin_end(sink)
    for (pid, tid), (cpu_us, n) in sink.thread_cpu_us().items():
        pd.add_thread_cpu_time(pid, tid, cpu_us, n)
    match_async(sink, end)
    for prof in sink.profiles.values():
        prof.emit(pd)
    # Names like "func (path/to/file.py:12)" (viztracer) carry their own location.
    functions = framer.side.get("functions")
    for nid, s in enumerate(pd.strings):
        m = _LOCATION_IN_NAME.match(s) if s.endswith(")") else None
        if m:
            pd.set_location(nid, m.group(2), int(m.group(3)))
        elif isinstance(functions, dict):
            loc = functions.get(s)
            if isinstance(loc, list) and len(loc) >= 2 and isinstance(loc[1], int):
                pd.set_location(nid, str(loc[0]), loc[1])
    # Android systrace JSON carries the ftrace text of the same capture.
    st_text = framer.side.get("systemTraceEvents")
    if st_text:
        from nodes.perf.parsers import atrace

        atrace.parse_text_into(pd, st_text)
    for what, n in sorted(sink.problems.items(), key=lambda kv: -kv[1]):
        pd.warn(f"{n} × {what}")
    if pd.skipped_events:
        pd.mark_partial()
        pd.warn(f"{counted(pd.skipped_events, 'event')} could not be read and {'was' if pd.skipped_events == 1 else 'were'} skipped")
    pd.meta.note("events", str(sink.events_seen))
    has_data = (
        pd.slices or pd.instants or pd.counters or pd.async_slices or pd.stacks or pd.frames
    )
    if not has_data:
        if sink.events_seen == 0 and not pd.skipped_events:
            raise PerfDataError(path, "the trace holds no events")
        why = "; ".join(w for w in pd.warnings[:3] if "could not be read" not in w)
        raise PerfDataError(path, "no timed events could be read" + (f" ({why})" if why else ""))
