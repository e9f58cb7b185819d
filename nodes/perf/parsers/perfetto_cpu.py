"""Per-CPU facts from ftrace: which CPUs the trace covers, ``cpu_frequency`` (kHz) and
``cpu_idle`` (the idle state entered; 4294967295 = left idle), as trace_processor keeps them
in its ``cpu_frequency`` / ``cpu_idle`` counter tracks (``linux.cpu.frequency`` and
``linux.cpu.idle`` in its stdlib).

Fed from the ftrace bundle loop (``perfetto_ftrace.FtraceState.bundle``), one call per event,
and from its batches (``perfetto_ftrace_batch``, :meth:`CpuState.extend_runs`); kept as
columns (perfetto_series.py), handed to PerfData as columns too (model.py ``PointSeries``).
"""

from __future__ import annotations

import numpy as np

from nodes.perf.model import PerfData, PointSeries
from nodes.perf.parsers.perfetto_series import SeriesTable, sort_series, sort_series_python

#: cpu_idle's "left idle" state (PWR_EVENT_EXIT, (u32)-1).
IDLE_EXIT = 4294967295
#: At most this many points are kept per CPU and counter (bounded memory).
MAX_POINTS = 200_000


class CpuState:
    def __init__(self) -> None:
        self.cpus: set[int] = set()
        #: per CPU, (ts ns, kHz) and (ts ns, state) in arrival order
        self.frequency = SeriesTable("I")  # the events' fields are uint32
        self.idle = SeriesTable("I")
        self.dropped = 0

    def _add(self, table: SeriesTable, cpu: int, ts: int, value: int) -> None:
        if not table.add(cpu, ts, value, MAX_POINTS):
            self.dropped += 1

    def frequency_event(self, ts: int, e) -> None:
        self._add(self.frequency, e.cpu_id, ts, e.state)

    def idle_event(self, ts: int, e) -> None:
        self._add(self.idle, e.cpu_id, ts, e.state)

    def finish(self, data: PerfData) -> None:
        if self.cpus:
            data.set_cpu_count(max(self.cpus) + 1)
        for table, add, dtype in ((self.frequency, data.add_cpu_frequency, np.float64),
                                  (self.idle, data.add_cpu_idle, np.int64)):
            for cpu, ts, value in _sorted(table):
                if isinstance(ts, list):  # a time beyond int64: as the tuples were made
                    add(cpu, [(t / 1000.0, float(v) if dtype is np.float64 else v) for t, v in zip(ts, value)])
                else:
                    add(cpu, PointSeries(ts / 1000.0, value.astype(dtype)))
        self.frequency, self.idle = SeriesTable("I"), SeriesTable("I")  # in PerfData now: freed
        if self.dropped:
            data.warn(f"cpu frequency/idle: {self.dropped:,} events beyond {MAX_POINTS:,} per CPU were not kept")


def _sorted(table: SeriesTable):
    """(cpu, ts, value) per CPU in order, each sorted by (ts, value)."""
    n = len(table.count)
    cols = table.columns()
    if cols is None:
        bounds, ts, value = sort_series_python(n, table.sid, table.ts, table.value)
    else:
        bounds, ts, value = sort_series(n, *cols)
        bounds = bounds.tolist()
    for cpu, i in table.ids.items():
        yield cpu, ts[bounds[i]:bounds[i + 1]], value[bounds[i]:bounds[i + 1]]
