"""PerfData → AnalysisResult, on hand-built data with every number worked out by hand, and on
the real captures."""

from __future__ import annotations

from pathlib import Path

import pytest

from nodes.perf.formats import load
from nodes.perf.metrics import compute
from nodes.perf.model import Frame, ImportEntry, PerfData, StartupRun

DATA = Path(__file__).parent / "data" / "perf"
MS = 1000.0


def _pd(fmt="test") -> PerfData:
    return PerfData(fmt, "/data/x.trace")


def test_nested_self_total_and_recursion():
    pd = _pd()
    # main thread: A[0,100] { B[10,40] { A[15,35] (recursion) }, C[50,60] }, then D[200,210]
    for name, t, d in (("A", 0, 100), ("B", 10, 30), ("A", 15, 20), ("C", 50, 10), ("D", 200, 10)):
        pd.add_slice(1, 1, t * MS, d * MS, name, file="/src/app.py" if name == "A" else None, line=3 if name == "A" else None)
    pd.set_thread_name(1, 1, "MainThread")
    res = compute(pd)
    hs = {h.name: h for h in res.hotspots if h.thread is None}
    # A: self 100-30-10 = 60 (outer) + 20 (inner) = 80; total counted once (outer) = 100
    assert hs["A"].self_ms == 80 and hs["A"].total_ms == 100 and hs["A"].count == 2
    assert hs["A"].file == "/src/app.py" and hs["A"].line == 3
    assert hs["B"].self_ms == 10 and hs["B"].total_ms == 30
    assert hs["C"].self_ms == 10 and hs["D"].self_ms == 10
    busy = 110.0
    assert res.threads[0].busy_ms == busy and res.threads[0].is_main
    assert hs["A"].self_pct == pytest.approx(100 * 80 / busy, abs=0.01)
    assert [h.name for h in res.hotspots if h.thread is None][0] == "A"
    assert res.long_tasks and res.long_tasks[0].name == "A" and res.long_tasks[0].dur_ms == 100
    assert res.duration_ms == 210
    stacks = {tuple(s.frames): s.weight_ms for s in res.stacks}
    assert stacks[("A", "B", "A")] == 20 and stacks[("A", "B")] == 10 and stacks[("A",)] == 60


def test_overlapping_children_are_clipped_to_their_parent():
    pd = _pd()
    pd.add_slice(1, 1, 0, 10 * MS, "parent")
    pd.add_slice(1, 1, 5 * MS, 20 * MS, "sticks-out")  # ends after its parent
    res = compute(pd)
    hs = {h.name: h for h in res.hotspots if h.thread is None}
    # only the part inside the parent is the child's: self time never exceeds busy time
    assert hs["parent"].self_ms == 5 and hs["sticks-out"].self_ms == 5
    busy = next(t.busy_ms for t in res.threads if t.tid == 1)
    assert busy == 10 and sum(h.self_ms for h in hs.values()) <= busy
    assert all(h.self_ms >= 0 for h in res.hotspots)


def test_sampled_self_total_and_recursion_counted_once():
    pd = _pd()
    main, work, rec = pd.frame_id("main", "/a.py", 1), pd.frame_id("work", "/a.py", 5), pd.frame_id("rec", "/a.py", 9)
    rec_other_line = pd.frame_id("rec", "/a.py", 11)
    pd.add_sample([main, work], 30 * MS, 1, 1)
    pd.add_sample([main, rec, rec, rec_other_line], 50 * MS, 1, 1)
    pd.add_sample([main], 20 * MS, 1, 1)
    pd.mark_main_thread(1, 1)
    res = compute(pd)
    hs = {h.name: h for h in res.hotspots if h.thread is None}
    assert hs["rec"].self_ms == 50 and hs["rec"].total_ms == 50  # not 150
    assert hs["rec"].line == 11  # the hottest line
    assert hs["work"].self_pct == 30.0 and hs["main"].total_ms == 100 and hs["main"].self_ms == 20
    assert res.threads[0].busy_ms == 100 and res.threads[0].is_main


@pytest.mark.parametrize(
    "threads, main",
    [
        ({(1, 10): "CrBrowserMain", (2, 20): "CrRendererMain", (2, 21): "Compositor"}, (2, 20)),
        ({(1, 5): "worker", (1, 6): "MainThread"}, (1, 6)),
        ({(1, 5): "a", (1, 6): "b"}, (1, 6)),  # nothing to go by: the busiest
    ],
)
def test_main_thread_identification(threads, main):
    pd = _pd()
    for i, ((pid, tid), name) in enumerate(threads.items()):
        pd.set_thread_name(pid, tid, name)
        pd.add_slice(pid, tid, 0, (10 + 10 * i) * MS, "task")
    res = compute(pd)
    mains = [(t.pid, t.tid) for t in res.threads if t.is_main]
    assert mains == [main]


def test_android_frames_budget_from_vsync_and_worst_frame_contents():
    pd = _pd("atrace")
    app, ui, rt = 100, 100, 101
    pd.set_thread_name(app, rt, "RenderThread")
    for i in range(10):
        t = i * 16_667.0
        d = 30 * MS if i == 4 else 8 * MS
        pd.add_slice(app, ui, t, d, "Choreographer#doFrame 12345")
        pd.add_slice(app, ui, t + 100, d - 200, "traversal")
        pd.add_slice(app, rt, t + d, 3 * MS, "DrawFrames 12345")
    for i in range(30):  # VSYNC-app toggles every 11.1 ms: a 90 Hz display
        pd.add_counter("VSYNC-app", i * 11_111.0, i % 2)
    pd.add_slice(7, 7, 0, 1 * MS, "Choreographer#doFrame")  # another app, one frame
    res = compute(pd)
    fs = res.frames
    assert fs.count == 10 and fs.budget_source == "vsync period" and fs.budget_ms == pytest.approx(11.111, abs=0.01)
    assert fs.jank_count == 1 and fs.jank_ratio == 0.1
    assert fs.max_ms == 30 and fs.p50_ms == 8 and fs.p99_ms == 30
    assert fs.worst[0].dur_ms == 30 and any(r.startswith("traversal") for r in fs.worst[0].ran)
    assert len(fs.durations_ms) == len(fs.starts_ms) == 10
    assert [t for t in res.threads if t.is_main][0].tid == ui
    janky = [f for f in res.findings if f.title.startswith("Janky frames")]
    assert janky and janky[0].evidence.start_ms == pytest.approx(4 * 16.667, abs=0.01)


def test_chrome_frames_from_begin_draw_and_main_thread_requests():
    pd = _pd("trace_event")
    comp = (5, 6)
    v = 16_667.0
    for i in range(20):
        pd.add_instant(*comp, i * v, "BeginFrame")
    # frames 0..4 compositor-only: draw 3 ms after their BeginFrame
    for i in range(5):
        pd.add_instant(*comp, i * v + 3 * MS, "DrawFrame")
    # a main-thread frame requested at vsync 6 that draws only at vsync 12 + 2 ms
    pd.add_instant(*comp, 6 * v + 100, "RequestMainThreadFrame")
    pd.add_instant(*comp, 12 * v + 2 * MS, "DrawFrame")
    pd.add_slice(5, 5, 6 * v + 500, 90 * MS, "ThreadProxy::BeginMainFrame")
    pd.set_thread_name(5, 5, "CrRendererMain")
    # idle vsyncs 13..19 with nothing drawn: no frame
    res = compute(pd)
    fs = res.frames
    assert fs.count == 6 and fs.budget_source == "vsync period"
    assert fs.max_ms == pytest.approx(6 * 16.667 + 2, abs=0.01)
    assert fs.jank_count == 1 and "ThreadProxy::BeginMainFrame" in fs.worst[0].ran[0]


def test_reader_frames_with_expected_durations_and_producer_verdict():
    pd = _pd("perfetto")
    for i in range(8):
        pd.add_frame(Frame(ts_us=i * 8333.0, dur_us=9000.0 if i == 3 else 5000.0, budget_us=8333.0,
                           janky=(i == 3), jank_type="App Deadline Missed" if i == 3 else None, pid=9))
    pd.frame_summary["total_frames"] = 8
    res = compute(pd)
    fs = res.frames
    assert fs.budget_source == "expected frames" and fs.budget_ms == pytest.approx(8.333)
    assert fs.jank_count == 1 and fs.worst[0].jank_type == "App Deadline Missed"
    assert fs.fps == pytest.approx(8 / ((7 * 8333 + 5000) / 1e6), rel=1e-3)


def test_summary_only_frames_from_a_tool():
    pd = _pd("gfxinfo")
    pd.frame_summary.update({"total_frames": 200, "janky_frames": 50, "p50_ms": 12.0, "p90_ms": 21.0, "p99_ms": 40.0})
    res = compute(pd)
    assert res.frames.count == 200 and res.frames.jank_ratio == 0.25 and res.frames.p90_ms == 21.0
    rep = next(f for f in res.findings if f.title.startswith("The tool reports"))
    # numbers written as the report writes them: one decimal and a space before %, ms with a unit
    assert rep.title == "The tool reports 25.0 % janky frames"
    assert "reported 50 janky of 200 frames (25.0 %); p90 21.0 ms." in rep.detail


def test_reported_jank_count_and_share_come_from_the_same_gfxinfo_line():
    """gfxinfo prints "Janky frames" and "Janky frames (legacy)"; the finding once took the
    count from the first and the share from the second ("3 janky of 7 frames (28.6 %)")."""
    import re
    path = Path(__file__).parent / "data" / "android" / "gfxinfo-framestats-android13.txt"
    text = path.read_text()
    total = int(re.search(r"^Total frames rendered: (\d+)", text, re.M).group(1))
    janky, pct = re.search(r"^Janky frames: (\d+) \(([\d.]+)%\)", text, re.M).groups()
    assert re.search(r"^Janky frames \(legacy\): (\d+)", text, re.M).group(1) != janky  # both present
    rep = next(f for f in compute(load(path)).findings if f.title.startswith("The tool reports"))
    assert f"reported {janky} janky of {total} frames ({float(pct):.1f} %)" in rep.detail
    assert rep.title == f"The tool reports {float(pct):.1f} % janky frames"


def test_gfxinfo_rows_are_judged_by_their_own_verdict_or_duration_not_as_frame_timeline():
    """gfxinfo rows name their window (``Frame.layer``) but are not FrameTimeline frames: the
    legacy table once read "0.0 % carry a user-visible jank type" with p50 27 ms over a 16.7 ms
    budget. The legacy rows are judged by duration; framestats rows by their FrameDeadline flag."""
    import re
    android = Path(__file__).parent / "data" / "android"
    legacy = android / "gfxinfo-reactnativefeed-flashlight.txt"
    table = legacy.read_text().split("\tDraw\tPrepare\tProcess\tExecute\n", 1)[1]
    rows = [sum(map(float, ln.split())) for ln in table.splitlines()
            if re.fullmatch(r"\s*[\d.]+(\s+[\d.]+){3}\s*", ln)]
    fs = compute(load(legacy)).frames
    assert fs.count == len(rows) == 120 and fs.jank_source == "over budget"
    assert fs.jank_count == sum(1 for r in rows if r > fs.budget_ms) > 0
    fs13 = compute(load(android / "gfxinfo-framestats-android13.txt")).frames
    assert fs13.jank_source == "reported" and fs13.jank_count > 0


def test_startup_runs_phases_imports_and_findings():
    pd = _pd("startup_runs")
    for i, t in enumerate([2400.0, 1200.0, 1100.0, 1300.0, 1000.0]):
        pd.startup_runs.append(StartupRun(index=i, total_ms=t, kind="cold"))
    pd.imports += [
        ImportEntry(module="numpy", self_us=90_000, cumulative_us=250_000, depth=0, file="/site/numpy/__init__.py"),
        ImportEntry(module="numpy.core", self_us=160_000, cumulative_us=160_000, depth=1),
    ]
    res = compute(pd)
    st = res.startup
    assert (st.median_ms, st.min_ms, st.max_ms, st.spread_ms, st.first_ms) == (1200.0, 1000.0, 2400.0, 1400.0, 2400.0)
    assert st.kind == "cold" and st.imports[0].module == "numpy"
    titles = [f.title for f in res.findings]
    assert "Startup time varies a lot" in titles and "The first run is much slower" in titles
    assert any(t.startswith("Imports take 250 ms") for t in titles)
    imp = [h for h in res.hotspots if h.kind == "import"]
    assert imp[0].name == "numpy.core" and imp[0].self_pct == 64.0


def test_counters_are_summarised_and_downsampled():
    pd = _pd("psutil_series")
    for i in range(1000):
        pd.add_counter("cpu_percent", i * 100_000.0, 95.0 + (i % 3), "%")
        pd.add_counter("rss_bytes", i * 100_000.0, 100e6 + i * 200e3, "bytes")
    res = compute(pd)
    c = {c.name: c for c in res.counters}
    assert c["cpu_percent"].min == 95 and c["cpu_percent"].max == 97 and len(c["cpu_percent"].points) <= 201
    assert c["rss_bytes"].last == 100e6 + 999 * 200e3 and c["rss_bytes"].unit == "bytes"
    titles = {f.title for f in res.findings}
    assert {"CPU bound", "Memory grows"} <= titles


def test_findings_carry_evidence_and_are_ordered_by_severity():
    pd = load(str(DATA / "chrome65-devtools-timeline.json"))
    res = compute(pd)
    sev = [f.severity for f in res.findings]
    order = {"high": 0, "medium": 1, "low": 2, "info": 3}
    assert sev == sorted(sev, key=order.get)
    for f in res.findings:
        assert f.evidence.source and f.evidence.source.endswith("chrome65-devtools-timeline.json")
    jank = next(f for f in res.findings if f.title.startswith("Janky frames"))
    assert jank.evidence.start_ms is not None and jank.evidence.end_ms > jank.evidence.start_ms


def test_real_chrome_android_trace():
    res = compute(load(str(DATA / "chrome-android-thread-time.json.gz")))
    main = [t for t in res.threads if t.is_main]
    assert main and main[0].name == "CrRendererMain" and main[0].process == "Renderer"
    assert res.frames.count == 148 and res.frames.budget_source == "vsync period"
    assert res.frames.budget_ms == pytest.approx(16.667, abs=0.01)
    worst = res.frames.worst[0]
    assert any("ThreadProxy::BeginMainFrame" in r for r in worst.ran)  # the 99 ms main-thread frame
    assert res.long_tasks and res.long_tasks[0].dur_ms == pytest.approx(98.999, abs=0.01)
    assert res.duration_ms == pytest.approx(9927.582, abs=0.01)


def test_real_atrace_capture():
    res = compute(load(str(DATA / "android-atrace-systrace.txt")))
    assert res.frames.count == 15 and [t.tid for t in res.threads if t.is_main] == [18926]
    top = [h for h in res.hotspots if h.thread is None][0]
    assert top.name == "DrawFrame"


def test_real_page_load_marks():
    res = compute(load(str(DATA / "chrome116-devtools-trace.json")))
    st = res.startup
    names = [p.name for p in st.phases]
    assert st.kind == "page load" and {"fetchStart", "domInteractive", "loadEventEnd"} <= set(names)
    load_end = next(p for p in st.phases if p.name == "loadEventEnd")
    assert load_end.dur_ms == pytest.approx(55.736, abs=0.01)  # loadEventEnd − navigationStart
    assert st.median_ms == max(p.dur_ms for p in st.phases)
    js = [h for h in res.hotspots if h.kind == "sample" and h.thread is None]
    assert js and any(h.name == "gamma" and h.file.endswith("simple.js") for h in js)


def test_perf_stat_findings_name_the_command():
    res = compute(load(str(DATA / "perf-stat-two_sum.txt")))
    be = [f for f in res.findings if f.title.startswith("Backend bound")]
    assert len(be) == 1 and "two_sum 300 m" in be[0].title and be[0].evidence.command.endswith("300 m")


def test_long_task_finding_counts_in_words():
    """"1 long task(s) on the main thread" / "1 tasks of ≥ 50.0 ms" read as a template."""
    from nodes.perf.findings.threads import long_tasks
    from nodes.perf.model import LongTask

    one = [LongTask(name="activityStart", thread="main (app 1)", start_ms=10.0, dur_ms=82.0)]
    [f] = long_tasks(one, 1, "t")
    assert f.title == "1 long task on the main thread" and f.detail.startswith("1 task of ≥ 50.0 ms on main (app 1)")
    [g] = long_tasks(one * 2, 33, "t")
    assert g.title == "33 long tasks on the main thread" and g.detail.startswith("33 tasks of ≥")
