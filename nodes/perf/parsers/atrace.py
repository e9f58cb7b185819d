"""Android atrace / systrace ftrace text: ``tracing_mark_write`` slices, counters, async spans,
plus ``sched_switch`` / ``sched_wakeup`` for thread states.

Accepted wrappers: plain ftrace text (``atrace`` / ``adb shell atrace …`` output, the
``# tracer: nop`` header optional), the ``TRACE:`` prefix with zlib-compressed data
(``atrace -z``), and systrace's HTML report (the ftrace text inside its
``<script class="trace-data">`` blocks). Android systrace JSON carries the same text in its
``systemTraceEvents`` key; the Trace Event reader hands it to :func:`parse_text_into`.

``tracing_mark_write`` payloads (Android's ``ATRACE_*`` macros and ``android.os.Trace``):
``B|pid|name`` begin, ``E`` / ``E|pid`` end (of the writing thread's innermost slice),
``S|pid|name|cookie`` / ``F|pid|name|cookie`` async begin/end, ``C|pid|name|value`` counter,
``I|pid|name`` instant, ``N|pid|track|name`` track instant, ``G|pid|track|name|cookie`` /
``H|pid|track|cookie`` async-track begin/end. Timestamps are seconds in the text; µs in PerfData.
"""

from __future__ import annotations

import re
import zlib
from typing import Iterable

from nodes.perf.errors import PerfDataError
from nodes.perf.formats import looks_text, max_whole_file, open_text, read_all
from nodes.perf.model import PerfData
from nodes.perf.sched_state import classify, from_text
from nodes.perf.units import counted

FORMAT = "atrace"

_LINE = re.compile(
    r"^\s*(?P<comm>.*?)-(?P<tid>\d+)\s+(?:\(\s*(?P<tgid>[^)]*)\)\s+)?\[(?P<cpu>\d+)\]\s+"
    r"(?:(?P<flags>\S{4,5})\s+)?(?P<ts>\d+\.\d+):\s+(?P<func>[\w.:-]+?):\s?(?P<rest>.*)$",
    re.ASCII,
)
_HEAD_LINE = re.compile(rb"\[\d{3}\]\s+(?:\S{4,5}\s+)?\d+\.\d+: [\w:]+:")
_SCHED_SWITCH = re.compile(
    r"prev_comm=(?P<pcomm>.*?) prev_pid=(?P<ppid>-?\d+) prev_prio=\S+ prev_state=(?P<pstate>\S+) "
    r"==> next_comm=(?P<ncomm>.*?) next_pid=(?P<npid>-?\d+)",
    re.ASCII,
)
_WAKEUP = re.compile(r"comm=(?P<comm>.*?) pid=(?P<pid>\d+)", re.ASCII)
_TRACE_DATA = re.compile(
    rb'<script class="trace-data" type="application/text">(.*?)</script>', re.S
)


def sniff(head: bytes, name: str) -> bool:
    if head.startswith(b"TRACE:"):
        return True
    low = head[:4096].lower()
    if (b"<html" in low or b"<!doctype html" in low) and (
        b"trace-data" in head or b"systrace" in low or b"trace_viewer" in low or b"catapult" in low
    ):
        return True
    if not looks_text(head):
        return False
    if b"tracing_mark_write" in head or head.lstrip().startswith(b"# tracer:"):
        return True
    return bool(_HEAD_LINE.search(head[:16384]))


def parse(path: str) -> PerfData:
    pd = PerfData(FORMAT, path)
    head = b""
    with open_text(path) as f:
        first = f.read(6)
    if first.startswith("TRACE:"):
        text_lines = _lines_from_compressed(path, pd)
    else:
        from nodes.perf.formats import read_head

        head = read_head(path, 4096).lower()
        if b"<html" in head or b"<!doctype html" in head:
            text_lines = _lines_from_html(path, pd)
        else:
            text_lines = None
    reader = _Reader(pd, path)
    if text_lines is None:
        with open_text(path) as f:
            reader.feed(f)
    else:
        reader.feed(text_lines)
    reader.finish()
    if not reader.matched:
        raise PerfDataError(path, "no ftrace event lines (task-pid [cpu] timestamp: event: …) found")
    if not (pd.slices or pd.counters or pd.async_slices or pd.instants or pd.thread_states):
        raise PerfDataError(path, f"{reader.matched} ftrace lines, but no atrace slices, counters or sched events")
    return pd


def parse_text_into(pd: PerfData, text: str) -> int:
    """Read ftrace text (e.g. systrace JSON's ``systemTraceEvents``) into an existing PerfData.
    Returns the number of event lines understood."""
    reader = _Reader(pd, pd.source)
    reader.feed(text.splitlines())
    reader.finish()
    return reader.matched


def _lines_from_compressed(path: str, pd: PerfData) -> list[str]:
    data = read_all(path)
    body = data[len(b"TRACE:"):].lstrip(b"\r\n")
    if body[:1] == b"\x78":  # zlib
        d = zlib.decompressobj()
        try:
            out = d.decompress(body, max_whole_file())
        except zlib.error as e:
            raise PerfDataError(path, f"corrupt zlib data after TRACE: ({e})") from None
        if d.unconsumed_tail:
            raise PerfDataError(path, "compressed atrace expands beyond the size limit")
        body = out
        pd.meta.note("compressed", "zlib")
    return body.decode("utf-8", "replace").splitlines()


def _lines_from_html(path: str, pd: PerfData) -> list[str]:
    data = read_all(path)
    blocks = [b.strip() for b in _TRACE_DATA.findall(data)]
    texts = [b for b in blocks if b.startswith(b"#") or b"tracing_mark_write" in b[:65536] or _HEAD_LINE.search(b[:65536])]
    if not texts:
        raise PerfDataError(path, "HTML file without systrace ftrace data")
    pd.meta.note("wrapper", "systrace html")
    if len(blocks) > len(texts):
        pd.warn(f"{counted(len(blocks) - len(texts), 'non-ftrace trace-data block')} in the HTML were not read")
    lines: list[str] = []
    for t in texts:
        lines.extend(t.decode("utf-8", "replace").splitlines())
    return lines


class _Reader:
    def __init__(self, pd: PerfData, path: str):
        self.pd = pd
        self.path = path
        self.matched = 0
        self.tgid: dict[int, int] = {}
        self.stacks: dict[int, list[tuple[float, str, int]]] = {}
        self.async_open: dict[tuple[int, str, str], list[tuple[float, str, str]]] = {}
        self.counter_pid: dict[str, int] = {}
        self.unmatched_f = 0
        #: tid → (state, since µs) for sched-derived thread states
        #: tid → (coarse state, since); the coarse state is None once the task died.
        self.state: dict[int, tuple[str | None, float]] = {}
        self.state_acc: dict[int, dict[str, float]] = {}
        self.comms: dict[int, str] = {}
        self.unmatched_e = 0
        self.bad_payload = 0
        self.min_ts: float | None = None
        self.max_ts: float | None = None

    def feed(self, lines: Iterable[str]) -> None:
        match = _LINE.match
        for line in lines:
            if not line or line[0] == "#":
                continue
            m = match(line)
            if m is None:
                continue
            self.matched += 1
            try:
                ts = float(m.group("ts")) * 1e6
            except ValueError:
                continue
            tid = int(m.group("tid"))
            if self.min_ts is None or ts < self.min_ts:
                self.min_ts = ts
            if self.max_ts is None or ts > self.max_ts:
                self.max_ts = ts
            tg = m.group("tgid")
            if tg and tg.strip().isascii() and tg.strip().isdigit():
                self.tgid.setdefault(tid, int(tg))
            comm = m.group("comm").strip()
            if comm and comm != "<...>" and tid not in self.comms:
                self.comms[tid] = comm
            func = m.group("func")
            rest = m.group("rest")
            if func == "tracing_mark_write" or func == "print" or func == "0":
                if rest.startswith("tracing_mark_write: "):
                    rest = rest[len("tracing_mark_write: "):]
                self._mark(tid, ts, rest)
            elif func == "sched_switch":
                self._switch(ts, rest)
            elif func == "sched_waking":
                # as trace_processor's systrace_line_parser.cc: sched_waking makes a blocked
                # thread runnable; sched_wakeup(_new) are instants there, not thread states
                w = _WAKEUP.search(rest)
                if w:
                    self._to_state(int(w.group("pid")), "runnable", ts, only_from="sleeping")

    # --- tracing_mark_write ----------------------------------------------------------------
    def _mark(self, tid: int, ts: float, payload: str) -> None:
        if not payload:
            return
        kind = payload[0]
        if len(payload) > 1 and payload[1] != "|":
            return  # trace_event_clock_sync: … and other free text
        parts = payload.split("|")
        pd = self.pd
        try:
            if kind == "B":
                pid = int(parts[1]) if len(parts) > 1 and parts[1].strip().isascii() and parts[1].strip().lstrip("-").isdigit() else self.tgid.get(tid, tid)
                name = "|".join(parts[2:]) if len(parts) > 2 else ""
                self.tgid.setdefault(tid, pid)
                self.stacks.setdefault(tid, []).append((ts, name, pid))
            elif kind == "E":
                st = self.stacks.get(tid)
                if not st:
                    self.unmatched_e += 1
                    return
                b_ts, name, pid = st.pop()
                pd.add_slice(pid, tid, b_ts, ts - b_ts, name)
            elif kind == "S" or kind == "F":
                pid = int(parts[1])
                if len(parts) >= 4:
                    name, cookie = "|".join(parts[2:-1]), parts[-1]
                else:
                    name, cookie = (parts[2] if len(parts) > 2 else ""), ""
                self._async(kind == "S", (pid, name, cookie), ts, name, name)
            elif kind == "G" or kind == "H":
                # async spans on a named track: G|pid|track|name|cookie … H|pid|track|cookie
                pid = int(parts[1])
                track, cookie = parts[2], parts[-1]
                name = "|".join(parts[3:-1]) or track
                self._async(kind == "G", (pid, "\x00" + track, cookie), ts, track, name)
            elif kind == "C":
                pid = int(parts[1])
                name = parts[2]
                value = float(parts[3])
                first = self.counter_pid.setdefault(name, pid)
                pd.add_counter(name if first == pid else f"{name} (pid {pid})", ts, value)
            elif kind == "I":
                name = "|".join(parts[2:])
                pd.instants.add(ts, int(parts[1]), tid, name)
            elif kind == "N":
                name = "|".join(parts[3:])
                pd.instants.add(ts, int(parts[1]), tid, f"{parts[2]}: {name}")
        except (IndexError, ValueError):
            self.bad_payload += 1

    def _async(self, begin: bool, key: tuple[int, str, str], ts: float, track: str, name: str) -> None:
        if begin:
            self.async_open.setdefault(key, []).append((ts, track, name))
            return
        st = self.async_open.get(key)
        if not st:
            self.unmatched_f += 1
            return
        b_ts, b_track, b_name = st.pop(0)
        if not st:
            del self.async_open[key]
        self.pd.add_async_slice(key[0], b_track, b_ts, ts - b_ts, b_name)

    # --- scheduler -------------------------------------------------------------------------
    def _switch(self, ts: float, rest: str) -> None:
        m = _SCHED_SWITCH.search(rest)
        if not m:
            return
        prev, nxt = int(m.group("ppid")), int(m.group("npid"))
        pstate = m.group("pstate")
        if prev:
            self.comms.setdefault(prev, m.group("pcomm"))
            # decoded as trace_processor reads systrace text ("D|K" is DK); a dead task (X, Z,
            # x) is in no total, as in the Perfetto reader
            self._to_state(prev, classify(from_text(pstate))[0], ts)
        if nxt:
            self.comms.setdefault(nxt, m.group("ncomm"))
            self._to_state(nxt, "running", ts)

    def _to_state(self, tid: int, state: str | None, ts: float, only_from: str | None = None) -> None:
        cur = self.state.get(tid)
        if cur is not None:
            if only_from is not None and cur[0] != only_from:
                return
            if cur[0] is not None:
                acc = self.state_acc.setdefault(tid, {})
                acc[cur[0]] = acc.get(cur[0], 0.0) + max(0.0, ts - cur[1])
        elif only_from is not None:
            pass
        self.state[tid] = (state, ts)

    # --- the end ---------------------------------------------------------------------------
    def finish(self) -> None:
        pd = self.pd
        end = self.max_ts or 0.0
        unclosed = 0
        for tid, st in self.stacks.items():
            for b_ts, name, pid in st:
                pd.add_slice(pid, tid, b_ts, max(0.0, end - b_ts), name)
                unclosed += 1
        self.stacks = {}
        open_async = 0
        for (pid, _name, _cookie), st in self.async_open.items():
            for b_ts, track, name in st:
                pd.add_async_slice(pid, track, b_ts, max(0.0, end - b_ts), name)
                open_async += 1
        self.async_open = {}
        for tid, (state, since) in self.state.items():
            if state is None:
                continue
            acc = self.state_acc.setdefault(tid, {})
            acc[state] = acc.get(state, 0.0) + max(0.0, end - since)
        for tid, acc in self.state_acc.items():
            pid = self.tgid.get(tid, tid)
            for state, dur in acc.items():
                pd.add_thread_state(pid, tid, state, dur)
        # names: comm of each thread; a process is named after its main thread (pid == tid)
        for (pid, tid), info in pd.threads.items():
            comm = self.comms.get(tid)
            if comm and not info.name:
                pd.set_thread_name(pid, tid, comm)
            if pid == tid:
                pd.mark_main_thread(pid, tid)  # Android: the main (UI) thread's tid is the pid
                if comm:
                    pd.set_process_name(pid, comm, replace=False)
        if self.min_ts is not None:
            pd.extend_bounds(self.min_ts, end)
        pd.warn_counts(
            (unclosed, "{n} slices never ended: closed at the end of the trace"),
            (self.unmatched_e, "{n} × E without a matching B (the trace started inside them)"),
            (open_async, "{n} async spans never ended: closed at the end of the trace"),
            (self.unmatched_f, "{n} async ends without their begin"),
            (self.bad_payload, "{n} tracing_mark_write payloads could not be read"),
        )
        pd.meta.note("ftrace lines", str(self.matched), replace=False)

