"""The blocking lens: the app main thread's binder calls, lock contention and D state, and the
startup / janky frames they fall in.

References are computed here from a direct protobuf decode of the cold-start capture,
independent of the reader and the metric: the main thread makes one synchronous binder call at a
time, so a call lasts from its ``binder_transaction`` (reply 0, not one-way) to the next
``binder_transaction_received`` on that thread; a D interval runs from a ``sched_switch`` out in
state D to the thread's next switch in (this capture records no wake-ups).
"""

from __future__ import annotations

import os

import pytest
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
from perfetto.trace_builder.proto_builder import TraceProtoBuilder

from nodes.perf.analysis import analyze_file
from nodes.perf.metrics.blocking import _LOCK, _MONITOR, summarize_blocking
from nodes.perf.parsers.perfetto_frames import FrameTimelineEvent
from tests.protowire import field

DATA = os.path.join(os.path.dirname(__file__), "data", "perfetto")  # SOURCES.md beside them
COLD = os.path.join(DATA, "api24_startup_cold.perfetto-trace")
MAIN = 7694  # the launched app's main thread (pid == tid)


@pytest.fixture(scope="module")
def cold():
    return analyze_file(COLD)


def _events():
    t = pb.Trace()
    t.ParseFromString(open(COLD, "rb").read())
    out = []
    for p in t.packet:
        if p.HasField("ftrace_events"):
            out.extend(p.ftrace_events.event)
    out.sort(key=lambda e: e.timestamp)
    return out


def test_main_thread_binder_calls_equal_send_to_next_receive(cold):
    calls, open_at = [], None
    for e in _events():
        if e.pid != MAIN:
            continue
        if e.HasField("binder_transaction"):
            bt = e.binder_transaction
            if not bt.reply and not bt.flags & 1:
                open_at = e.timestamp
        elif e.HasField("binder_transaction_received") and open_at is not None:
            calls.append(e.timestamp - open_at)
            open_at = None
    b = cold.blocking
    assert (b.pid, b.tid) == (MAIN, MAIN)
    assert b.binder_calls == len(calls)
    assert b.binder_ms == pytest.approx(sum(calls) / 1e6, rel=0.01)
    assert b.binder[0].dur_ms == pytest.approx(max(calls) / 1e6, rel=0.01)
    assert b.binder[0].server == "/system/bin/surfaceflinger" and b.binder[0].server_thread.startswith("Binder:406")
    assert b.binder_servers[0].server == "system_server"
    assert sum(s.calls for s in b.binder_servers) == b.binder_calls


def test_main_thread_d_state_and_io_wait_equal_the_switches(cold):
    d_total, io_total, since, blocked = 0, 0, None, None
    for e in _events():
        if e.HasField("sched_switch"):
            sw = e.sched_switch
            if sw.prev_pid == MAIN:
                since = e.timestamp if sw.prev_state & 2 else None
                blocked = None
            elif sw.next_pid == MAIN and since is not None:
                d_total += e.timestamp - since
                if blocked:
                    io_total += e.timestamp - since
                since = None
        elif e.HasField("sched_blocked_reason") and e.sched_blocked_reason.pid == MAIN and since is not None:
            blocked = e.sched_blocked_reason.io_wait
    b = cold.blocking
    assert b.d_ms == pytest.approx(d_total / 1e6, rel=0.01)
    assert b.io_wait_ms == pytest.approx(io_total / 1e6, rel=0.01)
    assert b.d_state[0].io_wait is True and b.d_state[0].overlap.in_startup
    assert any("kernel address" in m.why for m in b.missing)
    assert summarize_blocking(b).endswith(f"{b.d_ms:.0f} ms in uninterruptible sleep, {b.io_wait_ms:.0f} ms of it IO.")


def test_art_contention_slice_names_parse():
    name = ("monitor contention with owner Binder:902_1 (913) at void com.android.server.am.ActivityManagerService."
            "activityPaused(android.os.IBinder)(ActivityManagerService.java:6871) waiters=1 blocking from void "
            "com.android.server.am.ActivityManagerService.dispatchUidsChanged()(ActivityManagerService.java:4176)")
    m = _MONITOR.match(name)
    assert (m["owner"], m["owner_tid"], m["waiters"]) == ("Binder:902_1", "913", "1")
    assert m["owner_method"].endswith("(ActivityManagerService.java:6871)")
    assert m["blocked"].startswith("void com.android.server.am.ActivityManagerService.dispatchUidsChanged()")
    assert _LOCK.match("Lock contention on thread list lock (owner tid: 2970)")["lock"] == "thread list lock"


def _blocking_trace(tmp_path) -> str:
    """App 100 (main thread 100) with a janky frame at 10–30 ms; a monitor wait in it, a binder
    call to server 200, and a binder reply with no transaction."""
    b = TraceProtoBuilder()
    p = b.add_packet()
    p.trusted_packet_sequence_id = 1
    for pid, name in ((100, "com.example.app"), (200, "system_server")):
        pr = p.process_tree.processes.add()
        pr.pid = pid
        pr.cmdline.append(name)
    th = p.process_tree.threads.add()
    th.tid, th.tgid, th.name = 201, 200, "binder:200_1"
    p = b.add_packet()
    p.trusted_packet_sequence_id = 1
    p.ftrace_events.cpu = 0
    ms = 1_000_000

    def ev(ts, tid):
        e = p.ftrace_events.event.add()
        e.timestamp, e.pid = ts, tid
        return e

    ev(10 * ms, 100).print.buf = "B|100|Choreographer#doFrame 1\n"
    ev(12 * ms, 100).print.buf = ("B|100|monitor contention with owner worker (101) at void a.B.c()(B.java:1) "
                                  "waiters=0 blocking from void a.D.e()(D.java:2)\n")
    ev(18 * ms, 100).print.buf = "E|100\n"
    t = ev(20 * ms, 100).binder_transaction
    t.debug_id, t.reply, t.flags = 1, 0, 0
    ev(21 * ms, 201).binder_transaction_received.debug_id = 1
    t = ev(25 * ms, 201).binder_transaction
    t.debug_id, t.reply = 2, 1
    ev(26 * ms, 100).binder_transaction_received.debug_id = 2
    t = ev(27 * ms, 201).binder_transaction  # a reply whose transaction is not in the trace
    t.debug_id, t.reply = 3, 1
    ev(28 * ms, 100).binder_transaction_received.debug_id = 3
    ev(30 * ms, 100).print.buf = "E|100\n"
    # the frame timeline: app 100's frame at 10–30 ms, expected to end at 26.6 ms: App Deadline Missed
    _frame(b, 10 * ms, "expected_surface_frame_start", cookie=1, token=10, pid=100, layer_name="L")
    _frame(b, int(26.6 * ms), "frame_end", cookie=1)
    _frame(b, 10 * ms, "actual_surface_frame_start", cookie=2, token=10, pid=100, layer_name="L", jank_type=64)
    _frame(b, 30 * ms, "frame_end", cookie=2)
    path = tmp_path / "blocking.perfetto-trace"
    path.write_bytes(b.serialize())
    return str(path)


def _frame(b: TraceProtoBuilder, ts: int, kind: str, **fields):
    """A packet carrying TracePacket field 76 (the frame timeline, not in the bundled proto)."""
    ev = FrameTimelineEvent()
    msg = getattr(ev, kind)
    for k, v in fields.items():
        setattr(msg, k, v)
    pkt = b.add_packet()
    pkt.timestamp, pkt.trusted_packet_sequence_id = ts, 1
    pkt.ParseFromString(pkt.SerializeToString() + field(76, ev.SerializeToString()))


def test_waits_name_server_owner_and_frame_and_orphan_reply_is_counted(tmp_path):
    res = analyze_file(_blocking_trace(tmp_path), process="com.example.app")
    b = res.blocking
    assert b.binder_calls == 1 and b.binder[0].dur_ms == 6.0
    assert (b.binder[0].server, b.binder[0].server_tid) == ("system_server", 201)
    assert b.binder[0].overlap.janky_frames == [0.0]  # ms from the capture start (10 ms)
    lock = b.locks[0]
    assert (lock.owner, lock.owner_tid, lock.dur_ms, lock.lock) == ("worker", 101, 6.0, "monitor")
    assert lock.blocked_method == "void a.D.e()(D.java:2)" and lock.overlap.janky_frames == [0.0]  # ms from the capture start (10 ms)
    assert any("1 reply arrived with no transaction" in w for w in res.warnings)


def test_data_without_any_blocking_evidence_has_no_blocking_field_and_missing_parts_are_said(tmp_path):
    # a systrace with neither sched, binder nor lock slices: nothing to read
    res = analyze_file(os.path.join(os.path.dirname(__file__), "data", "android", "android-atrace-systrace.txt"))
    assert res.blocking is None
    # a lock wait but no binder and no sched: the parts not recorded are said, not shown as 0
    p = tmp_path / "lock.perfetto-trace"
    b = TraceProtoBuilder()
    pkt = b.add_packet()
    pkt.trusted_packet_sequence_id = 1
    pr = pkt.process_tree.processes.add()
    pr.pid = 100
    pr.cmdline.append("com.example.app")
    pkt = b.add_packet()
    pkt.trusted_packet_sequence_id = 1
    pkt.ftrace_events.cpu = 0
    for ts, line in ((1_000_000, "B|100|Lock contention on thread list lock (owner tid: 7)"), (5_000_000, "E|100")):
        e = pkt.ftrace_events.event.add()
        e.timestamp, e.pid = ts, 100
        e.print.buf = line + "\n"
    p.write_bytes(b.serialize())
    text = summarize_blocking(analyze_file(str(p)).blocking)
    assert "binder calls not recorded" in text and "uninterruptible sleep not recorded" in text
    assert "0 binder call" not in text and "4 ms on 1 lock (longest 4.0 ms, owner tid 7)" in text
