"""compare.html in headless Chromium (the report's checker, tests/test_report_browser.py): the
delta chart draws one mark per bar, the page logs nothing, fetches nothing and fits a phone."""

from __future__ import annotations

from pathlib import Path

import pytest

import compare_gen as gen
from nodes.compare.diff import compare_sides
from nodes.compare.render import write_comparison
from nodes.compare.sides import load_side
from tests.helpers.browser import CHROMIUM, Browser, inspect_page

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed and cannot be installed here")


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("cmp")
    gen.trace_event_runs(root / "a", 5, seed=41)
    gen.trace_event_runs(root / "b", 5, seed=42, parse_ms=36.0, janky_frames=8)
    cmp = compare_sides(load_side(str(root / "a")), load_side(str(root / "b")))
    return Path(write_comparison(cmp, root / "out")["html"])


@pytest.mark.parametrize("width,dark", [(1280, False), (390, True)])
def test_the_delta_chart_draws_and_the_page_stays_offline(page, width, dark):
    br = Browser(CHROMIUM)
    try:
        r = inspect_page(br, page, width, dark=dark, shot_name=f"compare-{width}.png")
    finally:
        br.close()
    charts = [c for c in r["audit"]["charts"] if c["kind"] == "delta"]
    assert len(charts) == 1
    c, px = charts[0], r["pixels"]["boxes"][r["audit"]["charts"].index(charts[0])]
    assert c["drawn"] >= 5 and c["drawn"] == c["marks"], c
    assert px["ink"] > 0.005 * px["area"] and px["colours"] >= 2, px
    assert r["problems"] == [] and r["requests"] == [r["url"]]
    assert r["audit"]["scrollW"] <= r["audit"]["innerW"]
