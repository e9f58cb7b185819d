"""The Perfetto reader on three real captures (tests/data/perfetto/SOURCES.md), checked
against the counts their provenance records."""

from __future__ import annotations

import gzip
from collections import Counter
from pathlib import Path

import pytest

from nodes.perf.parsers import perfetto

DATA = Path(__file__).parent / "data" / "perfetto"
WARM = DATA / "api32_startup_warm.perfetto-trace"
EMULATOR = DATA / "ms_android12_emulator_sched_cpusampling.pftrace"
CHROME = DATA / "chrome_fcp_lcp_navigations.pftrace"
PACKAGE = "androidx.benchmark.integration.macrobenchmark.target"


@pytest.fixture(scope="module")
def warm():
    return perfetto.parse(str(WARM))


@pytest.fixture(scope="module")
def emulator():
    return perfetto.parse(str(EMULATOR))


@pytest.fixture(scope="module")
def chrome():
    return perfetto.parse(str(CHROME))


def _names(data, table) -> Counter:
    c: Counter = Counter()
    for cols in table.values():
        for i in cols.name:
            c[data.strings[i]] += 1
    return c


def test_sniff_recognises_all_three_from_their_head():
    for path in (WARM, EMULATOR, CHROME):
        head = path.read_bytes()[: 64 * 1024]
        assert perfetto.sniff(head, path.name)


def test_warm_start_counts_match_the_capture_record(warm):
    m = warm.meta
    assert m["perfetto.packets"] == "269"
    assert m["perfetto.atrace_prints"] == "13062"
    assert m["perfetto.compact_sched_switches"] == "11086"
    assert warm.facts.frame_timeline_events == 63
    names = _names(warm, warm.slices)
    assert sum(n for name, n in names.items() if name.startswith("Choreographer#doFrame")) == 30
    assert warm.duration_us / 1e6 == pytest.approx(2.2, abs=0.2)
    assert not warm.partial


def test_warm_start_is_found_with_its_phases(warm):
    """The reader notes the launch and keeps the app's scheduler data; the startup itself has one
    definition, trace_processor's android_startups, in the analysis (tests/test_perf_startup.py
    checks it against the published values)."""
    from nodes.perf.metrics import compute

    assert warm.startup_runs == [] and warm.meta["startup_package"] == PACKAGE
    runs = compute(warm).startup.runs
    assert [r.kind for r in runs] == ["warm"]
    run = runs[0]
    assert 100 < run.total_ms < 200
    phases = {p.name: p for p in run.phases}
    assert "startup" in phases
    assert {"activityStart", "activityResume", "first Choreographer#doFrame"} <= set(phases)
    assert "bindApplication" not in phases  # the process already existed: that is what warm means
    order = [phases[n].start_ms for n in ("activityStart", "activityResume", "first Choreographer#doFrame")]
    assert order == sorted(order) and all(0 <= t <= run.total_ms for t in order)
    app_pid = next(pid for pid, name in warm.processes.items() if name == PACKAGE)
    states = warm.thread_states[(app_pid, app_pid)]
    assert states["running"] > 0 and states["sleeping"] > 0


def test_warm_start_frames_come_from_the_frame_timeline(warm):
    app_pid = next(pid for pid, name in warm.processes.items() if name == PACKAGE)
    app_frames = [f for f in warm.frames if f.pid == app_pid]
    assert len(warm.frames) == 6 and len(app_frames) == 2
    assert all(f.budget_us == pytest.approx(16600.0) for f in warm.frames)
    assert sum(1 for f in warm.frames if f.janky) == 1
    assert any(k.startswith("Heap size (KB): " + PACKAGE) for k in warm.counters)


def test_emulator_trace_plain_sched_and_frame_timeline(emulator):
    m = emulator.meta
    assert m["perfetto.packets"] == "2462"
    assert m["perfetto.sched_switches"] == "24698"
    assert emulator.facts.frame_timeline_events == 1167
    assert m["perfetto.atrace_prints"] == "0"
    assert "CPU callstack samples" not in m.get("perfetto.not_read", "")  # read: perfetto_samples.py
    assert m["perfetto.cpu_samples"] == "684"  # of 742 perf_sample packets, those with a callstack
    assert len(emulator.processes) >= 221
    assert emulator.slice_count == 0
    # Every thread that ran has a running total, and none ran longer than the trace lasted.
    running = [s["running"] for s in emulator.thread_states.values() if "running" in s]
    assert len(running) > 100
    assert max(running) <= 40e6
    assert len(emulator.frames) == 161
    assert {"cpu.usage", "mem.available"} <= set(emulator.counters)


def test_chrome_interned_track_events_resolve_to_names(chrome):
    assert chrome.meta["perfetto.packets"] == "50501"
    assert chrome.meta["perfetto.track_events"] == "48926"
    names = _names(chrome, chrome.slices)
    assert "[unknown name]" not in names
    assert not any("interned ids" in w for w in chrome.warnings)
    assert names["Scheduler::RunNextTask"] > 1000
    labels = {t.name for t in chrome.threads.values()}
    assert {"CrBrowserMain", "CrRendererMain", "CrGpuMain"} <= labels
    assert "GPU Process" in chrome.processes.values()
    # Clock domains meet on BOOTTIME: the 50k events span the ~21 s capture, not the uptime.
    assert 15e6 < chrome.duration_us < 30e6
    assert _names(chrome, chrome.async_slices)["InputLatency::GestureScrollUpdate"] > 100


def test_gzipped_capture_reads_the_same(tmp_path, warm):
    gz = tmp_path / "warm.perfetto-trace.gz"
    gz.write_bytes(gzip.compress(WARM.read_bytes(), compresslevel=1))
    again = perfetto.parse(str(gz))
    assert again.slice_count == warm.slice_count
    assert len(again.frames) == len(warm.frames)
    assert again.thread_states == warm.thread_states
