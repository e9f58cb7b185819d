"""Shared pieces of the interface tests: a real AnalysisResult, stand-in pipeline nodes."""

from __future__ import annotations

from typing import Any, Callable

from graph.enums import Node
from nodes.framework.common import say, stamp
from nodes.framework.stage import attempt
from nodes.perf.model import (
    AnalysisResult,
    Finding,
    FrameStats,
    Hotspot,
    LongTask,
    ThreadStat,
    WorstFrame,
)


def sample_analysis(source: str = "runs/t1/profile.json") -> dict[str, Any]:
    """An AnalysisResult as the analyzer stores it: frames with a known slowest frame."""
    return AnalysisResult(
        format="chrome-json",
        source=source,
        duration_ms=1200.0,
        hotspots=[
            Hotspot(name="parse_rows", file="app/rows.py", line=42, self_ms=310.5, total_ms=400.0, self_pct=25.9),
            Hotspot(name="render", file="app/view.py", line=7, self_ms=120.0, total_ms=150.0, self_pct=10.0),
        ],
        threads=[
            ThreadStat(pid=1, tid=1, name="CrRendererMain", busy_ms=800.0, is_main=True),
            ThreadStat(pid=1, tid=2, name="Compositor", busy_ms=120.0),
        ],
        long_tasks=[LongTask(name="RunTask", thread="CrRendererMain", start_ms=100.0, dur_ms=87.5)],
        frames=FrameStats(
            count=60,
            fps=48.2,
            jank_count=9,
            jank_ratio=0.15,
            p90_ms=31.0,
            max_ms=73.4,
            worst=[
                WorstFrame(start_ms=512.25, dur_ms=73.4, ran=["parse_rows", "Layout"]),
                WorstFrame(start_ms=800.0, dur_ms=40.1, ran=["Paint"]),
            ],
        ),
        findings=[Finding(title="Slow frames", severity="high", detail="9 of 60 frames over budget")],
    ).model_dump(mode="json")


class Recorder:
    """Stand-ins for the collector → analyzer → attributor → reporter pipeline that record calls."""

    def __init__(self, data_file: str):
        self.data_file = data_file
        self.analyzed: list[list[str]] = []
        self.collections = 0

    def collector(self, state: dict) -> dict:
        self.collections += 1
        u = stamp(state, Node.COLLECTOR.value)
        u["attempts"] = attempt(state, Node.COLLECTOR.value)
        u["collected"] = {"kind": "profile", "paths": {"profile": self.data_file}, "source": "python x.py"}
        return u

    def analyzer(self, state: dict) -> dict:
        paths = list(((state.get("collected") or {}).get("paths") or {}).values())
        self.analyzed.append(paths)
        u = stamp(state, Node.ANALYZER.value)
        u["attempts"] = attempt(state, Node.ANALYZER.value)
        u["analysis"] = sample_analysis(source=paths[0])
        return u

    def attributor(self, state: dict) -> dict:
        u = stamp(state, Node.ATTRIBUTOR.value)
        u["attribution"] = []
        return u

    def reporter(self, state: dict) -> dict:
        u = stamp(state, Node.REPORTER.value)
        u["report"] = {"dir": "r"}
        u.update(say(Node.REPORTER.value, f"analysed {state['analysis']['source']}"))
        return u

    def nodes(self) -> dict[str, Callable[[dict], dict]]:
        return {
            Node.COLLECTOR.value: self.collector,
            Node.ANALYZER.value: self.analyzer,
            Node.ATTRIBUTOR.value: self.attributor,
            Node.REPORTER.value: self.reporter,
        }
