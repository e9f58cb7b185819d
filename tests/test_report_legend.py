"""The report explains itself (issue 28 item 3): what to look at first is ordered by severity
with facts last, the verdict never names an ``info`` item, and a legend says what the
severities mean, what "serious" counts and why two jank figures can differ — on the bundled
real captures."""

from __future__ import annotations

import re
from pathlib import Path

from nodes.perf.analysis import analyze_paths
from nodes.perf.findings import SEVERITY_ORDER, look_first, to_act_on
from nodes.perf.findings.common import finding
from nodes.report.html import render_html
from nodes.report.markdown import render_markdown
from nodes.report.sections import build_charts
from nodes.report.view import build_view

ROOT = Path(__file__).resolve().parent.parent
LAUNCH = ROOT / "examples" / "traces" / "launch.perfetto-trace"  # api24 cold start: info startup facts, a high jank
GFXINFO = ROOT / "examples" / "traces" / "gfxinfo.txt"


def _severities(md: str) -> list[str]:
    section = md.split("## What to look at first", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\d+\. \*\*\[(\w+)\]", section, re.M)


def test_to_act_on_puts_problems_before_facts_and_the_lead_family_first_among_equals():
    fact = finding("Cold startup: TTID 1 ms", "info", "d", None, family="startup")
    jank = finding("Janky frames", "high", "d", None, family="frames", metric={"jank_ratio": 0.5})
    slow = finding("Slow start reason", "high", "d", None, family="startup", metric={"ms": 1.0})
    medium = finding("Late frames", "medium", "d", None, family="frames")
    got = to_act_on([fact, medium, jank, slow], "startup")
    assert got == [slow, jank, medium, fact]
    assert look_first([fact, medium, jank], "startup") is jank
    assert look_first([fact], "startup") is None  # a fact is never announced as the thing to fix


def test_a_startup_trace_s_verdict_names_its_most_severe_finding_not_a_fact():
    res = analyze_paths([str(LAUNCH)])
    assert res.findings[0].severity == "info" and res.findings[0].family == "startup"  # the answer leads the data
    v = build_view(res.model_dump())
    verdict = v.summary_sentences()[1]
    high = next(f for f in res.findings if f.severity == "high")
    assert f'look first at "{high.title}"' in verdict, verdict
    md = render_markdown(v)
    sev = _severities(md)
    assert sev[0] == "high" and sev == sorted(sev, key=lambda s: SEVERITY_ORDER[s])
    n = sum(1 for s in sev if s in ("high", "medium"))
    assert f"{n} serious findings" in verdict
    assert "The verdict counts high and medium findings as serious" in md
    assert "Two jank figures" not in md  # only one jank figure in this trace
    assert "info — a measured fact" in render_html(v, build_charts(v))


def test_a_gfxinfo_report_says_why_its_two_jank_figures_differ():
    res = analyze_paths([str(GFXINFO)])
    assert res.frames.reported.get("janky_pct") is not None and res.frames.count == 120
    v = build_view(res.model_dump())
    md, page = render_markdown(v), render_html(v, build_charts(v))
    for text in (md, page):
        assert "Two jank figures" in text and "over the 120 frames it has rows for" in text
    assert "since its statistics were last reset" in md
