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

import numpy as np

from nodes.perf.counter_names import is_counter_name
from nodes.perf.model import MAX_COUNTER_POINTS, PerfData
from nodes.perf.parsers import perfetto_process_stats as process_stats
from nodes.perf.parsers.perfetto_heap import give_back
from nodes.perf.parsers.perfetto_series import PairKeys, Points, SeriesTable, _fits_pairs, sort_series, sort_series_python

_RSS_MEMBERS = {0: "mem.rss.file", 1: "mem.rss.anon", 2: "mem.swap", 3: "mem.rss.shmem"}
#: At most this many points per (process, counter): the model's cap for every counter series.
MAX_POINTS = MAX_COUNTER_POINTS
#: An atrace counter the memory lens shows: a memory-looking name (heap, memory, rss, pss, …)
#: that reads as a counter name — not a log line that happened to arrive as one.
_MEMORY_NAME = re.compile(r"(heap|memory|mem\b|rss|pss|swap)", re.I)


class MemoryState:
    def __init__(self) -> None:
        #: (pid, counter) → (ts ns, MiB) in arrival order; rss_stat's by (tid, counter) until
        #: finish (perfetto_series.py columns)
        self.series = SeriesTable("d", pairs=True)  # keys as columns (PairKeys): ~570 k at 1 GB
        self.rss_by_tid = SeriesTable("d")
        self.mm_owner: dict[int, int] = {}  # mm_id → tid that reported it as its own
        self.rss_unowned = 0
        self.dropped = 0

    def _add(self, table: SeriesTable, key, ts: int, value: float) -> None:
        if not table.add(key, ts, value, MAX_POINTS):
            self.dropped += 1

    def process_rows(self, rows: process_stats.Rows, ts: int) -> None:
        """A snapshot's rows (perfetto_process_stats.py): :meth:`SeriesTable.add` of each in
        turn, the points kept appended at once (one time for all); the rows' series found and
        made at once when the table's keys are columns (:meth:`SeriesTable.pair_series`)."""
        table, cap, names = self.series, MAX_POINTS, process_stats.NAMES
        pids, ks, values = rows
        if not pids:
            return
        sids = None
        if type(table.ids) is PairKeys:
            try:
                pid = np.array(pids, np.int64)
            except OverflowError:
                pid = None
            if pid is not None and _fits_pairs(pid, len(names)):
                sids = table.pair_series(pid, np.array(ks, np.int64), names).tolist()
        if sids is None:
            sids = table.series_ids([(pid, names[k]) for pid, k in zip(pids, ks)])
        count = table.count
        kept: list[int] = []
        kept_values: list[float] = []
        for i, value in zip(sids, values):
            if count[i] < cap:
                count[i] += 1
                kept.append(i)
                kept_values.append(value / 1024.0)
            else:
                self.dropped += 1
        table.extend_at(ts, kept, kept_values)

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

    def finish(self, data: PerfData, ftrace_counters: dict, pid_for) -> None:
        """Into ``data.memory``: process_stats and rss_stat series, atrace memory counters, kills.

        Each series is what its sources add in turn — process_stats, then each thread's
        rss_stat under its process, then the atrace counter — the first :data:`MAX_POINTS`
        kept, sorted by (time, value); a source series is added in one step, its thread's
        process asked once, the points moved and sorted as columns
        (tests/test_perfetto_memory_merge.py checks it against the point-by-point merge of
        lists of tuples it replaced)."""
        give_back()  # what the reader's other ends freed, before the merge and the sort
        kills, memory_counters, skipped_names = _split_counters(ftrace_counters)
        table, rss = self.series, self.rss_by_tid
        owners: dict[int, int] = {}
        # each thread series' first points that fit into its process series, in turn
        take = [0] * len(rss.count)
        to = [0] * len(rss.count)
        adds = []  # (thread series, its process's key) of the thread series with points, in order
        for (tid, name), j in rss.ids.items():
            pid = owners.get(tid)
            if pid is None:
                pid = owners[tid] = pid_for(tid)
            if rss.count[j]:  # one with none adds nothing, so makes no series
                adds.append((j, (pid, name)))
        for (j, _key), i in zip(adds, table.series_ids([key for _, key in adds])):
            n = rss.count[j]
            room = max(MAX_POINTS - table.count[i], 0)
            if n > room:
                self.dropped += n - room
                n = room
            table.count[i] += n
            take[j], to[j] = n, i
        extra = []  # the atrace counters' points kept: (series number, [(ts, value)])
        for key, pts in memory_counters:  # as the app wrote them: "Heap size (KB)" stays in KB
            if not pts:
                continue  # adds nothing, so makes no series
            i = table.series_id(key)
            room = max(MAX_POINTS - table.count[i], 0)
            kept = pts[:room]
            self.dropped += len(pts) - len(kept)
            table.count[i] += len(kept)
            if kept:
                extra.append((i, kept))
        n = len(table.count)
        # the keys as columns when the table holds them so (no tuple made of each: ~570 k at 1 GB)
        key_cols = table.ids.columns() if type(table.ids) is PairKeys else None
        keys = list(table.ids) if key_cols is None else None
        cols = _merged(table, rss, take, to, extra)
        if cols is None:  # a time beyond int64 or a NaN value: sorted() of the tuples, as before
            keys = list(table.ids)
            bounds, ts, value = sort_series_python(len(keys), *_merged_lists(table, rss, take, to, extra))
            data.add_memory_series_many(
                (k, [(t / 1000.0, v) for t, v in zip(ts[bounds[i]:bounds[i + 1]], value[bounds[i]:bounds[i + 1]])])
                for i, k in enumerate(keys))
        else:
            # the merged columns are copies: the tables go before the sort, the merged columns
            # before the times are converted (the 1 GB trace's 4 M points: ~100 MB each)
            del table, rss
            self.series, self.rss_by_tid = SeriesTable("d"), SeriesTable("d")
            give_back()
            bounds, ts, value = sort_series(n, *cols)
            del cols
            ts = ts / 1000.0
            if key_cols is not None:
                data.add_memory_key_columns(*key_cols, bounds, ts, value)
            else:
                data.add_memory_columns(keys, bounds, ts, value)
            del ts, value, key_cols
        self.series, self.rss_by_tid = SeriesTable("d"), SeriesTable("d")  # in data.memory now: freed
        give_back()  # the merge's and the sort's columns
        data.add_lmk_kills(kills)
        data.warn_counts(
            (self.rss_unowned, "rss_stat: {n:,} events of another process's mm_id never tied to a process, dropped"),
            (skipped_names, "{n} atrace counter(s) named like log lines, not memory counters, were left out"),
            (self.dropped, f"memory counters: {{n:,}} points beyond {MAX_POINTS:,} per series were not kept"),
        )


def _merged(table: SeriesTable, rss: SeriesTable, take: list, to: list, extra: list):
    """(series number, ts, value) of every point kept, numpy: ``table``'s, the first
    ``take[j]`` points of rss series ``j`` as series ``to[j]``, ``extra``; None when a column is
    wide or a value NaN (numpy's sort of NaN is not ``sorted``'s)."""
    a, b = table.columns(), rss.columns()
    if a is None or b is None:
        return None
    e_sid, e_ts, e_v = [np.zeros(0, a[0].dtype)], [np.zeros(0, np.int64)], [np.zeros(0, np.float64)]
    for i, pts in extra:
        if type(pts) is Points:  # columns already
            e_ts.append(pts.ts.astype(np.int64, copy=False))
            e_v.append(pts.value.astype(np.float64, copy=False))
        else:
            t, v = zip(*pts)
            try:
                e_ts.append(np.array(t, np.int64))
            except OverflowError:
                return None
            e_v.append(np.array(v, np.float64))
        e_sid.append(np.full(len(pts), i, a[0].dtype))
    e_sid, e_ts, e_v = np.concatenate(e_sid), np.concatenate(e_ts), np.concatenate(e_v)
    r_sid, r_ts, r_v = b
    keep = None  # the rss rows kept, each thread series in arrival order, series by series
    if len(r_sid):
        counts = np.bincount(r_sid, minlength=len(take))
        take_a = np.array(take, np.int64)
        keep = np.argsort(r_sid, kind="stable")
        if (take_a < counts).any():  # a series cut by the cap: its first take[j] rows
            starts = np.zeros(len(take), np.int64)
            np.cumsum(counts[:-1], out=starts[1:])
            mask = np.empty(len(keep), bool)
            for lo in range(0, len(keep), _MERGE_BLOCK):
                s = r_sid[keep[lo:lo + _MERGE_BLOCK]]
                np.less(np.arange(lo, lo + len(s)) - starts[s], take_a[s], out=mask[lo:lo + len(s)])
            keep = keep[mask]
            del mask
    # the three parts written into the joined columns (no gathered copy of the rss part, no
    # temporary of the rows' length but the sort order: ~110 MB less at 1 GB)
    na, nk, ne = len(a[0]), 0 if keep is None else len(keep), len(e_sid)
    n = na + nk + ne
    sid, ts, value = np.empty(n, a[0].dtype), np.empty(n, np.int64), np.empty(n, np.float64)
    sid[:na], ts[:na], value[:na] = a
    if nk:
        to_a = np.array(to, a[0].dtype)  # int32, as the table's
        for lo in range(0, nk, _MERGE_BLOCK):
            k = keep[lo:lo + _MERGE_BLOCK]
            at = slice(na + lo, na + lo + len(k))
            sid[at] = to_a[r_sid[k]]
            np.take(r_ts, k, out=ts[at])
            np.take(r_v, k, out=value[at])
    del keep
    sid[na + nk:], ts[na + nk:], value[na + nk:] = e_sid, e_ts, e_v
    if np.isnan(value).any():
        return None
    return sid, ts, value


#: Rows per block of :func:`_merged`'s passes over the rss rows.
_MERGE_BLOCK = 1 << 20


def _merged_lists(table: SeriesTable, rss: SeriesTable, take: list, to: list, extra: list):
    """:func:`_merged` as Python lists, for ``sorted``."""
    sid, ts, value = list(table.sid), list(table.ts), [float(v) for v in table.value]
    seen = [0] * len(take)
    for j, t, v in zip(rss.sid, rss.ts, rss.value):
        if seen[j] < take[j]:
            seen[j] += 1
            sid.append(to[j])
            ts.append(t)
            value.append(v)
    for i, pts in extra:
        for t, v in pts:
            sid.append(i)
            ts.append(t)
            value.append(v)
    return sid, ts, value


def reads_counter(key: tuple) -> bool:
    """Whether :meth:`MemoryState.finish` reads the atrace counter ``key`` ((tgid, name)): lmkd's
    kills and the memory-looking names (only those series are handed to it)."""
    return key[1] == "kill_one_process" or _MEMORY_NAME.search(key[1]) is not None


def _split_counters(ftrace_counters: dict):
    """The atrace counters the memory lens reads: lmkd's kills (ts µs, pid), the memory
    counters as ((tgid, name), points), and how many memory-looking names were not counter
    names."""
    kills: list[tuple[float, int]] = []
    memory: list = []
    skipped_names = 0
    for (tgid, name), pts in ftrace_counters.items():
        if name == "kill_one_process":
            kills += [(ts / 1000.0, int(v)) for ts, v in pts]  # Points read as its tuples
            continue
        if not _MEMORY_NAME.search(name):
            continue
        if not is_counter_name(name):
            skipped_names += 1
            continue
        memory.append(((tgid, name), pts))
    return kills, memory, skipped_names
