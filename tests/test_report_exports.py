"""Exports: report.json re-renders, speedscope follows its file format, Trace Event JSON reads back."""

from __future__ import annotations

import json

import pytest

from nodes.perf.model import AnalysisResult
from nodes.report.exports import speedscope, trace_events
from nodes.report.render import write_report
from nodes.report.view import build_view

from tests.helpers.report_sample import SAMPLE_ATTRIBUTION, sample_analysis


def test_report_json_holds_the_full_result(tmp_path):
    v = build_view(sample_analysis(), attribution=SAMPLE_ATTRIBUTION, collected={"kind": "trace", "source": "x"})
    out = write_report(v, tmp_path)
    data = json.loads((tmp_path / "report.json").read_text())
    assert data["schema"] == "perfscout.report/1"
    assert AnalysisResult.model_validate(data["analysis"]) == sample_analysis()
    assert data["attribution"] == SAMPLE_ATTRIBUTION
    assert data["verdict"] == "Needs attention" and data["narrative"] is None
    assert set(out) == {"dir", "markdown", "html", "json", "speedscope", "trace_events"}


def test_speedscope_export_follows_the_file_format():
    a = sample_analysis()
    doc = speedscope(build_view(a))
    assert doc["$schema"] == "https://www.speedscope.app/file-format-schema.json"
    frames = doc["shared"]["frames"]
    assert all(set(f) == {"name"} and f["name"] for f in frames)
    total = 0.0
    for p in doc["profiles"]:
        assert p["type"] == "sampled" and p["unit"] == "milliseconds"
        assert len(p["samples"]) == len(p["weights"])
        assert all(0 <= i < len(frames) for s in p["samples"] for i in s)
        assert p["endValue"] == pytest.approx(sum(p["weights"]))
        total += sum(p["weights"])
    assert {p["name"] for p in doc["profiles"]} == {"main", "RenderThread"}
    assert total == pytest.approx(sum(s.weight_ms for s in a.stacks))
    # a stack's frame ids spell its frames back, root first
    main = next(p for p in doc["profiles"] if p["name"] == "main")
    first = [frames[i]["name"] for i in main["samples"][0]]
    assert first == a.stacks[0].frames


def test_no_stacks_no_speedscope_and_nothing_timed_no_trace():
    v = build_view(AnalysisResult(format="perfstat", source="s.txt", stats={"cycles": 1.0}))
    assert speedscope(v) is None and trace_events(v) is None


def test_trace_event_export_is_read_back_by_the_trace_reader(tmp_path):
    from nodes.perf import formats

    a = sample_analysis()
    out = write_report(build_view(a), tmp_path)
    data = formats.load(out["trace_events"])
    assert data.format == "trace_event"
    n_x = a.frames.count + len(a.long_tasks) + len(a.startup.phases)
    assert data.slice_count == n_x
    names = {data.threads[k].name for k in data.slices}
    assert {"Frames", "main", "HeapTaskDaemon"} <= names
    assert set(data.counters) == {"cpu.process", "mem.rss"}
    assert [v for _, v in data.counters["mem.rss"]] == pytest.approx([v for _, v in a.counters[1].points])
    # times survive: the first frame starts where the analysis says (µs in the trace)
    frames_key = next(k for k in data.slices if data.threads[k].name == "Frames")
    assert min(data.slices[frames_key].ts) == pytest.approx(a.frames.starts_ms[0] * 1000, abs=1)


def test_speedscope_export_is_read_back_when_a_speedscope_reader_exists(tmp_path):
    from nodes.perf import formats

    assert formats.available_formats().get("speedscope", "missing") is None  # the reader is importable
    a = sample_analysis()
    out = write_report(build_view(a), tmp_path)
    data = formats.load(out["speedscope"])
    total_us = sum(w for _, _, w in data.iter_samples())
    assert total_us == pytest.approx(sum(s.weight_ms for s in a.stacks) * 1000, rel=1e-6)
