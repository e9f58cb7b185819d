"""The small JSON files a collection writes for the analyzer: a psutil series, startup runs.

Their schemas belong to the reader, ``nodes.perf.parsers.perfscout_json``; these functions map
what the collector measured onto that reader's own writers (which validate), so the files
cannot drift from what the analyzer accepts.
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any, Sequence

from nodes.perf.model import run_statistics
from nodes.collect.sampler import COLUMNS, Series

#: Sampler column → (series name in the file, unit). cpu_percent and rss_bytes are the names
#: the analyzer knows (a full-core finding, memory growth).
SERIES_NAMES = {
    "cpu_pct": ("cpu_percent", "%"),
    "rss_bytes": ("rss_bytes", "bytes"),
    "threads": ("num_threads", ""),
    "procs": ("num_procs", ""),
    "read_bytes": ("read_bytes", "bytes"),
    "write_bytes": ("write_bytes", "bytes"),
}


def write_series(path: Path, series: Series, *, command: str, pid: int) -> str:
    """A ``psutil-series`` file: one series per sampled quantity, times from the first sample."""
    from nodes.perf.parsers.perfscout_json import write_psutil_series

    t = COLUMNS.index("t_s")
    data = {}
    units = {}
    for col, (name, unit) in SERIES_NAMES.items():
        i = COLUMNS.index(col)
        data[name] = [(row[t], row[i]) for row in series.rows]
        units[name] = unit
    return write_psutil_series(
        path,
        data,
        units,
        pid=pid,
        command=command,
        interval_s=series.interval_s,
        t0_unix=series.start_unix,
        threads=series.threads,
    )


def startup_summary(totals_ms: Sequence[float]) -> dict[str, float | int | None]:
    """Median, min, max and spread over all runs; the first (coldest) run also on its own."""
    if not totals_ms:
        return {"runs": 0}
    warm = list(totals_ms[1:])
    return {
        "runs": len(totals_ms),
        **run_statistics(list(totals_ms), digits=2),
        "warm_median_ms": round(statistics.median(warm), 2) if warm else None,
    }


def write_startup(path: Path, runs: Sequence[dict[str, Any]], *, target: str) -> str:
    """A ``startup-runs`` file; each run carries its own kind (the first is "cold")."""
    from nodes.perf.parsers.perfscout_json import write_startup_runs

    return write_startup_runs(path, runs, target=target, kind="unknown")
