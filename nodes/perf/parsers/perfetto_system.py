"""Process and system facts: names (process_tree), memory and CPU over time (process_stats,
sys_stats), and what device wrote the trace (system_info).

Counters are collected per process here and only the ones about the processes the
analysis focuses on are written out at the end (see ``perfetto.parse``): a system trace has
hundreds of processes, and a report with hundreds of RSS series helps nobody.
"""

from __future__ import annotations

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

from nodes.perf.model import MAX_COUNTER_POINTS, PerfData
from nodes.perf.parsers import perfetto_process_stats as process_stats
from nodes.perf.parsers.perfetto_wire import text

#: (pid or None for system-wide, counter name) → [(ts_ns, value)]
Counters = dict[tuple[int | None, str], list[tuple[int, float]]]

_MEMINFO_KEEP = {
    "MEMINFO_MEM_AVAILABLE": "mem.available",
    "MEMINFO_MEM_FREE": "mem.free",
    "MEMINFO_CACHED": "mem.cached",
    "MEMINFO_SWAP_FREE": "mem.swap_free",
}


class SystemState:
    def __init__(self) -> None:
        self.tgid_of: dict[int, int] = {}
        self.counters: Counters = {}
        self.units: dict[tuple[int | None, str], str] = {}
        self._last_cpu: tuple[int, int] | None = None  # (busy ns, total ns) of the last sample
        self.processes_seen = 0

    def _add(self, pid: int | None, name: str, ts: int, value: float, unit: str) -> None:
        pts = self.counters.setdefault((pid, name), [])
        if len(pts) < MAX_COUNTER_POINTS:
            pts.append((ts, value))
        self.units[(pid, name)] = unit

    def process_tree(self, tree, data: PerfData) -> None:
        # Each field read once (a upb attribute read is the cost here: a system trace repeats
        # its whole tree, ~80 processes and ~350 threads, in every snapshot).
        tgid_of = self.tgid_of
        name_process, name_thread = data.set_process_name, data.set_thread_name
        processes = tree.processes
        self.processes_seen += len(processes)
        for p in processes:
            pid = p.pid
            cmdline = p.cmdline
            if cmdline:
                name = text(cmdline[0])
                if name:
                    # Android app processes are named by package; native ones by their binary path.
                    name_process(pid, name)
            tgid_of[pid] = pid
        for t in tree.threads:
            tid, tgid = t.tid, t.tgid
            tgid_of[tid] = tgid
            name = text(t.name)
            if name:
                name_thread(tgid, tid, name)

    def process_rows(self, rows: process_stats.Rows, ts: int) -> None:
        """Each process' ``mem.rss`` and ``mem.rss.anon`` (the first two of
        perfetto_process_stats.FIELDS) of a snapshot's rows, in MiB."""
        names, counters, units = process_stats.NAMES, self.counters, self.units
        for pid, k, value in zip(*rows):
            if k < 2:  # _add, inline
                key = (pid, names[k])
                pts = counters.get(key)
                if pts is None:
                    counters[key] = [(ts, value / 1024.0)]  # MAX_COUNTER_POINTS is over 0
                elif len(pts) < MAX_COUNTER_POINTS:
                    pts.append((ts, value / 1024.0))
                units[key] = "MB"

    def sys_stats(self, s, ts: int) -> None:
        for m in s.meminfo:
            try:
                key = pb.MeminfoCounters.Name(m.key)
            except ValueError:
                continue
            name = _MEMINFO_KEEP.get(key)
            if name:
                self._add(None, name, ts, m.value / 1024.0, "MB")
        if s.cpu_stat:
            busy = total = 0
            for c in s.cpu_stat:
                idle = c.idle_ns + c.io_wait_ns
                work = (
                    c.user_ns + c.user_nice_ns + c.system_mode_ns + c.irq_ns + c.softirq_ns + c.steal_ns
                )
                busy += work
                total += work + idle
            if self._last_cpu is not None and total > self._last_cpu[1]:
                pct = 100.0 * (busy - self._last_cpu[0]) / (total - self._last_cpu[1])
                self._add(None, "cpu.usage", ts, max(0.0, min(100.0, pct)), "%")
            self._last_cpu = (busy, total)

    @staticmethod
    def system_info(info, data: PerfData) -> None:
        if "/" in info.android_build_fingerprint:  # emulators put an error text here
            data.meta.note("android_build", info.android_build_fingerprint)
        if info.android_sdk_version:
            data.facts.android_sdk = int(info.android_sdk_version)
        if info.HasField("utsname"):
            u = info.utsname
            data.facts.kernel = f"{u.sysname} {u.release} {u.machine}".strip()
        if info.tracing_service_version:
            data.meta.note("perfetto_version", info.tracing_service_version)
