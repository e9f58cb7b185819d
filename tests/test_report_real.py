"""Reports of real captures (tests/data/report, see SOURCES.md) through the analyzer of issue 4.

Skipped, with that reason, only while ``nodes.perf.analysis`` is not in the tree.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from nodes.report.render import write_report
from nodes.report.view import build_view

DATA = Path(__file__).parent / "data" / "report"

CAPTURES = ["chrome116-devtools-trace.json", "gfxinfo-reactnativefeed-flashlight.txt"]


def analyse(name: str):
    from nodes.perf import analysis

    path = str(DATA / name)
    if hasattr(analysis, "analyze_file"):
        return analysis.analyze_file(path)
    return analysis.analyze_paths([path])


@pytest.mark.parametrize("name", CAPTURES)
def test_real_capture_report_shows_the_analysis_numbers(tmp_path, name):
    a = analyse(name)
    out = write_report(build_view(a, collected={"kind": "file", "paths": {"data": str(DATA / name)}, "source": str(DATA / name)}), tmp_path)
    md = Path(out["markdown"]).read_text()
    html = Path(out["html"]).read_text()
    assert name in md and name in html
    if a.frames and a.frames.count:
        assert f"| frames | {a.frames.count:,} |" in md
    if a.hotspots:
        top = a.hotspots[0]
        assert top.name.replace("|", "\\|")[:20] in md
    for svg in re.findall(r"<svg .*?</svg>", html, flags=re.S):
        assert 'class="mark' in svg
    data = json.loads(Path(out["json"]).read_text())
    assert data["analysis"]["format"] == a.format


def test_gfxinfo_report_keeps_the_tools_own_totals(tmp_path):
    a = analyse("gfxinfo-reactnativefeed-flashlight.txt")
    out = write_report(build_view(a), tmp_path)
    md = Path(out["markdown"]).read_text()
    assert a.frames is not None
    for k in a.frames.reported:
        assert f"reported by the tool: {k}" in md
