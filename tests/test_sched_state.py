"""One decoder of scheduler states (nodes/perf/sched_state.py), as trace_processor's
task-state strings define them (perfetto src/trace_processor/types/task_state.cc, stdlib
sched/states.sql), read the same way by the Perfetto and the atrace reader."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from perfetto.trace_builder.proto_builder import TraceProtoBuilder

from nodes.perf.parsers import atrace, perfetto
from nodes.perf.sched_state import SchedState, classify, from_raw, from_text, kernel_version

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("raw,kernel,want", [
    # 4.14+: 0x40 P, 0x80 I, 0x100 preemption, above invalid
    (0, (5, 10), "R"), (0x100, (5, 10), "R+"), (1, (5, 10), "S"), (2, (5, 10), "D"), (4, (5, 10), "T"),
    (8, (5, 10), "t"), (0x10, (5, 10), "X"), (0x20, (5, 10), "Z"), (0x40, (5, 10), "P"), (0x80, (5, 10), "I"),
    (0x101, (5, 10), "S"), (0x200, (5, 10), None),
    # 4.8–4.13: x K W P N at 0x40…0x400, preemption 0x1000; 0x800 (TASK_NEW) is not decoded
    (0x82, (4, 9), "DK"), (0x1000, (4, 9), "R+"), (0x800, (4, 9), "R"), (0x402, (4, 9), "I"),
    # 4.2–4.7 (and no kernel version: the 4.4 layout): preemption 0x800
    (0x800, (4, 4), "R+"), (0x40, (4, 4), "x"), (0x100, None, "W"), (0x800, None, "R+"), (0x400, None, "N"),
    # before 4.2: no TASK_NOLOAD, preemption is 0x400 (docs/perfetto.md: our one difference)
    (1024, (3, 10), "R+"), (130, (3, 10), "DK"), (64, (3, 10), "x"),
])
def test_prev_state_bits_become_trace_processors_strings(raw, kernel, want):
    assert from_raw(raw, kernel) == want


@pytest.mark.parametrize("text,want", [
    ("R", "R"), ("R+", "R+"), ("S", "S"), ("D", "D"), ("D|K", "DK"), ("K|D", "DK"), ("DK", "DK"), ("x", "x"),
    ("X", "X"), ("Z", "Z"), ("I", "I"), ("S|W", "SW"), ("", None), ("Q", None), ("S|R", None),
])
def test_systrace_prev_state_text_becomes_the_same_strings(text, want):
    assert from_text(text) == want


@pytest.mark.parametrize("state,want", [
    ("R", ("runnable", SchedState.R)), ("R+", ("runnable", SchedState.R_PREEMPTED)),
    ("S", ("sleeping", SchedState.S)), ("D", ("sleeping", SchedState.D)), ("DK", ("sleeping", SchedState.D)),
    ("I", ("sleeping", SchedState.OTHER)), ("T", ("sleeping", SchedState.OTHER)), ("N", ("sleeping", SchedState.OTHER)),
    ("X", (None, SchedState.OTHER)), ("Z", (None, SchedState.OTHER)), ("x", (None, SchedState.OTHER)),
    (None, ("sleeping", SchedState.OTHER)),
])
def test_each_state_has_one_coarse_state_and_one_interval_code(state, want):
    assert classify(state) == want


def test_interval_codes_carry_trace_processors_names():
    assert [s.label for s in SchedState] == ["Running", "R", "R+", "S", "D", "other"]
    assert [s for s in SchedState if s.runnable] == [SchedState.R, SchedState.R_PREEMPTED]


def test_kernel_version_from_the_uname_line():
    assert kernel_version("Linux 3.10.73-gb75eb01 aarch64") == (3, 10)
    assert kernel_version(None) is None


def _atrace_exit(tmp_path, state: str) -> dict:
    lines = [
        "# tracer: nop",
        "          <idle>-0     [000] d..3  100.000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=w next_pid=42 next_prio=120",
        f"               w-42    ( 42) [000] d..3  100.010000: sched_switch: prev_comm=w prev_pid=42 prev_prio=120 prev_state={state} ==> next_comm=swapper/0 next_pid=0 next_prio=120",
        "          <idle>-0     [000] d..3  100.050000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=o next_pid=43 next_prio=120",
    ]
    p = tmp_path / f"exit_{len(state)}.txt"
    p.write_text("\n".join(lines) + "\n")
    return atrace.parse(str(p)).thread_states[(42, 42)]


def _perfetto_exit(tmp_path, raw: int) -> dict:
    b = TraceProtoBuilder()
    info = b.add_packet()
    info.trusted_packet_sequence_id = 1
    info.system_info.utsname.sysname, info.system_info.utsname.release = "Linux", "5.10.107"
    pkt = b.add_packet()
    pkt.trusted_packet_sequence_id = 1
    pkt.ftrace_events.cpu = 0
    for ts, prev, state, nxt in ((100_000_000_000, 0, 0, 42), (100_010_000_000, 42, raw, 0),
                                 (100_050_000_000, 0, 0, 43)):
        e = pkt.ftrace_events.event.add()
        e.timestamp = ts
        e.sched_switch.prev_pid, e.sched_switch.prev_state, e.sched_switch.next_pid = prev, state, nxt
    p = tmp_path / f"exit_{raw}.perfetto-trace"
    p.write_bytes(b.serialize())
    return perfetto.parse(str(p)).thread_states[(42, 42)]


def test_a_dead_task_is_counted_the_same_way_by_every_reader(tmp_path):
    """Runs 10 ms, exits (X), and the trace goes on 40 ms: the dead time is in no total —
    before, the atrace reader counted it as sleeping. A live sleeper counts it as sleeping."""
    dead = {"running": pytest.approx(10_000.0)}
    assert _atrace_exit(tmp_path, "X") == dead
    assert _perfetto_exit(tmp_path, 0x10) == dead
    asleep = {"running": pytest.approx(10_000.0), "sleeping": pytest.approx(40_000.0)}
    assert _atrace_exit(tmp_path, "D|K") == asleep
    assert _perfetto_exit(tmp_path, 0x2) == asleep


def test_no_second_decoder_or_positional_state_index_in_the_packages():
    """prev_state is decoded in nodes/perf/sched_state.py only; states are read by name."""
    offenders = []
    for path in sorted((ROOT / "nodes").rglob("*.py")) + sorted((ROOT / "app").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        rel = path.relative_to(ROOT).as_posix()
        if rel == "nodes/perf/sched_state.py":
            continue
        if re.search(r"\bSCHED_STATES\b|\bby\[[0-9]\]|pstate\.startswith\(|prev_state\s*&", text):
            offenders.append(rel)
    assert offenders == []
