"""The first lines of lens answers the user review (items 2, 8, 9, 12–15, 17) found wrong, on the
real captures of tests/data (their sources in the SOURCES.md beside them), through the Python API
that `perfscout ask` uses. Numbers that are metrics are computed here from the reader's own data
(PerfData), not copied from the answer."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from app.api import PerfScout
from app.settings import Settings
from nodes.perf.units import counted

DATA = Path(__file__).parent / "data"
CAPTURES = ("perfetto/api32_startup_warm.perfetto-trace", "perfetto/api24_startup_cold.perfetto-trace",
            "perfetto/ms_android12_emulator_sched_cpusampling.pftrace", "perfetto/chrome_fcp_lcp_navigations.pftrace",
            "web/webvitals.trace.json.gz", "web/scroll.trace.json.gz")


@pytest.fixture
def ps(tmp_path, perfscout_home):
    for rel in CAPTURES:
        shutil.copy(DATA / rel, tmp_path / Path(rel).name)
    with PerfScout(Settings.from_env(), workspace=tmp_path) as p:
        yield p


def _first(r) -> str:
    return (r.answer or "").splitlines()[0]


def _analysis(r) -> dict:
    """The analysis the answer was written from (the run's report.json)."""
    return json.loads(Path(r.report["json"]).read_text())["analysis"]


def test_counts_read_in_the_right_number():
    assert counted(1, "binder call") == "1 binder call"
    assert counted(18, "binder call") == "18 binder calls"
    assert counted(0, "lock") == "0 locks"
    assert counted(1204, "frame") == "1,204 frames"
    assert counted(2, "reply", "replies") == "2 replies"


def test_no_count_in_a_lens_answer_reads_with_an_s_in_brackets(ps):
    r = ps.ask("what blocked the main thread api32_startup_warm.perfetto-trace")
    first = _first(r)
    assert "(s)" not in first
    n = _analysis(r)["blocking"]["binder_calls"]
    assert re.search(rf"waited \d+ ms in {counted(n, 'binder call')} ", first), first
    sc = ps.ask("why is scrolling janky scroll.trace.json.gz")
    first = _first(sc)
    assert "(s)" not in first
    s = _analysis(sc)["scroll"]
    assert f"in {counted(s['scrolls'], 'scroll')};" in first
    assert f"; {counted(s['dropped_frames'], 'frame')} dropped," in first


def test_a_cause_finding_of_one_frame_says_was_late(ps):
    r = ps.ask("analyze api24_startup_cold.perfetto-trace")
    details = [f["detail"] for f in _analysis(r)["findings"] if f["title"].startswith("Late frames")]
    assert details and all("(s)" not in d for d in details)
    one = [d for d in details if d.startswith("1 of the ")]
    assert one and all(" was late because of " in d for d in one), one


def test_a_trace_of_eight_page_loads_is_answered_for_all_of_them_and_fast_is_not_cannot_answer(ps):
    from statistics import median

    from nodes.perf.units import dur
    from tests.helpers.references import TRACE_PROCESSOR_PAGE_LOADS as LOADS  # Perfetto's chrome_page_loads

    fcp = [f / 1e6 for f, _ in LOADS]
    lcp = [x / 1e6 for _, x in LOADS if x is not None]
    r = ps.ask("is this page fast? chrome_fcp_lcp_navigations.pftrace")
    lines = (r.answer or "").splitlines()
    # web.dev's good bands: FCP ≤ 1.8 s, LCP ≤ 2.5 s (web.dev/articles/fcp, /lcp); every load is inside them
    assert max(fcp) <= 1800 and max(lcp) <= 2500
    assert lines[0] == (f"The 8 page loads are fast by FCP and LCP: FCP {dur(min(fcp))}–{dur(max(fcp))} "
                        f"(median {dur(median(fcp))}), LCP {dur(min(lcp))}–{dur(max(lcp))} (median {dur(median(lcp))}) "
                        "in 7 of 8 (none in load 8), every one within web.dev's good range; "
                        "CLS and TBT are not in this trace."), lines[0]
    assert "LCP 475 ms–1.13 s" in lines[0]
    assert not any("can answer it" in x for x in lines)  # "fast" and "cannot answer" never in one breath
    assert lines[1].startswith("To record a trace that also has what this one lacks, capture a Chrome performance trace")


def test_one_long_task_count_in_one_answer_not_the_twenty_kept(ps):
    r = ps.ask("为什么卡顿 chrome_fcp_lcp_navigations.pftrace")
    a = _analysis(r)
    assert len(a["long_tasks"]) == 20 and a["long_task_count"] > 20  # the table keeps the 20 longest
    n = a["long_task_count"]
    can = next(x for x in r.answer.splitlines() if x.startswith("What this data can say:"))
    assert can.startswith(f"What this data can say: {n} long main-thread tasks, the longest BlinkTaskScope")
    title = next(f["title"] for f in a["findings"] if "long task" in f["title"])
    assert title == f"{n} long tasks on the main thread"
    # the page's tile counts them all too (nodes/report/view.py tiles)
    html = Path(r.report_paths["html"]).read_text()
    tile = re.search(r"(\d+)</[^>]+>\s*<[^>]+>long tasks \(≥ 50 ms\)", html)
    assert tile and int(tile.group(1)) == n, tile


def test_the_energy_sentence_says_which_span_its_mean_power_is_over(ps):
    """PowerMetric's power is a rail's energy over the time between its first and last reading in
    the window (androidx PowerQuery.kt), not over the window: the sentence names that span."""
    from tests.helpers.traces import trace_packets as _packets
    from tests.helpers.traces import trace_start_ns as _trace_start_ns

    from nodes.perf.analysis import analyze_file

    path = str(DATA / "perfetto/api32_startup_warm.perfetto-trace")
    res = analyze_file(path)
    mb = next(w for w in res.power.windows if w.name == "measureBlock")
    start = _trace_start_ns(res) + mb.start_ms * 1e6
    ts = sorted({e.timestamp_ms for p in _packets(path) if p.HasField("power_rails")
                 for e in p.power_rails.energy_data if start <= e.timestamp_ms * 1e6 <= start + mb.dur_ms * 1e6})
    span_s = (ts[-1] - ts[0]) / 1000.0  # the readings inside measureBlock, decoded here
    assert abs(span_s - mb.dur_ms / 1000) > 0.1  # sparse readings: the span is not the window
    r = ps.ask("how much energy does api32_startup_warm.perfetto-trace use")
    first = _first(r)
    assert first.startswith(f"Energy: measureBlock ({mb.dur_ms / 1000:.2f} s): {mb.energy_uws / 1e6:.3f} J, "
                            f"{mb.power_uw / 1000:.1f} mW on average over the {span_s:.2f} s between the rails' "
                            "first and last readings in it; by category CPU"), first
    # and the arithmetic adds up: energy / span = the mean power, within the rails' own spans
    assert mb.energy_uws / span_s == pytest.approx(mb.power_uw, rel=0.02)


def test_blocking_without_atrace_says_what_was_not_recorded_and_names_the_cpu_wait(ps):
    r = ps.ask("主线程被什么阻塞了 ms_android12_emulator_sched_cpusampling.pftrace")
    first = _first(r)
    a = _analysis(r)
    b = a["blocking"]
    main = next(t for t in a["threads"] if t["tid"] == b["tid"] and t["pid"] == b["pid"])
    from nodes.perf.units import dur, pct

    share = 100 * main["runnable_ms"] / (main["running_ms"] + main["runnable_ms"] + main["sleeping_ms"])
    assert first.startswith(f"Main thread (com.android.systemui {b['pid']}): ")  # PerfData.thread_label
    assert "binder calls not recorded" in first
    assert "0 locks" not in first and "no lock contention slices in the trace" in first  # not measured-looking zeros
    assert (f"runnable (waiting for a CPU) {dur(main['runnable_ms'])}, {pct(share)} of its time, "
            f"against {dur(main['running_ms'])} running") in first, first
    assert pct(share) == "14.5 %"


def test_memory_leads_with_the_app_then_the_processes_that_grew_most(ps):
    from nodes.perf.formats import load

    pd = load(str(DATA / "perfetto/ms_android12_emulator_sched_cpusampling.pftrace"))
    growth = {}  # mem.rss (process_stats) last - first reading per process, MiB, decoded here
    for (pid, name), pts in pd.memory.items():
        if name == "mem.rss" and len(pts) >= 2:
            pts = sorted(pts)
            growth[pd.processes.get(pid) or f"pid {pid}"] = pts[-1][1] - pts[0][1]  # MB, as process_stats reads it
    first = _first(ps.ask("is memory growing ms_android12_emulator_sched_cpusampling.pftrace"))
    assert first.startswith("Memory: com.android.systemui RSS peak")  # the app of the trace first
    others = sorted((g, n) for n, g in growth.items() if n != "com.android.systemui")[::-1][:2]
    names = [n for _, n in others]
    # the profiler itself (+131 MB) and partnersetup (+23.5 MB, not among the 20 largest) grew more than chrome (+10 MB)
    assert names == ["/system/bin/traced_perf", "com.google.android.partnersetup"] and round(growth["com.android.chrome"], 1) == 10.0
    shown = [x.split(" RSS peak")[0] for x in first[len("Memory: "):].split("; ")][:3]
    assert shown == ["com.android.systemui", *names], shown


def test_memory_says_the_launched_app_has_no_reading(ps):
    first = _first(ps.ask("is memory growing api24_startup_cold.perfetto-trace"))
    assert first.startswith("Memory: no reading of androidx.benchmark.integration.macrobenchmark.target itself — "
                            "the trace has no process_stats scan or rss_stat counter of it"), first


def test_a_trace_without_a_scroll_says_so_not_not_read_yet(ps):
    r = ps.ask("why is scrolling janky webvitals.trace.json.gz")
    lines = r.answer.splitlines()
    fr = _analysis(r)["frames"]
    assert r.route_info["lens"] == "scroll"
    assert lines[0].startswith("This trace has no scrolling (no Chrome scroll updates (EventLatency) and input-to-frame "
                               f"latency); its frames: {fr['jank_count']} of {fr['count']} frames"), lines[0]
    assert not any(x.startswith("Not read yet") for x in lines)
    assert lines[1].startswith("To record a trace that also has what this one lacks, capture Chrome's input")


def test_a_page_question_on_a_scroll_trace_says_there_is_no_page_load_and_what_it_holds(ps):
    r = ps.ask("is this page fast? scroll.trace.json.gz")  # the file's name asks nothing: the page lens
    lines = r.answer.splitlines()
    assert r.route_info["lens"] == "page"
    assert lines[0].startswith("This data cannot tell the page load: no page load")
    sc = _analysis(r)["scroll"]
    can = next(x for x in lines if x.startswith("What this data can say:"))
    assert can.startswith(f"What this data can say: it holds {counted(sc['scrolls'], 'scroll')}: "
                          f"{sc['janky_frames']} of {sc['presented_frames']} scroll frames janky"), can


def test_the_slowest_frame_asked_with_its_file_is_named_first(ps):
    """「最慢的一帧是哪一帧 x.pftrace」 in one message: the frame (nodes/report/followup.py) leads,
    then the frames lens's aggregate — not the aggregate alone."""
    r = ps.ask("最慢的一帧是哪一帧 ms_android12_emulator_sched_cpusampling.pftrace")
    lines = r.answer.splitlines()
    fr = _analysis(r)["frames"]
    longest = max(range(len(fr["durations_ms"])), key=lambda i: fr["durations_ms"][i])  # every frame's duration
    start, d = fr["starts_ms"][longest], fr["durations_ms"][longest]
    assert round(d) == 385 and round(start) == 35883
    assert lines[0].startswith(f"最慢的一帧：{start:,.0f} ms 处开始，持续 {d:,.0f} ms（预算 16.7 ms）"), lines[0]
    assert "上一次的分析" not in r.answer  # this turn's analysis, not the thread's last
    assert lines[1].startswith(f"{fr['jank_count']} of {fr['count']} frames of com.android.systemui janky")
