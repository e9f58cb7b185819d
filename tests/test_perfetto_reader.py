"""The Perfetto reader on traces built here with the ``perfetto`` package's own builders,
one packet kind at a time, each with the result worked out by hand."""

from __future__ import annotations

import gzip
import io

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
from perfetto.trace_builder.proto_builder import StreamingTraceProtoBuilder, TraceProtoBuilder

from nodes.perf.errors import PerfDataError
from nodes.perf.metrics import compute
from nodes.perf.parsers import perfetto
from nodes.perf.parsers.perfetto_frames import FrameTimelineEvent
from nodes.perf.parsers.perfetto_stream import StreamReport, iter_packets
from tests.protowire import field, varint

SEQ = 7


# --- builders ---------------------------------------------------------------------------


def _write(tmp_path, builder: TraceProtoBuilder, name="t.perfetto-trace", data: bytes | None = None):
    p = tmp_path / name
    p.write_bytes(builder.serialize() if data is None else data)
    return str(p)


def _process_tree(b: TraceProtoBuilder, procs: dict[int, str], threads: dict[int, tuple[int, str]]):
    pkt = b.add_packet()
    pkt.trusted_packet_sequence_id = SEQ
    for pid, name in procs.items():
        pr = pkt.process_tree.processes.add()
        pr.pid = pid
        pr.cmdline.append(name)
    for tid, (tgid, name) in threads.items():
        th = pkt.process_tree.threads.add()
        th.tid, th.tgid, th.name = tid, tgid, name


def _prints(b: TraceProtoBuilder, cpu: int, events: list[tuple[int, int, str]]):
    """One ftrace bundle of atrace ``print`` events: (ts ns, tid, line)."""
    pkt = b.add_packet()
    pkt.trusted_packet_sequence_id = SEQ
    pkt.ftrace_events.cpu = cpu
    for ts, tid, line in events:
        e = pkt.ftrace_events.event.add()
        e.timestamp, e.pid = ts, tid
        e.print.buf = line + "\n"


def _frame_packet(b: TraceProtoBuilder, ts: int, kind: str, **fields):
    """A packet carrying TracePacket field 76, which the bundled proto does not declare."""
    ev = FrameTimelineEvent()
    msg = getattr(ev, kind)
    for k, v in fields.items():
        setattr(msg, k, v)
    payload = ev.SerializeToString()
    pkt = b.add_packet()
    pkt.timestamp = ts
    pkt.trusted_packet_sequence_id = SEQ
    raw = pkt.SerializeToString() + field(76, payload)
    pkt.ParseFromString(raw)


# --- atrace -----------------------------------------------------------------------------


def test_atrace_slices_nest_per_thread_even_when_bundles_arrive_out_of_order(tmp_path):
    b = TraceProtoBuilder()
    _process_tree(b, {100: "com.example.app"}, {101: (100, "worker")})
    # The thread migrated: its ends were read from CPU 1 before its begins from CPU 0.
    _prints(b, 1, [(3000, 101, "E|100"), (5000, 101, "E|100")])
    _prints(b, 0, [(1000, 101, "B|100|outer"), (2000, 101, "B|100|inner|with|bars"), (2500, 101, "C|100|queue|5")])
    data = perfetto.parse(_write(tmp_path, b))

    cols = data.slices[(100, 101)]
    got = sorted((cols.ts[i], cols.dur[i], data.strings[cols.name[i]]) for i in range(len(cols)))
    assert got == [(1.0, 4.0, "outer"), (2.0, 1.0, "inner|with|bars")]
    assert data.threads[(100, 101)].name == "worker"
    assert data.processes[100] == "com.example.app"
    assert data.counters["queue: com.example.app (100)"] == [(2.5, 5.0)]
    assert data.meta["perfetto.atrace_prints"] == "5"
    assert not data.warnings and not data.partial


def test_atrace_async_launch_and_main_thread_markers_become_a_cold_start(tmp_path):
    ms = 1_000_000
    b = TraceProtoBuilder()
    _process_tree(b, {1000: "system_server", 200: "com.example.app"}, {})
    _prints(b, 0, [(0, 1001, "S|1000|launching: com.example.app|7")])
    _prints(
        b,
        1,
        [
            (10 * ms, 200, "B|200|bindApplication"),
            (30 * ms, 200, "E|200"),
            (35 * ms, 200, "B|200|activityStart"),
            (50 * ms, 200, "E|200"),
            (50 * ms, 200, "B|200|activityResume"),
            (60 * ms, 200, "E|200"),
            (70 * ms, 200, "B|200|Choreographer#doFrame 123"),
            (80 * ms, 200, "E|200"),
            (90 * ms, 200, "B|200|Choreographer#doFrame 124"),
            (95 * ms, 200, "E|200"),
        ],
    )
    _prints(b, 0, [(100 * ms, 1001, "F|1000|launching: com.example.app|7")])
    data = perfetto.parse(_write(tmp_path, b))

    # the reader writes the slices and notes the launch; the startup is the analysis's
    assert data.startup_runs == [] and data.meta["startup_package"] == "com.example.app"
    assert (1000, "launching: com.example.app") in data.async_slices
    assert data.threads[(200, 200)].is_main
    runs = compute(data).startup.runs
    assert len(runs) == 1
    run = runs[0]
    assert run.kind == "cold" and run.total_ms == pytest.approx(100.0)
    phases = {p.name: (round(p.start_ms, 3), round(p.dur_ms, 3)) for p in run.phases}
    assert phases == {
        "startup": (0.0, 100.0),
        "process start": (0.0, 10.0),  # to the new main thread's first slice
        "bindApplication": (10.0, 20.0),
        "activityStart": (35.0, 15.0),
        "activityResume": (50.0, 10.0),
        "first Choreographer#doFrame": (70.0, 10.0),
    }


def test_warm_start_has_activity_start_without_bind_application(tmp_path):
    ms = 1_000_000
    b = TraceProtoBuilder()
    _process_tree(b, {1000: "system_server", 200: "com.example.app"}, {})
    _prints(b, 0, [(0, 1001, "S|1000|launching: com.example.app|1")])
    _prints(b, 1, [(5 * ms, 200, "B|200|activityStart"), (9 * ms, 200, "E|200")])
    _prints(b, 0, [(40 * ms, 1001, "F|1000|launching: com.example.app|1")])
    data = perfetto.parse(_write(tmp_path, b))
    # trace_processor: no activityResume, no kind; read from activityStart alone (docs/perfetto.md)
    assert [(r.kind, round(r.total_ms, 3)) for r in compute(data).startup.runs] == [("warm", 40.0)]


# --- scheduler --------------------------------------------------------------------------


def test_compact_sched_and_plain_switch_give_running_runnable_sleeping(tmp_path):
    b = TraceProtoBuilder()
    info = b.add_packet()  # compact sched is a 4.14+ feature: 0x100 is preemption there
    info.trusted_packet_sequence_id = SEQ
    info.system_info.utsname.sysname, info.system_info.utsname.release = "Linux", "5.10.107-android13"
    pkt = b.add_packet()
    pkt.trusted_packet_sequence_id = SEQ
    bundle = pkt.ftrace_events
    bundle.cpu = 0
    cs = bundle.compact_sched
    cs.intern_table.extend(["a", "b"])
    cs.switch_timestamp.extend([1000, 1000, 2000])  # deltas: 1000, 2000, 4000
    cs.switch_next_pid.extend([10, 11, 10])
    cs.switch_prev_state.extend([0, 1, 256])  # (unknown prev), 10 sleeps, 11 preempted (R+)
    cs.switch_next_prio.extend([120, 120, 120])
    cs.switch_next_comm_index.extend([0, 1, 0])
    cs.waking_timestamp.append(3000)
    cs.waking_pid.append(10)
    cs.waking_target_cpu.append(0)
    cs.waking_prio.append(120)
    cs.waking_comm_index.append(0)
    # A plain sched_switch on CPU 1 at 6000 ends the sched data.
    pkt2 = b.add_packet()
    pkt2.trusted_packet_sequence_id = SEQ
    pkt2.ftrace_events.cpu = 1
    e = pkt2.ftrace_events.event.add()
    e.timestamp, e.pid = 6000, 12
    sw = e.sched_switch
    sw.prev_pid, sw.prev_comm, sw.prev_state, sw.next_pid, sw.next_comm = 12, "c", 1, 0, "swapper/1"
    data = perfetto.parse(_write(tmp_path, b))

    # 10: the CPU's first compact switch (1000) has no previous task, so trace_processor
    # writes no state for it; 10 is known from its switch-out at 2000: sleeps 2000-3000,
    # woken → runnable 3000-4000, runs 4000-6000.
    assert data.thread_states[(10, 10)] == {"running": 2.0, "sleeping": 1.0, "runnable": 1.0}
    # 11: runs 2000-4000, preempted → runnable until the end of sched data.
    assert data.thread_states[(11, 11)] == {"running": 2.0, "runnable": 2.0}
    assert (12, 12) not in data.thread_states  # nothing known before its only switch-out
    assert data.threads[(10, 10)].name == "a" and data.threads[(11, 11)].name == "b"
    assert data.meta["perfetto.compact_sched_switches"] == "3"
    assert data.meta["perfetto.sched_switches"] == "1"


def test_plain_sched_waking_moves_a_sleeper_to_runnable(tmp_path):
    b = TraceProtoBuilder()
    pkt = b.add_packet()
    pkt.trusted_packet_sequence_id = SEQ
    pkt.ftrace_events.cpu = 0

    def switch(ts, prev, state, nxt):
        e = pkt.ftrace_events.event.add()
        e.timestamp = ts
        s = e.sched_switch
        s.prev_pid, s.prev_state, s.next_pid = prev, state, nxt

    switch(1000, 0, 0, 20)
    switch(3000, 20, 2, 0)  # D: uninterruptible sleep counts as sleeping
    w = pkt.ftrace_events.event.add()
    w.timestamp = 7000
    w.sched_waking.pid = 20
    switch(8000, 0, 0, 20)
    switch(9000, 20, 1, 0)
    data = perfetto.parse(_write(tmp_path, b))
    assert data.thread_states[(20, 20)] == {"running": 3.0, "sleeping": 4.0, "runnable": 1.0}


# --- track events -----------------------------------------------------------------------


def test_track_event_interning_follows_each_sequence_reset(tmp_path):
    out = io.BytesIO()
    b = StreamingTraceProtoBuilder(out)

    def add(ts=None, flags=0):
        pkt = b.create_packet()
        pkt.trusted_packet_sequence_id = SEQ
        if ts is not None:
            pkt.timestamp = ts
        pkt.sequence_flags = flags
        return pkt

    p = add(flags=1)  # SEQ_INCREMENTAL_STATE_CLEARED: names and defaults start here
    p.interned_data.event_names.add(iid=1, name="Draw")
    p.interned_data.event_categories.add(iid=1, name="gfx")
    p.trace_packet_defaults.track_event_defaults.track_uuid = 42
    b.write_packet(p)
    p = add()
    p.track_descriptor.uuid = 41
    p.track_descriptor.process.pid = 300
    p.track_descriptor.process.process_name = "Renderer"
    b.write_packet(p)
    p = add()
    p.track_descriptor.uuid = 42
    p.track_descriptor.thread.pid = 300
    p.track_descriptor.thread.tid = 301
    p.track_descriptor.thread.thread_name = "CrRendererMain"
    b.write_packet(p)
    p = add()
    p.track_descriptor.uuid = 43
    p.track_descriptor.parent_uuid = 41
    p.track_descriptor.name = "js_heap"
    p.track_descriptor.counter.unit_name = "KB"
    b.write_packet(p)
    p = add(1000, flags=2)
    p.track_event.type = pb.TrackEvent.TYPE_SLICE_BEGIN
    p.track_event.name_iid = 1
    p.track_event.category_iids.append(1)
    b.write_packet(p)
    p = add(2000, flags=2)
    p.track_event.type = pb.TrackEvent.TYPE_COUNTER
    p.track_event.track_uuid = 43
    p.track_event.counter_value = 512
    b.write_packet(p)
    p = add(3000, flags=2)
    p.track_event.type = pb.TrackEvent.TYPE_SLICE_END
    b.write_packet(p)
    # The producer resets its state and reuses iid 1 for another name.
    p = add(4000, flags=3)
    p.interned_data.event_names.add(iid=1, name="Layout")
    p.trace_packet_defaults.track_event_defaults.track_uuid = 42
    p.track_event.type = pb.TrackEvent.TYPE_SLICE_BEGIN
    p.track_event.name_iid = 1
    b.write_packet(p)
    p = add(6000, flags=2)
    p.track_event.type = pb.TrackEvent.TYPE_SLICE_END
    b.write_packet(p)
    # Packets were lost: ids on this sequence mean nothing until the next reset.
    p = add(7000, flags=2)
    p.previous_packet_dropped = 1
    p.track_event.type = pb.TrackEvent.TYPE_SLICE_BEGIN
    p.track_event.name_iid = 1
    b.write_packet(p)
    p = add(8000, flags=2)
    p.track_event.type = pb.TrackEvent.TYPE_SLICE_END
    b.write_packet(p)
    data = perfetto.parse(_write(tmp_path, None, data=out.getvalue()))

    cols = data.slices[(300, 301)]
    got = [(cols.ts[i], cols.dur[i], data.strings[cols.name[i]]) for i in range(len(cols))]
    assert got == [(1.0, 2.0, "Draw"), (4.0, 2.0, "Layout")]
    assert data.threads[(300, 301)].name == "CrRendererMain" and data.threads[(300, 301)].is_main
    assert data.processes[300] == "Renderer"
    assert data.counters["js_heap: Renderer (300)"] == [(2.0, 512.0)]
    assert data.counter_units["js_heap: Renderer (300)"] == "KB"
    assert data.meta["perfetto.track_event_categories"].startswith("gfx 1")
    assert any("2 track events skipped" in w for w in data.warnings)


def test_sequence_scoped_incremental_clock_is_converted_to_boottime(tmp_path):
    b = TraceProtoBuilder()
    p = b.add_packet()
    p.trusted_packet_sequence_id = SEQ
    c = p.clock_snapshot.clocks.add()
    c.clock_id, c.timestamp = 6, 1_000_000
    c = p.clock_snapshot.clocks.add()
    c.clock_id, c.timestamp, c.is_incremental, c.unit_multiplier_ns = 64, 500, True, 1000
    p = b.add_packet()
    p.trusted_packet_sequence_id = SEQ
    p.sequence_flags = 1
    p.trace_packet_defaults.timestamp_clock_id = 64
    p.track_descriptor.uuid = 9
    p.track_descriptor.thread.pid = 1
    p.track_descriptor.thread.tid = 2
    p = b.add_packet()
    p.trusted_packet_sequence_id = SEQ
    p.timestamp = 10  # +10 µs on clock 64 → 510 µs → boottime 1 010 000 ns
    p.track_event.type = pb.TrackEvent.TYPE_SLICE_BEGIN
    p.track_event.track_uuid = 9
    p.track_event.name = "work"
    p = b.add_packet()
    p.trusted_packet_sequence_id = SEQ
    p.timestamp = 5  # +5 µs more
    p.track_event.type = pb.TrackEvent.TYPE_SLICE_END
    p.track_event.track_uuid = 9
    data = perfetto.parse(_write(tmp_path, b))
    cols = data.slices[(1, 2)]
    assert (cols.ts[0], cols.dur[0]) == (1010.0, 5.0)


# --- frame timeline ---------------------------------------------------------------------


def test_frame_timeline_from_unknown_field_76(tmp_path):
    ms = 1_000_000
    b = TraceProtoBuilder()
    _process_tree(b, {200: "com.example.app"}, {})
    _frame_packet(b, 0, "expected_surface_frame_start", cookie=1, token=10, pid=200, layer_name="L")
    _frame_packet(b, 1 * ms, "actual_surface_frame_start", cookie=2, token=10, pid=200, layer_name="L", jank_type=64)
    _frame_packet(b, int(16.6 * ms), "frame_end", cookie=1)
    _frame_packet(b, 25 * ms, "frame_end", cookie=2)
    _frame_packet(b, 30 * ms, "actual_surface_frame_start", cookie=3, token=11, pid=200, layer_name="L", jank_type=1)
    _frame_packet(b, 40 * ms, "frame_end", cookie=3)
    _frame_packet(b, 30 * ms, "actual_display_frame_start", cookie=4, token=99, pid=500, jank_type=1)
    _frame_packet(b, 35 * ms, "frame_end", cookie=4)
    data = perfetto.parse(_write(tmp_path, b))

    assert [(f.ts_us, f.dur_us, f.budget_us, f.janky, f.jank_type, f.pid, f.layer) for f in data.frames] == [
        (1000.0, 24000.0, 16600.0, True, "App Deadline Missed", 200, "L"),
        (30000.0, 10000.0, None, False, "None", 200, "L"),
    ]
    assert data.frame_summary["frame_timeline_display_frames"] == 1.0
    assert data.facts.frame_timeline_events == 8
    assert "perfetto.unknown_packet_fields" not in data.meta


# --- counters ---------------------------------------------------------------------------


def test_sys_stats_and_process_stats_become_memory_and_cpu_counters(tmp_path):
    b = TraceProtoBuilder()
    _process_tree(b, {100: "com.example.app", 101: "other"}, {})
    _prints(b, 0, [(1000, 100, "B|100|x"), (2000, 100, "E|100")])
    for ts, busy, idle in ((1_000_000, 100, 100), (2_000_000, 300, 200)):
        p = b.add_packet()
        p.timestamp = ts
        p.trusted_packet_sequence_id = SEQ
        m = p.sys_stats.meminfo.add()
        m.key, m.value = pb.MEMINFO_MEM_AVAILABLE, 2048
        c = p.sys_stats.cpu_stat.add()
        c.cpu_id, c.user_ns, c.idle_ns = 0, busy, idle
    p = b.add_packet()
    p.timestamp = 1_500_000
    p.trusted_packet_sequence_id = SEQ
    for pid, kb in ((100, 4096), (101, 8192)):
        pr = p.process_stats.processes.add()
        pr.pid, pr.vm_rss_kb = pid, kb
    data = perfetto.parse(_write(tmp_path, b))

    assert data.counters["mem.available"] == [(1000.0, 2.0), (2000.0, 2.0)]
    assert data.counters["cpu.usage"] == [(2000.0, pytest.approx(200 / 300 * 100))]
    assert data.counters["mem.rss: com.example.app (100)"] == [(1500.0, 4.0)]
    # Only the process the analysis is about keeps its series; the rest are counted.
    assert not any("other" in k for k in data.counters)
    assert data.meta["perfetto.counters_other_processes"] == "1"


# --- bad input --------------------------------------------------------------------------


def _three_packet_trace() -> bytes:
    b = TraceProtoBuilder()
    _process_tree(b, {100: "app"}, {})
    _prints(b, 0, [(1000, 100, "B|100|first"), (2000, 100, "E|100")])
    _prints(b, 0, [(3000, 100, "B|100|second"), (4000, 100, "E|100")])
    return b.serialize()


def test_truncated_mid_packet_keeps_whole_packets_and_is_partial(tmp_path):
    raw = _three_packet_trace()
    data = perfetto.parse(_write(tmp_path, None, data=raw[:-10]))
    assert data.partial
    assert [data.strings[i] for i in data.slices[(100, 100)].name] == ["first"]
    assert any("file ends inside" in w for w in data.warnings)


def test_truncated_gzip_is_partial_and_whole_gzip_reads_like_plain(tmp_path):
    raw = _three_packet_trace()
    whole = perfetto.parse(_write(tmp_path, None, "t.pftrace.gz", gzip.compress(raw)))
    assert whole.slice_count == 2 and not whole.partial
    gz = gzip.compress(raw + raw[:0])
    cut = perfetto.parse(_write(tmp_path, None, "cut.pftrace.gz", gz[: len(gz) - 12]))
    assert cut.partial and cut.slice_count >= 1


def test_oversized_packet_is_skipped_and_the_rest_read(tmp_path):
    b = TraceProtoBuilder()
    _prints(b, 0, [(1000, 100, "B|100|" + "x" * 500), (2000, 100, "E|100")])
    _prints(b, 0, [(3000, 100, "B|100|small"), (4000, 100, "E|100")])
    data = perfetto.parse(_write(tmp_path, b), packet_limit=200)
    assert data.partial
    assert [data.strings[i] for i in data.slices[(100, 100)].name] == ["small"]
    assert any("over the 200-byte limit" in w for w in data.warnings)


def test_unknown_packet_field_is_reported_not_fatal(tmp_path):
    b = TraceProtoBuilder()
    _prints(b, 0, [(1000, 100, "B|100|a"), (2000, 100, "E|100")])
    pkt = b.add_packet()
    pkt.ParseFromString(varint((999 << 3) | 0) + varint(5) + varint((8 << 3) | 0) + varint(3000))
    data = perfetto.parse(_write(tmp_path, b))
    assert data.meta["perfetto.unknown_packet_fields"] == "field 999 ×1"
    assert not data.partial and data.slice_count == 1


def test_undecodable_packet_is_skipped_and_marked_partial(tmp_path):
    good = _three_packet_trace()
    bad_payload = b"\x0a\xff\xff\xff\x0f"  # a length-delimited field claiming 4 GiB
    raw = good + b"\x0a" + varint(len(bad_payload)) + bad_payload
    data = perfetto.parse(_write(tmp_path, None, data=raw))
    assert data.partial and data.slice_count == 2
    assert any("could not be decoded" in w for w in data.warnings)


@pytest.mark.parametrize(
    "content",
    [b"", b"\x07garbage", b'{"traceEvents": []}', b"\x0a\x05\xff\xff\xff\xff\xff", b"# tracer: nop\n"],
)
def test_not_a_trace_is_one_clear_error(tmp_path, content):
    with pytest.raises(PerfDataError) as e:
        perfetto.parse(_write(tmp_path, None, data=content))
    assert str(e.value).startswith(str(tmp_path))
    assert "\n" not in str(e.value)


def test_missing_file_is_a_perf_data_error(tmp_path):
    with pytest.raises(PerfDataError, match="no such file"):
        perfetto.parse(str(tmp_path / "nope.pftrace"))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_damaged_traces_never_raise_anything_but_perf_data_error(tmp_path, data):
    raw = bytearray(_three_packet_trace())
    for _ in range(data.draw(st.integers(1, 6))):
        i = data.draw(st.integers(0, len(raw) - 1))
        raw[i] = data.draw(st.integers(0, 255))
    raw = bytes(raw[: data.draw(st.integers(0, len(raw)))])
    path = tmp_path / "fuzz.pftrace"
    path.write_bytes(raw)
    try:
        out = perfetto.parse(str(path))
    except PerfDataError:
        return
    assert out.format == "perfetto"


# --- sniffing and streaming -------------------------------------------------------------


def test_sniff_accepts_traces_and_refuses_text_and_json():
    raw = _three_packet_trace()
    assert perfetto.sniff(raw, "x.bin")
    first = raw[1] + 2  # tag, one-byte length, packet
    assert perfetto.sniff(raw[: first - 3], "capture.perfetto-trace")  # first packet cut by the head
    assert not perfetto.sniff(raw[: first - 3], "notes.txt")
    assert not perfetto.sniff(b'{"traceEvents": []}', "x.json")
    assert not perfetto.sniff(b"\n\nTASK-PID   CPU#  TIMESTAMP  FUNCTION\n", "x.txt")
    assert not perfetto.sniff(b"", "x.pftrace")


class _CountingFile(io.BytesIO):
    def __init__(self, data: bytes):
        super().__init__(data)
        self.largest_read = 0

    def read(self, n=-1):
        self.largest_read = max(self.largest_read, n if n is not None and n >= 0 else 1 << 62)
        return super().read(n)


def test_streamer_reads_in_bounded_chunks_not_the_whole_file():
    b = TraceProtoBuilder()
    for i in range(3000):
        _prints(b, 0, [(i * 10, 100, "B|100|" + "y" * 1000), (i * 10 + 5, 100, "E|100")])
    raw = b.serialize()
    assert len(raw) > 3 * 1024 * 1024
    f = _CountingFile(raw)
    report = StreamReport()
    sizes = [len(p) for p in iter_packets(f, report)]
    assert report.packets == 3000 and sum(sizes) < len(raw)
    assert f.largest_read <= 1 << 20


def test_events_the_reader_leaves_out_become_warnings(tmp_path):
    """A drop is never silent (issue 26 item 11): an unreadable atrace line, a FrameEnd with no
    start and a legacy track event off any thread track each reach ``warnings``."""
    b = TraceProtoBuilder()
    _prints(b, 0, [(1000, 7, "B|notapid|x"), (2000, 7, "Z|7|what")])
    _frame_packet(b, 5000, "frame_end", cookie=99)
    pkt = b.add_packet()
    pkt.trusted_packet_sequence_id = SEQ
    pkt.timestamp = 6000
    pkt.track_event.type = 0  # TYPE_UNSPECIFIED: a legacy event
    pkt.track_event.name = "legacy"
    pkt.track_event.legacy_event.phase = ord("I")
    data = perfetto.parse(_write(tmp_path, b))
    text = "\n".join(data.warnings)
    assert "2 atrace print lines could not be read" in text
    assert "1 frame timeline events had no partner" in text
    assert "1 legacy track events were not on a thread's track" in text
