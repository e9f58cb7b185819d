"""``perf script`` text (Linux ``perf record -g`` then ``perf script``): sampled call stacks.

Read as FlameGraph's ``stackcollapse-perf.pl`` reads it (the tool every perf flame graph goes
through; its test inputs and collapsed outputs are the reference, tests/data/perf/SOURCES.md):

* an event line starts a sample: ``comm [pid/]tid [cpu] time: [period] event:`` (the comm may
  hold spaces; without ``pid/`` the pid is unknown and the tid stands for it);
* indented ``addr symbol (module)`` lines follow, the leaf first, until a blank line;
* only the first event type counts (mixing cycles and instructions would mislead); samples of
  other events are counted and named in a warning;
* a symbol loses its ``+0x…`` offset and, as stackcollapse's default "tidy" does, everything
  from the first ``(`` (C++ argument lists; not a Go method like ``net/http.(*Client).Do``),
  quotes, and ``;`` becomes ``:``; an ``[unknown]`` symbol is named ``[<module file>]`` when the
  module is known, else ``[unknown]`` (a Java frame ``Lpkg/Cls;::m`` keeps its ``L``, as the
  collapsed references do).
* a sample ends at a blank line or at the end of the file (stackcollapse-perf.pl drops a last
  sample that no blank line follows; it is kept here).

Weight: a sample of a ``cpu-clock`` / ``task-clock`` event weighs its period (ns of CPU). Other
events' periods are counts (cycles, instructions), not time: then one sample weighs one sampling
period of the ``-F N`` the header's ``# cmdline`` names, and without one the samples are counted
(1 µs each) with a warning — a time is never guessed.
"""

from __future__ import annotations

import os
import re

from nodes.perf.errors import PerfDataError
from nodes.perf.formats import looks_text, open_text
from nodes.perf.model import PerfData

FORMAT = "perf_script"

_EVENT = re.compile(
    r"^(?P<comm>\S.*?)\s+(?P<pid>\d+)(?:/(?P<tid>\d+))?\s+(?:\[(?P<cpu>\d+)\]\s+)?"
    r"(?:(?P<time>\d+\.\d+):\s+)?(?:(?P<period>\d+)\s+)?(?P<event>[^\s:][^\s]*?):\s*(?:\S.*)?$"
)
#: A frame line; old perf versions print it unindented.
_FRAME = re.compile(r"^\s*(?P<pc>[0-9a-fA-F]+)\s+(?P<sym>.+?)\s+\((?P<mod>.*)\)\s*$")
_FREQ = re.compile(r"\s(?:-F|--freq)[ =]?(\d+)\b")
_TIME_EVENTS = ("cpu-clock", "task-clock")
#: At most this many distinct (thread, stack) pairs are kept (bounded memory).
MAX_STACKS = 200_000


def sniff(head: bytes, name: str) -> bool:
    """An event line followed by an indented ``addr symbol (module)`` frame line."""
    if not looks_text(head):
        return False
    lines = head.decode("utf-8", "replace").splitlines()[:400]
    for a, b in zip(lines, lines[1:]):
        if a and not a.startswith(("#", " ", "\t")) and _EVENT.match(a) and _FRAME.match(b):
            return True
    return False


def tidy(sym: str, module: str) -> str | None:
    """A frame's function name as stackcollapse-perf prints it; None for a process-name frame."""
    sym = re.sub(r"\+0x[0-9a-fA-F]+$", "", sym)
    if sym.startswith("("):
        return None
    if sym == "[unknown]":
        base = os.path.basename(module) if module != "[unknown]" else "unknown"
        return f"[{base}]"
    sym = sym.replace(";", ":")
    if not re.search(r"\.\(.*\)\.", sym):
        sym = re.sub(r"\((?!anonymous namespace\)).*", "", sym)
    sym = sym.replace('"', "").replace("'", "")
    return sym


class _Reader:
    def __init__(self) -> None:
        self.event: str | None = None
        self.other_events: dict[str, int] = {}
        self.freq_hz: float | None = None
        self.counts: dict[tuple[str, int, int, tuple[str, ...]], list[float]] = {}
        self.samples = 0
        self.dropped = 0
        self.cur: tuple[str, int, int, float] | None = None
        self.frames: list[str] = []
        #: First and last sample time (s), when the lines carry one.
        self.first: float | None = None
        self.last: float | None = None

    def close(self) -> None:
        if self.cur is not None and self.frames:
            comm, pid, tid, period = self.cur
            key = (comm, pid, tid, tuple(reversed(self.frames)))
            slot = self.counts.get(key)
            if slot is None:
                if len(self.counts) >= MAX_STACKS:
                    self.dropped += 1
                    self.cur, self.frames = None, []
                    return
                slot = self.counts[key] = [0.0, 0]
            slot[0] += period
            slot[1] += 1
            self.samples += 1
        self.cur, self.frames = None, []

    def line(self, line: str) -> None:
        if line.startswith("#"):
            if "cmdline" in line and self.freq_hz is None:
                m = _FREQ.search(line)
                if m and int(m.group(1)) > 0:
                    self.freq_hz = float(m.group(1))
            return
        if not line.strip():
            self.close()
            return
        frame = _FRAME.match(line) if (line[0] in " \t" or self.cur is not None) else None
        if frame is not None or line[0] in " \t":
            if self.cur is not None and frame is not None:
                name = tidy(frame["sym"], frame["mod"])
                if name is not None:
                    self.frames.append(name)
            return
        m = _EVENT.match(line)
        if not m:
            return
        self.close()
        event = m["event"]
        if self.event is None:
            self.event = event
        elif event != self.event:
            self.other_events[event] = self.other_events.get(event, 0) + 1
            return
        if m["time"]:
            t = float(m["time"])
            self.first = t if self.first is None else min(self.first, t)
            self.last = t if self.last is None else max(self.last, t)
        tid = int(m["tid"] or m["pid"])
        pid = int(m["pid"]) if m["tid"] else tid
        period = float(m["period"]) if m["period"] else 1.0
        self.cur = (m["comm"], pid, tid, period)


def parse(path: str) -> PerfData:
    r = _Reader()
    with open_text(path) as f:
        for line in f:
            r.line(line.rstrip("\n"))
    r.close()
    if not r.samples:
        raise PerfDataError(path, "no perf script samples with call stacks (expected 'comm pid time: event:' "
                                  "lines followed by indented frames; record with perf record -g)")
    pd = PerfData(FORMAT, path)
    by_time = r.event in _TIME_EVENTS and any(p != n for p, n in r.counts.values())
    if by_time:
        unit = 1e-3  # period in ns → µs
    elif r.freq_hz:
        unit = None
    else:
        unit = None
        pd.warn(f"perf script: the {r.event} samples carry no time (no cpu-clock period, no -F in the header); "
                "each is counted as 1 µs, so compare the sampled hot spots by their sample counts")
    per_sample_us = 1e6 / r.freq_hz if r.freq_hz else 1.0
    for (comm, pid, tid, frames), (period, n) in r.counts.items():
        if pid == tid or pid not in pd.processes:  # a process is named by its main thread's comm
            pd.set_process_name(pid, comm)
        pd.set_thread_name(pid, tid, comm)
        stack = [pd.frame_id(name) for name in frames]
        weight = period * unit if unit is not None else n * per_sample_us
        pd.add_sample(stack, weight, pid, tid, samples=n)
    if r.first is not None:  # the capture's span: first to last sample
        pd.extend_bounds(r.first * 1e6, r.last * 1e6)
    pd.meta.note("event", r.event or "")
    pd.meta.note("samples", str(r.samples))
    if r.freq_hz:
        pd.meta.note("sampling_hz", f"{r.freq_hz:g}")
    if r.other_events:
        named = ", ".join(f"{e} ×{n}" for e, n in sorted(r.other_events.items()))
        pd.warn(f"perf script: only the first event type ({r.event}) is read; left out: {named}")
    if r.dropped:
        pd.warn(f"perf script: {r.dropped:,} samples beyond {MAX_STACKS:,} distinct stacks were not kept")
    return pd
