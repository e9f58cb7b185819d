"""The report's lens sections (nodes/report/lens_sections.py) on real captures: each section is
there when its data is, its table rows are the numbers of ``perfscout analyze --json``, its
charts are SVG that parses with one mark per bar / curve / point, bounded on big data."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from app.analyze_cmd import to_json
from nodes.perf.analysis import analyze_paths
from nodes.perf.model import MAX_MEMORY_SAMPLES, AnalysisResult, CpuStats, CpuUse, ScrollStats, ScrollUpdate
from nodes.report import fmt
from nodes.report.lens_charts import LENS_CHART_LINES, LENS_CHART_POINTS, LENS_CHART_ROWS, LENS_CHART_WINDOWS
from nodes.report.lens_sections import LENS_TABLE_ROWS, blocking_rows, lead_with, lens_sections
from nodes.report.render import write_report
from nodes.report.view import build_view

DATA = Path(__file__).parent / "data"
SVG = "{http://www.w3.org/2000/svg}"
TITLES = {"cpu": "CPU by process and thread", "power": "Energy by category and rail", "memory": "Memory over time",
          "blocking": "What the main thread waited on", "scroll": "Scrolling: Chrome's verdicts and latency"}


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """name → (analysis, its --json dict, report.md text, report.html text)."""
    out = {}
    for name, path in [("api32", "perfetto/api32_startup_warm.perfetto-trace"),
                       ("api24", "perfetto/api24_startup_cold.perfetto-trace"),
                       ("emulator", "perfetto/ms_android12_emulator_sched_cpusampling.pftrace"),
                       ("scroll", "web/scroll.trace.json.gz"), ("scroll_proto", "web/scroll.pftrace.gz")]:
        a = analyze_paths([str(DATA / path)])
        folder = tmp_path_factory.mktemp(name)
        files = write_report(build_view(a), folder)
        out[name] = (a, to_json(a), Path(files["markdown"]).read_text(), Path(files["html"]).read_text())
    return out


def html_section(html: str, lens: str) -> str | None:
    m = re.search(rf'<section id="lens-{lens}" data-lens="{lens}">.*?</section>', html, flags=re.S)
    return m.group(0) if m else None


def svgs(section: str, kind: str) -> list[ET.Element]:
    """The charts of that kind in the section, parsed (ET raises on malformed or unescaped SVG)."""
    return [ET.fromstring(s) for s in re.findall(r"<svg .*?</svg>", section, flags=re.S) if f'data-chart="{kind}"' in s]


def marks(svg: ET.Element, tag: str, cls: str | None = None) -> list[ET.Element]:
    return [e for e in svg.iter(SVG + tag) if "mark" in e.get("class", "").split()
            and (cls is None or cls in e.get("class", "").split())]


def md_rows(md: str, title: str) -> list[list[str]]:
    """The body rows of the Markdown table under ``**title**``."""
    block = md.split(f"**{title}**", 1)[1].split("\n\n", 2)[1]
    return [[c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]] for line in block.splitlines()[2:]]


def test_sections_appear_only_with_their_data(reports):
    for name, want in [("api32", {"cpu", "power", "memory", "blocking"}), ("api24", {"cpu", "memory", "blocking"}),
                       ("emulator", {"cpu", "memory"}),
                       # the Chrome capture's slices carry thread time (tdur): CPU per process and thread
                       ("scroll", {"cpu", "scroll"})]:
        a, _js, md, html = reports[name]
        got = {s.lens for s in lens_sections(a)}
        assert got == want, name
        for lens, title in TITLES.items():
            assert (f"\n## {title}\n" in md) == (lens in want), (name, lens)
            assert (html_section(html, lens) is not None) == (lens in want), (name, lens)


def test_cpu_section_on_the_emulator_capture(reports):
    a, js, md, html = reports["emulator"]
    procs = js["cpu"]["processes"]
    rows = md_rows(md, next(t for t in md.split("**") if t.startswith("Processes over the")))
    assert len(rows) == min(len(procs), LENS_TABLE_ROWS)
    for row, p in zip(rows, procs):
        assert row == [p["name"], str(p["pid"]), fmt.ms(p["running_ms"], 1), fmt.ms(p["runnable_ms"], 1),
                       fmt.ratio_pct(p["share_of_window"]), fmt.ratio_pct(p["share_of_cpus"])]
    sec = html_section(html, "cpu")
    (chart,) = svgs(sec, "cpu-processes")
    shown = [p for p in procs if p["running_ms"] + p["runnable_ms"] > 0][:LENS_CHART_ROWS]
    running, runnable = marks(chart, "rect", "accent"), marks(chart, "rect", "soft")
    assert [float(r.get("data-v")) for r in running] == pytest.approx([p["running_ms"] for p in shown], rel=1e-5)
    assert [float(r.get("data-v")) for r in runnable] == pytest.approx([p["runnable_ms"] for p in shown], rel=1e-5)
    (threads,) = svgs(sec, "cpu-threads")
    assert len(marks(threads, "rect")) == 2 * min(LENS_CHART_ROWS, len(js["cpu"]["threads"]))


def test_power_section_on_the_warm_start_capture(reports):
    a, js, md, html = reports["api32"]
    windows = js["power"]["windows"]
    assert [w["name"] for w in windows] == ["trace", "measureBlock"]
    sec = html_section(html, "power")
    charts = svgs(sec, "power-categories")
    assert len(charts) == len(windows)
    for w, chart in zip(windows, charts):
        bars = marks(chart, "rect")
        assert [float(b.get("data-v")) for b in bars] == pytest.approx(list(w["categories"].values()), rel=1e-5)
        title = next(t for t in md.split("**") if t.startswith("Energy by category — ")
                     and (("the whole trace" if w["name"] == "trace" else w["name"]) + ":") in t)
        assert f"{fmt.num(w['energy_uws'], 0)} µWs" in title
        assert md_rows(md, title) == [[k, f"{fmt.num(e, 0)} µWs", f"{fmt.num(w['category_power_uw'][k], 0)} µW"]
                                      for k, e in w["categories"].items()]
    rails = md_rows(md, "Energy per rail — the whole trace")
    top = sorted(windows[0]["rails"].items(), key=lambda kv: -kv[1])
    assert rails == [[k, f"{fmt.num(e, 0)} µWs"] for k, e in top[:LENS_TABLE_ROWS]]
    rail_charts = svgs(sec, "power-rails")
    assert len(rail_charts) == len(windows)
    assert [float(b.get("data-v")) for b in marks(rail_charts[0], "rect")] == pytest.approx(
        [e for _, e in top[:LENS_CHART_ROWS]], rel=1e-5)


def test_the_power_section_leads_with_the_section_the_user_named(tmp_path):
    a = analyze_paths([str(DATA / "perfetto/api32_startup_warm.perfetto-trace")], sections=["measureBlock"])
    md = Path(write_report(build_view(a), tmp_path)["markdown"]).read_text()
    sec = md.split(f"\n## {TITLES['power']}\n", 1)[1]
    assert sec.lstrip().startswith("measureBlock (1.84 s): 1.198 J")  # summarize_power, named first
    heads = [t for t in sec.split("**") if t.startswith("Energy by category — ")]
    assert heads[0].startswith("Energy by category — measureBlock:") and "the whole trace" in heads[1]


def test_memory_section_draws_each_process_over_time(reports):
    a, js, md, html = reports["api32"]
    assert all("samples" not in s for p in js["memory"]["processes"] for s in p["series"])  # --json stays lean
    rows = md_rows(md, "Processes (the app first, then by RSS)")
    procs = js["memory"]["processes"]
    assert [r[:3] for r in rows] == [[p["name"], str(p["pid"]), f"{fmt.num(p['rss_max_mb'], 1)} MB"]
                                     for p in procs[:LENS_TABLE_ROWS]]
    (chart,) = svgs(html_section(html, "memory"), "memory-rss")
    curves = marks(chart, "polyline")
    drawn = []
    for p in a.memory.processes:
        by = {s.name: s for s in p.series if len(s.samples) >= 2}
        s = by.get("mem.rss") or by.get("mem.rss.anon") or next((x for x in by.values() if x.unit == "MB"), None)
        if s:
            drawn.append(s)
    assert 0 < len(curves) == min(len(drawn), LENS_CHART_LINES)
    for poly, s in zip(curves, drawn):
        assert len(poly.get("points").split()) == len(s.samples) <= MAX_MEMORY_SAMPLES
        assert float(poly.get("data-v")) == pytest.approx(s.peak, rel=1e-5)  # the peak is always kept
    # the app's anon RSS has more readings than a chart needs? the cap holds either way
    anon = next(s for s in a.memory.processes[0].series if s.name == "mem.rss.anon")
    assert len(anon.samples) == min(anon.points, MAX_MEMORY_SAMPLES)


def test_blocking_section_lists_the_main_threads_longest_waits(reports):
    a, js, md, html = reports["api24"]
    b = js["blocking"]
    rows = md_rows(md, "Longest waits of the main thread (binder, lock, uninterruptible sleep)")
    durs = sorted([x["dur_ms"] for x in b["binder"] + b["locks"] + b["d_state"]], reverse=True)
    assert [r[2] for r in rows] == [fmt.ms(d, 1) for d in durs[:LENS_TABLE_ROWS]]
    assert {r[0] for r in rows} >= {"binder", "D (IO)"}  # api24 has sched_blocked_reason
    summary = md_rows(md, "The main thread's waits")[0]
    assert summary[1:] == [str(b["binder_calls"]), fmt.ms(b["binder_ms"], 1), str(b["lock_waits"]), fmt.ms(b["lock_ms"], 1),
                           fmt.ms(b["d_ms"], 1), fmt.ms(b["io_wait_ms"], 1)]
    (chart,) = svgs(html_section(html, "blocking"), "blocking")
    bars = marks(chart, "rect")
    assert [float(x.get("data-v")) for x in bars] == pytest.approx(durs[:LENS_CHART_ROWS], rel=1e-5)
    assert len(blocking_rows(a.blocking)) == len(durs)


@pytest.mark.parametrize("capture", ["scroll", "scroll_proto"])
def test_scroll_section_on_the_recorded_chromium_capture(reports, capture):
    a, js, md, html = reports[capture]
    s = js["scroll"]
    verdicts = dict(tuple(r) for r in md_rows(md, "Chrome's scroll verdicts"))
    assert verdicts["janky (scroll jank v3)"] == f"{s['janky_frames']} ({fmt.ratio_pct(s['janky_ratio'])})"
    assert verdicts["latency p50 / p90 / p99"] == " / ".join(
        fmt.ms(s[k], 1) for k in ("latency_p50_ms", "latency_p90_ms", "latency_p99_ms"))
    (chart,) = svgs(html_section(html, "scroll"), "scroll-latency")
    dots = marks(chart, "circle")
    timed = [u for u in s["updates"] if u["latency_ms"] is not None]
    assert len(dots) == len(timed) and len(marks(chart, "circle", "bad")) == sum(1 for u in timed if u["janky"])
    janky = [u for u in s["updates"] if u["janky"]]
    title = next(t for t in md.split("**") if t.startswith("Janky scroll updates ("))
    assert md_rows(md, title) == [[fmt.ms(u["start_ms"], 1), fmt.ms(u["latency_ms"], 1), u["type"], u["jank_cause"]]
                                  for u in janky[:LENS_TABLE_ROWS]]
    stages = md_rows(md, "Where the janky scroll updates' latency went")
    assert stages == [[st["name"], str(st["janky_updates"]), fmt.ms(st["p50_ms"], 1), fmt.ms(st["p90_ms"], 1),
                       fmt.ratio_pct(st["share_of_janky_latency"]), fmt.ms(st["all_p50_ms"], 1)] for st in s["janky_stages"][:LENS_TABLE_ROWS]]
    assert stages[0][0] == s["dominant_stage"]


def test_charts_and_tables_stay_bounded_and_escaped(tmp_path):
    """A trace with 500 processes and 50,000 scroll updates draws no more than the caps, and a
    hostile process name is text in both renderers."""
    name = '<script>alert(1)</script> | "x" & y'
    procs = [CpuUse(pid=i, name=f"{name} {i}", running_ms=1000.0 - i, runnable_ms=float(i), share_of_window=0.1)
             for i in range(500)]
    ups = [ScrollUpdate(start_ms=float(i), latency_ms=10.0 + i % 7, type="GESTURE_SCROLL_UPDATE", janky=i % 9 == 0)
           for i in range(50_000)]
    a = AnalysisResult(format="synthetic", source="big.trace", duration_ms=50_000.0,
                       cpu=CpuStats(window_ms=50_000.0, cpu_count=4, processes=procs),
                       scroll=ScrollStats(update_count=len(ups), updates=ups, presented_frames=10, janky_frames=1,
                                          latency_p50_ms=13.0, latency_p90_ms=15.0, latency_p99_ms=16.0))
    files = write_report(build_view(a), tmp_path)
    md, html = Path(files["markdown"]).read_text(), Path(files["html"]).read_text()
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "\\| &quot;" not in md and f"{name} 0".replace("|", "\\|") in md
    (cpu,) = svgs(html_section(html, "cpu"), "cpu-processes")
    assert len(marks(cpu, "rect")) == 2 * LENS_CHART_ROWS
    (sc,) = svgs(html_section(html, "scroll"), "scroll-latency")
    assert len(marks(sc, "circle")) == LENS_CHART_POINTS
    assert len(md_rows(md, "Processes over the 50.0 s trace on 4 CPUs")) == LENS_TABLE_ROWS
    assert len(html) < 2_000_000


def test_power_charts_are_capped_on_many_windows(tmp_path):
    """Thirty measureBlocks: LENS_CHART_WINDOWS windows drawn, LENS_TABLE_ROWS tabled."""
    from nodes.perf.model import PowerStats, PowerWindow

    ws = [PowerWindow(name="trace" if i == 0 else "measureBlock", start_ms=10.0 * i, dur_ms=10.0, energy_uws=30.0,
                      power_uw=3000.0, categories={"CPU": 20.0, "DISPLAY": 10.0}, rails={"CpuBig": 20.0, "Display": 10.0})
          for i in range(30)]
    a = AnalysisResult(format="synthetic", source="p.trace", duration_ms=300.0, power=PowerStats(windows=ws))
    files = write_report(build_view(a), tmp_path)
    md, html = Path(files["markdown"]).read_text(), Path(files["html"]).read_text()
    sec = html_section(html, "power")
    assert len(svgs(sec, "power-categories")) == len(svgs(sec, "power-rails")) == LENS_CHART_WINDOWS
    assert md.count("**Energy by category — ") == LENS_TABLE_ROWS


def test_the_questions_lens_section_comes_first(reports, tmp_path):
    """A memory question (ReportView.lens, the lens mechanism): the lens's answer opens the report
    and the memory data follows it at once, before the findings; the other lenses keep their
    place and order, and the data section does not repeat the answer's sentence."""
    a = reports["api32"][0]
    assert [s.lens for s in lead_with(lens_sections(a), "memory")] == ["memory", "cpu", "power", "blocking"]
    assert [s.lens for s in lead_with(lens_sections(a), None)] == ["cpu", "power", "memory", "blocking"]
    files = write_report(build_view(a, lens="memory"), tmp_path)
    md, html = Path(files["markdown"]).read_text(), Path(files["html"]).read_text()
    answer = md.index("\n## Memory\n")  # the lens answer's own heading (nodes/report/view.py)
    heads = [md.index(f"\n## {TITLES[k]}\n") for k in ("memory", "cpu", "power", "blocking")]
    assert answer < heads[0] < md.index("## What to look at first") < heads[1] < heads[2] < heads[3]
    between = md[answer + 1:heads[0]]
    assert "\n## " not in between  # nothing between the answer and its data
    data = md[heads[0]:heads[1]]
    assert "Processes (the app first, then by RSS)" in data
    assert html.index('id="lens"') < html.index('id="lens-memory"') < html.index('id="first"') < html.index('id="lens-cpu"')
    (tmp_path / "overview").mkdir()
    plain = Path(write_report(build_view(a), tmp_path / "overview")["markdown"]).read_text()
    assert "\n## Memory\n" not in plain and plain.index(f"\n## {TITLES['cpu']}\n") < plain.index(f"\n## {TITLES['memory']}\n")


def test_memory_chart_marks_kills_and_the_apps_gcs(reports, tmp_path):
    """Kills and GCs as ticks on the time axis: the real GC's start kept by the metric (api24's
    one GC), and a result with a kill and several GCs of the app."""
    from nodes.perf.model import GcSummary, LmkKill, MemoryProcess, MemorySeries, MemoryStats

    gc_procs = [p for p in reports["api24"][0].memory.processes if p.gc]
    assert gc_procs and all(len(p.gc.starts_ms) == p.gc.count for p in gc_procs)
    assert all("starts_ms" not in (p["gc"] or {}) for p in reports["api24"][1]["memory"]["processes"])

    def proc(pid, name, gcs):
        ser = MemorySeries(name="mem.rss", label=f"{name} ({pid}): mem.rss", start=10.0, peak=30.0, end=20.0, growth=10.0,
                           peak_ms=5.0, points=3, samples=[(0.0, 10.0), (5.0, 30.0), (9.0, 20.0)])
        gc = GcSummary(count=len(gcs), total_ms=3.0, max_ms=1.0, starts_ms=gcs) if gcs else None
        return MemoryProcess(pid=pid, name=name, rss_max_mb=30.0, series=[ser], gc=gc)

    m = MemoryStats(processes=[proc(1, "app", [1.0, 2.0, 3.0]), proc(2, "other", [4.0])],
                    lmk_kills=[LmkKill(ts_ms=8.0, pid=2, process="other")])
    a = AnalysisResult(format="synthetic", source="m.trace", duration_ms=10.0, memory=m)
    html = Path(write_report(build_view(a), tmp_path)["html"]).read_text()
    (chart,) = svgs(html_section(html, "memory"), "memory-rss")
    assert len(marks(chart, "polyline")) == 2
    assert [float(r.get("data-v")) for r in marks(chart, "rect", "bad")] == [8.0]
    assert [float(r.get("data-v")) for r in marks(chart, "rect", "task")] == [1.0, 2.0, 3.0]  # the app's only


def test_memory_section_lists_the_gcs_with_their_pauses_equal_to_the_json(reports):
    """api24's one GC: the table's cells are the JSON's (memory.processes[].gc.by_type), and the
    section's sentence names the pause and the main thread's wait."""
    from nodes.report.lens_sections import memory_section

    a, js, md, html = reports["api24"]
    title = ("ART garbage collections (as trace_processor's android_garbage_collection_events; paused: ART's "
             "suspend-all and flip; the main thread's wait for GC is per process, on its first row)")
    want = []
    for p in js["memory"]["processes"]:
        for i, (kind, k) in enumerate((p["gc"] or {}).get("by_type", {}).items()):
            want.append([f"{p['name']} ({p['pid']})", kind, str(k["count"]), fmt.ms(k["total_ms"], 1), fmt.ms(k["max_ms"], 1),
                         fmt.ms(k["pause_ms"], 2), "–" if k["reclaimed_mb"] is None else f"{fmt.num(k['reclaimed_mb'], 1)} MB",
                         fmt.ms(p["gc"]["main_thread_wait_ms"], 2) if i == 0 and p["gc"]["main_thread_waits"] else "–"])
    assert want and md_rows(md, title) == want
    assert want[0][:2] == ["com.google.android.gms.persistent (3675)", "full"] and want[0][5] == fmt.ms(0.62, 2)
    assert "its threads paused 0.62 ms" in memory_section(a.memory).sentence
    assert "its threads paused 0.62 ms" in html_section(html, "memory")
