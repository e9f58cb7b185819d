"""The small JSON files a collection writes for the analyzer: a psutil series, startup runs.

Their schemas belong to the reader (``nodes.perf.parsers.perfscout_json``); these writers only
fill them. Keeping both shapes in one place here means a schema change touches one writer.
"""

from __future__ import annotations

import statistics
from typing import Any, Sequence

from nodes.collect.sampler import COLUMNS, Series

SCHEMA_VERSION = 1

_UNITS = {
    "t_s": "s",
    "cpu_pct": "%",
    "rss_bytes": "bytes",
    "threads": "count",
    "procs": "count",
    "read_bytes": "bytes",
    "write_bytes": "bytes",
}


def series_document(series: Series, *, command: str, pid: int) -> dict[str, Any]:
    """``{"perfscout": "psutil-series", ...}``: one row per sample, columns named once."""
    return {
        "perfscout": "psutil-series",
        "version": SCHEMA_VERSION,
        "command": command,
        "pid": pid,
        "interval_s": series.interval_s,
        "start_unix": series.start_unix,
        "columns": list(COLUMNS),
        "units": [_UNITS[c] for c in COLUMNS],
        "samples": [list(r) for r in series.rows],
        "dropped": series.dropped,
    }


def startup_summary(totals_ms: Sequence[float]) -> dict[str, float | int | None]:
    """Median, min, max and spread over all runs; the first (coldest) run also on its own."""
    if not totals_ms:
        return {"runs": 0}
    warm = list(totals_ms[1:])
    return {
        "runs": len(totals_ms),
        "first_ms": round(totals_ms[0], 2),
        "median_ms": round(statistics.median(totals_ms), 2),
        "min_ms": round(min(totals_ms), 2),
        "max_ms": round(max(totals_ms), 2),
        "spread_ms": round(max(totals_ms) - min(totals_ms), 2),
        "warm_median_ms": round(statistics.median(warm), 2) if warm else None,
    }


def startup_document(
    runs: Sequence[dict[str, Any]],
    *,
    command: str,
    ready_by: str,
    importtime_log: str | None = None,
) -> dict[str, Any]:
    """``{"perfscout": "startup-runs", ...}``: each run shaped like ``model.StartupRun``."""
    return {
        "perfscout": "startup-runs",
        "version": SCHEMA_VERSION,
        "command": command,
        "ready_by": ready_by,
        "runs": list(runs),
        "summary": startup_summary([r["total_ms"] for r in runs]),
        "importtime_log": importtime_log,
    }
