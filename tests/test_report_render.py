"""The Markdown and HTML renderers and their charts, checked against the numbers they were given."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from nodes.perf.model import AnalysisResult, FrameStats, StackWeight
from nodes.report import charts, fmt
from nodes.report.html import render_html
from nodes.report.markdown import render_markdown
from nodes.report.sections import build_charts
from nodes.report.svg import WIDTH
from nodes.report.view import ReportInputError, build_view

from tests.helpers.report_sample import SAMPLE_ATTRIBUTION, SOURCE, sample_analysis

SVG_NS = "{http://www.w3.org/2000/svg}"


def _view(**kw):
    a = kw.pop("analysis", None) or sample_analysis()
    return build_view(
        a,
        attribution=kw.pop("attribution", SAMPLE_ATTRIBUTION),
        collected={"kind": "trace", "paths": {"trace": SOURCE}, "source": "adb shell perfetto -o /data/misc/perfetto-traces/t"},
        route="full_analysis",
        question="帮我全面分析一下这个页面的性能",
        **kw,
    )


def _svgs(html: str) -> dict[str, list[ET.Element]]:
    out: dict[str, list[ET.Element]] = {}
    for chunk in re.findall(r"<svg .*?</svg>", html, flags=re.S):
        el = ET.fromstring(chunk)  # every chart is well-formed XML
        out.setdefault(el.get("data-chart"), []).append(el)
    return out


def _marks(svg: ET.Element) -> list[ET.Element]:
    return [e for e in svg.iter() if "mark" in (e.get("class") or "").split()]


# --- the view ----------------------------------------------------------------------------


def test_summary_leads_with_what_was_measured_then_the_verdict_and_key_numbers():
    v = _view()
    s = v.summary_sentences()
    assert 2 <= len(s) <= 3
    a = v.analysis
    # a trace (not a program run here): the file's name and its length, then the frames
    assert s[0].startswith(f"shop_scroll.json covers {fmt.dur(a.duration_ms)} of {a.format} data; ")
    assert f"{a.frames.count:,} frames" in s[0] and f"{100 * a.frames.jank_ratio:.1f} %" in s[0]
    assert s[1] == 'Needs attention: 3 serious findings; look first at "Janky scrolling" (some input was skipped or incomplete, 1 warning: see Warnings).'
    assert s[2].startswith("Also: ") and "655 ms" in s[2]  # the startup median
    # the top hot spot with the line the attributor found, quoted from its excerpt
    assert ("33.6 % of self time in ImageDecoder.decode (app/src/main/java/shop/ImageDecoder.kt:88: "
            "`return BitmapFactory.decodeByteArray(bytes, 0, bytes.size)`)") in s[2]
    assert "traces/" not in " ".join(s)  # paths belong to the Sources lines


def test_findings_are_ranked_by_severity_then_size():
    titles = [f.title for f in _view().ranked_findings()]
    # the two medium findings: first_ms 912 ranks above self_pct 33.6
    assert titles == ["Janky scrolling", "Slow cold start", "Image decoding on the main thread", "GC pause"]


def test_a_clean_result_says_so():
    v = _view(analysis=AnalysisResult(format="pstats", source="p.prof", duration_ms=12.0))
    assert v.verdict == "No problems found"
    assert v.summary_sentences() == ["p.prof covers 12.0 ms of pstats data.", "No problems found."]


@pytest.mark.parametrize(
    "bad, msg",
    [
        ({"format": "x"}, "source"),
        ({"format": "x", "source": "s", "duration_ms": "long"}, "duration_ms"),
        ("not a dict", "not an analysis result"),
    ],
)
def test_bad_analysis_is_one_line_input_error(bad, msg):
    with pytest.raises(ReportInputError) as e:
        build_view(bad)
    assert msg in str(e.value) and "\n" not in str(e.value)


# --- Markdown ------------------------------------------------------------------------------


def test_markdown_has_every_section_each_with_its_source():
    md = render_markdown(_view())
    heads = re.findall(r"^## (.+)$", md, flags=re.M)
    assert heads == ["What to look at first", "Hot spots", "Hottest stacks", "Frames", "Startup",
                     "Threads and long tasks", "CPU and memory over time", "Reported counters", "Sources"]
    for sec in re.split(r"^## ", md, flags=re.M)[1:-1]:
        assert "_Source: " + SOURCE in sec, sec[:60]
    # a finding's own evidence: its events and time range
    assert "5.0–" in md and "events: DrawFrame, Choreographer#doFrame" in md
    # a command-only evidence is not given the capture's time range
    assert "_Source: traces/shop_scroll.json · command: am start -W -n com.demo.shop/.Main_" in md


def test_markdown_tables_survive_pipes_and_show_attribution():
    md = render_markdown(_view())
    row = next(line for line in md.splitlines() if "JSON.parse" in line)
    assert "JSON.parse \\| fast" in row
    assert row.count(" | ") == 8  # nine cells, the escaped pipe is not a separator
    assert "`app/src/main/java/shop/ImageDecoder.kt:88`" in md
    # the attributor's numbered text keeps its numbers, in one gutter, and the hot line is marked
    assert "```kotlin\n  86 | fun decode(bytes: ByteArray): Bitmap {\n  87 |     // decodes" in md
    assert "\n> 88 |     return BitmapFactory.decodeByteArray(bytes, 0, bytes.size)\n" in md
    assert "system / library code (Android framework)" in md
    assert "not found in the workspace" in md


def test_markdown_text_histogram_counts_every_frame():
    v = _view()
    md = render_markdown(v)
    block = md.split("```text\n", 1)[1].split("```", 1)[0]
    counts = [int(line.rsplit(" ", 1)[1]) for line in block.splitlines() if "ms" in line and not line.startswith("(")]
    assert sum(counts) == v.analysis.frames.count


# --- HTML ----------------------------------------------------------------------------------


def test_html_is_self_contained():
    html = render_html(_view(), build_charts(_view()))
    assert "<script" not in html and "<link" not in html and "url(" not in html
    assert not re.search(r"\ssrc=", html)
    assert "default-src 'none'" in html
    assert "prefers-color-scheme:dark" in html
    assert 'name="viewport"' in html


def test_html_escapes_everything_it_did_not_write():
    a = sample_analysis()
    a.hotspots[0].name = "<img src=x onerror=alert(1)>"
    a.source = 'a"b<c>.json'
    html = render_html(_view(analysis=a), build_charts(_view(analysis=a)))
    assert "<img src=x" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    _svgs(html)  # still well-formed


def test_histogram_bars_add_up_and_the_budget_line_sits_at_the_budget():
    v = _view()
    svg = _svgs(render_html(v, build_charts(v)))["frame-histogram"][0]
    bars = _marks(svg)
    assert sum(int(float(b.get("data-v"))) for b in bars) == v.analysis.frames.count
    over = sum(int(float(b.get("data-v"))) for b in bars if "bad" in b.get("class"))
    ok_max = max(float(b.get("x")) + float(b.get("width")) for b in bars if "ok" in b.get("class"))
    budget_line = next(e for e in svg.iter(SVG_NS + "line") if e.get("class") == "budget")
    bx = float(budget_line.get("x1"))
    assert ok_max <= bx + 1.5  # every in-budget bar is left of the line
    jank = sum(1 for d in v.analysis.frames.durations_ms if d > v.analysis.frames.budget_ms)
    # the budget is a bin edge: red bars hold exactly the frames over the budget
    assert over == jank > 0


def test_timeline_places_each_frame_at_its_start():
    v = _view()
    svg = _svgs(render_html(v, build_charts(v)))["timeline"][0]
    rects = [m for m in _marks(svg) if m.find(SVG_NS + "title").text.startswith("frame at")]
    fr = v.analysis.frames
    assert len(rects) == fr.count
    xs = [float(r.get("x")) for r in rects]
    assert xs == sorted(xs)  # time order preserved
    # first and last frame map linearly between the axis ends
    assert xs[0] < xs[-1] and xs[-1] <= WIDTH


def test_icicle_widths_are_proportional_to_time():
    stacks = [StackWeight(frames=["a", "b"], weight_ms=30.0), StackWeight(frames=["a", "c"], weight_ms=10.0)]
    ch = charts.icicle(stacks)
    el = ET.fromstring(ch.svg)
    by_name = {m.find(SVG_NS + "title").text.split(":")[0]: float(m.get("width")) for m in _marks(el)}
    assert by_name["a"] == pytest.approx(by_name["all"], abs=1)
    assert by_name["b"] / by_name["c"] == pytest.approx(3.0, rel=0.03)


def test_charts_are_left_out_when_their_data_is_missing():
    a = AnalysisResult(format="gfxinfo", source="g.txt", frames=FrameStats(count=10, reported={"Janky frames": 3}))
    v = _view(analysis=a, attribution=None)
    cs = build_charts(v)
    assert cs.all() == []
    html = render_html(v, cs)
    assert "<svg" not in html and "reported by the tool: Janky frames" in html


def test_large_frame_lists_are_capped_in_the_timeline():
    n = charts.MAX_TIMELINE_FRAMES + 2000
    fr = FrameStats(count=n, budget_ms=16.0, durations_ms=[20.0 if i % 50 == 0 else 10.0 for i in range(n)],
                    starts_ms=[16.0 * i for i in range(n)])
    ch = charts.timeline(fr, [], 16.0 * n)
    assert ch.marks <= charts.MAX_TIMELINE_FRAMES
    assert ch.svg.count("bad") - ch.svg.count('class="budget"') >= n // 50  # every janky frame kept


def test_an_excerpt_with_a_code_fence_inside_cannot_end_the_block_early():
    attr = [dict(SAMPLE_ATTRIBUTION[0], excerpt='s = """\n```\nnot the end\n```\n"""')]
    md = render_markdown(_view(attribution=attr))
    assert "````kotlin\ns = \"\"\"\n```\nnot the end\n```\n\"\"\"\n````" in md


def test_byte_counters_are_drawn_in_megabytes_and_collection_summary_is_listed():
    from nodes.perf.model import CounterSummary

    pts = [(0.0, 150e6), (100.0, 180e6), (200.0, 210e6)]
    c = CounterSummary(name="rss_bytes", unit="bytes", min=150e6, max=210e6, mean=180e6, last=210e6, points=pts)
    ch = charts.counter_chart(c)
    assert "min 150, mean 180, max 210, last 210 MB" in ch.note
    a = AnalysisResult(format="perfscout_json", source="series.json", counters=[c])
    v = build_view(a, collected={"kind": "profile", "summary": {"rss_mb_max": 210.0, "notes": ["py-spy ok"], "nested": {"x": 1}}})
    md = render_markdown(v)
    assert "| collection: rss_mb_max | 210 |" in md and "| collection: notes | py-spy ok |" in md
    assert "nested" not in md


@pytest.mark.parametrize("v, label", [(0, "0"), (2.5, "2.5"), (1500, "1,500"), (30_000, "30k"), (32_000_000, "32M"), (4e9, "4G")])
def test_axis_labels_stay_short(v, label):
    from nodes.report.svg import tick_label

    assert tick_label(v) == label
