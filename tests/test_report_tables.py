"""The report's tables are built once (nodes/report/tables.py) and only laid out by the two
renderers: the same columns, rows and caps in report.md and report.html (issue 26, item 6)."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

from nodes.report import tables
from nodes.report.html import render_html
from nodes.report.markdown import render_markdown
from nodes.report.sections import build_charts
from nodes.report.view import build_view
from tests.helpers.report_sample import SAMPLE_ATTRIBUTION, sample_analysis

ROOT = Path(__file__).resolve().parents[1]


def _built(v) -> list[tables.Table]:
    a = v.analysis
    return [tables.frame_stats(a.frames), tables.worst_frames(a.frames), tables.startup_summary(a.startup),
            tables.startup_runs(a.startup), tables.threads(a.threads), tables.long_tasks(a.long_tasks),
            tables.stats(a.stats), tables.sources(v.source_rows())]


def test_both_reports_show_each_table_with_the_same_columns():
    v = build_view(sample_analysis(), attribution=SAMPLE_ATTRIBUTION)
    md, page = render_markdown(v), render_html(v, build_charts(v))
    heads = [[unescape(h) for h in re.findall(r"<th[^>]*>(.*?)</th>", t)]
             for t in re.findall(r"<thead>(.*?)</thead>", page)]
    for t in _built(v):
        if not t.rows:
            continue
        names = [c.name for c in t.columns]
        assert "| " + " | ".join(names) + " |" in md, names
        assert names in heads, names


def test_the_caps_hold_in_both():
    a = sample_analysis()
    a.long_tasks = a.long_tasks * 20
    v = build_view(a)
    md, page = render_markdown(v), render_html(v, build_charts(v))
    n = len(tables.long_tasks(a.long_tasks).rows)
    assert n == tables.LONG_TASK_ROWS < len(a.long_tasks)
    section = md.split("### Long tasks", 1)[1].split("\n\n", 2)[1]
    assert len(section.splitlines()) == 2 + n
    html_section = page.split("<h3>Long tasks</h3>", 1)[1].split("</table>", 1)[0]
    assert html_section.count("<tr>") == 1 + n


def test_no_renderer_writes_its_own_row_cap():
    for name in ("markdown.py", "html.py"):
        text = (ROOT / "nodes" / "report" / name).read_text()
        assert not re.search(r"\[:\s*\d+\s*\]", text), name


def test_every_section_has_a_writer_in_both_renderers():
    from nodes.report import html, markdown
    from nodes.report.view import SECTIONS

    assert set(markdown._SECTIONS) == set(SECTIONS) == set(html._SECTIONS)


def test_the_view_decides_the_order_of_the_sections_in_both(monkeypatch):
    v = build_view(sample_analysis(), attribution=SAMPLE_ATTRIBUTION)
    order = ["sources", "summary", "frames", "first"]
    monkeypatch.setattr(type(v), "sections", lambda self: list(order))
    md, page = render_markdown(v), render_html(v, build_charts(v))
    md_heads = [line for line in md.splitlines() if line.startswith(("# ", "## "))]
    assert md_heads == ["## Sources", f"# PerfScout report — {v.subject}", "## Frames", "## What to look at first"]
    assert re.findall(r'<section id="(\w+)"', page) == order
    assert re.findall(r'<nav>(.*?)</nav>', page)[0].count("<a ") == len(order)
