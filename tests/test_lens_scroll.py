"""The scroll lens on a Chrome trace: Chrome's own jank verdicts counted, input-to-frame latency
measured from EventLatency spans, frame fates from PipelineReporter.

The capture (tests/data/web/scroll.trace.json.gz, SOURCES.md) was recorded with Debian's
Chromium over the DevTools protocol (``tests/data/web/record_scroll.py``): Tracing.start, three
``Input.synthesizeScrollGesture`` wheel scrolls over a page whose non-passive wheel listener
blocks the main thread every fourth event. The reference is computed here from a plain ``json``
reading of the trace — Chrome's verdicts as it wrote them, the spans paired by their ids —
sharing no code with the reader or the metric.
"""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path

import pytest

from nodes.perf.analysis import analyze_file
from nodes.perf.metrics.scroll import summarize_scroll

TRACE = Path(__file__).parent / "data" / "web" / "scroll.trace.json.gz"
UPDATES = {"FIRST_GESTURE_SCROLL_UPDATE", "GESTURE_SCROLL_UPDATE", "INERTIAL_GESTURE_SCROLL_UPDATE"}


@pytest.fixture(scope="module")
def raw():
    return json.load(gzip.open(TRACE))["traceEvents"]


@pytest.fixture(scope="module")
def res():
    return analyze_file(str(TRACE))


def _nearest(vals, q):
    vals = sorted(vals)
    return vals[max(0, math.ceil(q / 100 * len(vals)) - 1)]


def test_jank_verdicts_are_chromes_own(raw, res):
    begins = [e for e in raw if e["name"] == "EventLatency" and e["ph"] == "b"]
    updates = [e["args"]["event_latency"] for e in begins if e["args"]["event_latency"]["event_type"] in UPDATES]
    judged = [u for u in updates if "is_janky_scrolled_frame" in u]
    v4 = [e["args"]["scroll_jank_v4"] for e in raw if e["name"] == "ScrollJankV4" and e["ph"] == "b"]
    s = res.scroll
    assert s.update_count == len(updates) == len(s.updates) and s.scrolls == 3
    # each update carries Chrome's verdict where Chrome judged it
    assert sum(1 for u in s.updates if u.janky) == s.janky_frames
    assert sum(1 for u in s.updates if u.janky is not None) == s.presented_frames
    assert (s.presented_frames, s.janky_frames) == (len(judged), sum(u["is_janky_scrolled_frame"] for u in judged))
    assert (s.v4_frames, s.v4_janky_frames) == (len(v4), sum(v["is_janky"] for v in v4))
    assert s.janky_frames > 0  # the blocking wheel listener made some
    assert s.janky_ratio == pytest.approx(s.janky_frames / s.presented_frames, abs=1e-4)


def test_input_to_frame_latency_is_the_event_latency_span(raw, res):
    open_, durs = {}, []
    for e in sorted((e for e in raw if e["name"] == "EventLatency"), key=lambda e: e["ts"]):
        key = (e["pid"], json.dumps(e.get("id2") or e.get("id")))
        if e["ph"] == "b":
            open_.setdefault(key, []).append(e)
        elif open_.get(key):
            b = open_[key].pop(0)
            if b["args"]["event_latency"]["event_type"] in UPDATES:
                durs.append((e["ts"] - b["ts"]) / 1000.0)
    s = res.scroll
    assert s.latency_p50_ms == pytest.approx(_nearest(durs, 50), rel=0.01)
    assert s.latency_p99_ms == pytest.approx(_nearest(durs, 99), rel=0.01)
    assert s.latency_max_ms == pytest.approx(max(durs), rel=0.01)
    assert sorted(u.latency_ms for u in s.updates) == pytest.approx(sorted(durs), abs=0.001)


def test_frame_states_and_the_sentence(raw, res):
    states = {}
    for e in raw:
        if e["name"] == "PipelineReporter" and e["ph"] == "b":
            st = e["args"]["frame_reporter"]["state"]
            states[st] = states.get(st, 0) + 1
    s = res.scroll
    assert s.frame_states == dict(sorted(states.items(), key=lambda kv: -kv[1]))
    assert s.dropped_frames == states.get("STATE_DROPPED", 0)
    assert summarize_scroll(s).startswith(f"{s.janky_frames} of {s.presented_frames} scroll frames janky")


def test_a_page_load_without_scrolling_says_so():
    res = analyze_file(str(Path(__file__).parent / "data" / "web" / "webvitals.trace.json.gz"))
    assert res.scroll is not None and res.scroll.update_count == 0  # its EventLatency spans are no scroll
    assert "no scroll" in res.scroll.missing[0].why and "input.scrolling" in res.scroll.missing[0].capture
    assert analyze_file(str(Path(__file__).parent / "data" / "perf" / "slowapp.pstats")).scroll is None
