"""A ``process_stats`` snapshot read once for both of its readers — the per-process counters
(perfetto_system.py: ``mem.rss``, ``mem.rss.anon``) and the memory lens' series
(perfetto_memory.py: all of :data:`FIELDS`) — as rows: per process in order, per field of
:data:`FIELDS` it has, in that order, (pid, field index, value).

A snapshot lists every process (176 in tests/data/perfetto/api32_startup_warm.perfetto-trace),
and reading each field through upb, ``HasField`` then the attribute, once per reader, was
~93,000 upb calls at 100 MB (53 snapshots). The rows come from a C walk of the packet's bytes
(nodes/perf/parsers/_bundlec.c ``process_stats``, ~7 ms of CPU at 100 MB) when the extension is
built; the walk reads only the plain shape (one ``process_stats`` field; pid and these fields
as varints) and leaves anything else to :func:`rows_upb`, the reference it is tested against
(tests/test_perfetto_process_stats.py), which asks each field once. The walk runs only on
packets upb has parsed whole, so upb has already judged the bytes.
"""

from __future__ import annotations

from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import ProcessStats, TracePacket

from nodes.perf.parsers import perfetto_wire as wire

#: (ProcessStats.Process field, counter name), in the order a process' points are added.
FIELDS = (
    ("vm_rss_kb", "mem.rss"), ("rss_anon_kb", "mem.rss.anon"), ("rss_file_kb", "mem.rss.file"),
    ("rss_shmem_kb", "mem.rss.shmem"), ("vm_swap_kb", "mem.swap"), ("vm_hwm_kb", "mem.rss.watermark"),
)
#: Counter name by field index (the rows' second column).
NAMES = tuple(name for _field, name in FIELDS)

Rows = tuple[list[int], list[int], list[int]]

_PROCESS = ProcessStats.Process.DESCRIPTOR.fields_by_name
_ARGS = (TracePacket.DESCRIPTOR.fields_by_name["process_stats"].number,
         ProcessStats.DESCRIPTOR.fields_by_name["processes"].number, _PROCESS["pid"].number,
         tuple(_PROCESS[f].number for f, _name in FIELDS))
_bundlec = wire.compiled("_bundlec")
_walk = None if _bundlec is None else _bundlec.process_stats


def rows(stats, raw: bytes) -> Rows:
    """The rows of ``stats``, upb's ``process_stats`` of the packet ``raw``."""
    if _walk is not None:
        out = _walk(raw, *_ARGS)
        if out is not None:
            return out
    return rows_upb(stats)


def rows_upb(stats) -> Rows:
    """The rows read from upb's message: each field asked once."""
    pids: list[int] = []
    ks: list[int] = []
    values: list[int] = []
    fields = tuple(enumerate(f for f, _name in FIELDS))
    for p in stats.processes:
        pid = p.pid
        for k, field in fields:
            if p.HasField(field):
                pids.append(pid)
                ks.append(k)
                values.append(getattr(p, field))
    return pids, ks, values
