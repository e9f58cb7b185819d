"""Per-process memory over time, for the memory lens: ``process_stats`` (every process, every
field the memory lens reads), ftrace ``rss_stat``, the app's atrace heap counters, and lmkd's
kills — named as trace_processor names the counter tracks (``mem.rss``, ``mem.rss.anon``,
``mem.rss.file``, ``mem.rss.shmem``, ``mem.swap``, ``mem.rss.watermark``; ``Heap size (KB)``
and the other atrace counters as the app wrote them).

``rss_stat`` as trace_processor's ``RssStatTracker`` reads it: ``member`` 0 file, 1 anon,
2 swap, 3 shmem pages; ``size`` in bytes; ``curr`` set means the counter is of the event's own
process, otherwise of the process whose ``mm_id`` an earlier ``curr`` event tied it to (an
``mm_id`` never tied to a process is counted and dropped). A kill by lmkd is its atrace counter
``kill_one_process`` (value: the pid killed), as trace_processor's systrace parser reads it.

``mem.*`` values are kept in MiB (KiB / 1024, bytes / 2²⁰) like the rest of PerfScout's memory
counters; an atrace counter keeps the app's own unit (``Heap size (KB)`` in KB).
"""

from __future__ import annotations

import re

from nodes.perf.counter_names import is_counter_name
from nodes.perf.model import MAX_COUNTER_POINTS, PerfData

_PROCESS_FIELDS = (
    ("vm_rss_kb", "mem.rss"), ("rss_anon_kb", "mem.rss.anon"), ("rss_file_kb", "mem.rss.file"),
    ("rss_shmem_kb", "mem.rss.shmem"), ("vm_swap_kb", "mem.swap"), ("vm_hwm_kb", "mem.rss.watermark"),
)
_RSS_MEMBERS = {0: "mem.rss.file", 1: "mem.rss.anon", 2: "mem.swap", 3: "mem.rss.shmem"}
#: At most this many points per (process, counter): the model's cap for every counter series.
MAX_POINTS = MAX_COUNTER_POINTS
#: An atrace counter the memory lens shows: a memory-looking name (heap, memory, rss, pss, …)
#: that reads as a counter name — not a log line that happened to arrive as one.
_MEMORY_NAME = re.compile(r"(heap|memory|mem\b|rss|pss|swap)", re.I)


class MemoryState:
    def __init__(self) -> None:
        #: (pid or tid for rss_stat until finish, counter) → [(ts ns, MiB)]
        self.series: dict[tuple[int, str], list[tuple[int, float]]] = {}
        self.rss_by_tid: dict[tuple[int, str], list[tuple[int, float]]] = {}
        self.mm_owner: dict[int, int] = {}  # mm_id → tid that reported it as its own
        self.rss_unowned = 0
        self.dropped = 0

    def _add(self, table, key, ts: int, value: float) -> None:
        pts = table.setdefault(key, [])
        if len(pts) < MAX_POINTS:
            pts.append((ts, value))
        else:
            self.dropped += 1

    def process_stats(self, stats, ts: int) -> None:
        for p in stats.processes:
            for field, name in _PROCESS_FIELDS:
                if p.HasField(field):
                    self._add(self.series, (p.pid, name), ts, getattr(p, field) / 1024.0)

    def rss_stat(self, ts: int, tid: int, e) -> None:
        self.rss_values(ts, tid, e.member, e.size, e.curr, e.mm_id if e.HasField("mm_id") else None)

    def rss_values(self, ts: int, tid: int, member: int, size: int, curr: int, mm_id: int | None) -> None:
        """One ``rss_stat`` event's fields (``mm_id`` None when the event has none)."""
        name = _RSS_MEMBERS.get(member)
        if name is None:
            return
        if curr:
            if mm_id is not None:
                self.mm_owner[mm_id] = tid
            owner = tid
        else:
            owner = self.mm_owner.get(mm_id or 0)
            if owner is None:
                self.rss_unowned += 1
                return
        self._add(self.rss_by_tid, (owner, name), ts, size / 1048576.0)

    def _extend(self, key, pts: list[tuple[int, float]]) -> None:
        """``_add`` of each point of ``pts`` in turn, in one step: the first that fit are kept."""
        if not pts:
            return  # adds nothing, so makes no series
        have = self.series.setdefault(key, [])
        room = MAX_POINTS - len(have)
        if room >= len(pts):
            have.extend(pts)
        else:
            have.extend(pts[:max(room, 0)])
            self.dropped += len(pts) - max(room, 0)

    def finish(self, data: PerfData, ftrace_counters: dict, pid_for) -> None:
        """Into ``data.memory``: process_stats and rss_stat series, atrace memory counters, kills.

        Each series is what its sources add in turn — process_stats, then each thread's
        rss_stat under its process, then the atrace counter — the first :data:`MAX_POINTS`
        kept, sorted by (time, value); a source list is added in one step, its thread's
        process asked once (tests/test_perfetto_memory_merge.py checks it against the
        point-by-point merge)."""
        kills, memory_counters, skipped_names = _split_counters(ftrace_counters)
        owners: dict[int, int] = {}
        for (tid, name), pts in self.rss_by_tid.items():
            pid = owners.get(tid)
            if pid is None:
                pid = owners[tid] = pid_for(tid)
            self._extend((pid, name), pts)
        for key, pts in memory_counters:
            self._extend(key, pts)  # as the app wrote them: "Heap size (KB)" stays in KB
        out = []
        for key, pts in self.series.items():
            if len(pts) == 1:  # most series: one process_stats snapshot of a process
                (ts, v), = pts
                out.append((key, [(ts / 1000.0, v)]))
            else:
                out.append((key, [(ts / 1000.0, v) for ts, v in sorted(pts)]))
        data.add_memory_series_many(out)
        data.add_lmk_kills(kills)
        data.warn_counts(
            (self.rss_unowned, "rss_stat: {n:,} events of another process's mm_id never tied to a process, dropped"),
            (skipped_names, "{n} atrace counter(s) named like log lines, not memory counters, were left out"),
            (self.dropped, f"memory counters: {{n:,}} points beyond {MAX_POINTS:,} per series were not kept"),
        )


def _split_counters(ftrace_counters: dict):
    """The atrace counters the memory lens reads: lmkd's kills (ts µs, pid), the memory
    counters as ((tgid, name), points), and how many memory-looking names were not counter
    names."""
    kills: list[tuple[float, int]] = []
    memory: list = []
    skipped_names = 0
    for (tgid, name), pts in ftrace_counters.items():
        if name == "kill_one_process":
            kills += [(ts / 1000.0, int(v)) for ts, v in pts]
            continue
        if not _MEMORY_NAME.search(name):
            continue
        if not is_counter_name(name):
            skipped_names += 1
            continue
        memory.append(((tgid, name), pts))
    return kills, memory, skipped_names
