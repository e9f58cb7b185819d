"""The report's sections and tables are built once (nodes/report/content.py, nodes/report/tables.py)
and only laid out by the two renderers: the same sections, tables, rows, cells and caps, in the
same order, in report.md and report.html (issue 26, item 6)."""

from __future__ import annotations

import ast
import re
from html import unescape
from pathlib import Path

import pytest

from nodes.perf.analysis import analyze_paths
from nodes.perf.model import ArtStats, BreakdownItem, CounterSummary, Hotspot, MainThreadState, StartupRun, StartupStats
from nodes.report import content, html, markdown, tables
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


def test_every_section_is_built_once_or_has_a_writer_in_both_renderers():
    from nodes.report.view import SECTIONS, TEXT_SECTIONS

    assert set(markdown._SECTIONS) == set(TEXT_SECTIONS) == set(html._SECTIONS)
    assert set(SECTIONS) == set(TEXT_SECTIONS) | set(content.DATA_SECTIONS)
    assert not set(TEXT_SECTIONS) & set(content.DATA_SECTIONS)


# --- one definition of every row: the same tables, in the same order, from both renderers ------

#: Real captures (tests/data, see SOURCES.md) that fill every data section between them: a
#: Chrome trace (hot spots, untraced task time, long tasks, threads), gfxinfo (frames), two
#: Perfetto startups (launch, breakdown, ART, counters, the lens sections), a Chrome scroll, CPU
#: samples of several processes (per-process hot-spot rows, sampled stacks).
CAPTURES = ["report/chrome116-devtools-trace.json", "report/gfxinfo-reactnativefeed-flashlight.txt",
            "perfetto/api24_startup_cold.perfetto-trace", "perfetto/api32_startup_warm.perfetto-trace",
            "web/scroll.trace.json.gz", "perfetto/ms_android12_emulator_sched_cpusampling.pftrace"]


def _key(t: tables.Table) -> tuple:
    return (t.title, [(c.name, c.numeric) for c in t.columns], t.rows)


def _laid_out(monkeypatch, v) -> tuple[list[tuple], list[tuple], str, str]:
    """Every table each renderer laid out, in order, and the two reports."""
    seen: dict[str, list[tuple]] = {"md": [], "html": []}
    for name, mod in (("md", markdown), ("html", html)):
        real = mod.lay_out

        def record(t, real=real, name=name):
            seen[name].append(_key(t))
            return real(t)

        monkeypatch.setattr(mod, "lay_out", record)
    md, page = render_markdown(v), render_html(v, build_charts(v))
    return seen["md"], seen["html"], md, page


def _view_tables(v, cs) -> tuple[list[tuple], list[tuple]]:
    """The view's tables in report order: all of them (report.md) and those the page does not
    draw as a chart instead (report.html)."""
    secs = []
    for sid in v.sections():
        if sid == "lens":
            secs += [v.lens_answer(), *v.lens_blocks(asked=True)]
        elif sid == "other_lenses":
            secs += v.lens_blocks(asked=False)
        elif sid in content.DATA_SECTIONS:
            secs.append(v.section(sid))
    ts = [t for s in secs if s is not None for t in s.tables()]
    return [_key(t) for t in ts], [_key(t) for t in ts if not (t.drawn_as and getattr(cs, t.drawn_as))]


@pytest.fixture(scope="module")
def analyses():
    return {name: analyze_paths([str(ROOT / "tests" / "data" / name)]) for name in CAPTURES}


@pytest.mark.parametrize("name", CAPTURES)
@pytest.mark.parametrize("lens", [None, "memory"])
def test_both_reports_lay_out_the_views_tables_and_no_others(monkeypatch, analyses, name, lens):
    v = build_view(analyses[name], lens=lens)
    md_seen, html_seen, md, page = _laid_out(monkeypatch, v)
    every, not_drawn = _view_tables(v, build_charts(v))
    assert every, name
    assert md_seen == every
    assert html_seen == not_drawn
    # the same rows, in the same order, in both: what the page draws instead is a chart of them
    assert [t for t in md_seen if t in html_seen] == html_seen
    # no table of a renderer's own: every table in the files is one of the view's
    assert md.count("\n|---") + md.count("\n|:--") == len(md_seen)
    assert page.count("<table>") == len(html_seen)


def test_the_sample_report_too(monkeypatch):
    v = build_view(sample_analysis(), attribution=SAMPLE_ATTRIBUTION)
    md_seen, html_seen, _, _ = _laid_out(monkeypatch, v)
    every, not_drawn = _view_tables(v, build_charts(v))
    assert md_seen == every and html_seen == not_drawn
    assert {t[1][0][0] for t in every} >= {"#", "time", "phase", "module", "series", "metric", "thread"}


#: What a renderer may not do: pick rows (sort, cap, rank by size) or format numbers. Counting
#: and numbering columns or list items (len, enumerate) is layout and allowed.
_BANNED_CALLS = {"sorted", "min", "max", "sum", "round", "filter"}
_BANNED_NAMES = {"fmt", "AttributionStatus"}


@pytest.mark.parametrize("name", ["markdown.py", "html.py"])
def test_no_renderer_picks_rows_or_formats_numbers(name):
    """report.md and report.html lay out and escape; a sort, a cap, a sum or a number format
    of their own is a second definition of a row (nodes/report/content.py, tables.py, view.py
    hold the one)."""
    tree = ast.parse((ROOT / "nodes" / "report" / name).read_text())
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            fname = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
            if fname in _BANNED_CALLS or fname == "sort":
                found.append(f"{fname}() at line {node.lineno}")
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
            found.append(f"a slice at line {node.lineno}")
        elif isinstance(node, (ast.Name, ast.alias)) and (getattr(node, "id", None) or getattr(node, "name", None)) in _BANNED_NAMES:
            found.append(f"{getattr(node, 'id', None) or node.name} at line {getattr(node, 'lineno', '?')}")
        elif isinstance(node, ast.JoinedStr) and any(isinstance(x, ast.FormattedValue) and x.format_spec for x in node.values):
            found.append(f"a number format at line {node.lineno}")
    assert found == []


# --- where the two renderers disagreed, the view's one definition now holds in both -----------


def test_hot_spot_source_cell_is_one_definition():
    """Before: with no attribution, the page said "not attributed" in the source column and put
    the profile's file under the name, report.md put the file in the source column and "–"
    when there was none. Now both show the file (or "–") in the source column."""
    a = sample_analysis()
    a.hotspots = [Hotspot(name="f", file="lib/a.py", line=3, self_ms=5.0, total_ms=5.0, self_pct=50.0),
                  Hotspot(name="slice", self_ms=5.0, total_ms=5.0, self_pct=50.0)]
    v = build_view(a)
    rows = v.section("hotspots").tables()[0].rows
    assert [r[-1] for r in rows] == [tables.Code("lib/a.py:3"), "–"]
    md, page = render_markdown(v), render_html(v, build_charts(v))
    assert "| `lib/a.py:3` |" in md and "<td><code>lib/a.py:3</code></td>" in page
    assert "not attributed" not in page


def test_a_launch_says_the_same_in_both():
    """Before: the page's launch heading carried TTID/TTFD and left out the main thread's states,
    the ART counts and the breakdown's caption, which report.md showed."""
    run = StartupRun(index=1, total_ms=800.0, kind="cold", package="com.demo.shop", ttid_ms=500.0, ttfd_ms=700.0,
                     breakdown=[BreakdownItem(reason="bind_application", dur_ms=200.0)],
                     main_thread=MainThreadState(running_ms=400.0, runnable_ms=100.0, sleeping_ms=200.0,
                                                 uninterruptible_ms=50.0, io_wait_ms=20.0),
                     art=ArtStats())
    a = sample_analysis()
    a.startup = StartupStats(runs=[run], median_ms=800.0, kind="cold")
    v = build_view(a)
    md, page = render_markdown(v), render_html(v, build_charts(v))
    for text in ("400 ms / 100 ms / 200 ms / 50.0 ms / 20.0 ms", "Breakdown (trace_processor", "class init 0", "25.0 %"):
        assert text in md and text in unescape(page), text


def test_constant_counters_are_named_in_both():
    """Before: only the page named the series that never moved."""
    a = sample_analysis()
    a.counters = [CounterSummary(name="num_procs", min=1.0, max=1.0, mean=1.0, last=1.0, points=[(0.0, 1.0), (5.0, 1.0)])]
    v = build_view(a)
    md, page = render_markdown(v), render_html(v, build_charts(v))
    assert "Constant over the capture: num_procs 1." in md and "Constant over the capture: num_procs 1." in page


def test_the_view_decides_the_order_of_the_sections_in_both(monkeypatch):
    v = build_view(sample_analysis(), attribution=SAMPLE_ATTRIBUTION)
    order = ["sources", "summary", "frames", "first"]
    monkeypatch.setattr(type(v), "sections", lambda self: list(order))
    md, page = render_markdown(v), render_html(v, build_charts(v))
    md_heads = [line for line in md.splitlines() if line.startswith(("# ", "## "))]
    assert md_heads == ["## Sources", f"# PerfScout report — {v.subject}", "## Frames", "## What to look at first"]
    assert re.findall(r'<section id="(\w+)"', page) == order
    assert re.findall(r'<nav>(.*?)</nav>', page)[0].count("<a ") == len(order)


def test_the_terminal_summary_lays_out_the_same_tables(monkeypatch):
    """``perfscout inspect`` (app/analyze_cmd.py ``render``) prints the report's tables: each
    table it prints is one of nodes/report/tables.py, and it builds no rows of its own (one
    ``add_row`` in its table layout, one for the findings list)."""
    import io

    from app import analyze_cmd

    a = analyze_paths([str(ROOT / "tests" / "data" / "perfetto" / "api24_startup_cold.perfetto-trace")])
    seen = []
    real = analyze_cmd._rich
    monkeypatch.setattr(analyze_cmd, "_rich", lambda t, title: seen.append(_key(t)) or real(t, title))
    analyze_cmd.render(a, io.StringIO())
    v = build_view(a)
    want = [tables.hotspots([h for h in a.hotspots if h.thread is None], v.hotspot_source), tables.threads(a.threads),
            tables.long_tasks(a.long_tasks), tables.phases(a.startup.phases), tables.counters(a.counters)]
    assert seen == [_key(t) for t in want if t.rows]
    tree = ast.parse((ROOT / "app" / "analyze_cmd.py").read_text())
    rows = [n for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr == "add_row"]
    assert len(rows) == 2
