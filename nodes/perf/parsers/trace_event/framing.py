"""Block framing and salvage: the bytes of the file → lists of :class:`Ev`, never the file whole.

The file is read in blocks of ``chunk`` bytes; each block is cut at the last event boundary
(``}`` ``,`` ``{`` outside any nesting — a cut in the wrong place always makes the piece
invalid JSON, so a bad guess is detected and an earlier boundary tried) and decoded by msgspec.
Pieces that do not decode (corrupt bytes, wrong types, invalid UTF-8, a truncated tail) are
split exactly into single events by a slow scanner and decoded one by one. The top-level keys
around the event array (``metadata``, viztracer's ``file_info``, systrace's
``systemTraceEvents``) are kept in :attr:`Framer.side`. Decoded events go to ``sink.consume``
(:class:`nodes.perf.parsers.trace_event.phases.EventSink`), problems to ``sink.problem``."""

from __future__ import annotations

import json
import re
from typing import IO, Any, Protocol

import msgspec

from nodes.perf.errors import PerfDataError
from nodes.perf.model import CapacityReached, PerfData
from nodes.perf.parsers.trace_event.events import DEC_LIST, DEC_ONE, MAX_EVENT_BYTES, MAX_SIDE_BYTES, WS, Ev, clean, num

_BOUNDARY = re.compile(rb"\}\s*,\s*\{")
_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.S)


def _skip_blanks(buf: bytearray, i: int, n: int) -> int:
    """The index of the first byte of ``buf[i:n]`` that is no JSON blank, or ``n``. Windows that
    double in size, each copied and ``lstrip``-ed: the cost follows the blanks, not the buffer
    (and is ~20× less than a regex over the megabytes of blanks a bomb is made of)."""
    step = 64
    while i < n:
        if buf[i] not in WS:
            return i
        j = min(i + step, n)
        rest = buf[i:j].lstrip(WS)
        if rest:
            return j - len(rest)
        i, step = j, min(step * 2, 1 << 20)
    return n
_TRAILING = re.compile(r"trailing characters \(byte (\d+)\)")


class Sink(Protocol):
    def consume(self, events: list[Ev]) -> None: ...
    def problem(self, what: str, n: int = 1) -> None: ...


class _Fail(Exception):
    """A piece that does not decode as a whole (wrong cut, or bad bytes inside)."""



class Framer:
    def __init__(self, f: IO[bytes], path: str, pd: PerfData, sink: Sink, chunk: int):
        self.f = f
        self.path = path
        self.pd = pd
        self.sink = sink
        self.chunk = chunk
        self.eof = False
        self.side: dict[str, Any] = {}
        #: "array" (a bare event list) or "object" (``{"traceEvents": …}``), once seen.
        self.form: str | None = None

    # --- reading ---------------------------------------------------------------------
    def _read(self) -> bytes:
        if self.eof:
            return b""
        block = self.f.read(self.chunk)
        if not block:
            self.eof = True
        return block

    def problem(self, what: str, n: int = 1) -> None:
        self.sink.problem(what, n)

    def run(self) -> None:
        """Read the whole document: the prefix, the event array, the keys after it."""
        buf = self._prefix()
        if buf is not None:
            try:
                self._events(buf)
            except CapacityReached:
                pass  # marked partial with a warning (nodes/perf/model.py); what was read is kept

    def _prefix(self) -> bytes | None:
        """Consume everything up to the event array's ``[``; return what follows it."""
        buf = self._read()
        if buf.startswith(b"\xef\xbb\xbf"):
            buf = buf[3:]
        i = 0
        while True:
            while i < len(buf) and buf[i] in WS:
                i += 1
            if i < len(buf) or self.eof:
                break
            buf, i = buf[i:] + self._read(), 0
        if i >= len(buf):
            raise PerfDataError(self.path, "empty JSON document")
        c = buf[i : i + 1]
        if c == b"[":
            self._form("array")
            return buf[i + 1 :]
        if c != b"{":
            raise PerfDataError(self.path, "not Trace Event JSON (expected '{' or '[' at the start)")
        self._form("object")
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
                    while k < len(buf) and buf[k] in WS:
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

    def _form(self, form: str) -> None:
        self.form = form
        self.pd.meta.note("json_form", form)

    def _handle_side(self, obj: dict) -> None:
        meta = self.pd.meta
        md = obj.get("metadata")
        if isinstance(md, dict):
            for k, v in list(md.items())[:50]:
                if isinstance(v, (str, int, float, bool)):
                    meta.note(f"metadata.{k}", str(v)[:200])
        vm = obj.get("viztracer_metadata")
        if isinstance(vm, dict) and vm.get("version"):
            meta.note("producer", f"viztracer {vm.get('version')}")
        if isinstance(obj.get("displayTimeUnit"), str):
            meta.note("displayTimeUnit", obj["displayTimeUnit"])
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
        cap = self.chunk
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
                # Blanks before the next event mean nothing (buf[1] is never inside a string):
                # drop them instead of growing, so a gzip of whitespace between events stays
                # one block in memory and ends at the inflate cap (before: the buffer doubled
                # to 256 MB, ~590 MB peak).
                lead = _skip_blanks(buf, 1, n) - 1
                if lead > 0:
                    buf[1 : n - lead] = buf[1 + lead : n]
                    n -= lead
                    continue
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
        ws = WS
        while len(out) < 3 and tries < 4096:
            j = buf.rfind(b"}", 1, pos)
            if j < 0:
                return out
            tries += 1
            k = j + 1
            while k < n and buf[k] in ws:
                k += 1
            if k < n and buf[k] == 0x2C:
                m = _skip_blanks(buf, k + 1, n)
                if m == n or buf[m] == 0x7B:  # the next event, or only blanks so far
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
            nxt = buf.find(b"{", cut, n)
            if nxt < 0:  # the next event is not read yet: drop the comma and blanks
                return 1
            rem = n - nxt
            buf[1 : 1 + rem] = buf[nxt:n]
            return 1 + rem
        if not cands:
            # No boundary between events: the array may have closed (its last event, then
            # blanks); decode it rather than growing the buffer over what follows.
            return None if self._closed_at_array_end(buf, n) else -1
        # No cut decoded: the bytes are bad somewhere. Split exactly and salvage.
        data = bytes(buf[1:n])
        consumed, closed = self._salvage(data, final=False)
        if closed is not None:
            self._after_array(data[closed:])
            return None
        if consumed == 0:
            return -1
        rest = data[consumed:].lstrip(WS + b",")
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
            while k > 0 and buf[k] in WS:
                k -= 1
            if buf[k] == 0x7D:
                out.append(j + 1)
            pos = j
        return out

    def _closed_at_array_end(self, buf: bytearray, n: int) -> bool:
        """Decode up to the array's likely end (the last ``}]``, then the one before) and hand
        what follows it on; False when neither decodes (the caller salvages or reads on)."""
        for k in self._array_ends(buf, n):
            try:
                end = self._decode(memoryview(buf)[:k])
            except _Fail:
                continue
            self._after_array(bytes(buf[k if end is None else end : n]))
            return True
        return False

    def _final(self, buf: bytearray, n: int) -> None:
        # Usually the array ends in the last few bytes: try the last "}]" in place, so the
        # events are decoded once (a wrong guess fails, or names the real end).
        if not self._closed_at_array_end(buf, n):
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
                if self.form == "object":
                    self._truncated("the JSON object ends inside traceEvents (cut short?)")
                return
        consumed, closed = self._salvage(buf, final=True)
        if closed is not None:
            self._after_array(buf[closed:])
            if self.pd.skipped_events:
                self.pd.mark_partial()
            return
        self._truncated(f"truncated JSON: the last {len(buf) - consumed} bytes hold no complete event")

    def _truncated(self, why: str) -> None:
        self.pd.mark_partial()
        self.pd.warn(why)

    def _decode(self, data: bytes) -> int | None:
        """Decode ``[...]`` and consume it. Returns None, or the index just past the array's
        closing bracket when the data goes on after it. Raises _Fail when it does not decode."""
        try:
            events = DEC_LIST.decode(data)
        except msgspec.ValidationError:
            raise _Fail() from None
        except msgspec.DecodeError as e:
            m = _TRAILING.search(str(e))
            if not m:
                raise _Fail() from None
            j = int(m.group(1)) - 2
            while j > 0 and data[j] in WS:
                j -= 1
            if data[j : j + 1] != b"]":
                raise _Fail() from None
            try:
                events = DEC_LIST.decode(data[: j + 1])
            except msgspec.DecodeError:
                raise _Fail() from None
            self.sink.consume(events)
            return j + 1
        self.sink.consume(events)
        return None

    def _salvage(self, buf: bytes, final: bool) -> tuple[int, int | None]:
        """Exact scan: decode each complete top-level element on its own.

        Returns (bytes consumed, index just past the array's closing bracket or None)."""
        depth = 0
        start = -1
        consumed = 0
        good: list[Ev] = []
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
                    self.sink.consume(good)
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
                    self.sink.consume(good)
                    good = []
        self.sink.consume(good)
        if final:
            tail = buf[consumed:].strip(WS + b",")
            if tail:
                self.pd.skip()
                self.problem("incomplete event at the end of the file")
        return consumed, None

    def _one(self, raw: bytes) -> Ev | None:
        try:
            return DEC_ONE.decode(raw)
        except msgspec.DecodeError:
            pass
        # Invalid UTF-8, lone surrogates, out-of-range numbers, odd types: the stdlib is laxer.
        try:
            obj = json.loads(raw.decode("utf-8", "replace"))
        except (ValueError, RecursionError):
            self.pd.skip()
            self.problem("malformed event")
            return None
        if not isinstance(obj, dict):
            self.pd.skip()
            self.problem("array element is not an event object")
            return None
        ev = Ev()
        ph = obj.get("ph")
        ev.ph = ph if isinstance(ph, str) else ""
        ev.name = clean(obj.get("name"))
        for k in ("pid", "tid"):
            v = obj.get(k)
            setattr(ev, k, v if isinstance(v, (int, float, str)) and not isinstance(v, bool) else None)
        for k in ("ts", "dur"):
            v = obj.get(k)
            setattr(ev, k, num(v) if not isinstance(v, str) else v)
        ev.id = clean(obj.get("id"))
        ev.id2 = clean(obj.get("id2"))
        a = obj.get("args")
        if isinstance(a, dict):
            try:
                ev.args = msgspec.Raw(msgspec.json.encode(clean(a)))
            except (TypeError, ValueError, OverflowError, msgspec.EncodeError):
                pass
        return ev

    def _after_array(self, rest: bytes) -> None:
        """What follows the event array: ``}`` or ``, "key": value, ... }``."""
        rest = rest.strip()
        if rest[:1] == b"]":
            rest = rest[1:].lstrip()
        if self.form == "array":
            if rest:
                self.pd.warn("bytes after the event array were ignored")
            return
        while not self.eof and len(rest) <= MAX_SIDE_BYTES:
            rest = (rest + self._read()).lstrip(WS)  # leading blanks are outside any string
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
