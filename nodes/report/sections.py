"""Which charts a report has, computed once for both renderers."""

from __future__ import annotations

from dataclasses import dataclass, field

from nodes.report import charts
from nodes.report.charts import Chart
from nodes.report.view import ReportView


@dataclass
class ChartSet:
    hotspots: Chart | None = None
    icicle: Chart | None = None
    histogram: Chart | None = None
    timeline: Chart | None = None
    runs: Chart | None = None
    waterfall: Chart | None = None
    imports: Chart | None = None
    counters: list[Chart] = field(default_factory=list)

    def all(self) -> list[Chart]:
        one = [self.hotspots, self.icicle, self.histogram, self.timeline, self.runs, self.waterfall, self.imports]
        return [c for c in one if c] + list(self.counters)


def build_charts(v: ReportView) -> ChartSet:
    a = v.analysis
    return ChartSet(
        hotspots=charts.hotspot_bars(a.hotspots),
        icicle=charts.icicle(a.stacks),
        histogram=charts.frame_histogram(a.frames),
        timeline=charts.timeline(a.frames, a.long_tasks, a.duration_ms),
        runs=charts.startup_runs(a.startup),
        waterfall=charts.startup_waterfall(a.startup),
        imports=charts.import_tree(a.startup),
        counters=charts.counter_charts(a.counters),
    )
