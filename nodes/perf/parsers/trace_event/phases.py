"""Per-phase handlers: decoded events → PerfData's columnar store.

``X`` slices go straight into the columns and ``B``/``E`` into per-thread buffers (matched at
the end, nodes/perf/parsers/trace_event/nesting.py) in a lean hot loop; the rarer phases are
dispatched: instants (and the page marks, with their args), ``C`` counters, ``M`` names,
``b``/``e``/``S``/``F`` async spans (matched at the end), ``P`` V8 profile chunks
(nodes/perf/parsers/trace_event/v8_profile.py). Timestamps are microseconds."""

from __future__ import annotations

import math
from array import array
from typing import Any

import msgspec

from nodes.perf.model import PerfData
from nodes.perf.parsers import chrome_scroll
from nodes.perf.parsers.trace_event.events import (
    ASYNC_PH,
    INSTANT_PH,
    KEEP_INSTANTS,
    MARK_NAMES,
    MAX_ASYNC_EVENTS,
    MAX_MARKS,
    Ev,
    clean_str,
    name_of,
    num,
)
from nodes.perf.parsers.trace_event.v8_profile import V8Profile


class EventSink:
    def __init__(self, pd: PerfData):
        self.pd = pd
        self.events_seen = 0
        self.stacks: dict[tuple[int, int], tuple[array, array]] = {}
        #: async begin/end events, matched at the end in time order: (ts, seq, is_begin, key, name, pid, cat)
        self.async_events: list[tuple] = []
        self.counter_pid: dict[str, int] = {}
        self.str_ids: dict[str, int] = pd.strings.ids
        #: (pid, tid) → (columns, their appenders): a thread's fill kit, made once per thread.
        self.fill: dict[tuple[int, int], tuple] = {}
        self.profiles: dict[tuple[int, str], V8Profile] = {}
        self.min_ts = math.inf
        self.max_ts = -math.inf
        self.problems: dict[str, int] = {}
        #: (pid, tid) → (ts, dur, tdur) of X events that carry Chrome's thread time (``tdur``).
        self.thread_time: dict[tuple[int, int], tuple[array, array, array]] = {}

    def problem(self, what: str, n: int = 1) -> None:
        self.problems[what] = self.problems.get(what, 0) + n

    # --- events -------------------------------------------------------------------------
    def consume(self, events: list[Ev]) -> None:
        """The hot loop: X slices straight into the columns, B/E into per-thread buffers;
        the rarer phases dispatched.

        Kept lean on purpose (it runs once per event): ts/dur types are checked by the
        ``array('d')`` appends themselves (a TypeError sends that one event to the careful
        path), pid/tid only when the thread changes, names only when first seen."""
        if not events:
            return
        # The event cap (nodes/perf/limits.py), once per decoded block: what the columns and
        # the B/E and async buffers hold. CapacityReached ends the read (framing.py run()).
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

    def _consume_fast(self, events: list[Ev], start: int) -> int:
        pd = self.pd
        slice_columns = pd.slice_columns
        fill = self.fill
        fill_get = fill.get
        stacks = self.stacks
        sid_get = self.str_ids.get
        intern = pd.strings.intern
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
                        kit = fill_get((pid, tid))
                        if kit is None:
                            cols = slice_columns(pid, tid)
                            kit = fill[(pid, tid)] = (cols, *cols.appenders())
                        cols, ts_add, dur_add, name_add = kit
                        last_pid = pid
                        last_tid = tid
                    name = e.name
                    nid = sid_get(name)
                    if nid is None:
                        if name.__class__ is not str_:
                            return self._index(events, e, start)
                        nid = intern(name)
                    ts_add(e.ts)
                    try:
                        dur_add(e.dur)
                    except TypeError:
                        cols.trim()
                        return self._index(events, e, start)
                    name_add(nid)
                    if e.tdur is not None:
                        self._tdur(pid, tid, e)
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
                            nid = intern(name)
                    else:
                        nid = -1
                    st[0].append(e.ts)
                    st[1].append(nid)
                else:
                    other(e)
        except TypeError:
            return self._index(events, e, start)
        return len(events)

    def _tdur(self, pid: int, tid: int, e: Ev) -> None:
        """Keep an X event's thread time for the per-thread sum at the end (a bad value is skipped)."""
        try:
            td, ts, dur = float(e.tdur), float(e.ts), float(e.dur)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return
        if not (math.isfinite(td) and math.isfinite(ts) and math.isfinite(dur)) or td < 0:
            return
        cols = self.thread_time.get((pid, tid))
        if cols is None:
            cols = self.thread_time[(pid, tid)] = (array("d"), array("d"), array("d"))
        cols[0].append(ts)
        cols[1].append(dur)
        cols[2].append(td)

    def thread_cpu_us(self) -> dict[tuple[int, int], tuple[float, int]]:
        """Per thread, the thread time of its top-level slices (an X event inside no earlier
        X event of the thread), as catapult's thread-time view sums ``cpuDuration``; and how many."""
        out: dict[tuple[int, int], tuple[float, int]] = {}
        for key, (ts, dur, td) in self.thread_time.items():
            order = sorted(range(len(ts)), key=lambda i: (ts[i], -dur[i]))
            end = -math.inf
            total, n = 0.0, 0
            for i in order:
                if ts[i] >= end:
                    total += td[i]
                    n += 1
                    end = ts[i] + dur[i]
            out[key] = (total, n)
        return out

    @staticmethod
    def _index(events: list[Ev], e: Ev | None, start: int) -> int:
        """Where ``e`` is (by identity: Structs compare by value). Only on the rare path."""
        for k in range(start, len(events)):
            if events[k] is e:
                return k
        return len(events)

    def _careful(self, e: Ev) -> None:
        if e.ph != "X":
            self._other(e)
            return
        norm = self._normalize_x(e)
        if norm is None:
            return
        ts, dur, pid, tid, name = norm
        self.pd.slice_columns(pid, tid).add(ts, dur, self.pd.intern(name))

    def _normalize_x(self, e: Ev) -> tuple[float, float, int, int, str] | None:
        ts = num(e.ts)
        if ts is None:
            self.problem("event without a usable ts (ph 'X')")
            self.pd.skip()
            return None
        dur = num(e.dur)
        if dur is None:
            dur = 0.0
            self.problem("X event without dur (taken as 0)")
        elif dur < 0.0:
            dur = 0.0
            self.problem("X event with a negative dur (taken as 0)")
        pid = e.pid if e.pid.__class__ is int else self._id(e.pid)
        tid = e.tid if e.tid.__class__ is int else (pid if e.tid is None else self._id(e.tid))
        name = e.name if e.name.__class__ is str else name_of(e.name)
        return ts, dur, pid, tid, name

    def _other(self, e: Ev) -> None:
        ph = e.ph
        if ph == "M":
            self._meta(e)
            return
        if not ph or ph.__class__ is not str:
            self.problem("event without a phase (ph)")
            self.pd.skip()
            return
        ts = e.ts
        if ts.__class__ is not float:
            ts = num(ts)
            if ts is None:
                self.problem(f"event without a usable ts (ph {name_of(ph)[:8]!r})")
                self.pd.skip()
                return
        pid = e.pid if e.pid.__class__ is int else self._id(e.pid)
        tid = e.tid if e.tid.__class__ is int else (pid if e.tid is None else self._id(e.tid))
        name = e.name if e.name.__class__ is str else name_of(e.name)
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
        elif ph in INSTANT_PH:
            self.pd.instants.add(ts, pid, tid, name, keep=name in KEEP_INSTANTS)
            if name in MARK_NAMES:
                self._mark(e, ts, pid, tid, name)
        elif ph == "C":
            self._counter(e, pid, ts, name)
        elif ph in ASYNC_PH:
            self._async(e, ph, pid, ts, name)
        elif ph == "P":
            self._profile(e, pid, tid, name)


    def _slice(self, pid: int, tid: int, ts: float, dur: float, name: str) -> None:
        if dur < 0:
            self.problem("E before its B (duration taken as 0)")
            dur = 0.0
        self.pd.slice_columns(pid, tid).add(ts, dur, self.pd.intern(name))
        if ts + dur > self.max_ts:
            self.max_ts = ts + dur

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
                self.pd.meta.note(f"id {i}", v[:80], replace=False)
        return i

    def _args(self, e: Ev) -> Any:
        raw = bytes(e.args)
        if not raw:
            return None
        try:
            return msgspec.json.decode(raw)
        except msgspec.DecodeError:
            return None

    def _meta(self, e: Ev) -> None:
        name = e.name
        if name not in ("process_name", "thread_name", "process_labels"):
            return
        args = self._args(e)
        value = args.get("name") if isinstance(args, dict) else None
        if name == "process_labels" and isinstance(args, dict):
            value = args.get("labels")
            if isinstance(value, str):
                self.pd.meta.note(f"process {e.pid} labels", value[:200])
            return
        if not isinstance(value, str):
            return
        pid = e.pid if e.pid.__class__ is int else self._id(e.pid)
        if name == "process_name":
            self.pd.set_process_name(pid, clean_str(value))
        else:
            tid = e.tid if e.tid.__class__ is int else (pid if e.tid is None else self._id(e.tid))
            self.pd.set_thread_name(pid, tid, clean_str(value))

    def _mark(self, e: Ev, ts: float, pid: int, tid: int, name: str) -> None:
        """A page mark with its args (the frame id, the LCP size, the shift score …)."""
        if len(self.pd.marks) >= MAX_MARKS:
            self.problem("page marks beyond the cap (ignored)")
            return
        args = self._args(e)
        self.pd.marks.add(ts, pid, tid, name, args if isinstance(args, dict) else None)

    def _counter(self, e: Ev, pid: int, ts: float, name: str) -> None:
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
            self.pd.counters.add(series, ts, v)

    def _async(self, e: Ev, ph: str, pid: int, ts: float, name: str) -> None:
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
        if ph in ("b", "e"):
            if name in chrome_scroll.SPAN_NAMES:
                chrome_scroll.record(self.pd, name, ph == "b", key, ts, pid, self._args(e) if ph == "b" else None)
            elif chrome_scroll.is_stage(name):  # EventLatency's stages: no args read
                chrome_scroll.record(self.pd, name, ph == "b", key, ts, pid, {} if ph == "b" else None)

    def _profile(self, e: Ev, pid: int, tid: int, name: str) -> None:
        if name not in ("Profile", "ProfileChunk"):
            return
        args = self._args(e)
        data = args.get("data") if isinstance(args, dict) else None
        if not isinstance(data, dict):
            return
        ident = str(e.id if e.id is not None else e.id2)
        prof = self.profiles.get((pid, ident))
        if prof is None:
            prof = self.profiles[(pid, ident)] = V8Profile(pid, tid)
        if name == "Profile":
            st = data.get("startTime")
            if isinstance(st, (int, float)):
                prof.start = float(st)
            prof.tid = tid
        else:
            prof.add_chunk(data)
