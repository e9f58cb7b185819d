"""Checks of the synthetic AnalysisResult the reporter's tests share (tests/helpers/report_sample.py)."""

from __future__ import annotations

import json

from nodes.perf.model import AnalysisResult
from tests.helpers.report_sample import sample_analysis


def test_sample_is_a_valid_result_and_round_trips_through_json():
    a = sample_analysis()
    again = AnalysisResult.model_validate(json.loads(json.dumps(a.model_dump(mode="json"))))
    assert again == a
    assert a.frames and len(a.frames.starts_ms) == len(a.frames.durations_ms) == a.frames.count
    assert 0 < a.frames.jank_count < a.frames.count


def test_sample_is_deterministic_per_seed():
    assert sample_analysis(3) == sample_analysis(3)
    assert sample_analysis(3) != sample_analysis(4)
