"""Which file, which duration: per-section Source lines, the startup lead, labelled durations.

A run folder holds several files (a psutil series, a py-spy profile, perf stat); each report
section must name only the files that fed it, as the analyzer's merge recorded them in
``meta["source: <section>"]``. The three durations of a profiled run (the collector's wall
time, the data's span, the profile's sampled time) must each carry their label.
"""

from __future__ import annotations

import re
from pathlib import Path

from nodes.perf.analysis import merge
from nodes.perf.model import (AnalysisResult, CounterSummary, Evidence, Finding, Hotspot, ImportEntry,
                              StackWeight, StartupRun, StartupStats)
from nodes.report.html import render_html
from nodes.report.markdown import render_markdown
from nodes.report.sections import build_charts
from nodes.report.view import build_view

ROOT = Path(__file__).resolve().parent.parent
RUN = ".perfscout/runs/t9/20260101T000000Z"
SERIES, PROFILE, STAT = f"{RUN}/psutil-series.json", f"{RUN}/pyspy.speedscope.json", f"{RUN}/perf-stat.txt"
APP = "examples/slow_app.py"
COMMAND = f"/venv/bin/python {ROOT / APP}"


def _profile_run() -> AnalysisResult:
    """Three single-file results merged by the analyzer itself, so the meta keys are its own."""
    series = AnalysisResult(format="psutil_series", source=SERIES, duration_ms=2844.0, counters=[
        CounterSummary(name="cpu_percent", unit="%", min=0, max=99, mean=80, last=90, points=[(0, 0), (100, 99), (200, 90)])])
    profile = AnalysisResult(format="speedscope", source=PROFILE, duration_ms=2500.0, hotspots=[
        Hotspot(name="unique_customers", file=str(ROOT / APP), line=35, self_ms=2400.0, total_ms=2400.0,
                self_pct=96.0, total_pct=96.0, count=1, kind="sample")],
        stacks=[StackWeight(frames=["main", "unique_customers"], weight_ms=2400.0)])
    stat = AnalysisResult(format="perfstat", source=STAT, duration_ms=2844.0, stats={"task-clock": 2700.0})
    return merge([series, profile, stat]).model_copy(update={"meta": {
        **merge([series, profile, stat]).meta, "command": COMMAND}})


def _collected(wall_s: float = 2.9062) -> dict:
    return {"kind": "profile", "paths": {"series": SERIES, "profile": PROFILE, "perf_stat": STAT},
            "summary": {"command": COMMAND, "script": str(ROOT / APP), "wall_s": wall_s, "exit_code": 0}, "source": COMMAND}


def _md_sources(md: str) -> dict[str, str]:
    """Section heading → the file part of the first Source line under it."""
    out = {}
    for block in md.split("\n## ")[1:]:
        head = block.split("\n", 1)[0]
        m = re.search(r"^_Source: (.*?)(?: · |_$)", block, re.M)
        if m:
            out[head] = m.group(1)
    return out


def test_each_section_names_only_its_own_files():
    a = _profile_run()
    assert a.meta["source: hot spots"] == "pyspy.speedscope.json"  # the analyzer's own key
    v = build_view(a, collected=_collected(), root=str(ROOT))
    src = _md_sources(render_markdown(v))
    assert src["Hot spots"] == PROFILE
    assert src["Hottest stacks"] == PROFILE
    assert src["CPU and memory over time"] == SERIES
    assert src["Reported counters"] == STAT
    # the summary speaks for the whole run: every file, their folder said once
    first = re.search(r"^_Source: (.*?) · ", render_markdown(v), re.M).group(1)
    assert first == f"psutil-series.json, pyspy.speedscope.json, perf-stat.txt in {RUN}"

    html = render_html(v, build_charts(v))
    hot = html.split('<section id="hotspots">', 1)[1].split("</section>", 1)[0]
    assert f"Source: {PROFILE} ·" in hot and SERIES not in hot and STAT not in hot
    counters = html.split('<section id="counters">', 1)[1].split("</section>", 1)[0]
    assert f"Source: {SERIES} ·" in counters and PROFILE not in counters
    stats = html.split('<section id="stats">', 1)[1].split("</section>", 1)[0]
    assert f"Source: {STAT} ·" in stats and PROFILE not in stats


def test_a_section_fed_by_two_files_names_both_and_a_missing_key_falls_back_to_all():
    a = _profile_run()
    meta = {k: x for k, x in a.meta.items() if k != "source: counters"}
    meta["source: hot spots"] = "perf-stat.txt, pyspy.speedscope.json"
    v = build_view(a.model_copy(update={"meta": meta}), collected=_collected(), root=str(ROOT))
    src = _md_sources(render_markdown(v))
    assert src["Hot spots"] == f"pyspy.speedscope.json, perf-stat.txt in {RUN}"  # capture order
    assert src["CPU and memory over time"] == f"psutil-series.json, pyspy.speedscope.json, perf-stat.txt in {RUN}"
    # a finding keeps its own evidence file, whatever section it talks about
    f = Finding(title="x", severity="low", detail="d", evidence=Evidence(source=SERIES))
    assert v.prov.text(f.evidence, sections=("hot spots",)).startswith(SERIES + " · ")


def test_durations_of_a_profiled_run_are_labelled():
    v = build_view(_profile_run(), collected=_collected(), root=str(ROOT))
    assert v.headline().startswith(f"{APP} ran 2.91 s (wall time); 96.0 % of the samples in unique_customers")
    rows = {label: value for label, value, _ in v.source_rows()}
    assert rows["wall time of the run"].startswith("2.91 s — ")
    assert rows["time range"].startswith("0.0–2,844.0 ms — the data's span")
    assert rows["sampled for"].startswith("2.50 s — ")
    assert "collection: wall_s" not in rows  # the same wall time, already shown and labelled
    html = render_html(v, build_charts(v))
    assert "<b>2.91 s</b><span>wall time of the run</span>" in html and "capture length" not in html
    assert "<span>sampled time in unique_customers</span>" in html
    # analysing a file (nothing ran): one duration, the data's own, as before
    plain = build_view(_profile_run(), root=str(ROOT))
    assert "wall time" not in plain.headline() and "capture length" in render_html(plain, build_charts(plain))
    assert "wall time of the run" not in {label for label, _, _ in plain.source_rows()}


def _startup(route: str = "startup") -> object:
    runs = [StartupRun(index=i, total_ms=t, kind="cold" if i == 0 else "warm", ready_by="exit", command=COMMAND)
            for i, t in enumerate([236.4, 235.3, 234.1, 232.9, 236.6])]
    imp = AnalysisResult(format="importtime", source=f"{RUN}/importtime.log", duration_ms=219.9, hotspots=[
        Hotspot(name="tax_tables", file=str(ROOT / "examples/tax_tables.py"), line=1, self_ms=202.9, total_ms=202.9,
                self_pct=92.24, total_pct=92.24, count=1, kind="import"),
        Hotspot(name="enum", self_ms=1.97, total_ms=1.97, self_pct=0.9, kind="import")],
        startup=StartupStats(imports=[ImportEntry(module="tax_tables", self_us=202_900, cumulative_us=202_900, depth=0)]))
    st = AnalysisResult(format="startup_runs", source=f"{RUN}/startup-runs.json", duration_ms=236.6,
                        startup=StartupStats(runs=runs, median_ms=235.3, min_ms=232.9, max_ms=236.6, spread_ms=3.7,
                                             first_ms=236.4, kind="mixed"))
    a = merge([imp, st])
    collected = {"kind": "startup", "paths": {"importtime": imp.source, "startup": st.source},
                 "summary": {"command": COMMAND, "script": str(ROOT / "examples/slow_start.py"), "ready_by": "exit"},
                 "source": COMMAND}
    return build_view(a, collected=collected, route=route, root=str(ROOT))


def test_startup_leads_with_the_launch_figure_then_the_slowest_import():
    v = _startup()
    assert v.headline() == ("examples/slow_start.py launches in 235 ms (median of 5 runs, measured to exit; "
                            "first run 236 ms); slowest import tax_tables (examples/tax_tables.py:1): 203 ms by itself, "
                            "92.2 % of the 220 ms import time.")
    s = " ".join(v.summary_sentences())
    assert "profiled time" not in s and "launch median" not in s  # not repeated in "Also:"
    rows = {label: value for label, value, _ in v.source_rows()}
    assert rows["import time"].startswith("220 ms — ")
    md = render_markdown(v)
    assert _md_sources(md)["Hot spots"] == f"{RUN}/importtime.log"
    assert _md_sources(md)["Startup"] == f"importtime.log, startup-runs.json in {RUN}"
    assert "<span>import time in tax_tables</span>" in render_html(v, build_charts(v))
