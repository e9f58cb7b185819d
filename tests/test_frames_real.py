"""Frames, jank types and hot spots on the real captures in tests/data/perfetto (SOURCES.md),
checked against what the reference tools answer (../shared/traces/REFERENCE.md: androidx
TraceSectionMetricTest on api24_startup_cold) and against the rules docs/analyzer.md states."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from nodes.perf.analysis import analyze_file
from nodes.perf.formats import load
from nodes.perf.metrics import compute
from tests.protowire import field

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "perfetto"
COLD = DATA / "api24_startup_cold.perfetto-trace"
WARM = DATA / "api32_startup_warm.perfetto-trace"
EMU = DATA / "ms_android12_emulator_sched_cpusampling.pftrace"
TARGET = "androidx.benchmark.integration.macrobenchmark.target"
TEST_PKG = "androidx.benchmark.integration.macrobenchmark.test"

#: androidx benchmark-macro TraceSectionMetricTest on api24_startup_cold (REFERENCE.md), ms.
TRACE_SECTION_TARGET = {
    "ActivityThreadMain": dict(first=12.639, count=1),
    "activityStart": dict(first=81.979, count=1),
    "inflate": dict(first=4.949, min=4.588, max=10.242, sum=19.779, count=3),
}
TRACE_SECTION_ALL = {
    f"launching: {TARGET}": dict(first=269.947, count=1, process="system_server"),
    "inflate": dict(first=13.318, min=0.836, max=13.318, sum=43.128, count=8),
    "startActivityAndWait": dict(first=1110.689, count=1, process=TEST_PKG),
}
#: The jank types docs/analyzer.md calls user-visible, as trace_processor labels them.
USER_VISIBLE = {"App Deadline Missed", "App Resynced Jitter", "Unknown Jank", "SurfaceFlinger CPU Deadline Missed",
                "SurfaceFlinger GPU Deadline Missed", "SurfaceFlinger Scheduling", "Display HAL"}


@pytest.fixture(scope="module")
def cold():
    return analyze_file(str(COLD))


@pytest.fixture(scope="module")
def warm():
    return analyze_file(str(WARM))


@pytest.fixture(scope="module")
def emu_data():
    return load(str(EMU))


def _close(ours: float, theirs: float) -> bool:
    return abs(ours - theirs) <= 0.01 * theirs


@pytest.mark.parametrize("scope,table", [("app", TRACE_SECTION_TARGET), ("all", TRACE_SECTION_ALL)])
def test_slice_statistics_match_macrobenchmark_trace_section_metric(cold, scope, table):
    stats = {s.name: s for s in cold.slice_stats if s.scope == scope}
    for name, want in table.items():
        s = stats[name]
        assert s.count == want["count"], name
        assert _close(s.first_ms, want["first"]), (name, s.first_ms)
        for key in ("min", "max", "sum"):
            if key in want:
                assert _close(getattr(s, f"{key}_ms"), want[key]), (name, key, getattr(s, f"{key}_ms"))
        if "process" in want:
            assert s.first_process == want["process"]
    assert cold.app.process == TARGET and cold.app.chosen_by == "launched package"
    assert TEST_PKG in cold.app.harness


def test_startup_trace_hot_spots_are_the_apps_and_the_harness_is_apart(warm):
    overall = [h for h in warm.hotspots if h.thread is None and h.kind == "slice"]
    assert overall and all(h.scope == "app" for h in overall)
    assert "measureBlock" not in {h.name for h in overall}  # the Macrobenchmark test process's
    harness = next(s for s in warm.app.summaries if s.scope == "harness")
    assert harness.processes == [TEST_PKG] and harness.top[0].startswith("measureBlock ")
    per_thread = {h.thread for h in warm.hotspots if h.thread is not None}
    assert per_thread and all(f"({TARGET} " in t for t in per_thread)
    # the async launching: span is no thread's time, but it is in the slice statistics
    assert not any(h.name.startswith("launching:") for h in warm.hotspots)
    launch = next(s for s in warm.slice_stats if s.scope == "all" and s.name.startswith("launching:"))
    assert launch.kind == "async" and launch.first_process == "system_server"


@pytest.mark.parametrize("path", [COLD, WARM, EMU], ids=lambda p: p.name)
def test_self_time_never_exceeds_a_threads_busy_time(path):
    res = analyze_file(str(path))
    # a label names a thread by name and pid: same-named threads of one process (Chrome's
    # ThreadPoolForeg workers, whose CPU samples are now read) share one, so their busy times add
    busy: dict[str, float] = defaultdict(float)
    for t in res.threads:
        busy[f"{t.name} ({t.process} {t.pid})" if t.process else f"{t.name} ({t.pid})"] += t.busy_ms
    by_thread: dict[str, float] = defaultdict(float)
    for h in res.hotspots:
        assert 0 <= h.self_ms <= h.total_ms
        if h.thread is not None:
            by_thread[h.thread] += h.self_ms
            if h.thread in busy:
                assert by_thread[h.thread] <= busy[h.thread] + 0.01, h.thread


def test_warm_start_frames_are_the_launched_apps_only(warm):
    fs = warm.frames
    assert (fs.process, fs.chosen_by, fs.count) == (TARGET, "launched package", 2)
    assert fs.jank_source == "frame timeline" and fs.jank_types == {"None": 2} and fs.jank_ratio == 0.0
    # SystemUI drew the splash screen (its one late frame is not the app's)
    sysui = next(o for o in fs.other_processes if o.process == "com.android.systemui")
    assert sysui.jank_types.get("App Deadline Missed") == 1
    assert all(w.pid == fs.pid for w in fs.worst)


def test_emulator_frames_are_the_process_with_the_most_surface_frames(emu_data):
    surface = Counter(f.pid for f in emu_data.frames)
    app = max(surface, key=surface.get)
    res = compute(emu_data)
    fs = res.frames
    assert (fs.pid, fs.chosen_by, fs.count) == (app, "most surface frames", surface[app])
    assert fs.count < len(emu_data.frames)  # the launcher's, system_server's and Chrome's are apart
    mine = [f for f in emu_data.frames if f.pid == app]
    # every component of a combined type counts on its own
    parts = Counter(p.strip() for f in mine for p in f.jank_type.split(","))
    assert fs.jank_types == dict(parts) and sum(fs.jank_types.values()) > fs.count
    visible = sum(1 for f in mine if USER_VISIBLE & {p.strip() for p in f.jank_type.split(",")})
    assert fs.jank_count == visible and fs.jank_ratio == round(visible / fs.count, 4)
    assert 0 < visible < sum(1 for f in mine if f.jank_type != "None")  # stuffing/prediction alone are not jank
    assert {o.pid for o in fs.other_processes} == set(surface) - {app}
    # a jank trace: the answer leads with the jank and its causes, each with a suggestion
    assert res.findings[0].title == f"Janky frames: {fs.jank_ratio * 100:.1f} % of {fs.process}"
    assert res.findings[1].title.startswith("Late frames: ")
    assert all(f.suggestion and f.link for f in res.findings if f.family == "frames")


def test_named_process_chooses_the_frames(emu_data):
    fs = compute(emu_data, process="com.google.android.apps.nexuslauncher").frames
    assert fs.process == "com.google.android.apps.nexuslauncher" and fs.chosen_by == "named by the user"
    assert fs.count == sum(1 for f in emu_data.frames if f.pid == fs.pid)


def test_cold_start_without_frame_timeline_says_what_is_missing_and_how_to_capture_it(cold):
    fs = cold.frames
    assert fs.process == TARGET and fs.jank_source == "over budget" and fs.jank_types == {}
    miss = fs.missing[0]
    assert "FrameTimeline" in miss.what and 'name: "android.surfaceflinger.frametimeline"' in miss.capture
    f = next(f for f in cold.findings if f.title == "Frame analysis is missing data")
    assert "android.surfaceflinger.frametimeline" in f.suggestion and f.family == "frames"
    assert cold.findings[0].family == "startup"  # a startup trace leads with the startup
    # the first frame's cause is decided on the app's own slices, with evidence
    w = fs.worst[0]
    assert w.cause is not None and w.evidence and w.cause_ms <= w.dur_ms


def test_analyze_json_has_the_keys_and_process_chooses(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    r = subprocess.run([sys.executable, "-m", "app.cli", "analyze", str(EMU), "--json", "--process",
                        "com.google.android.apps.nexuslauncher"], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    fr = d["frames"]
    for key in ("pid", "process", "count", "p50_ms", "p90_ms", "p99_ms", "jank_types", "jank_ratio", "causes",
                "other_processes", "missing", "worst"):
        assert key in fr, key
    assert fr["process"] == "com.google.android.apps.nexuslauncher"
    for key in ("cause", "cause_ms", "evidence", "candidates"):
        assert key in fr["worst"][0]
    assert {"slice_stats", "app"} <= d.keys()


def test_on_a_jank_trace_the_headline_and_answer_lead_with_the_jank_and_its_causes(emu_data):
    from nodes.report.view import build_view

    res = compute(emu_data)
    fs = res.frames
    first, *rest = build_view(res.model_dump()).summary_sentences()
    assert f"{fs.count} frames of {fs.process}" in first and "janky" in first
    top = next(iter(fs.causes))
    assert "mostly late because of" in first and top in {c.value for c in (w.cause for w in fs.worst) if c}
    assert any("first suggestion:" in s and "https://developer.android.com/" in s for s in rest)


def _wire(buf: bytes):
    """(field number, wire type, value) of one message, by hand: an independent reading."""
    i = 0
    while i < len(buf):
        key, i = _uvarint(buf, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = _uvarint(buf, i)
        elif wt == 2:
            n, i = _uvarint(buf, i)
            v, i = buf[i:i + n], i + n
        elif wt == 1:
            v, i = buf[i:i + 8], i + 8
        elif wt == 5:
            v, i = buf[i:i + 4], i + 4
        else:
            raise ValueError(wt)
        yield num, wt, v


def _uvarint(buf: bytes, i: int) -> tuple[int, int]:
    shift = out = 0
    while True:
        b = buf[i]
        i += 1
        out |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return out, i


def test_an_actual_surface_frame_whose_frame_end_never_arrives_still_counts(tmp_path):
    """trace_processor begins the actual-frame slice at ActualSurfaceFrameStart and leaves
    dur -1 when no FrameEnd follows: the frame is in actual_frame_timeline_slice all the same.
    The emulator capture with the FrameEnd packets of three of the busiest app's surface frames
    cut out: the app's frame count is still one per ActualSurfaceFrameStart (counted here from
    the bytes), and the three have no duration."""
    raw = EMU.read_bytes()
    packets = [v for num, wt, v in _wire(raw) if num == 1 and wt == 2]
    starts: dict[int, int] = {}  # cookie → pid of actual surface frames
    ends: dict[int, int] = {}  # cookie → packet index of its FrameEnd
    for k, pkt in enumerate(packets):
        for num, wt, v in _wire(pkt):
            if num != 76 or wt != 2:
                continue
            for ev_num, _, ev in _wire(v):
                fields = {n: x for n, _, x in _wire(ev)}
                if ev_num == 4:  # ActualSurfaceFrameStart: cookie 1, pid 4
                    starts[fields[1]] = fields[4]
                elif ev_num == 5:  # FrameEnd: cookie 1
                    ends[fields[1]] = k
    per_pid = Counter(starts.values())
    app = max(per_pid, key=per_pid.get)
    cut = sorted(c for c, p in starts.items() if p == app)[10:13]
    drop = {ends[c] for c in cut}
    out = tmp_path / "no_frame_end.pftrace"
    out.write_bytes(b"".join(field(1, p) for k, p in enumerate(packets) if k not in drop))

    data = load(str(out))
    mine = [f for f in data.frames if f.pid == app]
    assert len(mine) == per_pid[app]
    assert sum(1 for f in mine if f.dur_us is None) == 3
    fs = compute(data).frames
    assert fs.pid == app and fs.count == per_pid[app]
    assert fs.max_ms is not None and len(fs.durations_ms) <= per_pid[app] - 3
    assert data.frame_summary["frame_timeline_surface_frames"] == float(len(starts))


def test_a_frame_rate_needs_ten_frames_over_the_span_they_cover(cold):
    """api24's cold start drew 3 frames: no "5.7 FPS" (a launch's first frames are no rate;
    Macrobenchmark's FrameTimingMetric states none). The emulator's 70 SystemUI frames: their
    count over first start → last end, read back from the per-frame starts and durations."""
    from nodes.perf.metrics.frames import FPS_MIN_FRAMES
    from nodes.report.view import build_view

    fs = cold.frames
    assert fs.count == 3 < FPS_MIN_FRAMES and fs.fps is None
    assert "FPS" not in " ".join(build_view(cold.model_dump()).summary_sentences())
    emu = analyze_file(str(EMU)).frames
    assert len(emu.starts_ms) == len(emu.durations_ms) == 70  # every frame kept (no sub-sampling)
    span_s = (emu.starts_ms[-1] + emu.durations_ms[-1] - emu.starts_ms[0]) / 1000.0
    assert emu.fps == pytest.approx(70 / span_s, rel=1e-3)
