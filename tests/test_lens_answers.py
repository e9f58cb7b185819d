"""The answer follows the question (issue 23): through the Python API that `perfscout ask` uses,
on real captures (tests/data, their sources in the SOURCES.md beside them), in both languages —
the first lines of the answer are asserted, not only the JSON.

Each capture is analysed once per thread; the other lenses are follow-ups on that thread
(docs/ROUTING.md rule 8), answered from its data without a new read.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from app.api import PerfScout
from app.settings import Settings

DATA = Path(__file__).parent / "data"


@pytest.fixture
def ps(tmp_path, perfscout_home):
    for rel in ("perfetto/api32_startup_warm.perfetto-trace", "perfetto/ms_android12_emulator_sched_cpusampling.pftrace",
                "perfetto/chrome_fcp_lcp_navigations.pftrace", "web/webvitals.trace.json.gz",
                "perf/chrome-android-thread-time.json.gz"):
        shutil.copy(DATA / rel, tmp_path / Path(rel).name)
    with PerfScout(Settings.from_env(), workspace=tmp_path) as p:
        yield p


def _lines(r) -> list[str]:
    return (r.answer or "").splitlines()


def _decisions(ps) -> list[dict]:
    path = ps.settings.state_dir / "decisions.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


def test_startup_leads_then_follow_ups_switch_the_lens_not_the_data(ps):
    r = ps.ask("分析一下这份启动 trace api32_startup_warm.perfetto-trace，启动为什么慢")
    first = _lines(r)[0]
    # Macrobenchmark's fixedStartupTraceMetrics: TTID 154.6 ms, TTFD 659.6 ms (../shared/traces/REFERENCE.md)
    assert first.startswith("androidx.benchmark.integration.macrobenchmark.target warm start: TTID 155 ms, TTFD 660 ms")
    assert "the biggest part is" in first
    assert r.route == "analyze" and r.route_info["lens"] == "startup"
    tid = r.thread_id

    mem = ps.ask("那内存呢？", thread_id=tid)
    assert mem.route == "analyze" and mem.route_info["override"] == "thread" and mem.route_info["lens"] == "memory"
    assert mem.route_history[-1] == "reporter" and "analyzer" not in mem.route_history  # no new read
    assert _lines(mem)[0].startswith("Memory: androidx.benchmark.integration.macrobenchmark.target RSS peak 119.0 MB")

    cpu = ps.ask("and the CPU?", thread_id=tid)
    assert cpu.route_info["lens"] == "cpu" and "analyzer" not in cpu.route_history
    # trace_processor's thread_state Running per process (nodes/perf/metrics/cpu.py, tests/test_lens_cpu.py)
    assert _lines(cpu)[0].startswith("CPU time by process: system_server 370 ms (16.8 % of the 2.20 s trace)")
    assert "runnable (waiting for a CPU)" in _lines(cpu)[0]

    power = ps.ask("what about power during the test?", thread_id=tid)
    assert power.route_info["lens"] == "power"
    # energy by PowerMetric category over Macrobenchmark's measureBlock (tests/test_lens_power.py)
    assert _lines(power)[0].startswith("Energy: measureBlock (1.84 s): 1.198 J, 745.8 mW on average over the 1.61 s between "
                                     "the rails' first and last readings in it; by category CPU 0.452 J")

    # a negated lens does not lead: 「不用管启动，看看内存」 is memory
    neg = ps.ask("不用管启动，看看内存", thread_id=tid)
    assert neg.route_info["lens"] == "memory" and _lines(neg)[0].startswith("Memory: ")

    # collecting on a device is still the device's (rule 8 does not take it)
    dev = ps.ask("采集一下内存", thread_id=tid)
    assert dev.route == "android"

    orch = [d for d in _decisions(ps) if d["node"] == "orchestrator"]
    assert [d["lens"] for d in orch][:5] == ["startup", "memory", "cpu", "power", "memory"]
    assert [d["decision"] for d in orch][1:5] == ["reporter"] * 4
    assert "rule 8" in orch[1]["reason"] or orch[1]["input"]["thread_data"] is True


def test_a_trace_without_the_launch_says_so_gives_the_recipe_and_what_it_can_tell(ps):
    r = ps.ask("这份 ms_android12_emulator_sched_cpusampling.pftrace 的启动为什么慢")
    lines = _lines(r)
    assert lines[0].startswith("This trace cannot tell the launch time: no launch events")
    assert lines[1].startswith("To record a trace that can answer it, capture a system trace of the launch")
    assert lines[2] == "    # save as config.pbtx" and '          atrace_categories: "am"' in lines
    can = next(x for x in lines if x.startswith("What this data can say:"))
    assert "first frames: at" in can
    assert "Janky frames" not in lines[0]  # never another topic in its place

    cpu = ps.ask("where does the CPU time go?", thread_id=r.thread_id)
    first = _lines(cpu)[0]
    assert first.startswith("CPU time by process: /system/bin/traced_perf 2.73 s (6.9 % of the 39.7 s trace), com.android.chrome")
    assert "busiest thread stack-unwinding" in first

    power = ps.ask("这次测试耗电多少，哪个部件最耗电？", thread_id=r.thread_id)
    lines = _lines(power)
    assert lines[0] == "This trace cannot tell the energy use: no power data: the trace has no power rails and no battery counters."
    assert lines[1].startswith("To record a trace that can answer it, capture ODPM power rails and battery counters")
    assert '          collect_power_rails: true' in lines
    assert any(x.startswith("What this data can say: CPU time by process (not energy)") for x in lines)

    frames = ps.ask("not the CPU, the frames", thread_id=r.thread_id)
    assert frames.route_info["lens"] == "frames"
    assert _lines(frames)[0].startswith("33 of 70 frames of com.android.systemui janky (47.1 %)")


def test_a_page_question_leads_with_the_vitals_and_a_fast_page_hears_it(ps):
    slow = ps.ask("这个页面加载为什么慢？ webvitals.trace.json.gz")
    first = _lines(slow)[0]
    # Lighthouse 12.2.3 on this file (tests/test_web_vitals.py): CLS 0.251 is poor (> 0.25)
    assert first.startswith("The page load: FCP 0.1 s, LCP 1.3 s, CLS 0.251, TBT 228 ms; Cumulative Layout Shift 0.251: poor")
    assert "RunTask" not in first  # a task runner names no work
    assert _lines(slow)[1].startswith('Needs attention: 2 serious findings; look first at "Cumulative Layout Shift')
    also = next(x for x in _lines(slow) if x.startswith("Also, outside this question:"))
    assert "Hot spot" in also

    fast = ps.ask("is this page slow? chrome_fcp_lcp_navigations.pftrace")
    lines = _lines(fast)
    # eight navigations: all of them are judged (tests/test_lens_review_answers.py has their numbers)
    assert lines[0].startswith("The 8 page loads are fast by FCP and LCP: ")
    assert not any(x.startswith(("Needs attention", "Worth a look")) for x in lines)  # other topics give no verdict
    assert any(x.startswith("Also, outside this question:") for x in lines)


def test_a_chrome_scroll_is_answered_with_chromes_own_verdicts(ps, tmp_path):
    shutil.copy(DATA / "web" / "scroll.trace.json.gz", tmp_path / "scroll.trace.json.gz")
    r = ps.ask("why is scrolling janky in scroll.trace.json.gz?")
    assert r.route_info["lens"] == "scroll"
    first = _lines(r)[0]
    sc = json.loads(Path(r.report["json"]).read_text())["analysis"]["scroll"]  # = `perfscout analyze --json`'s keys
    assert first.startswith(f"{sc['janky_frames']} of {sc['presented_frames']} scroll frames janky by Chrome's scroll "
                            f"jank v3 ({100 * sc['janky_ratio']:.1f}%), {sc['v4_janky_frames']} of {sc['v4_frames']} by v4, "
                            f"over {sc['update_count']} scroll updates")
    assert (f"input-to-frame latency p50 {sc['latency_p50_ms']:.1f} ms, p90 {sc['latency_p90_ms']:.1f} ms, "
            f"p99 {sc['latency_p99_ms']:.1f} ms" in first)
    assert f"{sc['dropped_frames']} frame{'s' if sc['dropped_frames'] != 1 else ''} dropped, {sc['partial_frames']} presented partially" in first
    assert sc["janky_frames"] and sc["jank_reasons"] and next(iter(sc["jank_reasons"])) in first
    top = sc["janky_stages"][0]
    assert (f"the janky updates' time went mostly to {sc['dominant_stage']} ({100 * top['share_of_janky_latency']:.0f}%; "
            f"p50 {top['p50_ms']:.1f} ms, p90 {top['p90_ms']:.1f} ms" in first)


def test_a_chrome_protobuf_scroll_is_answered_like_the_json_one(ps, tmp_path):
    """The same scroll page recorded as a Perfetto protobuf trace (tests/data/web/SOURCES.md)."""
    shutil.copy(DATA / "web" / "scroll.pftrace.gz", tmp_path / "scroll.pftrace.gz")
    r = ps.ask("为什么滑动卡顿？scroll.pftrace.gz")
    assert r.route_info["lens"] == "scroll"
    first = _lines(r)[0]
    sc = json.loads(Path(r.report["json"]).read_text())["analysis"]["scroll"]
    # Chrome's own v3 verdicts in the EventLatency extension (tests/test_lens_scroll_proto.py decodes them)
    assert first.startswith("5 of 135 scroll frames janky by Chrome's scroll jank v3 (3.7%), "
                            f"{sc['v4_janky_frames']} of {sc['v4_frames']} by v4, over 246 scroll updates in 3 scrolls")
    assert f"the janky updates' time went mostly to {sc['dominant_stage']}" in first
    assert "Chrome's jank reasons: " in first


def _meminfo_kb(text: str) -> tuple[dict[str, int], dict[str, int]]:
    """TOTAL lines and App Summary PSS per category, read from dumpsys's text here."""
    import re

    totals = {k: int(v) for k, v in re.findall(r"(TOTAL PSS|TOTAL RSS|TOTAL SWAP PSS):\s*(\d+)", text)}
    summary = text.split("App Summary", 1)[1].split("TOTAL PSS", 1)[0]
    cats = {k.strip(): int(v) for k, v in re.findall(r"^\s*([A-Za-z ]+):\s+(\d+)\s+\d*\s*$", summary, re.M)}
    return totals, cats


def test_dumpsys_meminfo_answers_the_memory_lens_and_its_follow_up(ps, tmp_path):
    src = DATA / "android" / "meminfo-app-android13.txt"
    shutil.copy(src, tmp_path / src.name)
    totals, cats = _meminfo_kb(src.read_text())
    r = ps.ask("how much memory does it use? meminfo-app-android13.txt")
    assert r.route == "analyze" and r.route_info["lens"] == "memory"
    first = _lines(r)[0]
    mb = lambda kb: f"{kb / 1024:,.1f} MB"  # noqa: E731
    assert first.startswith(f"Memory: com.demo.shop (pid 12345) uses {mb(totals['TOTAL PSS'])} PSS and "
                            f"{mb(totals['TOTAL RSS'])} RSS, {totals['TOTAL SWAP PSS']} kB swapped (SwapPss)")
    top = sorted(cats.items(), key=lambda kv: -kv[1])[:3]
    assert "; biggest by PSS: " + ", ".join(f"{k} {mb(v)}" for k, v in top) in first
    stats = json.loads(Path(r.report["json"]).read_text())["analysis"]["stats"]  # = `perfscout analyze --json`
    assert (stats["total_pss"], stats["total_rss"]) == (totals["TOTAL PSS"], totals["TOTAL RSS"])

    other = ps.ask("分析一下 meminfo-app-android13.txt")
    mem = ps.ask("那内存呢？", thread_id=other.thread_id)
    assert mem.route_info["lens"] == "memory" and "analyzer" not in mem.route_history  # no new read
    assert _lines(mem)[0] == first


def test_a_device_meminfo_leads_with_its_ram_and_largest_processes():
    from nodes.perf.analysis import analyze_file
    from nodes.perf.lens_readers import memory

    src = DATA / "android" / "meminfo-device.txt"
    text = src.read_text()
    import re

    ram = {k: int(v.replace(",", "")) for k, v in re.findall(r"^\s*(Total|Used) RAM:\s*([\d,]+)K", text, re.M)}
    first_proc = re.search(r"Total PSS by process:\s*\n\s*([\d,]+)K: (\S+)", text)
    lead = memory(analyze_file(str(src))).lead
    assert lead.startswith(f"Memory: the device has {ram['Total'] / 1024:,.1f} MB RAM, used RAM {ram['Used'] / 1024:,.1f} MB")
    assert f"largest by PSS: {first_proc.group(2)} {int(first_proc.group(1).replace(',', '')) / 1024:,.1f} MB" in lead


def test_a_startup_question_on_an_importtime_log_is_answered_with_the_import_tree():
    """-X importtime is a Python program's start: "why is startup slow" once heard "no launch of
    a program or an Android app" and a Perfetto recipe."""
    import re

    from nodes.perf.analysis import analyze_file
    from nodes.perf.lens_readers import startup

    src = DATA / "perf" / "importtime-json-csv-argparse.log"
    rows = [m.groups() for m in re.finditer(r"^import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)$", src.read_text(), re.M)]
    total_ms = sum(int(c) for _s, c, ind, _m in rows if len(ind) == 1) / 1000.0
    heaviest = max(rows, key=lambda r: int(r[0]))[3]
    got = startup(analyze_file(str(src)))
    assert got.missing is None and got.numbers["import_ms"] == pytest.approx(total_ms, rel=0.01)
    assert got.lead.startswith("Imports take ") and f"heaviest by own time: {heaviest} " in got.lead


def test_no_task_runner_leads_the_hot_spots_and_scrolling_is_answered_from_frames(ps):
    r = ps.ask("why is scrolling janky in chrome-android-thread-time.json.gz?")
    first = _lines(r)[0]
    assert r.route_info["lens"] == "scroll"
    assert first.startswith("This trace has no scrolling (no Chrome scroll updates (EventLatency) and "
                            "input-to-frame latency); its frames: ")
    assert "RunTask" not in first
    report = json.loads(Path(r.report["json"]).read_text())
    hot = [h["name"] for h in report["analysis"]["hotspots"]]
    from nodes.perf.containers import CONTAINERS

    assert hot and not set(hot) & set(CONTAINERS)
    assert "MessageLoop::RunTask" in [h["name"] for h in report["analysis"]["untraced_in_tasks"]]
    assert report["lens"] == "scroll" and report["lens_answer"]["title"] == "Scrolling and input"
    md = Path(r.report["markdown"]).read_text()
    assert md.index("## Scrolling and input") < md.index("## What to look at first")
    assert "Untraced time inside tasks:" in md
    html = Path(r.report["html"]).read_text()
    assert html.index('id="lens"') < html.index('id="first"')


def test_a_startup_question_is_not_answered_with_another_topics_verdict(tmp_path, perfscout_home):
    """The cold start's janky frames are a serious finding, but the question asked about the
    launch: the answer leads with the launch, and the frames follow only as "also, outside this
    question" — never as the thing to look at first. Asked as an overview, the same data keeps
    today's verdict (the frames are the serious finding to look at first)."""
    shutil.copy(DATA / "perfetto" / "api24_startup_cold.perfetto-trace", tmp_path / "cold.perfetto-trace")
    with PerfScout(Settings.from_env(), workspace=tmp_path) as p:
        lensed = _lines(p.ask("分析一下这份启动 trace cold.perfetto-trace，启动为什么慢"))
        overview = _lines(p.ask("解读一下 cold.perfetto-trace"))
    # trace_processor's android_startups: TTID 264.87 ms, TTFD 715.41 ms (../shared/traces/REFERENCE.md)
    assert lensed[0].startswith("androidx.benchmark.integration.macrobenchmark.target cold start: TTID 265 ms, TTFD 715 ms")
    assert not any("look first at" in x and "Janky frames" in x for x in lensed), lensed
    also = next(x for x in lensed if x.startswith("Also, outside this question:"))
    assert '"Janky frames: 66.7 %' in also
    assert overview[0] == lensed[0]
    assert overview[1].startswith('Needs attention: 4 serious findings; look first at "Janky frames: 66.7 %'), overview


def test_the_api_lens_argument_leads_the_answer_in_ask_and_in_stream(ps):
    """``lens=`` (docs/api.md) answers that aspect whatever the message says, in ``ask`` and in
    ``stream`` alike; a name that is no lens is refused before a thread is touched."""
    from app.api import RequestError

    asked = ps.ask("analyze api32_startup_warm.perfetto-trace", lens="memory")
    assert asked.route_info["lens"] == "memory"
    assert _lines(asked)[0].startswith("Memory: androidx.benchmark.integration.macrobenchmark.target RSS peak 119.0 MB")
    events = list(ps.stream("analyze api32_startup_warm.perfetto-trace", lens="memory"))
    streamed = events[-1].result
    assert streamed.route_info["lens"] == "memory" and _lines(streamed)[0] == _lines(asked)[0]
    threads_before = {t.thread_id for t in ps.threads()}
    for call in (lambda: ps.ask("analyze x", lens="battery-ish"), lambda: list(ps.stream("analyze x", lens="nope"))):
        with pytest.raises(RequestError, match="unknown lens"):
            call()
    assert {t.thread_id for t in ps.threads()} == threads_before


def test_a_section_named_in_the_question_leads_the_power_answer(ps):
    """The quoted slice is measured as its own window (nodes/routing/section.py → the analyzer's
    sections=), and the energy answer speaks of it first: here it is too short for the rails."""
    r = ps.ask('how much energy did the "startActivityAndWait" section use in api32_startup_warm.perfetto-trace?')
    assert r.route_info["lens"] == "power"
    first = _lines(r)[0]
    assert first.startswith("Energy: startActivityAndWait: no energy — its 536.2 ms at 252.8 ms hold fewer than two "
                            "readings of any rail")
    # then the window the answer led with before: Macrobenchmark's measureBlock (1,197,946 µWs)
    assert "; measureBlock (1.84 s): 1.198 J" in first
    power = json.loads(Path(r.report["json"]).read_text())["analysis"]["power"]
    assert power["named"] == {"startActivityAndWait": power["named"]["startActivityAndWait"]}
    assert [w["name"] for w in power["windows"]] == ["trace", "measureBlock"]

    zh = ps.ask("measureBlock 这段的耗电是多少？api32_startup_warm.perfetto-trace")
    assert zh.route_info["lens"] == "power"
    assert _lines(zh)[0].startswith("Energy: measureBlock (1.84 s): 1.198 J, 745.8 mW on average")
    assert "; trace (2.20 s): 1.198 J" in _lines(zh)[0]  # then the others


def test_a_chrome_protobuf_trace_without_scrolling_names_chromes_events(ps):
    """A Perfetto protobuf trace from Chrome (its track event categories say so) with no
    EventLatency: the answer names Chrome's events to record, not Android's input events."""
    r = ps.ask("why is scrolling janky in chrome_fcp_lcp_navigations.pftrace?")
    assert r.route_info["lens"] == "scroll"
    assert _lines(r)[0] == ("This data cannot tell the scrolling: no Chrome scroll updates (EventLatency) and "
                            "input-to-frame latency, and no frames in this data.")
    assert any("EventLatency" in x or "input.scrolling" in x for x in _lines(r)[1:])  # the recipe


def test_the_memory_answer_names_gc_pauses_and_the_main_threads_wait(tmp_path, perfscout_home):
    """api24's one GC (tests/test_lens_memory.py computes its numbers from the decoded capture)
    is in the memory answer's first line: its pause and the main thread's wait for it."""
    shutil.copy(DATA / "perfetto/api24_startup_cold.perfetto-trace", tmp_path / "api24_startup_cold.perfetto-trace")
    with PerfScout(Settings.from_env(), workspace=tmp_path) as p:
        r = p.ask("看看这份 trace 的内存和 GC api24_startup_cold.perfetto-trace")
    first = _lines(r)[0]
    assert r.route_info["lens"] == "memory" and first.startswith("Memory: ")
    assert ("GC: com.google.android.gms.persistent 1 GC (24.8 ms; its threads paused 0.62 ms; "
            "main thread waited 0.03 ms for GC, 2 times)") in first
