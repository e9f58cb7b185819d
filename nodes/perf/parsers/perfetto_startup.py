"""Android launches in a system trace, as far as the reader needs them: which processes' counters
to keep.

ActivityManager opens an async ``launching: <package>`` slice when it starts a launch. The
reader keeps per-process counters only for the launched app (docs/perfetto.md, "Counters"), so
it needs the app's pids before the analysis runs; they are the package's processes by the one
rule nodes/perf/android_package.py holds. The startups themselves — which, when, of what kind,
with what phases — have one definition, trace_processor's ``android_startups``, computed by
nodes/perf/metrics/android_startup.py from the slices the reader wrote.
"""

from __future__ import annotations

from nodes.perf.android_package import LAUNCHING, app_pids, launched_package
from nodes.perf.model import PerfData
from nodes.perf.parsers.perfetto_ftrace import AsyncSlice



def launched_pids(data: PerfData, async_slices: list[AsyncSlice]) -> list[int]:
    """The pids of the packages the ``launching:`` slices launched, first launch first; the first
    package is noted in ``meta["startup_package"]``, and a package with no process is a warning."""
    launches = sorted((a for a in async_slices if a.name.startswith(LAUNCHING)), key=lambda a: a.ts_ns)
    pids: list[int] = []
    found_of: dict[str, list[int]] = {}  # a trace of many launches of one app scans the processes once
    for launch in launches:
        package = launched_package(launch.name) or ""
        found = found_of.get(package)
        if found is None:
            found = found_of[package] = app_pids(data.processes, package)
        if not found:
            data.warn(f"launch of {package}: no process of that name in the trace; phases unknown")
        pids += [p for p in found if p not in pids]
        data.meta.note("startup_package", package, replace=False)
    return pids
