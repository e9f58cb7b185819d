"""Each constant once, imported everywhere (issue 26 item 3): a second literal copy of one of
these in the packages fails here. Cheap greps over app/, graph/ and nodes/."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from nodes.perf import model
from nodes.perf.metrics import common
from nodes.perf.parsers import perfetto_track_event

ROOT = Path(__file__).resolve().parents[1]


def _sources():
    for pkg in ("app", "graph", "nodes"):
        for path in sorted((ROOT / pkg).rglob("*.py")):
            yield path.relative_to(ROOT).as_posix(), path.read_text(encoding="utf-8")


@pytest.mark.parametrize("what,pattern,home", [
    ("the 60 Hz frame budget", r"\b16\.6?67?\b", "nodes/perf/model.py"),
    ("a counter's point cap", r"len\(pts\)\s*<\s*[0-9_]{3,}", None),
    ("the 60 Hz budget in ns", r"16_?666_?667", None),
    ("the counter point cap", r"POINTS\s*=\s*20_?000\b", "nodes/perf/model.py"),
    ("ActivityManager's launch slice prefix", r"[\"']launching: ?[\"']", "nodes/perf/android_package.py"),
    ("the result's stack cap", r"stacks\[:\d+\]", None),
    ("the main-thread names", r"""["']Cr(Browser|Renderer)Main["']\s*,\s*["']Cr(Browser|Renderer)Main""", "nodes/perf/model.py"),
    ("the open-slice cap", r"MAX_OPEN_SLICES\s*=", "nodes/perf/model.py"),
])
def test_no_second_literal_copy(what, pattern, home):
    rx = re.compile(pattern)
    found = [rel for rel, text in _sources() if rel != home and rx.search(text)]
    assert found == [], f"{what} written again as a literal in {found}"


def test_the_names_are_the_models():
    from nodes.perf.metrics import DEFAULT_BUDGET_MS, threads

    assert DEFAULT_BUDGET_MS is model.DEFAULT_BUDGET_MS == 1000.0 / 60.0
    assert threads.MAIN_THREAD_NAMES is model.MAIN_THREAD_NAMES is perfetto_track_event.MAIN_THREAD_NAMES
    assert model.FrameStats(count=0).budget_ms == model.DEFAULT_BUDGET_MS
    # two different facts, two names: points kept per series, points per series in the result
    assert model.MAX_COUNTER_POINTS == 20_000 and common.MAX_COUNTER_RESULT_POINTS == 200
    assert not hasattr(common, "MAX_COUNTER_POINTS")
