"""Samples CPU %, RSS, threads and I/O of a program's whole process tree at a fixed interval.

Works for any program, Python or not: it is the part of a collection that needs no profiler.
CPU % is computed from each process's CPU-time deltas (not psutil's ``cpu_percent``, which
reports 0 for a process's first sample): a child that lives for one interval still counts.
Walking the tree each tick also tells the runner which children existed, so they can be
stopped even after they left the process group.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import psutil

from nodes.collect.runner import ProcessTree

#: Default seconds between samples.
DEFAULT_INTERVAL_S = 0.1
#: Samples kept at most (a 30 s run at 0.1 s is 300); later ones are dropped, and counted.
MAX_SAMPLES = 20_000

#: Threads of the launched process listed per sample at most.
MAX_THREADS = 64

#: Column order of a sample row (also written into the series file).
COLUMNS = ("t_s", "cpu_pct", "rss_bytes", "threads", "procs", "read_bytes", "write_bytes")


@dataclass
class Series:
    interval_s: float
    start_unix: float
    rows: list[tuple[float, float, int, int, int, int, int]] = field(default_factory=list)
    dropped: int = 0
    #: Highest number of processes seen at once.
    max_procs: int = 0
    #: The launched process's threads at the last sample: tid, name, user_s, system_s.
    threads: list[dict] = field(default_factory=list)

    def column(self, name: str) -> list[float]:
        i = COLUMNS.index(name)
        return [r[i] for r in self.rows]

    def summary(self) -> dict[str, float | int]:
        if not self.rows:
            return {"samples": 0}
        cpu = self.column("cpu_pct")
        rss = self.column("rss_bytes")
        last = self.rows[-1]
        return {
            "samples": len(self.rows),
            "cpu_pct_mean": round(sum(cpu) / len(cpu), 1),
            "cpu_pct_max": round(max(cpu), 1),
            "rss_mb_max": round(max(rss) / 1e6, 1),
            "threads_max": int(max(self.column("threads"))),
            "procs_max": int(self.max_procs),
            "read_mb": round(last[COLUMNS.index("read_bytes")] / 1e6, 3),
            "write_mb": round(last[COLUMNS.index("write_bytes")] / 1e6, 3),
        }


class TreeSampler:
    """A background thread sampling ``tree`` every ``interval_s`` until ``stop()``."""

    def __init__(self, tree: ProcessTree, interval_s: float = DEFAULT_INTERVAL_S):
        self.tree = tree
        self.interval_s = max(0.01, float(interval_s))
        self.series = Series(self.interval_s, time.time())
        self._t0 = time.monotonic()
        self._cpu_prev: dict[int, float] = {}
        self._last_tick = self._t0
        #: Cumulative I/O of processes that already exited, so the totals never go down.
        self._io_done = [0, 0]
        self._io_live: dict[int, tuple[int, int]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="perfscout-sampler", daemon=True)

    def start(self) -> "TreeSampler":
        self.sample()
        self._thread.start()
        return self

    def stop(self) -> Series:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)
        return self.series

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.sample()

    def _snapshot_threads(self) -> None:
        """Per-thread CPU of the launched process (kept from the last sample it was alive)."""
        root = self.tree.root
        if root is None:
            return
        try:
            threads = root.threads()[:MAX_THREADS]
        except psutil.Error:
            return
        snap = []
        for t in threads:
            try:
                with open(f"/proc/{root.pid}/task/{t.id}/comm", encoding="utf-8", errors="replace") as f:
                    name = f.read().strip() or None
            except OSError:
                name = None
            snap.append({"tid": t.id, "name": name, "user_s": t.user_time, "system_s": t.system_time})
        if snap:
            self.series.threads = snap

    def sample(self) -> None:
        """Take one sample now (also called once at start, so a short run has a point)."""
        now = time.monotonic()
        dt = max(1e-6, now - self._last_tick)
        cpu_s = 0.0
        rss = threads = 0
        live_io: dict[int, tuple[int, int]] = {}
        procs = self.tree.members()
        counted = 0
        for p in procs:
            try:
                with p.oneshot():
                    t = p.cpu_times()
                    total = t.user + t.system
                    mem = p.memory_info().rss
                    nth = p.num_threads()
                    born = p.create_time()
                    try:
                        io = p.io_counters()
                        live_io[p.pid] = (io.read_bytes, io.write_bytes)
                    except (psutil.AccessDenied, AttributeError):
                        pass
            except psutil.Error:
                continue
            prev = self._cpu_prev.get(p.pid)
            if prev is None:
                # Born since the last tick: all its CPU time so far falls in this interval.
                prev = 0.0 if born >= time.time() - dt - 0.05 else total
            cpu_s += max(0.0, total - prev)
            self._cpu_prev[p.pid] = total
            rss += mem
            threads += nth
            counted += 1
        for pid, io in self._io_live.items():
            if pid not in live_io:
                self._io_done[0] += io[0]
                self._io_done[1] += io[1]
        self._io_live = live_io
        read = self._io_done[0] + sum(v[0] for v in live_io.values())
        write = self._io_done[1] + sum(v[1] for v in live_io.values())
        self._last_tick = now
        self._snapshot_threads()
        self.series.max_procs = max(self.series.max_procs, counted)
        if counted == 0:
            return
        if len(self.series.rows) >= MAX_SAMPLES:
            self.series.dropped += 1
            return
        first = not self.series.rows
        cpu_pct = 0.0 if first else round(100.0 * cpu_s / dt, 1)
        self.series.rows.append((round(now - self._t0, 4), cpu_pct, rss, threads, counted, read, write))
