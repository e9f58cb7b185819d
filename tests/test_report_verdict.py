"""What a person reads first: the headline, the title, the source excerpts and the Sources table.

The state here is shaped like a real ``perfscout ask … --allow-run`` turn on examples/slow_app.py:
the collector's summary (command, script, wall time), a merged three-file analysis and the
attributor's ``excerpt`` as a list of ``{line, text}`` read from the real file.
"""

from __future__ import annotations

import json
from pathlib import Path

from langchain_core.messages import HumanMessage

from app.report_cmd import run_report
from nodes import reporter
from nodes.framework.context import NodeContext
from nodes.perf.model import AnalysisResult, Evidence, Finding, Hotspot
from nodes.report import excerpt, fmt
from nodes.report.html import render_html
from nodes.report.markdown import render_markdown
from nodes.report.render import write_report
from nodes.report.sections import build_charts
from nodes.report.view import build_view

ROOT = Path(__file__).resolve().parent.parent
APP = "examples/slow_app.py"
RUN = ".perfscout/runs/t1/20260101T000000Z"
FILES = [f"{RUN}/psutil-series.json", f"{RUN}/pyspy.speedscope.json", f"{RUN}/perf-stat.txt"]
COMMAND = f"/venv/bin/python {ROOT / APP}"


def _line_of(text: str) -> int:
    return next(i for i, t in enumerate((ROOT / APP).read_text().splitlines(), 1) if text in t)


HOT = _line_of("if order.customer not in seen")
FMT = _line_of("best = sorted(customers")


def _excerpt(line: int) -> list[dict]:
    lines = (ROOT / APP).read_text().splitlines()
    return [{"line": n, "text": lines[n - 1]} for n in range(max(1, line - 3), min(len(lines), line + 3) + 1)]


def _analysis() -> AnalysisResult:
    return AnalysisResult(
        format="psutil_series+speedscope+perfstat",
        source=", ".join(FILES),
        duration_ms=2844.0,
        hotspots=[
            Hotspot(name="unique_customers", file=str(ROOT / APP), line=HOT, self_ms=2690.0, total_ms=2690.0,
                    self_pct=94.6, total_pct=94.6, count=1, kind="sample"),
            Hotspot(name="format_report", file=str(ROOT / APP), line=FMT, self_ms=20.0, total_ms=20.0,
                    self_pct=0.7, total_pct=0.7, count=1, kind="sample"),
            Hotspot(name="main", file=str(ROOT / APP), line=56, self_ms=0.0, total_ms=2844.0,
                    self_pct=0.0, total_pct=100.0, kind="sample"),
        ],
        findings=[Finding(title="Hot spot: unique_customers", severity="high", detail="unique_customers takes 94.6 %.",
                          evidence=Evidence(source=FILES[1], events=["unique_customers"]), metric={"self_pct": 94.6})],
        meta={"command": COMMAND, "pid": "4242", "source": "psutil-series.json", f"process 4242": COMMAND,
              "producer": "py-spy@0.4.3", "runs": "1"},
    )


def _attribution() -> list[dict]:
    return [
        {"name": "unique_customers", "status": "found", "file": APP, "line": HOT, "excerpt": _excerpt(HOT), "reason": "profile location"},
        {"name": "format_report", "status": "found", "file": APP, "line": FMT, "excerpt": _excerpt(FMT), "reason": "profile location"},
        {"name": "main", "status": "found", "file": APP, "line": 56, "excerpt": _excerpt(56), "reason": "profile location"},
    ]


def _collected() -> dict:
    return {
        "kind": "profile",
        "paths": {"series": FILES[0], "profile": FILES[1], "perf_stat": FILES[2]},
        "summary": {"command": COMMAND, "script": str(ROOT / APP), "wall_s": 2.9062, "pid": 4242, "exit_code": 0,
                    "run_dir": RUN, "series_procs_max": 1, "series_threads_max": 1},
        "source": COMMAND,
    }


def _view():
    return build_view(_analysis(), attribution=_attribution(), collected=_collected(), route="full_analysis",
                      question="帮我全面分析一下 examples/slow_app.py", root=str(ROOT))


def test_headline_says_what_ran_how_long_and_where_the_time_went():
    v = _view()
    assert v.subject == APP
    assert v.headline() == (f"{APP} ran 2.91 s (wall time); 94.6 % of the samples in unique_customers "
                            f"({APP}:{HOT}: `if order.customer not in seen:`).")
    s = v.summary_sentences()
    assert s[1] == 'Needs attention: 1 serious finding; look first at "Hot spot: unique_customers".'
    assert RUN not in " ".join(s)  # the data files are in Sources, not in the verdict


def test_title_is_short_and_the_paths_stay_in_sources():
    v = _view()
    md = render_markdown(v)
    title = md.splitlines()[0]
    assert title == f"# PerfScout report — {APP}"
    sources = md.split("## Sources", 1)[1]
    for f in FILES:
        assert f"`{f}`" in sources
    assert sources.count(COMMAND) == 1  # collector, reader and merge all recorded it: shown once
    assert "| collection: series_procs_max | 1 |" in sources and "| collection: series_threads_max | 1 |" in sources
    assert "| collection: pid | 4242 |" in sources and "| runs | 1 |" in sources
    html = render_html(v, build_charts(v))
    assert f"<title>PerfScout report — {APP}</title>" in html and f"<h1>PerfScout report — {APP}</h1>" in html
    assert "<code>if order.customer not in seen:</code>" in html  # the quoted line, as code


def test_excerpts_are_numbered_code_with_the_hot_line_marked():
    v = _view()
    md = render_markdown(v)
    html = render_html(v, build_charts(v))
    for page in (md, html):
        assert "{'line'" not in page and "&#x27;line&#x27;" not in page  # never the Python repr
    block = md.split(f"**unique_customers** — `{APP}:{HOT}`", 1)[1].split("```python\n", 1)[1].split("\n```", 1)[0]
    rows = block.splitlines()
    assert [r for r in rows if r.startswith(">")] == [f"> {HOT} |         if order.customer not in seen:  # O(len(seen)) per order: quadratic overall"]
    assert [int(r[2:].split("|")[0]) for r in rows] == [x["line"] for x in _excerpt(HOT)]
    # only hot spots with self time get an excerpt (main has none); one per location
    assert "**format_report**" in md and "**main**" not in md
    hot_html = html.split('<span class="hot">', 1)[1].split("</span></span>", 1)[0]
    assert f'<span class="ln">{HOT}</span>' in hot_html + "</span>" and "order.customer not in seen" in hot_html
    assert html.count('<pre class="excerpt">') == 2


def test_a_plain_string_excerpt_is_still_shown():
    raw = "def f():\n    return 1"
    ex = excerpt.parse(raw, 2)
    assert ex is not None and not ex.numbered and ex.hot is None
    assert excerpt.markdown_block(ex, "python") == "```python\ndef f():\n    return 1\n```"
    attr = [dict(_attribution()[0], excerpt=raw)]
    md = render_markdown(build_view(_analysis(), attribution=attr, collected=_collected(), root=str(ROOT)))
    assert "```python\ndef f():\n    return 1\n```" in md
    # a headline without the attributor's quote still names the place
    v = build_view(_analysis(), attribution=attr, collected=_collected(), root=str(ROOT))
    assert f"({APP}:{HOT})." in v.headline()


def test_numbered_string_and_bad_shapes():
    ex = excerpt.parse(" 9  a\n10  b\n11      c", 10)
    assert ex.lines == ((9, "a"), (10, "b"), (11, "    c")) and ex.hot == 10 and excerpt.snippet(ex) == "b"
    assert excerpt.parse("3  x\n7  y", 3).numbered is False  # numbers that do not count up: plain text
    assert excerpt.parse([], 1) is None and excerpt.parse(None, 1) is None and excerpt.parse({"x": 1}) is None
    assert excerpt.parse([{"line": "x", "text": "a"}, 5], 1).lines == ((None, "a"),)
    long = excerpt.parse([{"line": 1, "text": "x = '#'  # a comment " + "y" * 100}], 1)
    assert excerpt.snippet(long).startswith("x = '#'  # a comment") and len(excerpt.snippet(long)) == excerpt.MAX_SNIPPET
    assert excerpt.snippet(excerpt.parse([{"line": 1, "text": "    total += x  # hot"}], 1)) == "total += x"


def test_a_fence_or_backtick_in_the_code_cannot_break_the_page():
    attr = [dict(_attribution()[0], excerpt=[{"line": HOT, "text": "s = `a` + '```'"}])]
    v = build_view(_analysis(), attribution=attr, collected=_collected(), root=str(ROOT))
    assert "(`` s = `a` + '```' ``)" not in v.headline() and "`` s = `a` + '```' ``" in v.headline()
    md = render_markdown(v)
    assert "````python\n> " + str(HOT) + " | s = `a` + '```'\n````" in md
    assert "<code>s = `a` + &#x27;```&#x27;</code>" in render_html(v, build_charts(v))


def test_answer_leads_with_the_headline_and_the_hot_line(tmp_path):
    state = {
        "messages": [HumanMessage(content="帮我全面分析一下 examples/slow_app.py")],
        "_route": "full_analysis",
        "analysis": _analysis().model_dump(mode="json"),
        "attribution": _attribution(),
        "collected": _collected(),
    }
    out = reporter.make(NodeContext(runs_dir=str(tmp_path)))(state)
    first = out["answer"].splitlines()[0]
    assert first.startswith(f"{APP} ran ") and f"({APP}:{HOT}: `if order.customer not in seen:`)" in first
    assert RUN not in out["answer"].split("Report:")[0]


def test_rerendering_a_report_json_keeps_the_excerpts(tmp_path):
    (tmp_path / "a").mkdir()
    first = write_report(_view(), tmp_path / "a")
    data = json.loads(Path(first["json"]).read_text())
    assert data["attribution"][0]["excerpt"][0] == _excerpt(HOT)[0]  # JSON keeps the attributor's shape
    again = run_report(first["dir"], runs_dir=str(tmp_path / "runs"), out=str(tmp_path / "b"))
    md = Path(again["markdown"]).read_text()
    assert f"> {HOT} |         if order.customer not in seen:" in md and "{'line'" not in md


def test_several_files_in_one_folder_are_named_once():
    assert fmt.files(", ".join(FILES)) == f"psutil-series.json, pyspy.speedscope.json, perf-stat.txt in {RUN}"
    assert fmt.files("a/x.json, b/y.json") == "a/x.json, b/y.json" and fmt.files("x.json") == "x.json"
    assert (fmt.dur(950.0), fmt.dur(2906.2), fmt.dur(12_345.0), fmt.dur(123_456.0)) == ("950 ms", "2.91 s", "12.3 s", "123 s")


def test_flat_counters_are_one_line_not_a_chart_each():
    from nodes.perf.model import CounterSummary

    def series(name, unit, values):
        pts = [(100.0 * i, float(x)) for i, x in enumerate(values)]
        return CounterSummary(name=name, unit=unit, min=min(values), max=max(values), mean=sum(values) / len(values),
                              last=values[-1], points=pts)

    a = _analysis().model_copy(update={"counters": [series("cpu_percent", "%", [0, 40, 55, 48]),
                                                    series("num_procs", None, [1, 1, 1, 1]),
                                                    series("read_bytes", "bytes", [0, 0, 0, 0])]})
    v = build_view(a, attribution=_attribution(), collected=_collected(), root=str(ROOT))
    cs = build_charts(v)
    assert [c.title for c in cs.counters] == ["cpu_percent"]
    html = render_html(v, cs)
    assert "Constant over the capture: num_procs 1, read_bytes 0 MB." in html
    md = render_markdown(v)  # the Markdown table still lists every series
    assert "| num_procs |" in md and "| read_bytes |" in md
