"""Process and system facts: names (process_tree), memory and CPU over time (process_stats,
sys_stats), and what device wrote the trace (system_info).

Counters are collected per process here and only the ones about the processes the
analysis focuses on are written out at the end (see ``perfetto.parse``): a system trace has
hundreds of processes, and a report with hundreds of RSS series helps nobody.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left

import numpy as np
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

from nodes.perf.model import MAX_COUNTER_POINTS, PerfData
from nodes.perf.parsers.perfetto_heap import give_back
from nodes.perf.parsers.perfetto_series import SeriesTable
from nodes.perf.parsers.perfetto_wire import compiled, text

#: (None: system-wide, counter name) → [(ts_ns, value)]; per process: SystemState.process
Counters = dict[tuple[int | None, str], list[tuple[int, float]]]

#: The per-process process_stats counters kept for the counter series (their unit: MB).
_PROCESS_COUNTERS = ("mem.rss", "mem.rss.anon")
PROCESS_UNIT = "MB"

_MEMINFO_KEEP = {
    "MEMINFO_MEM_AVAILABLE": "mem.available",
    "MEMINFO_MEM_FREE": "mem.free",
    "MEMINFO_CACHED": "mem.cached",
    "MEMINFO_SWAP_FREE": "mem.swap_free",
}


def last_word(tids: array, tgids: array) -> tuple[array, array]:
    """(tid, tgid) pairs in arrival order → one pair per tid, its last, sorted by tid."""
    first, at = np.unique(np.frombuffer(tids, np.int64)[::-1], return_index=True)
    out_tids, out_tgids = array("q"), array("q")
    out_tids.frombytes(memoryview(first).cast("B"))  # read in place: no bytes copy between
    del first
    out_tgids.frombytes(memoryview(np.ascontiguousarray(np.frombuffer(tgids, np.int64)[::-1][at])).cast("B"))
    return out_tids, out_tgids


class ThreadGroups:
    """tid → tgid as the process trees said it (the last snapshot's word), read back as the dict
    it replaced was (:meth:`get`), merged over ``others`` (tids no tree names, the tree's word
    first).

    Two sorted int64 columns, 16 bytes a thread, instead of a dict of int objects (~110 bytes a
    thread: 167 MB for the 1.4 M threads of the 1 GB benchmark trace, tracemalloc). A reader
    asks about the few threads its events name (~40 k of 180 k at 100 MB), each a binary search.
    """

    def __init__(self, tids: array | None, tgids: array | None, others: dict[int, int], load=None) -> None:
        """``tids``/``tgids``: one pair per tid, sorted by tid (:func:`last_word`); or ``load``,
        called at the first question for them (the trees' compaction waits until then: the
        reader's finish asks after its scheduler replay, not beside its log)."""
        self._tids, self._tgids, self._load = tids, tgids, load
        self.others = others

    def _columns(self) -> tuple[array, array]:
        if self._load is not None:
            self._tids, self._tgids = self._load()
            self._load = None
        return self._tids, self._tgids  # type: ignore[return-value]

    tids = property(lambda self: self._columns()[0])
    tgids = property(lambda self: self._columns()[1])

    def get(self, tid: int, default: int | None = None) -> int | None:
        tids, tgids = self._columns()
        i = bisect_left(tids, tid)
        if i < len(tids) and tids[i] == tid:
            return tgids[i]
        return self.others.get(tid, default)

    def get_many(self, tids: list[int]) -> list[int | None]:
        """``[self.get(t) for t in tids]``: one search of the tree's tids for all of them (a
        reader's finish asks about every thread it has rows of, ~19 k at 100 MB)."""
        tree_tids, tree_tgids = self._columns()
        if not tids or not len(tree_tids):
            return [self.others.get(t) for t in tids]
        try:
            want = np.array(tids, np.int64)
        except OverflowError:  # a tid beyond int64: no tree names it
            return [self.get(t) for t in tids]
        keys = np.frombuffer(tree_tids, np.int64)
        at = np.minimum(np.searchsorted(keys, want), len(keys) - 1)
        hit = (keys[at] == want).tolist()
        values = np.frombuffer(tree_tgids, np.int64)[at].tolist()
        others = self.others
        return [v if h else others.get(t) for t, h, v in zip(tids, hit, values)]


#: Process-tree entries appended beyond twice the distinct tids before the repeats are dropped.
_COMPACT_AT = 1 << 16

_TREE = pb.ProcessTree.DESCRIPTOR.fields_by_name
_PROC = _TREE["processes"].message_type.fields_by_name
_THREAD = _TREE["threads"].message_type.fields_by_name
_TREE_ARGS = (pb.TracePacket.DESCRIPTOR.fields_by_name["process_tree"].number, _TREE["processes"].number,
              _TREE["threads"].number, _PROC["pid"].number, _PROC["cmdline"].number, _THREAD["tid"].number,
              _THREAD["tgid"].number, _THREAD["name"].number)
_bundlec = compiled("_bundlec")
_tree_walk = None if _bundlec is None else _bundlec.process_tree


class SystemState:
    def __init__(self) -> None:
        #: tid → tgid of every process-tree entry in arrival order (processes as their own group),
        #: each tid's last word only (last_word) up to ``_compacted`` entries
        self.tree_tids = array("q")
        self.tree_tgids = array("q")
        self._compacted = 0
        self.counters: Counters = {}
        self.units: dict[tuple[int | None, str], str] = {}
        self._last_cpu: tuple[int, int] | None = None  # (busy ns, total ns) of the last sample
        #: (pid, counter) → (ts ns, MiB) points of process_stats (:meth:`process_counters`)
        self.process = SeriesTable("d")
        self.processes_seen = 0

    def _add(self, pid: int | None, name: str, ts: int, value: float, unit: str) -> None:
        pts = self.counters.setdefault((pid, name), [])
        if len(pts) < MAX_COUNTER_POINTS:
            pts.append((ts, value))
        self.units[(pid, name)] = unit

    def process_tree(self, tree, data: PerfData, raw: bytes | None = None) -> None:
        """A ``process_tree`` (upb's, of the packet ``raw`` when given): process and thread names,
        and every entry's tid → tgid. A system trace repeats its whole tree, ~80 processes and
        ~350 threads, in every snapshot (~180 k entries at 100 MB), most threads unnamed: from
        ``raw`` a C walk (_bundlec.c ``process_tree``) hands back the entries as columns and only
        the named ones as objects; :meth:`process_tree_upb` is its reference and fallback."""
        walked = None if raw is None or _tree_walk is None else _tree_walk(raw, *_TREE_ARGS)
        if walked is None:
            self.process_tree_upb(tree, data)
            return
        nproc, p_pid, p_name, tids, tgids, t_tid, t_tgid, t_name = walked
        self.processes_seen += nproc
        name_process, name_thread = data.set_process_name, data.set_thread_name
        for pid, name in zip(p_pid, p_name):
            name_process(pid, name)
        self.tree_tids.frombytes(tids)
        self.tree_tgids.frombytes(tgids)
        for tid, tgid, name in zip(t_tid, t_tgid, t_name):
            name_thread(tgid, tid, name)
        if len(self.tree_tids) > 2 * self._compacted + _COMPACT_AT:
            self._compact()

    def process_tree_upb(self, tree, data: PerfData) -> None:
        """:meth:`process_tree` from upb's message. Each field read once (a upb attribute read is
        the cost here)."""
        add_tid, add_tgid = self.tree_tids.append, self.tree_tgids.append
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
            add_tid(pid)
            add_tgid(pid)
        for t in tree.threads:
            tid, tgid = t.tid, t.tgid
            add_tid(tid)
            add_tgid(tgid)
            name = text(t.name)
            if name:
                name_thread(tgid, tid, name)
        if len(self.tree_tids) > 2 * self._compacted + _COMPACT_AT:
            self._compact()  # a trace that repeats its whole tree in every snapshot: ~twice its threads

    def _compact(self) -> None:
        self.tree_tids, self.tree_tgids = last_word(self.tree_tids, self.tree_tgids)
        self._compacted = len(self.tree_tids)

    def thread_groups(self, others: dict[int, int]) -> ThreadGroups:
        """tid → tgid: the trees', then ``others``' for the tids no tree names (on this state's
        columns, compacted: no second copy)."""
        def load() -> tuple[array, array]:
            self._compact()
            give_back()  # the compaction's sort, before the caller's next step
            return self.tree_tids, self.tree_tgids

        return ThreadGroups(None, None, others, load)

    def process_counters(self, memory: SeriesTable) -> None:
        """Take the per-process counters of ``process_stats`` (``mem.rss``, ``mem.rss.anon``;
        unit MB) from the memory lens's series (perfetto_memory.MemoryState.series) before it
        adds ``rss_stat`` to them: the same points under the same cap, which this kept again as
        a list of tuples per process (~75 MB at 1 GB)."""
        self.process = memory.subset_names(_PROCESS_COUNTERS)

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
