"""report.html in a real browser: headless Chromium draws every chart, logs nothing, fetches nothing.

Chromium is driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``: fd 3 in,
fd 4 out, NUL-separated JSON), so no websocket library and no port are needed. The checks:

* every ``svg.chart`` has a non-zero box and drawn data marks (``getBBox`` > 0, a ``data-v``);
* a screenshot, decoded by the same browser in a blank tab, has coloured pixels inside every
  chart's box (the SVG really painted, in more than one colour);
* no console message, no JavaScript exception, no log entry (a CSP violation — a fetch the page
  tried — lands there), and no network request but the page itself;
* the page fits a 390 px phone width without sideways scrolling, and follows dark mode.

The checker is itself checked: a page with an injected remote image, and a chart with no data,
must fail it. Screenshots are kept in ``$PERFSCOUT_SCREENSHOT_DIR`` when that is set.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from nodes.report.render import write_report
from nodes.report.view import build_view
from tests.helpers.browser import CHROMIUM, HERE, Browser, inspect_page
from tests.helpers.report_sample import SAMPLE_ATTRIBUTION, sample_analysis

EXPECTED_CHARTS = {"hotspots", "icicle", "frame-histogram", "timeline", "startup-runs", "startup-waterfall", "import-tree", "counter"}
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed and cannot be installed here (needs root and apt)")


@pytest.fixture(scope="module")
def browser():
    br = Browser(CHROMIUM)
    yield br
    br.close()


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("report")
    view = build_view(
        sample_analysis(),
        attribution=SAMPLE_ATTRIBUTION,
        collected={"kind": "trace", "paths": {"trace": "traces/shop_scroll.json"}, "source": "traces/shop_scroll.json"},
        route="full_analysis",
        question="帮我全面分析一下这个页面的性能",
    )
    return Path(write_report(view, folder)["html"])


def _luminance(css_rgb: str) -> float:
    r, g, b = (int(x) for x in css_rgb[css_rgb.index("(") + 1 : css_rgb.index(")")].split(",")[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _assert_drawn(result: dict) -> None:
    audit, pixels = result["audit"], result["pixels"]
    kinds = {c["kind"] for c in audit["charts"]}
    assert EXPECTED_CHARTS <= kinds, f"missing charts: {EXPECTED_CHARTS - kinds}"
    for c, px in zip(audit["charts"], pixels["boxes"]):
        assert c["w"] > 100 and c["h"] > 40, c
        assert c["drawn"] >= 1 and c["drawn"] == c["marks"], c
        # painted: a real share of the box is ink, in at least two colours (marks + axes/labels)
        assert px["ink"] > 0.01 * px["area"], (c["kind"], px)
        assert px["colours"] >= 2, (c["kind"], px)
    assert result["problems"] == [], result["problems"]
    assert result["requests"] == [result["url"]], result["requests"]


def test_charts_draw_at_desktop_width_in_light_mode(browser, report):
    r = inspect_page(browser, report, 1280, dark=False, shot_name="report-1280-light.png")
    _assert_drawn(r)
    assert r["audit"]["scrollW"] <= r["audit"]["innerW"]
    assert _luminance(r["audit"]["bg"]) > 200


def test_charts_draw_at_phone_width_in_dark_mode(browser, report):
    r = inspect_page(browser, report, 390, dark=True, shot_name="report-390-dark.png")
    _assert_drawn(r)
    # the page itself never scrolls sideways on a phone; wide charts and tables scroll in their box
    assert r["audit"]["scrollW"] <= r["audit"]["innerW"], r["audit"]
    assert _luminance(r["audit"]["bg"]) < 60


REAL = ["api32_startup_warm.perfetto-trace", "chrome-android-thread-time.json.gz"]


@pytest.mark.parametrize("name", REAL)
def test_real_capture_reports_draw_and_fit(browser, tmp_path, name):
    from nodes.perf.analysis import analyze_file

    src = HERE / "data" / "report" / name
    view = build_view(analyze_file(str(src)), collected={"kind": "file", "paths": {"data": str(src)}, "source": str(src)})
    html = Path(write_report(view, tmp_path)["html"])
    for width, dark in ((1280, False), (390, True)):
        r = inspect_page(browser, html, width, dark=dark, shot_name=f"{name}-{width}.png")
        assert r["audit"]["charts"], "a real capture with no chart"
        for c, px in zip(r["audit"]["charts"], r["pixels"]["boxes"]):
            assert c["drawn"] >= 1 and c["drawn"] == c["marks"], c
            assert px["ink"] > 0.005 * px["area"] and px["colours"] >= 2, (c["kind"], px)
        assert r["problems"] == [] and r["requests"] == [r["url"]]
        # long real names (HIDL::IWifiStaIface::…) must wrap, not widen the page
        assert r["audit"]["scrollW"] <= r["audit"]["innerW"], (width, r["audit"]["scrollW"])


def test_checker_catches_a_fetch_and_an_empty_chart(browser, report, tmp_path):
    html = report.read_text(encoding="utf-8")
    bad = html.replace(
        "<main>",
        '<main><img src="https://example.invalid/pixel.png" alt="">'
        '<svg class="chart" data-chart="empty" viewBox="0 0 720 100"><g></g></svg>',
        1,
    )
    page = tmp_path / "bad.html"
    page.write_text(bad, encoding="utf-8")
    r = inspect_page(browser, page, 1280, dark=False, shot_name="bad.png")
    assert any("Content Security Policy" in p or "example.invalid" in p for p in r["problems"]), r["problems"]
    empty = [c for c in r["audit"]["charts"] if c["kind"] == "empty"]
    assert empty and empty[0]["drawn"] == 0
    with pytest.raises(AssertionError):
        _assert_drawn(r)


LENS_CAPTURES = {"perfetto/ms_android12_emulator_sched_cpusampling.pftrace": {"cpu-processes", "cpu-threads", "memory-rss"},
                 "web/scroll.trace.json.gz": {"scroll-latency"}}


@pytest.mark.parametrize("name", sorted(LENS_CAPTURES))
def test_lens_charts_draw(browser, tmp_path, name):
    """The lens sections' charts (nodes/report/lens_charts.py) paint every mark, at desktop width."""
    from nodes.perf.analysis import analyze_paths

    src = HERE / "data" / name
    html = Path(write_report(build_view(analyze_paths([str(src)])), tmp_path)["html"])
    r = inspect_page(browser, html, 1280, dark=False, shot_name=f"lens-{src.name}.png")
    kinds = {c["kind"] for c in r["audit"]["charts"]}
    assert LENS_CAPTURES[name] <= kinds, kinds
    for c, px in zip(r["audit"]["charts"], r["pixels"]["boxes"]):
        assert c["drawn"] >= 1 and c["drawn"] == c["marks"], c
        assert px["ink"] > 0.005 * px["area"] and px["colours"] >= 2, (c["kind"], px)
    assert r["problems"] == [] and r["requests"] == [r["url"]]
    assert r["audit"]["scrollW"] <= r["audit"]["innerW"]
