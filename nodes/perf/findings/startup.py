"""Startup rules over measured runs and the import tree."""

from __future__ import annotations

from nodes.perf.findings.common import finding
from nodes.perf.metrics.common import _fms
from nodes.perf.model import Finding, ImportEntry, StartupStats

#: Median startup from which it is slow, by kind (other kinds: the last value); 2× is "high".
SLOW_STARTUP_MS = {"cold": 5000.0, "warm": 2000.0, "hot": 1500.0}
SLOW_STARTUP_OTHER_MS = 1000.0
#: Spread over the median from which runs "vary a lot" (from this many runs).
SPREAD_SHARE = 0.3
SPREAD_MIN_RUNS = 3
#: The first run this many times the median is "much slower".
FIRST_RUN_FACTOR = 1.5
#: Total import time from which it is a finding, and "high".
IMPORTS_MS = 100.0
IMPORTS_HIGH_MS = 500.0


def slow_startup(st: StartupStats | None, source: str | None) -> list[Finding]:
    if not st or st.median_ms is None:
        return []
    limit = SLOW_STARTUP_MS.get(st.kind, SLOW_STARTUP_OTHER_MS)
    if st.median_ms < limit:
        return []
    return [finding(
        f"Slow startup: {_fms(st.median_ms)} (median)", "high" if st.median_ms >= 2 * limit else "medium",
        f"{len(st.runs):,} run(s), median {_fms(st.median_ms)}, min {_fms(st.min_ms)}, max {_fms(st.max_ms)} "
        f"({st.kind}); threshold {_fms(limit)}.",
        source, metric={"median_ms": st.median_ms, "runs": len(st.runs)},
    )]


def startup_varies(st: StartupStats | None, source: str | None) -> list[Finding]:
    if (not st or st.median_ms is None or len(st.runs) < SPREAD_MIN_RUNS or not st.median_ms
            or st.spread_ms is None or st.spread_ms <= SPREAD_SHARE * st.median_ms):
        return []
    return [finding("Startup time varies a lot", "low",
                    f"spread {_fms(st.spread_ms)} over {len(st.runs):,} runs (median {_fms(st.median_ms)}).",
                    source, metric={"spread_ms": st.spread_ms})]


def first_run_slower(st: StartupStats | None, source: str | None) -> list[Finding]:
    if (not st or not st.median_ms or len(st.runs) < 2 or not st.first_ms
            or st.first_ms < FIRST_RUN_FACTOR * st.median_ms):
        return []
    return [finding("The first run is much slower", "info",
                    f"first run {_fms(st.first_ms)} vs median {_fms(st.median_ms)}: cold caches, "
                    "bytecode compilation or disk reads.", source, metric={"first_ms": st.first_ms})]


def slow_imports(st: StartupStats | None, imports: list[ImportEntry], source: str | None) -> list[Finding]:
    """``-X importtime``: the whole import tree takes long; the heaviest modules by own time."""
    if not st or not st.imports:
        return []
    total = sum(i.cumulative_us for i in imports if i.depth == 0) / 1000.0
    if total < IMPORTS_MS:
        return []
    heavy = sorted(imports, key=lambda i: -i.self_us)[:5]
    return [finding(
        f"Imports take {_fms(total)}", "medium" if total < IMPORTS_HIGH_MS else "high",
        "Heaviest modules by own time: " + ", ".join(f"{i.module} {_fms(i.self_us / 1000)}" for i in heavy) + ".",
        source, events=[i.module for i in heavy], metric={"import_ms": round(total, 3)},
    )]
