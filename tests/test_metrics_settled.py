"""Between the metric families (nodes/perf/metrics/__init__.py ``_settled``) the caches a family
kept on the Context for itself are dropped: the context's own state stays, a dropped cache is
rebuilt when asked again and answers the same, and the analysis is the one it gives without
the drops and heap trims."""
from __future__ import annotations

from pathlib import Path

from nodes.perf import metrics
from nodes.perf.formats import load
from nodes.perf.metrics import hotspots, scope, startup, threads
from nodes.perf.metrics.common import Context

WARM = Path(__file__).resolve().parent / "data" / "perfetto" / "api32_startup_warm.perfetto-trace"


def _ready(pd) -> Context:
    ctx = Context(pd, 30)
    hotspots.walk_all(ctx)
    ctx.scope, _w = scope.identify(pd, None)
    threads.pick_main(ctx)
    return ctx


def test_startup_caches_are_dropped_and_rebuilt_alike():
    pd = load(str(WARM))
    ctx = _ready(pd)
    first = startup.startup(ctx)
    cached = [k for k in ctx.__dict__ if k.startswith("_")]
    assert "_slice_index" in cached
    own = {k: v for k, v in ctx.__dict__.items() if not k.startswith("_")}
    ctx.drop_caches()
    assert not [k for k in ctx.__dict__ if k.startswith("_")]
    assert {k: v for k, v in ctx.__dict__.items()} == own
    assert startup.startup(ctx) == first  # rebuilt on demand


def test_the_analysis_is_the_same_without_settling(monkeypatch):
    want = metrics.compute(load(str(WARM))).model_dump()
    monkeypatch.setattr(metrics, "_settled", lambda ctx: None)
    assert metrics.compute(load(str(WARM))).model_dump() == want
