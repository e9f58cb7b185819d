"""Counters (psutil series, Perfetto counter tracks), summarised with downsampled curves."""

from __future__ import annotations

import math

from nodes.perf.metrics.common import MAX_COUNTER_RESULT_POINTS, MAX_COUNTERS
from nodes.perf.model import CounterSummary


def counters(ctx) -> list[CounterSummary]:
    pd = ctx.pd
    out = []
    for name in sorted(pd.counters)[:MAX_COUNTERS]:
        pts = sorted(pd.counters[name])
        if not pts:
            continue
        vals = [v for _, v in pts]
        step = max(1, math.ceil(len(pts) / MAX_COUNTER_RESULT_POINTS))
        sample = pts[::step]
        if pts[-1] not in sample:
            sample.append(pts[-1])
        out.append(CounterSummary(
            name=name, unit=pd.counter_units.get(name),
            min=min(vals), max=max(vals), mean=round(sum(vals) / len(vals), 4), last=vals[-1],
            points=[(ctx.rel(t), v) for t, v in sample],
        ))
    return out
