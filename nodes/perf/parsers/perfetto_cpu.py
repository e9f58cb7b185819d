"""Per-CPU facts from ftrace: which CPUs the trace covers, ``cpu_frequency`` (kHz) and
``cpu_idle`` (the idle state entered; 4294967295 = left idle), as trace_processor keeps them
in its ``cpu_frequency`` / ``cpu_idle`` counter tracks (``linux.cpu.frequency`` and
``linux.cpu.idle`` in its stdlib).

Fed from the ftrace bundle loop (``perfetto_ftrace.FtraceState.bundle``), one call per event.
"""

from __future__ import annotations

from nodes.perf.model import PerfData

#: cpu_idle's "left idle" state (PWR_EVENT_EXIT, (u32)-1).
IDLE_EXIT = 4294967295
#: At most this many points are kept per CPU and counter (bounded memory).
MAX_POINTS = 200_000


class CpuState:
    def __init__(self) -> None:
        self.cpus: set[int] = set()
        self.frequency: dict[int, list[tuple[int, int]]] = {}
        self.idle: dict[int, list[tuple[int, int]]] = {}
        self.dropped = 0

    def _add(self, table: dict[int, list[tuple[int, int]]], cpu: int, ts: int, value: int) -> None:
        pts = table.setdefault(cpu, [])
        if len(pts) < MAX_POINTS:
            pts.append((ts, value))
        else:
            self.dropped += 1

    def frequency_event(self, ts: int, e) -> None:
        self._add(self.frequency, e.cpu_id, ts, e.state)

    def idle_event(self, ts: int, e) -> None:
        self._add(self.idle, e.cpu_id, ts, e.state)

    def finish(self, data: PerfData) -> None:
        if self.cpus:
            data.set_cpu_count(max(self.cpus) + 1)
        for cpu, pts in self.frequency.items():
            data.add_cpu_frequency(cpu, [(ts / 1000.0, float(v)) for ts, v in sorted(pts)])
        for cpu, pts in self.idle.items():
            data.add_cpu_idle(cpu, [(ts / 1000.0, v) for ts, v in sorted(pts)])
        if self.dropped:
            data.warn(f"cpu frequency/idle: {self.dropped:,} events beyond {MAX_POINTS:,} per CPU were not kept")
