"""The analysis result types are msgspec Structs (nodes/perf/result.py) that keep the pydantic
semantics their callers rely on: the dump is normalised through the declared field types (no
numpy scalar, no int where a float is declared), include/exclude name top-level fields, JSON
mode has lists, and a bad stored analysis fails with pydantic's dotted location."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import numpy as np
import pytest

from nodes.perf.analysis import analyze_file
from nodes.perf.model import (AnalysisResult, CounterSummary, Finding, FrameCause, FrameStats, Hotspot, StartupStats,
                              WorstFrame)
from nodes.perf.result import error_location
from tests.helpers.report_sample import sample_analysis

DATA = Path(__file__).resolve().parent / "data"


def test_numpy_scalars_and_ints_come_out_as_the_declared_python_types():
    h = Hotspot(name="f", self_ms=np.float64(1.5), total_ms=2, self_pct=np.float32(50.0), count=np.int64(3))
    frames = FrameStats(count=np.int64(2), fps=60, durations_ms=[np.float64(16.0), 17], reported={"janky": 3, "p50": 8.0},
                        worst=[WorstFrame(start_ms=1, dur_ms=np.float64(20.0), cause=FrameCause.GC,
                                          candidates={"gc": np.float64(4.0)})])
    a = AnalysisResult(format="t", source="s", duration_ms=np.int64(10), hotspots=[h], frames=frames,
                       findings=[Finding(title="t", severity="low", detail="d", metric={"n": 4, "w": "x"})])
    for mode in ("python", "json"):
        d = a.model_dump(mode=mode)
        assert type(d["duration_ms"]) is float and d["duration_ms"] == 10.0
        hs = d["hotspots"][0]
        assert [type(hs[k]) for k in ("self_ms", "total_ms", "self_pct", "count")] == [float, float, float, int]
        f = d["frames"]
        assert type(f["count"]) is int and type(f["fps"]) is float
        assert [type(x) for x in f["durations_ms"]] == [float, float]
        # int | float | str keeps an int an int; float | str makes it a float (as pydantic did)
        assert f["reported"] == {"janky": 3, "p50": 8.0} and type(f["reported"]["janky"]) is int
        assert type(d["findings"][0]["metric"]["n"]) is float and d["findings"][0]["metric"]["w"] == "x"
        w = f["worst"][0]
        assert w["cause"] == "gc" and type(w["cause"]) is str and type(w["candidates"]["gc"]) is float
    # the JSON is what json.dumps accepts (it refuses numpy.int64)
    assert json.loads(json.dumps(a.model_dump(mode="json")))["frames"]["count"] == 2


def test_json_mode_has_lists_where_python_mode_keeps_tuples():
    c = CounterSummary(name="cpu", min=0, max=1, mean=0.5, last=1, points=[(0, 1), (1.5, 2)])
    assert c.model_dump()["points"] == [(0.0, 1.0), (1.5, 2.0)]
    assert c.model_dump(mode="json")["points"] == [[0.0, 1.0], [1.5, 2.0]]


def test_include_and_exclude_name_top_level_fields():
    a = sample_analysis()
    assert list(StartupStats(median_ms=1.0).model_dump(include={"kind", "median_ms"})) == ["median_ms", "kind"]
    full = a.model_dump(mode="json")
    d = a.model_dump(mode="json", exclude={"stacks", "hotspots"})
    assert set(full) - set(d) == {"stacks", "hotspots"} and list(d) == [k for k in full if k in d]
    assert list(a.frames.model_dump(include={"p50_ms", "count"})) == ["count", "p50_ms"]  # field order, as pydantic


def test_a_dump_validates_back_to_an_equal_result():
    a = sample_analysis()
    assert AnalysisResult.model_validate(json.loads(json.dumps(a.model_dump(mode="json")))) == a
    assert AnalysisResult.model_validate(a) is a
    # a stored analysis with a key this version no longer has still loads (pydantic ignored extras)
    old = a.model_dump(mode="json") | {"retired_field": 1}
    assert AnalysisResult.model_validate(old) == a


@pytest.mark.parametrize("raw, loc, words", [
    ({"format": "x"}, "source", "Field required"),
    ({"format": "x", "source": "s", "frames": {"count": "many"}}, "frames.count", "Expected `int`, got `str`"),
    ({"format": "x", "source": "s", "hotspots": [{"name": "a", "self_ms": 1, "total_ms": 1}]}, "hotspots.0.self_pct",
     "Field required"),
    ({"format": "x", "source": "s", "findings": [{"title": "t", "severity": "dire", "detail": "d"}]},
     "findings.0.severity", "dire"),
])
def test_a_bad_analysis_names_its_place(raw, loc, words):
    with pytest.raises(msgspec.ValidationError) as e:
        AnalysisResult.model_validate(raw)
    where, msg = error_location(e.value)
    assert where == loc and words in msg


def test_model_copy_replaces_fields_and_leaves_the_original():
    s = StartupStats(median_ms=1.0)
    t = s.model_copy(update={"median_ms": 2.0, "kind": "cold"})
    assert (s.median_ms, s.kind, t.median_ms, t.kind) == (1.0, "unknown", 2.0, "cold")
    assert t.runs is s.runs  # shallow, as pydantic's


def test_a_real_trace_dumps_plain_python_types_only():
    a = analyze_file(str(DATA / "perf" / "viztracer-multithread.json"))

    def kinds(v):
        if isinstance(v, dict):
            return set().union(*(kinds(x) for x in v.values())) if v else set()
        if isinstance(v, list):
            return set().union(*(kinds(x) for x in v)) if v else set()
        return {type(v)}

    assert kinds(a.model_dump(mode="json")) <= {str, int, float, bool, type(None)}
    assert a.hotspots and all(type(h["self_ms"]) is float for h in a.model_dump(mode="json")["hotspots"])
