"""The CPU lens: running / runnable time per thread and process, per CPU idle and frequency,
and callstack samples (perf_sample) as function-level hot spots.

References are computed here from a direct protobuf decode of the capture, independent of the
reader and the metrics: a thread's Running time is the sum of the intervals between a
``sched_switch`` onto it and the next switch on that CPU (trace_processor's ``sched`` slices,
which ``thread_state`` Running repeats); samples are counted per leaf function through the
sequence's interned callstacks, frames and function names.
"""

from __future__ import annotations

import os
from collections import Counter, defaultdict

import pytest
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
from perfetto.trace_builder.proto_builder import TraceProtoBuilder

from nodes.perf.analysis import analyze_file
from nodes.perf.metrics.cpu import summarize_cpu

DATA = os.path.join(os.path.dirname(__file__), "data", "perfetto")  # SOURCES.md beside them
SAMPLING = os.path.join(DATA, "ms_android12_emulator_sched_cpusampling.pftrace")
WARM = os.path.join(DATA, "api32_startup_warm.perfetto-trace")


def _packets(path: str):
    t = pb.Trace()
    t.ParseFromString(open(path, "rb").read())
    return t.packet


@pytest.fixture(scope="module")
def sampling():
    return analyze_file(SAMPLING)


def _reference_running(path: str) -> dict[int, float]:
    """tid → ns on a CPU, from plain sched_switch: [switch onto tid, next switch on that CPU)."""
    per_cpu: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for p in _packets(path):
        if p.HasField("ftrace_events"):
            for e in p.ftrace_events.event:
                if e.HasField("sched_switch"):
                    per_cpu[p.ftrace_events.cpu].append((e.timestamp, e.sched_switch.next_pid))
    running: dict[int, float] = defaultdict(float)
    for events in per_cpu.values():
        events.sort()
        for (ts, tid), (nxt, _) in zip(events, events[1:]):
            if tid:
                running[tid] += nxt - ts
    return running


def test_thread_running_time_equals_the_sched_switch_intervals(sampling):
    ref = _reference_running(SAMPLING)
    cpu = sampling.cpu
    assert cpu is not None and cpu.cpu_count == 4
    top = sorted(ref.items(), key=lambda kv: -kv[1])[:10]
    by_tid = {t.tid: t for t in cpu.threads}
    for tid, ns in top:
        # the last interval on each CPU runs to the trace's end here and to the last switch in
        # the reference: 1 % or one 20 ms tick, whichever is larger
        assert by_tid[tid].running_ms == pytest.approx(ns / 1e6, rel=0.01, abs=20.0), tid
    assert cpu.threads[0].tid == top[0][0]
    for t in cpu.threads:
        assert 0.0 <= t.share_of_cpus <= t.share_of_window <= 1.0
        assert t.share_of_window == pytest.approx(t.running_ms / cpu.window_ms, abs=1e-4)
    # a process is the sum of its threads
    proc = cpu.processes[0]
    assert proc.running_ms >= max(t.running_ms for t in cpu.threads if t.pid == proc.pid)
    assert summarize_cpu(cpu).startswith("Over 39.74 s of 4 CPUs: /system/bin/traced_perf")


def test_cpu_idle_residency_is_enter_to_exit(sampling):
    events: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for p in _packets(SAMPLING):
        if p.HasField("ftrace_events"):
            for e in p.ftrace_events.event:
                if e.HasField("cpu_idle"):
                    events[e.cpu_idle.cpu_id].append((e.timestamp, e.cpu_idle.state))
    cores = {c.cpu: c for c in sampling.cpu.cpus}
    for c, evs in events.items():
        idle, entered = 0, None
        for ts, st in sorted(evs):
            if st == 4294967295:
                if entered is not None:
                    idle += ts - entered
                entered = None
            elif entered is None:
                entered = ts
        if entered is None:
            assert cores[c].idle_ms == pytest.approx(idle / 1e6, rel=0.01), c
        else:  # still idle at the end: that state lasts to the trace's end (counter semantics)
            assert cores[c].idle_ms > idle / 1e6
        assert 0.0 < cores[c].idle_share < 1.0


def test_cpu_frequency_is_time_weighted_on_a_device_trace():
    res = analyze_file(WARM)
    cores = [c for c in res.cpu.cpus if c.freq_avg_mhz is not None]
    assert res.cpu.cpu_count == 8 and cores
    for c in cores:
        assert c.freq_min_mhz <= c.freq_avg_mhz <= c.freq_max_mhz


# --- callstack samples -----------------------------------------------------------------


def _reference_leaf_counts(path: str) -> tuple[Counter, int]:
    functions: dict[int, dict[int, str]] = defaultdict(dict)
    frames: dict[int, dict[int, int]] = defaultdict(dict)
    stacks: dict[int, dict[int, list[int]]] = defaultdict(dict)
    leaf: Counter = Counter()
    n = 0
    for p in _packets(path):
        seq = p.trusted_packet_sequence_id
        if p.sequence_flags & 1:
            functions[seq], frames[seq], stacks[seq] = {}, {}, {}
        d = p.interned_data
        for s in d.function_names:
            functions[seq][s.iid] = s.str.decode() if isinstance(s.str, bytes) else s.str
        for f in d.frames:
            frames[seq][f.iid] = f.function_name_id
        for c in d.callstacks:
            stacks[seq][c.iid] = list(c.frame_ids)
        if p.HasField("perf_sample") and p.perf_sample.HasField("callstack_iid"):
            n += 1
            ids = stacks[seq][p.perf_sample.callstack_iid]
            name = functions[seq].get(frames[seq][ids[-1]], "")
            if name:
                leaf[name] += 1
    return leaf, n


def test_perf_samples_become_sampled_hot_spots_with_self_counts_per_leaf(sampling):
    leaf, n = _reference_leaf_counts(SAMPLING)
    assert sampling.meta["perfetto.cpu_samples"] == str(n)
    assert sampling.meta["perfetto.cpu_sampling_hz"] == "50"
    rows = {h.name: h for h in sampling.hotspots if h.kind == "sample" and h.thread is None and h.process is None}
    for name, count in leaf.most_common(5):
        # 50 Hz: each sample is 20 ms of CPU
        assert rows[name].self_ms == pytest.approx(count * 20.0, rel=0.01), name
    assert "CPU callstack samples" not in sampling.meta.get("perfetto.not_read", "")
    assert any(h.kind == "sample" and h.thread and "traced_perf" in h.thread for h in sampling.hotspots)
    assert sampling.stacks  # the flame graph and speedscope export read these


def _sample_trace(tmp_path) -> str:
    b = TraceProtoBuilder()

    def intern(p, fn_names, frame_map, stacks):
        for iid, s in fn_names.items():
            x = p.interned_data.function_names.add()
            x.iid, x.str = iid, s.encode()
        for iid, fn in frame_map.items():
            x = p.interned_data.frames.add()
            x.iid, x.function_name_id = iid, fn
        for iid, ids in stacks.items():
            x = p.interned_data.callstacks.add()
            x.iid = iid
            x.frame_ids.extend(ids)

    def sample(ts, callstack, seq=5):
        p = b.add_packet()
        p.timestamp, p.trusted_packet_sequence_id = ts, seq
        p.perf_sample.cpu, p.perf_sample.pid, p.perf_sample.tid = 0, 10, 11
        p.perf_sample.callstack_iid = callstack
        return p

    cfg = b.add_packet()
    ds = cfg.trace_config.data_sources.add()
    ds.config.name = "linux.perf"
    ds.config.perf_event_config.timebase.frequency = 100
    p = sample(1000, 1)
    p.sequence_flags = 1
    intern(p, {1: "main", 2: "work"}, {1: 1, 2: 2}, {1: [1, 2]})
    sample(2000, 1)
    sample(3000, 9)  # never interned
    # the state is cleared: iid 1 now means another stack, resolved against the new tables
    p = sample(4000, 1)
    p.sequence_flags = 1
    intern(p, {1: "main", 3: "other"}, {1: 1, 2: 3}, {1: [1, 2]})
    sample(5000, 1, seq=6)  # a sequence with no interning state
    path = tmp_path / "samples.perfetto-trace"
    path.write_bytes(b.serialize())
    return str(path)


def test_uninterned_callstacks_and_scoped_interning_are_counted_and_named(tmp_path):
    res = analyze_file(_sample_trace(tmp_path))
    rows = {h.name: h for h in res.hotspots if h.kind == "sample" and h.thread is None}
    assert rows["work"].self_ms == 20.0 and rows["work"].count == 2  # 100 Hz: 10 ms each
    assert rows["other"].self_ms == 10.0 and rows["other"].count == 1
    assert rows["main"].total_ms == 30.0 and rows["main"].self_ms == 0.0
    text = " | ".join(res.warnings)
    assert "1 sample(s) named a callstack id never interned" in text
    assert "no interning state" in text


def test_startup_section_repeats_the_launch_main_thread_states():
    """The launch's own main-thread breakdown (metrics/android_startup.py, thread_state over
    android_startups' window) and the CPU lens's startup section agree."""
    res = analyze_file(os.path.join(DATA, "api24_startup_cold.perfetto-trace"))
    run = res.startup.runs[0]
    sec = next(s for s in res.cpu.sections if s.name == "startup")
    assert (sec.start_ms, sec.dur_ms) == (run.start_ms, run.total_ms)
    main = next(t for t in sec.threads if t.tid == t.pid == 7694)
    assert main.running_ms == pytest.approx(run.main_thread.running_ms, abs=0.01)
    assert main.runnable_ms == pytest.approx(run.main_thread.runnable_ms, abs=0.01)
    app = sec.processes[0]
    assert app.name == "androidx.benchmark.integration.macrobenchmark.target" and app.running_ms >= main.running_ms
    assert 0 < app.share_of_cpus < app.share_of_window <= 6  # 6 CPUs: a process can use more than one
    # measureBlock of the warm start is a section too
    warm = analyze_file(WARM)
    assert [s.name for s in warm.cpu.sections] == ["startup", "measureBlock"]


def _reference_per_process(path: str) -> tuple[dict[int, Counter], dict[int, Counter], dict[int, set]]:
    """Per pid: samples per leaf function, samples each function is on (once per sample), and
    the tids sampled — decoded here from the perf_sample packets, sharing no reader code."""
    functions: dict[int, dict[int, str]] = defaultdict(dict)
    frames: dict[int, dict[int, int]] = defaultdict(dict)
    stacks: dict[int, dict[int, list[int]]] = defaultdict(dict)
    leaf: dict[int, Counter] = defaultdict(Counter)
    on: dict[int, Counter] = defaultdict(Counter)
    tids: dict[int, set] = defaultdict(set)
    for p in _packets(path):
        seq = p.trusted_packet_sequence_id
        if p.sequence_flags & 1:
            functions[seq], frames[seq], stacks[seq] = {}, {}, {}
        d = p.interned_data
        for s in d.function_names:
            functions[seq][s.iid] = s.str.decode() if isinstance(s.str, bytes) else s.str
        for f in d.frames:
            frames[seq][f.iid] = f.function_name_id
        for c in d.callstacks:
            stacks[seq][c.iid] = list(c.frame_ids)
        if p.HasField("perf_sample") and p.perf_sample.HasField("callstack_iid"):
            ps = p.perf_sample
            names = [functions[seq].get(frames[seq][i], "") for i in stacks[seq][ps.callstack_iid]]
            tids[ps.pid].add(ps.tid)
            on[ps.pid][None] += 1  # every sample of the process
            if names and names[-1]:
                leaf[ps.pid][names[-1]] += 1
            for n in set(names) - {"", None}:
                on[ps.pid][n] += 1
    return leaf, on, tids


def test_sampled_hot_spots_per_process_stacks_and_speedscope_are_marked_sampled(sampling):
    from nodes.report.exports import speedscope
    from nodes.report.view import build_view

    leaf, on, tids = _reference_per_process(SAMPLING)
    rows = [h for h in sampling.hotspots if h.process is not None]
    assert rows and all(h.kind == "sample" and h.thread is None for h in rows)
    procs = {h.process for h in rows}
    # only processes with more than one sampled thread get rows of their own
    pid_of = {label: int(label.rsplit("pid ", 1)[1].rstrip(")")) for label in procs}
    assert all(len(tids[pid]) > 1 for pid in pid_of.values())
    top = rows[0]
    pid = pid_of[top.process]
    whole = on[pid][None]
    for name, n in leaf[pid].most_common(3):  # 50 Hz: each sample is 20 ms
        h = next(x for x in rows if x.process == top.process and x.name == name)
        assert h.self_ms == pytest.approx(n * 20.0, rel=0.01), name
        assert h.total_ms == pytest.approx(on[pid][name] * 20.0, rel=0.01) and h.count == on[pid][name]
        assert h.self_pct == pytest.approx(100.0 * n / whole, abs=0.6)  # of the process's sampled time
    # the stacks view: sampled stacks say so and name their process
    sampled = [s for s in sampling.stacks if s.sampled]
    assert sampled and all(s.process for s in sampled)
    doc = speedscope(build_view(sampling))
    names = [p["name"] for p in doc["profiles"]]
    assert any(n.endswith(" (sampled)") and ", all threads" not in n for n in names)
    proc_profiles = {n: p for n, p in zip(names, doc["profiles"]) if n.endswith(", all threads (sampled)")}
    assert proc_profiles
    for n, prof in proc_profiles.items():
        label = n[: -len(", all threads (sampled)")]
        mine = [s for s in sampled if s.process == label]
        assert len({s.thread for s in mine}) > 1
        assert prof["endValue"] == pytest.approx(sum(s.weight_ms for s in mine), rel=1e-6)
    # the icicle: one subtree per sampled process, above its threads
    from nodes.report.charts import stack_tree

    tops = set(stack_tree(sampling.stacks).children)
    assert {f"{s.process} (sampled)" for s in sampled} <= tops


def test_traced_stacks_name_no_process_and_are_not_sampled():
    """Slices are traced, not sampled: their stacks stay as they were (no process, not sampled),
    and a trace without CPU samples has no per-process hot-spot rows."""
    warm = analyze_file(WARM)
    assert warm.stacks and all(not s.sampled and s.process is None for s in warm.stacks)
    assert all(h.process is None for h in warm.hotspots)


def test_a_profile_that_names_no_process_gets_no_process_rows_or_profiles():
    """py-spy's speedscope names threads but no process (pid read as 0): its stacks are sampled,
    name no process, and neither the hot spots nor the speedscope export invent a "pid 0"."""
    from nodes.report.exports import speedscope
    from nodes.report.view import build_view

    a = analyze_file(os.path.join(os.path.dirname(__file__), "data", "perf", "pyspy-slowapp.speedscope.json"))
    assert a.stacks and all(s.sampled and s.process is None for s in a.stacks)
    assert all(h.process is None for h in a.hotspots)
    names = [p["name"] for p in speedscope(build_view(a))["profiles"]]
    assert len(names) > 1 and all(n.endswith(" (sampled)") and "all threads" not in n and "pid 0" not in n for n in names)
