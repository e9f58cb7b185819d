"""The memory lens: per-process RSS parts, swap and heap (start / peak / end / growth), lmkd
kills, ART GC, and counter names that are log lines.

androidx's MemoryUsageQueryTest assets (api31_startup_cold, api33_motionlayout…) are not
reachable, so the reference here is computed from a direct protobuf decode of the shared
capture, independent of the reader and the metric: Macrobenchmark's Mode.Max / Mode.Last are
the max / last value of the app's ``rss_stat`` members and its ``Heap size (KB)`` atrace counter.
"""

from __future__ import annotations

import os
from collections import defaultdict

import pytest
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
from perfetto.trace_builder.proto_builder import TraceProtoBuilder

from nodes.perf.analysis import analyze_file
from nodes.perf.counter_names import is_counter_name
from nodes.perf.metrics.memory import summarize_memory

DATA = os.path.join(os.path.dirname(__file__), "data", "perfetto")  # SOURCES.md beside them
WARM = os.path.join(DATA, "api32_startup_warm.perfetto-trace")
COLD = os.path.join(DATA, "api24_startup_cold.perfetto-trace")
APP = "androidx.benchmark.integration.macrobenchmark.target"
MEMBERS = {0: "mem.rss.file", 1: "mem.rss.anon", 3: "mem.rss.shmem"}


def _packets(path):
    t = pb.Trace()
    t.ParseFromString(open(path, "rb").read())
    return t.packet


def _reference_memory(path: str, package: str):
    """KB series of the app: rss_stat (curr=1, the app's threads) and Heap size (KB) prints."""
    pid = None
    tids: set[int] = set()
    events = []
    for p in _packets(path):
        if p.HasField("process_tree"):
            for pr in p.process_tree.processes:
                if pr.cmdline and pr.cmdline[0] == package:
                    pid = pr.pid
            for th in p.process_tree.threads:
                if pid is not None and th.tgid == pid:
                    tids.add(th.tid)
        if p.HasField("ftrace_events"):
            for e in p.ftrace_events.event:
                events.append(e)
    tids.add(pid)
    series: dict[str, list[tuple[int, float]]] = defaultdict(list)
    for e in events:
        if e.HasField("rss_stat") and e.rss_stat.curr and e.pid in tids and e.rss_stat.member in MEMBERS:
            series[MEMBERS[e.rss_stat.member]].append((e.timestamp, e.rss_stat.size / 1024.0))
        if e.HasField("print") and e.print.buf.startswith(f"C|{pid}|Heap size (KB)|"):
            series["Heap size (KB)"].append((e.timestamp, float(e.print.buf.rstrip("\n").split("|")[3])))
    return pid, {k: sorted(v) for k, v in series.items()}


def test_app_rss_parts_and_heap_max_and_last_equal_an_independent_decode():
    pid, ref = _reference_memory(WARM, APP)
    res = analyze_file(WARM)
    app = res.memory.processes[0]
    assert (app.pid, app.name) == (pid, APP)  # the app leads
    got = {s.name: s for s in app.series}
    for name in ("mem.rss.anon", "mem.rss.file", "mem.rss.shmem"):
        # rss_stat (KB here) also carries process_stats' one reading: compare max over both
        vals = [v for _, v in ref[name]]
        assert got[name].peak * 1024 == pytest.approx(max(vals), rel=0.01) or got[name].peak * 1024 > max(vals)
        assert got[name].end * 1024 == pytest.approx(vals[-1], rel=0.01), name
    heap = got["Heap size (KB)"]
    hv = [v for _, v in ref["Heap size (KB)"]]
    assert (heap.unit, heap.start, heap.peak, heap.end) == ("KB", hv[0], max(hv), hv[-1])
    assert heap.growth == pytest.approx(hv[-1] - hv[0])
    assert heap.label == f"{APP} ({pid}): Heap size (KB)"
    assert app.rss_max_mb == pytest.approx(118.996, rel=0.01)  # process_stats vm_rss_kb / 1024
    text = summarize_memory(res.memory)
    assert text.startswith(f"{APP} RSS peak 119.0 MB, mem.rss")
    # growth is said from a series with two readings: process_stats gave mem.rss once, rss_stat
    # followed mem.rss.anon ("mem.rss 119.0 → 119.0 MB (+0.0)" once claimed no growth)
    anon = got["mem.rss.anon"]
    assert got["mem.rss"].points == 1 and anon.points >= 2
    assert f"{APP} RSS peak 119.0 MB, mem.rss.anon {anon.start:.1f} → {anon.end:.1f} MB ({anon.growth:+.1f} MB)" in text


def test_a_lone_reading_says_growth_is_unknown():
    res = analyze_file(COLD)
    lone = [p for p in res.memory.processes[:3] if all(s.points < 2 for s in p.series)]
    assert lone  # the cold trace scanned its processes once, at the start
    text = summarize_memory(res.memory)
    assert "+0.0" not in text and text.count("one reading: growth unknown") == len(lone)


def test_gc_events_follow_the_stdlib_rule():
    res = analyze_file(COLD)
    # independent: top-level "*concurrent*GC" slices from the atrace prints, per process
    stacks: dict[int, list[tuple[int, str]]] = defaultdict(list)
    gcs: dict[int, list[float]] = defaultdict(list)
    tgid: dict[int, int] = {}
    for p in _packets(COLD):
        if not p.HasField("ftrace_events"):
            continue
        for e in p.ftrace_events.event:
            if not e.HasField("print"):
                continue
            buf = e.print.buf.rstrip("\n")
            if buf.startswith("B|"):
                _, pid, name = buf.split("|", 2)
                tgid[e.pid] = int(pid)
                stacks[e.pid].append((e.timestamp, name))
            elif buf.startswith("E") and stacks[e.pid]:
                ts, name = stacks[e.pid].pop()
                if not stacks[e.pid] and "concurrent" in name and name.endswith("GC"):
                    gcs[tgid[e.pid]].append((e.timestamp - ts) / 1e6)
    assert gcs
    by_pid = {p.pid: p for p in res.memory.processes}
    checked = [pid for pid in gcs if pid in by_pid]
    assert checked  # com.google.android.gms.persistent's HeapTaskDaemon
    for pid in checked:
        durs = gcs[pid]
        if pid in by_pid:
            gc = by_pid[pid].gc
            assert gc.count == len(durs)
            assert gc.total_ms >= sum(durs) - 0.01  # + a following CompactionPhase, when there is one
            assert set(gc.types) <= {"young", "full", "alloc", "native_alloc", "collector_transition", "explicit"}


# --- bad input and naming -----------------------------------------------------------------


def test_log_lines_are_not_counter_names():
    assert is_counter_name("Heap size (KB)") and is_counter_name("mem.rss.anon") and is_counter_name("hwui_Layer")
    assert not is_counter_name("Davey! duration=597885ms; Flags=1, FrameTimelineVsyncId=12946")
    assert not is_counter_name("x" * 200)


def test_davey_line_kill_and_unowned_rss_stat(tmp_path):
    b = TraceProtoBuilder()
    p = b.add_packet()
    p.trusted_packet_sequence_id = 1
    for pid, name in ((100, "com.example.app"), (200, "com.example.victim")):
        pr = p.process_tree.processes.add()
        pr.pid = pid
        pr.cmdline.append(name)
    p = b.add_packet()
    p.trusted_packet_sequence_id = 1
    p.ftrace_events.cpu = 0
    lines = [
        (1000, 100, "B|100|work"), (2000, 100, "C|100|Heap size (KB)|1000"),
        (3000, 100, "C|100|Davey! duration=597885ms; Flags=1, FrameTimelineVsyncId=12946|1"),
        (4000, 50, "C|50|kill_one_process|200"), (5000, 100, "C|100|Heap size (KB)|1500"), (6000, 100, "E|100"),
    ]
    for ts, tid, line in lines:
        e = p.ftrace_events.event.add()
        e.timestamp, e.pid = ts, tid
        e.print.buf = line + "\n"
    for ts, curr, mm, size in ((2500, 1, 7, 4 << 20), (3500, 0, 7, 6 << 20), (3600, 0, 99, 1 << 20)):
        e = p.ftrace_events.event.add()
        e.timestamp, e.pid = ts, 100
        e.rss_stat.member, e.rss_stat.size, e.rss_stat.curr, e.rss_stat.mm_id = 1, size, curr, mm
    path = tmp_path / "mem.perfetto-trace"
    path.write_bytes(b.serialize())
    res = analyze_file(str(path))
    assert not any("Davey" in c.name for c in res.counters)
    assert any("log lines" in w for w in res.warnings)
    app = next(x for x in res.memory.processes if x.pid == 100)
    heap = next(s for s in app.series if s.name == "Heap size (KB)")
    assert (heap.start, heap.peak, heap.end, heap.growth) == (1000.0, 1500.0, 1500.0, 500.0)
    anon = next(s for s in app.series if s.name == "mem.rss.anon")
    assert (anon.start, anon.end, anon.points) == (4.0, 6.0, 2)  # mm 7 was tied to pid 100 by curr
    assert any("mm_id never tied" in w for w in res.warnings)  # mm 99
    assert [(k.pid, k.process) for k in res.memory.lmk_kills] == [(200, "com.example.victim")]
    assert next(x for x in res.memory.processes if x.pid == 200).killed


def test_lmkd_slices_win_over_kill_one_process_and_name_the_reason(tmp_path):
    b = TraceProtoBuilder()
    p = b.add_packet()
    p.trusted_packet_sequence_id = 1
    pr = p.process_tree.processes.add()
    pr.pid = 300
    pr.cmdline.append("com.example.cached")
    p = b.add_packet()
    p.trusted_packet_sequence_id = 1
    p.ftrace_events.cpu = 0
    for ts, tid, line in ((1000, 50, "B|50|lmk,300,3,905"), (2000, 50, "E|50"), (3000, 50, "C|50|kill_one_process|301")):
        e = p.ftrace_events.event.add()
        e.timestamp, e.pid = ts, tid
        e.print.buf = line + "\n"
    path = tmp_path / "lmk.perfetto-trace"
    path.write_bytes(b.serialize())
    kills = analyze_file(str(path)).memory.lmk_kills
    assert [(k.pid, k.process, k.kill_reason, k.oom_score_adj) for k in kills] == [
        (300, "com.example.cached", "LOW_MEM_AND_SWAP", 905)]


def test_a_gc_slice_without_its_end_counts_to_the_trace_end_and_is_named(tmp_path):
    b = TraceProtoBuilder()
    p = b.add_packet()
    p.trusted_packet_sequence_id = 1
    pr = p.process_tree.processes.add()
    pr.pid = 100
    pr.cmdline.append("com.example.app")
    th = p.process_tree.threads.add()
    th.tid, th.tgid, th.name = 105, 100, "HeapTaskDaemon"
    p = b.add_packet()
    p.trusted_packet_sequence_id = 1
    p.ftrace_events.cpu = 0
    ms = 1_000_000
    for ts, line in ((1 * ms, "B|100|young concurrent copying GC"), (3 * ms, "E|100"),
                     (5 * ms, "B|100|Background concurrent copying GC"), (9 * ms, "B|100|x"), (10 * ms, "E|100")):
        e = p.ftrace_events.event.add()
        e.timestamp, e.pid = ts, 105
        e.print.buf = line + "\n"
    path = tmp_path / "gc.perfetto-trace"
    path.write_bytes(b.serialize())
    res = analyze_file(str(path))
    gc = next(x for x in res.memory.processes if x.pid == 100).gc
    # 2 ms closed + the open one from 5 ms to the trace's end at 10 ms
    assert (gc.count, gc.total_ms, gc.max_ms, gc.types) == (2, 7.0, 5.0, {"young": 1, "full": 1})
    assert gc.thread == "HeapTaskDaemon"
    assert any("1 GC slice(s) had no end (com.example.app: Background concurrent copying GC)" in w for w in res.warnings)
