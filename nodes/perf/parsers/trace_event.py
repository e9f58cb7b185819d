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
"""

from __future__ import annotations

import gc
import json
from array import array
import math
import re
from typing import IO, Any

import msgspec
import numpy as np

from nodes.perf.errors import PerfDataError
from nodes.perf.formats import open_input, strip_json_start
from nodes.perf.model import MAX_INSTANTS, CapacityReached, PerfData, SliceColumns

FORMAT = "trace_event"

#: Bytes read per block (the decoder sees one block at a time).
CHUNK = 1 << 20
#: A single event (or the JSON before the event array) may not exceed this.
MAX_EVENT_BYTES = 256 << 20
#: At most this many async begin/end events are kept for matching.
MAX_ASYNC_EVENTS = 2_000_000
#: Top-level keys around the event array are decoded only up to this size.
MAX_SIDE_BYTES = 64 << 20

#: Instant events kept whatever the instant cap: frame and page-load markers the metrics use.
KEEP_INSTANTS = frozenset(
    {
        "DrawFrame",
        "BeginFrame",
        "BeginMainThreadFrame",
        "navigationStart",
        "fetchStart",
        "responseEnd",
        "domInteractive",
        "domContentLoadedEventEnd",
        "loadEventStart",
        "loadEventEnd",
        "firstPaint",
        "firstContentfulPaint",
        "firstMeaningfulPaint",
        "largestContentfulPaint::Candidate",
        "MarkDOMContent",
        "MarkLoad",
        "MarkFirstPaint",
        "TracingStartedInBrowser",
        "TracingStartedInPage",
    }
)


class _Ev(msgspec.Struct, gc=False):
    ph: str = ""
    name: Any = None
    pid: int | float | str | None = None
    tid: int | float | str | None = None
    ts: float | str | None = None
    dur: float | str | None = None
    id: Any = None
    id2: Any = None
    args: msgspec.Raw = msgspec.Raw()


_DEC_LIST = msgspec.json.Decoder(list[_Ev])
_DEC_ONE = msgspec.json.Decoder(_Ev)

_WS = b" \t\r\n"
_INSTANT_PH = frozenset({"i", "I", "R", "n"})
_ASYNC_PH = frozenset({"b", "e", "S", "F"})
_BOUNDARY = re.compile(rb"\}\s*,\s*\{")
_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.S)
_TRAILING = re.compile(r"trailing characters \(byte (\d+)\)")
_LOCATION_IN_NAME = re.compile(r"^(.*\S) \((.+?):(\d+)\)$")


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
        _Reader(f, path, pd).run()
    return pd


# ======================================================================================


class _Fail(Exception):
    """A piece that does not decode as a whole (wrong cut, or bad bytes inside)."""


class _Reader:
    def __init__(self, f: IO[bytes], path: str, pd: PerfData):
        self.f = f
        self.path = path
        self.pd = pd
        self.eof = False
        self.events_seen = 0
        self.stacks: dict[tuple[int, int], tuple[array, array]] = {}
        #: async begin/end events, matched at the end in time order: (ts, seq, is_begin, key, name, pid, cat)
        self.async_events: list[tuple] = []
        self.counter_pid: dict[str, int] = {}
        self.str_ids: dict[str, int] = pd._string_ids
        self.profiles: dict[tuple[int, str], _V8Profile] = {}
        self.min_ts = math.inf
        self.max_ts = -math.inf
        self.problems: dict[str, int] = {}
        self.side: dict[str, Any] = {}

    # --- reading ---------------------------------------------------------------------
    def _read(self) -> bytes:
        if self.eof:
            return b""
        block = self.f.read(CHUNK)
        if not block:
            self.eof = True
        return block

    def problem(self, what: str, n: int = 1) -> None:
        self.problems[what] = self.problems.get(what, 0) + n

    def run(self) -> None:
        enabled = gc.isenabled()
        gc.disable()  # millions of short-lived Structs: the cyclic GC only costs time here
        try:
            buf = self._prefix()
            if buf is not None:
                try:
                    self._events(buf)
                except CapacityReached:
                    pass  # marked partial with a warning (nodes/perf/model.py); the rest is paired below
        finally:
            if enabled:
                gc.enable()
        self._finish()

    def _prefix(self) -> bytes | None:
        """Consume everything up to the event array's ``[``; return what follows it."""
        buf = self._read()
        if buf.startswith(b"\xef\xbb\xbf"):
            buf = buf[3:]
        i = 0
        while True:
            while i < len(buf) and buf[i] in _WS:
                i += 1
            if i < len(buf) or self.eof:
                break
            buf, i = buf[i:] + self._read(), 0
        if i >= len(buf):
            raise PerfDataError(self.path, "empty JSON document")
        c = buf[i : i + 1]
        if c == b"[":
            self.pd.meta["json_form"] = "array"
            return buf[i + 1 :]
        if c != b"{":
            raise PerfDataError(self.path, "not Trace Event JSON (expected '{' or '[' at the start)")
        self.pd.meta["json_form"] = "object"
        # Find the "traceEvents" key at depth 1 with an exact scan of the (small) prefix.
        while True:
            pos = self._find_events_key(buf, i)
            if pos is not None:
                key_start, arr_start = pos
                if arr_start < 0:
                    # traceEvents is not an array: decode the whole object and complain
                    self._whole_object(buf)
                    raise PerfDataError(self.path, "traceEvents is not an array")
                before = buf[i + 1 : key_start].rstrip()
                if before.endswith(b","):
                    before = before[:-1]
                if before.strip():
                    self._side_keys(b"{" + before + b"}")
                return buf[arr_start + 1 :]
            if self.eof:
                # No event array at all: maybe a systrace JSON with systemTraceEvents only.
                self._whole_object(buf)
                return None
            if len(buf) > MAX_EVENT_BYTES:
                raise PerfDataError(self.path, "no traceEvents array within the first 256 MB")
            buf = buf + self._read()

    def _find_events_key(self, buf: bytes, start: int) -> tuple[int, int] | None:
        depth = 0
        for m in _TOKEN.finditer(buf, start):
            tok = m.group()
            t = tok[:1]
            if t == b'"':
                if depth == 1 and tok == b'"traceEvents"':
                    j = m.end()
                    rest = buf[j : j + 64].lstrip()
                    if not rest.startswith(b":"):
                        continue
                    k = j + buf[j:].index(b":") + 1
                    while k < len(buf) and buf[k] in _WS:
                        k += 1
                    if k >= len(buf):
                        return None  # need more data
                    if buf[k : k + 1] == b"[":
                        return m.start(), k
                    return m.start(), -1
                continue
            if t in b"{[":
                depth += 1
            else:
                depth -= 1
                if depth <= 0:
                    return None
        return None

    def _whole_object(self, buf: bytes) -> None:
        while not self.eof:
            if len(buf) > MAX_SIDE_BYTES:
                raise PerfDataError(self.path, "JSON object without a traceEvents array, too large to read")
            buf = buf + self._read()
        try:
            obj = msgspec.json.decode(buf)
        except msgspec.DecodeError as e:
            raise PerfDataError(self.path, f"invalid JSON before any traceEvents array ({e})") from None
        if not isinstance(obj, dict):
            raise PerfDataError(self.path, "not Trace Event JSON")
        self._handle_side(obj)
        if "systemTraceEvents" not in obj:
            raise PerfDataError(self.path, "JSON object has no traceEvents array")

    def _side_keys(self, raw: bytes) -> None:
        if len(raw) > MAX_SIDE_BYTES:
            self.pd.warn("top-level keys besides traceEvents too large; ignored")
            return
        try:
            obj = msgspec.json.decode(raw)
        except msgspec.DecodeError:
            try:
                obj = json.loads(raw.decode("utf-8", "replace"))
            except ValueError:
                self.pd.warn("top-level keys besides traceEvents are not valid JSON; ignored")
                return
        if isinstance(obj, dict):
            self._handle_side(obj)

    def _handle_side(self, obj: dict) -> None:
        meta = self.pd.meta
        md = obj.get("metadata")
        if isinstance(md, dict):
            for k, v in list(md.items())[:50]:
                if isinstance(v, (str, int, float, bool)):
                    meta[f"metadata.{k}"] = str(v)[:200]
        vm = obj.get("viztracer_metadata")
        if isinstance(vm, dict) and vm.get("version"):
            meta["producer"] = f"viztracer {vm.get('version')}"
        if isinstance(obj.get("displayTimeUnit"), str):
            meta["displayTimeUnit"] = obj["displayTimeUnit"]
        fi = obj.get("file_info")
        if isinstance(fi, dict) and isinstance(fi.get("functions"), dict):
            self.side["functions"] = fi["functions"]
        st = obj.get("systemTraceEvents")
        if isinstance(st, str) and st.strip():
            self.side["systemTraceEvents"] = st

    # --- the event array ---------------------------------------------------------------
    def _readinto(self, mv: memoryview) -> int:
        if self.eof:
            return 0
        k = self.f.readinto(mv)
        if not k:
            self.eof = True
            return 0
        return k

    def _events(self, initial: bytes) -> None:
        """Decode the event array block by block, in one reused buffer.

        ``buf[0]`` is always ``[``; the events start at 1. A block is decoded in place: the
        byte after the cut (a ``,`` or a blank) becomes ``]`` for the decode and is restored.
        No per-block copies: large fresh allocations cost page faults, measurably."""
        cap = CHUNK
        while cap < len(initial) + 2:
            cap *= 2
        buf = bytearray(cap + 1)
        buf[0] = 0x5B
        n = 1 + len(initial)
        buf[1:n] = initial
        del initial
        while True:
            with memoryview(buf) as mv:
                while not self.eof and n < cap:
                    n += self._readinto(mv[n:cap])
            if self.eof:
                self._final(buf, n)
                return
            r = self._step(buf, n)
            if r is None:
                return
            if r < 0:  # nothing could be cut: one event larger than the buffer
                if cap >= MAX_EVENT_BYTES:
                    raise PerfDataError(self.path, "an event larger than 256 MB, or not an array of events")
                bigger = bytearray(2 * cap + 1)
                bigger[:n] = buf[:n]
                buf = bigger
                cap *= 2
                continue
            n = r

    def _candidates(self, buf: bytearray, n: int) -> list[int]:
        """Cut points (index just past a ``}`` that ``,`` ``{`` follows), last ones first.

        Searched backwards from the end with rfind: a regex over even a 64 KiB window costs
        more than the rest of the block's bookkeeping."""
        out: list[int] = []
        pos = n
        tries = 0
        ws = _WS
        while len(out) < 3 and tries < 4096:
            j = buf.rfind(b"}", 1, pos)
            if j < 0:
                return out
            tries += 1
            k = j + 1
            while k < n and buf[k] in ws:
                k += 1
            if k < n and buf[k] == 0x2C:
                k += 1
                while k < n and buf[k] in ws:
                    k += 1
                if k < n and buf[k] == 0x7B:
                    out.append(j + 1)
            pos = j
        if not out:  # many "}" and no boundary among the last ones: scan it all
            out = [m.start() + 1 for m in _BOUNDARY.finditer(buf, 1, n)][::-1][:3]
        return out

    def _step(self, buf: bytearray, n: int) -> int | None:
        """Decode up to the last event boundary in ``buf[1:n]`` and move the rest to the front.
        Returns the new fill level, None when the array ended, -1 when the buffer must grow."""
        cands = self._candidates(buf, n)
        for cut in cands:
            saved = buf[cut]
            buf[cut] = 0x5D
            try:
                end = self._decode(memoryview(buf)[: cut + 1])
            except _Fail:
                continue
            finally:
                buf[cut] = saved
            if end is not None:  # the array closed inside this piece
                self._after_array(bytes(buf[end:n]))
                return None
            nxt = buf.index(b"{", cut, n)
            rem = n - nxt
            buf[1 : 1 + rem] = buf[nxt:n]
            return 1 + rem
        if not cands:
            return -1
        # No cut decoded: the bytes are bad somewhere. Split exactly and salvage.
        data = bytes(buf[1:n])
        consumed, closed = self._salvage(data, final=False)
        if closed is not None:
            self._after_array(data[closed:])
            return None
        if consumed == 0:
            return -1
        rest = data[consumed:].lstrip(_WS + b",")
        buf[1 : 1 + len(rest)] = rest
        return 1 + len(rest)

    def _array_ends(self, buf: bytearray, n: int) -> list[int]:
        """Up to two positions just past a ``]`` that follows a ``}``, last first."""
        out: list[int] = []
        pos = n
        tries = 0
        while len(out) < 2 and tries < 256:
            j = buf.rfind(b"]", 1, pos)
            if j < 0:
                break
            tries += 1
            k = j - 1
            while k > 0 and buf[k] in _WS:
                k -= 1
            if buf[k] == 0x7D:
                out.append(j + 1)
            pos = j
        return out

    def _final(self, buf: bytearray, n: int) -> None:
        # Usually the array ends in the last few bytes: try the last "}]" in place, so the
        # events are decoded once (a wrong guess fails, or names the real end).
        for k in self._array_ends(buf, n):
            try:
                end = self._decode(memoryview(buf)[:k])
            except _Fail:
                continue
            self._after_array(bytes(buf[k if end is None else end : n]))
            return
        self._final_slow(bytes(buf[1:n]))

    def _final_slow(self, buf: bytes) -> None:
        body = buf.rstrip()
        if not body:
            self._truncated("the event array is not closed")
            return
        data = b"[" + body
        try:
            end = self._decode(data)
        except _Fail:
            end = -1
        if end is None:
            return  # "[...]" exactly: the bare-array form, complete
        if end >= 0:
            self._after_array(data[end:])
            return
        # Not closed. The array form may legally omit its closing "]" (tracers that crash).
        trimmed = body[:-1].rstrip() if body.endswith(b",") else body
        if trimmed.endswith(b"}"):
            try:
                end = self._decode(b"[" + trimmed + b"]")
            except _Fail:
                end = -1
            if end is None:
                if self.pd.meta.get("json_form") == "object":
                    self._truncated("the JSON object ends inside traceEvents (cut short?)")
                return
        consumed, closed = self._salvage(buf, final=True)
        if closed is not None:
            self._after_array(buf[closed:])
            if self.pd.skipped_events:
                self.pd.partial = True
            return
        self._truncated(f"truncated JSON: the last {len(buf) - consumed} bytes hold no complete event")

    def _truncated(self, why: str) -> None:
        self.pd.partial = True
        self.pd.warn(why)

    def _decode(self, data: bytes) -> int | None:
        """Decode ``[...]`` and consume it. Returns None, or the index just past the array's
        closing bracket when the data goes on after it. Raises _Fail when it does not decode."""
        try:
            events = _DEC_LIST.decode(data)
        except msgspec.ValidationError:
            raise _Fail() from None
        except msgspec.DecodeError as e:
            m = _TRAILING.search(str(e))
            if not m:
                raise _Fail() from None
            j = int(m.group(1)) - 2
            while j > 0 and data[j] in _WS:
                j -= 1
            if data[j : j + 1] != b"]":
                raise _Fail() from None
            try:
                events = _DEC_LIST.decode(data[: j + 1])
            except msgspec.DecodeError:
                raise _Fail() from None
            self._consume(events)
            return j + 1
        self._consume(events)
        return None

    def _salvage(self, buf: bytes, final: bool) -> tuple[int, int | None]:
        """Exact scan: decode each complete top-level element on its own.

        Returns (bytes consumed, index just past the array's closing bracket or None)."""
        depth = 0
        start = -1
        consumed = 0
        good: list[_Ev] = []
        for m in _TOKEN.finditer(buf):
            t = buf[m.start() : m.start() + 1]
            if t == b'"':
                continue
            if t == b"{" or t == b"[":
                if depth == 0:
                    if t == b"[":  # a stray array at the top level: skip it like an event
                        pass
                    start = m.start()
                depth += 1
                continue
            # closing bracket
            if depth == 0:
                if t == b"]":
                    self._consume(good)
                    return m.end(), m.end()
                continue  # a stray "}" between events
            depth -= 1
            if depth == 0 and start >= 0:
                ev = self._one(buf[start : m.end()])
                if ev is not None:
                    good.append(ev)
                consumed = m.end()
                start = -1
                if len(good) >= 4096:
                    self._consume(good)
                    good = []
        self._consume(good)
        if final:
            tail = buf[consumed:].strip(_WS + b",")
            if tail:
                self.pd.skipped_events += 1
                self.problem("incomplete event at the end of the file")
        return consumed, None

    def _one(self, raw: bytes) -> _Ev | None:
        try:
            return _DEC_ONE.decode(raw)
        except msgspec.DecodeError:
            pass
        # Invalid UTF-8, lone surrogates, out-of-range numbers, odd types: the stdlib is laxer.
        try:
            obj = json.loads(raw.decode("utf-8", "replace"))
        except (ValueError, RecursionError):
            self.pd.skipped_events += 1
            self.problem("malformed event")
            return None
        if not isinstance(obj, dict):
            self.pd.skipped_events += 1
            self.problem("array element is not an event object")
            return None
        ev = _Ev()
        ph = obj.get("ph")
        ev.ph = ph if isinstance(ph, str) else ""
        ev.name = _clean(obj.get("name"))
        for k in ("pid", "tid"):
            v = obj.get(k)
            setattr(ev, k, v if isinstance(v, (int, float, str)) and not isinstance(v, bool) else None)
        for k in ("ts", "dur"):
            v = obj.get(k)
            setattr(ev, k, _num(v) if not isinstance(v, str) else v)
        ev.id = _clean(obj.get("id"))
        ev.id2 = _clean(obj.get("id2"))
        a = obj.get("args")
        if isinstance(a, dict):
            try:
                ev.args = msgspec.Raw(msgspec.json.encode(_clean(a)))
            except (TypeError, ValueError, OverflowError, msgspec.EncodeError):
                pass
        return ev

    def _after_array(self, rest: bytes) -> None:
        """What follows the event array: ``}`` or ``, "key": value, ... }``."""
        rest = rest.strip()
        if rest[:1] == b"]":
            rest = rest[1:].lstrip()
        if self.pd.meta.get("json_form") == "array":
            if rest:
                self.pd.warn("bytes after the event array were ignored")
            return
        while not self.eof and len(rest) <= MAX_SIDE_BYTES:
            rest = rest + self._read()
        if not self.eof:
            self.pd.warn("top-level keys after traceEvents too large; ignored")
            return
        rest = rest.strip()
        if not rest:
            self._truncated("the JSON object is not closed after traceEvents (cut short?)")
            return
        if rest[:1] == b",":
            self._side_keys(b"{" + rest[1:])
        elif rest != b"}":
            self.pd.warn("unexpected bytes after traceEvents were ignored")

    # --- events -------------------------------------------------------------------------
    def _consume(self, events: list[_Ev]) -> None:
        """The hot loop: X slices straight into the columns, B/E into per-thread buffers;
        the rarer phases dispatched.

        Kept lean on purpose (it runs once per event): ts/dur types are checked by the
        ``array('d')`` appends themselves (a TypeError sends that one event to the careful
        path), pid/tid only when the thread changes, names only when first seen."""
        if not events:
            return
        # The event cap (nodes/perf/limits.py), once per decoded block: what the columns and
        # the B/E and async buffers hold.
        self.pd.check_capacity(self.pd.slice_count + len(self.async_events)
                               + sum(len(t) for t, _ in self.stacks.values()))
        self.events_seen += len(events)
        i = 0
        n = len(events)
        while i < n:
            i = self._consume_fast(events, i)
            if i < n:  # events[i] upset the fast path: do it carefully, then go on
                self._careful(events[i])
                i += 1

    def _consume_fast(self, events: list[_Ev], start: int) -> int:
        pd = self.pd
        slices = pd.slices
        stacks = self.stacks
        sid = self.str_ids
        sid_get = sid.get
        strings = pd.strings
        other = self._other
        int_ = int
        str_ = str
        last_pid = last_tid = None
        ts_add = dur_add = name_add = None
        cols = None
        e = None
        try:
            for e in (events if start == 0 else events[start:]):
                ph = e.ph
                if ph == "X":
                    pid = e.pid
                    tid = e.tid
                    if pid != last_pid or tid != last_tid:
                        if pid.__class__ is not int_ or tid.__class__ is not int_:
                            return self._index(events, e, start)
                        cols = slices.get((pid, tid))
                        if cols is None:
                            cols = slices[(pid, tid)] = SliceColumns()
                            pd.thread(pid, tid)
                        ts_add = cols.ts.append
                        dur_add = cols.dur.append
                        name_add = cols.name.append
                        last_pid = pid
                        last_tid = tid
                    name = e.name
                    nid = sid_get(name)
                    if nid is None:
                        if name.__class__ is not str_:
                            return self._index(events, e, start)
                        nid = sid[name] = len(strings)
                        strings.append(name)
                    ts_add(e.ts)
                    try:
                        dur_add(e.dur)
                    except TypeError:
                        cols.ts.pop()
                        return self._index(events, e, start)
                    name_add(nid)
                elif ph == "B" or ph == "E":
                    # matched per thread at the end, in time order (files are not always in
                    # time order); meanwhile 16 bytes an event
                    pid = e.pid
                    tid = e.tid
                    if pid.__class__ is not int_ or tid.__class__ is not int_:
                        return self._index(events, e, start)
                    st = stacks.get((pid, tid))
                    if st is None:
                        st = stacks[(pid, tid)] = (array("d"), array("q"))
                        pd.thread(pid, tid)
                    if ph == "B":
                        name = e.name
                        nid = sid_get(name)
                        if nid is None:
                            if name.__class__ is not str_:
                                return self._index(events, e, start)
                            nid = sid[name] = len(strings)
                            strings.append(name)
                    else:
                        nid = -1
                    st[0].append(e.ts)
                    st[1].append(nid)
                else:
                    other(e)
        except TypeError:
            return self._index(events, e, start)
        return len(events)

    @staticmethod
    def _index(events: list[_Ev], e: _Ev | None, start: int) -> int:
        """Where ``e`` is (by identity: Structs compare by value). Only on the rare path."""
        for k in range(start, len(events)):
            if events[k] is e:
                return k
        return len(events)

    def _careful(self, e: _Ev) -> None:
        if e.ph != "X":
            self._other(e, careful=True)
            return
        norm = self._normalize_x(e)
        if norm is None:
            return
        ts, dur, pid, tid, name = norm
        key = (pid, tid)
        cols = self.pd.slices.get(key)
        if cols is None:
            cols = self.pd.slices[key] = SliceColumns()
            self.pd.thread(pid, tid)
        cols.ts.append(ts)
        cols.dur.append(dur)
        cols.name.append(self.pd.intern(name))

    def _normalize_x(self, e: _Ev) -> tuple[float, float, int, int, str] | None:
        ts = _num(e.ts)
        if ts is None:
            self.problem("event without a usable ts (ph 'X')")
            self.pd.skipped_events += 1
            return None
        dur = _num(e.dur)
        if dur is None:
            dur = 0.0
            self.problem("X event without dur (taken as 0)")
        elif dur < 0.0:
            dur = 0.0
            self.problem("X event with a negative dur (taken as 0)")
        pid = e.pid if e.pid.__class__ is int else self._id(e.pid)
        tid = e.tid if e.tid.__class__ is int else (pid if e.tid is None else self._id(e.tid))
        name = e.name if e.name.__class__ is str else _name(e.name)
        return ts, dur, pid, tid, name

    def _other(self, e: _Ev, careful: bool = False) -> None:
        ph = e.ph
        if ph == "M":
            self._meta(e)
            return
        if not ph or ph.__class__ is not str:
            self.problem("event without a phase (ph)")
            self.pd.skipped_events += 1
            return
        ts = e.ts
        if ts.__class__ is not float:
            ts = _num(ts)
            if ts is None:
                self.problem(f"event without a usable ts (ph {_name(ph)[:8]!r})")
                self.pd.skipped_events += 1
                return
        pid = e.pid if e.pid.__class__ is int else self._id(e.pid)
        tid = e.tid if e.tid.__class__ is int else (pid if e.tid is None else self._id(e.tid))
        name = e.name if e.name.__class__ is str else _name(e.name)
        if ts < self.min_ts:
            self.min_ts = ts
        if ts > self.max_ts:
            self.max_ts = ts
        if ph == "B" or ph == "E":  # (the careful path: the fast one did not take it)
            st = self.stacks.get((pid, tid))
            if st is None:
                st = self.stacks[(pid, tid)] = (array("d"), array("q"))
                self.pd.thread(pid, tid)
            st[0].append(ts)
            st[1].append(self.pd.intern(name) if ph == "B" else -1)
        elif ph in _INSTANT_PH:
            if name in KEEP_INSTANTS or len(self.pd.instants) < MAX_INSTANTS:
                self.pd.instants.append((ts, pid, tid, name))
        elif ph == "C":
            self._counter(e, pid, ts, name)
        elif ph in _ASYNC_PH:
            self._async(e, ph, pid, tid, ts, name)
        elif ph == "P":
            self._profile(e, pid, tid, ts, name)

    def _slice(self, pid: int, tid: int, ts: float, dur: float, name: str) -> None:
        if dur < 0:
            self.problem("E before its B (duration taken as 0)")
            dur = 0.0
        key = (pid, tid)
        cols = self.pd.slices.get(key)
        if cols is None:
            cols = self.pd.slices[key] = SliceColumns()
            self.pd.thread(pid, tid)
        nid = self.str_ids.get(name)
        if nid is None:
            nid = self.str_ids[name] = len(self.pd.strings)
            self.pd.strings.append(name)
        cols.ts.append(ts)
        cols.dur.append(dur)
        cols.name.append(nid)
        if ts + dur > self.max_ts:
            self.max_ts = ts + dur

    def _match_begin_end(self, end: float) -> None:
        unclosed = unmatched = 0
        for (pid, tid), (ts_col, code_col) in self.stacks.items():
            if not len(ts_col):
                continue
            t = np.frombuffer(ts_col, dtype=np.float64).copy()
            c = np.frombuffer(code_col, dtype=np.int64).copy()
            if len(t) > 1 and bool((t[1:] < t[:-1]).any()):
                order = np.argsort(t, kind="stable")
                t = t[order]
                c = c[order]
            got = _pair_nested(t, c)
            if got is not None:
                starts, durs, names, open_starts, open_names = got
                cols = self.pd.slices.get((pid, tid))
                if cols is None:
                    cols = self.pd.slices[(pid, tid)] = SliceColumns()
                cols.ts.frombytes(starts.tobytes())
                cols.dur.frombytes(np.maximum(durs, 0.0).tobytes())
                cols.name.frombytes(names.astype(np.dtype(cols.name.typecode)).tobytes())
                for b_ts, nid in zip(open_starts.tolist(), open_names.tolist()):
                    self._slice(pid, tid, b_ts, max(0.0, end - b_ts), self.pd.strings[nid])
                    unclosed += 1
                continue
            # an E without its B somewhere: match with a stack, as Chrome does
            stack: list[tuple[float, int]] = []
            for ts, code in zip(t.tolist(), c.tolist()):
                if code >= 0:
                    stack.append((ts, code))
                elif stack:
                    b_ts, nid = stack.pop()
                    self._slice(pid, tid, b_ts, ts - b_ts, self.pd.strings[nid])
                else:
                    unmatched += 1
            for b_ts, nid in stack:
                self._slice(pid, tid, b_ts, max(0.0, end - b_ts), self.pd.strings[nid])
                unclosed += 1
        self.stacks.clear()
        if unmatched:
            self.problem("E without a matching B", unmatched)
        if unclosed:
            self.pd.warn(f"{unclosed} B events never ended: closed at the end of the trace")

    def _match_async(self, end: float) -> None:
        self.async_events.sort(key=lambda a: (a[0], a[1]))
        open_: dict[tuple, list[tuple[float, str, int, str]]] = {}
        unmatched = 0
        for ts, _seq, begin, key, name, pid, cat in self.async_events:
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
            self.pd.add_async_slice(b_pid, b_name or b_cat or "async", b_ts, ts - b_ts, b_name)
        self.async_events = []
        still = 0
        for st in open_.values():
            for b_ts, b_name, b_pid, b_cat in st:
                self.pd.add_async_slice(b_pid, b_name or b_cat or "async", b_ts, max(0.0, end - b_ts), b_name)
                still += 1
        if unmatched:
            self.problem("async end without its begin", unmatched)
        if still:
            self.pd.warn(f"{still} async spans never ended: closed at the end of the trace")

    _ids: dict[Any, int]

    def _id(self, v: Any) -> int:
        """Thread/process ids that are not ints (strings, floats, null) → stable ints."""
        if v is None:
            return 0
        if isinstance(v, float):
            if v.is_integer() and abs(v) < 2**62:
                return int(v)
        elif isinstance(v, str):
            s = v.strip()
            if s.isascii() and s.lstrip("-").isdigit() and len(s) < 19:
                return int(s)
        elif isinstance(v, int):
            return v
        if not hasattr(self, "_ids"):
            self._ids = {}
        i = self._ids.get(v)
        if i is None:
            i = self._ids[v] = -(len(self._ids) + 1000)
            if isinstance(v, str):
                self.pd.meta.setdefault(f"id {i}", v[:80])
        return i

    def _args(self, e: _Ev) -> Any:
        raw = bytes(e.args)
        if not raw:
            return None
        try:
            return msgspec.json.decode(raw)
        except msgspec.DecodeError:
            return None

    def _meta(self, e: _Ev) -> None:
        name = e.name
        if name not in ("process_name", "thread_name", "process_labels"):
            return
        args = self._args(e)
        value = args.get("name") if isinstance(args, dict) else None
        if name == "process_labels" and isinstance(args, dict):
            value = args.get("labels")
            if isinstance(value, str):
                self.pd.meta[f"process {e.pid} labels"] = value[:200]
            return
        if not isinstance(value, str):
            return
        pid = e.pid if e.pid.__class__ is int else self._id(e.pid)
        if name == "process_name":
            self.pd.set_process_name(pid, _clean_str(value))
        else:
            tid = e.tid if e.tid.__class__ is int else (pid if e.tid is None else self._id(e.tid))
            self.pd.set_thread_name(pid, tid, _clean_str(value))

    def _counter(self, e: _Ev, pid: int, ts: float, name: str) -> None:
        args = self._args(e)
        if not isinstance(args, dict):
            return
        if e.id is not None:
            name = f"{name}[{e.id}]"
        single = len(args) == 1
        for k, v in args.items():
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                continue
            series = name if single else f"{name}.{k}"
            first = self.counter_pid.setdefault(series, pid)
            if first != pid:
                series = f"{series} (pid {pid})"
                self.counter_pid.setdefault(series, pid)
            pts = self.pd.counters.setdefault(series, [])
            if len(pts) < 20_000:
                pts.append((ts, float(v)))

    def _async(self, e: _Ev, ph: str, pid: int, tid: int, ts: float, name: str) -> None:
        ident = e.id if e.id is not None else e.id2
        if isinstance(ident, dict):
            ident = tuple(sorted((str(k), str(v)) for k, v in ident.items()))
        elif isinstance(ident, list):
            ident = str(ident)
        cat = ""  # (the category is not decoded: it costs a third of the decode time)
        # ids are global (a span may end in another process) unless id2 says "local"
        key = (pid if isinstance(e.id2, dict) and "local" in e.id2 else None, cat, ident)
        if len(self.async_events) >= MAX_ASYNC_EVENTS:
            self.problem("async events beyond the cap (ignored)")
            return
        self.async_events.append((ts, len(self.async_events), ph == "b" or ph == "S", key, name, pid, cat))

    def _profile(self, e: _Ev, pid: int, tid: int, ts: float, name: str) -> None:
        if name not in ("Profile", "ProfileChunk"):
            return
        args = self._args(e)
        data = args.get("data") if isinstance(args, dict) else None
        if not isinstance(data, dict):
            return
        ident = str(e.id if e.id is not None else e.id2)
        prof = self.profiles.get((pid, ident))
        if prof is None:
            prof = self.profiles[(pid, ident)] = _V8Profile(pid, tid)
        if name == "Profile":
            st = data.get("startTime")
            if isinstance(st, (int, float)):
                prof.start = float(st)
            prof.tid = tid
        else:
            prof.add_chunk(data)

    # --- the end ------------------------------------------------------------------------
    def _finish(self) -> None:
        pd = self.pd
        for cols in pd.slices.values():
            if len(cols):
                t = np.frombuffer(cols.ts, dtype=np.float64)
                d = np.frombuffer(cols.dur, dtype=np.float64)
                bad = ~np.isfinite(d) | (d < 0)
                if bad.any():
                    d[bad] = 0.0
                    self.problem("X event with a negative or infinite dur (taken as 0)", int(bad.sum()))
                fin = np.isfinite(t)
                if fin.any():
                    self.min_ts = min(self.min_ts, float(t[fin].min()))
                    self.max_ts = max(self.max_ts, float((t[fin] + d[fin]).max()))
                del t, d, bad, fin  # release the buffer views: the columns grow again below
        for ts_col, _codes in self.stacks.values():
            if len(ts_col):
                t = np.frombuffer(ts_col, dtype=np.float64)
                self.min_ts = min(self.min_ts, float(t.min()))
                self.max_ts = max(self.max_ts, float(t.max()))
                del t
        if self.min_ts <= self.max_ts:
            pd.start_us = self.min_ts if pd.start_us is None else min(pd.start_us, self.min_ts)
            pd.end_us = self.max_ts if pd.end_us is None else max(pd.end_us, self.max_ts)
        end = pd.end_us or 0.0
        self._match_begin_end(end)
        self._match_async(end)
        for prof in self.profiles.values():
            prof.emit(pd)
        # Names like "func (path/to/file.py:12)" (viztracer) carry their own location.
        functions = self.side.get("functions")
        for nid, s in enumerate(pd.strings):
            m = _LOCATION_IN_NAME.match(s) if s.endswith(")") else None
            if m:
                pd.locations.setdefault(nid, (m.group(2), int(m.group(3))))
            elif isinstance(functions, dict):
                loc = functions.get(s)
                if isinstance(loc, list) and len(loc) >= 2 and isinstance(loc[1], int):
                    pd.locations.setdefault(nid, (str(loc[0]), loc[1]))
        # Android systrace JSON carries the ftrace text of the same capture.
        st_text = self.side.get("systemTraceEvents")
        if st_text:
            from nodes.perf.parsers import atrace

            atrace.parse_text_into(pd, st_text)
        for what, n in sorted(self.problems.items(), key=lambda kv: -kv[1]):
            pd.warn(f"{n} × {what}")
        if pd.skipped_events:
            pd.partial = True
            pd.warn(f"{pd.skipped_events} events could not be read and were skipped")
        pd.meta["events"] = str(self.events_seen)
        has_data = (
            pd.slices or pd.instants or pd.counters or pd.async_slices or pd.stacks or pd.frames
        )
        if not has_data:
            if self.events_seen == 0 and not pd.skipped_events:
                raise PerfDataError(self.path, "the trace holds no events")
            why = "; ".join(w for w in pd.warnings[:3] if "could not be read" not in w)
            raise PerfDataError(self.path, "no timed events could be read" + (f" ({why})" if why else ""))


class _V8Profile:
    """V8 CPU profile samples carried by ``ProfileChunk`` events → sampled stacks."""

    SKIP = frozenset({"(root)", "(idle)"})

    def __init__(self, pid: int, tid: int):
        self.pid = pid
        self.tid = tid
        self.start: float | None = None
        self.parent: dict[int, int] = {}
        self.frame: dict[int, tuple[str, str | None, int | None]] = {}
        self.samples: list[int] = []
        self.deltas: list[float] = []

    def add_chunk(self, data: dict) -> None:
        cp = data.get("cpuProfile")
        if isinstance(cp, dict):
            for n in cp.get("nodes") or ():
                if not isinstance(n, dict) or not isinstance(n.get("id"), int):
                    continue
                cf = n.get("callFrame") if isinstance(n.get("callFrame"), dict) else {}
                fn = cf.get("functionName")
                fn = fn if isinstance(fn, str) and fn else "(anonymous)"
                url = cf.get("url") if isinstance(cf.get("url"), str) and cf.get("url") else None
                line = cf.get("lineNumber")
                line = line + 1 if isinstance(line, int) and line >= 0 and url else None
                self.frame[n["id"]] = (_clean_str(fn), url, line)
                if isinstance(n.get("parent"), int):
                    self.parent[n["id"]] = n["parent"]
            samples = cp.get("samples")
            if isinstance(samples, list):
                self.samples.extend(s for s in samples if isinstance(s, int))
        deltas = data.get("timeDeltas")
        if isinstance(deltas, list):
            self.deltas.extend(float(d) if isinstance(d, (int, float)) else 0.0 for d in deltas)

    def emit(self, pd: PerfData) -> None:
        n = min(len(self.samples), len(self.deltas))
        if not n:
            return
        deltas = self.deltas[:n]
        positive = sorted(d for d in deltas if d > 0)
        typical = positive[len(positive) // 2] if positive else 0.0
        cache: dict[int, tuple[int, ...] | None] = {}
        for i in range(n):
            # a sample's weight: the time until the next sample (the last: a typical interval)
            w = deltas[i + 1] if i + 1 < n else typical
            if w <= 0:
                continue
            stack = cache.get(self.samples[i], ())
            if stack == ():
                stack = cache[self.samples[i]] = self._stack(pd, self.samples[i])
            if stack:
                pd.add_sample(stack, w, self.pid, self.tid)

    def _stack(self, pd: PerfData, node: int) -> tuple[int, ...] | None:
        chain: list[int] = []
        seen = set()
        while node in self.frame and node not in seen and len(chain) < 512:
            seen.add(node)
            name, url, line = self.frame[node]
            if name == "(idle)":
                return None
            if name not in self.SKIP:
                chain.append(pd.frame_id(name, url, line))
            node = self.parent.get(node, -1)
        return tuple(reversed(chain)) or None


# ======================================================================================


def _pair_nested(t: np.ndarray, c: np.ndarray):
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


def _num(v: Any) -> float | None:
    if v.__class__ is float:
        return v if math.isfinite(v) else None
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, int):
        return float(v)
    if isinstance(v, str):
        try:
            f = float(v)
        except ValueError:
            return None
        return f if math.isfinite(f) else None
    return None


def _name(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, str):
        return _clean_str(v)
    if isinstance(v, (int, float, bool)):
        return str(v)
    return _clean_str(json.dumps(v, default=str)[:200])


def _clean_str(s: str) -> str:
    """Strings that can be written back as UTF-8 (lone surrogates replaced)."""
    try:
        s.encode("utf-8")
        return s
    except UnicodeEncodeError:
        return s.encode("utf-8", "replace").decode("utf-8")


def _clean(v: Any) -> Any:
    if isinstance(v, str):
        return _clean_str(v)
    if isinstance(v, dict):
        return {_clean_str(str(k)): _clean(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_clean(x) for x in v]
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v
