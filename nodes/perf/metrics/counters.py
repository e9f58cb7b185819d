"""Counters (psutil series, Perfetto counter tracks), summarised with downsampled curves.

A "counter" whose name is a log line (``nodes/perf/counter_names.py``) is left out with a
warning: it is a message that arrived in counter form, not a series."""

from __future__ import annotations

import math

from nodes.perf.counter_names import is_counter_name
from nodes.perf.metrics.common import MAX_COUNTER_RESULT_POINTS, MAX_COUNTERS
from nodes.perf.model import CounterSummary
from nodes.perf.units import counted


def counters(ctx) -> list[CounterSummary]:
    pd = ctx.pd
    out = []
    # "Heap size (KB): com.app (123)": the counter's own name is before the process label
    names = [n for n in sorted(pd.counters) if is_counter_name(n.split(": ", 1)[0])]
    if (logs := len(pd.counters) - len(names)) > 0:
        ctx.res.warnings.append(
            f"{counted(logs, 'counter')} named like log lines (e.g. HWUI's 'Davey! duration=…') "
            f"{'is a message' if logs == 1 else 'are messages'}, not series: left out of the counters")
    for name in names[:MAX_COUNTERS]:
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
