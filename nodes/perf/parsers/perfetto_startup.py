"""Android launch markers in a system trace → startup runs and phases.

ActivityManager opens an async ``launching: <package>`` slice when it starts a launch and
closes it when the first frame is drawn; inside it the app's main thread shows
``bindApplication`` (only when the process had to be created: a cold start),
``activityStart`` (the activity was created: warm if the process already existed),
``activityResume`` and the first ``Choreographer#doFrame``. These are the markers Perfetto's
own startup metric uses. The analyzer recomputes the runs as trace_processor's
``android_startups`` defines them (nodes/perf/metrics/android_startup.py: on API 29+ the
startup starts earlier than this slice); the runs here remain for traces it finds none in, and
the pids returned pick the processes whose counters are kept.

Phase times are milliseconds from the start of the launch they belong to.
"""

from __future__ import annotations

from nodes.perf.model import PerfData, StartupPhase, StartupRun
from nodes.perf.parsers.perfetto_ftrace import AsyncSlice

LAUNCH_PREFIX = "launching: "
_PHASES = ("bindApplication", "activityStart", "activityResume", "activityRestart")
_FIRST_FRAME = "Choreographer#doFrame"
_FULLY_DRAWN = "reportFullyDrawn"


def _app_pid(data: PerfData, package: str) -> int | None:
    exact = [pid for pid, name in data.processes.items() if name == package]
    if exact:
        return max(exact)  # a relaunched package gets a newer (larger) pid
    for pid, name in data.processes.items():
        if name.endswith("/" + package) or name.startswith(package + ":"):
            return pid
    return None


def _thread_slices(data: PerfData, pid: int, tid: int):
    cols = data.slices.get((pid, tid))
    if cols is None:
        return []
    return [(cols.ts[i], cols.dur[i], data.strings[cols.name[i]]) for i in range(len(cols))]


def _first_slice_name(name: str, wanted: str) -> bool:
    return name == wanted or name.startswith(wanted + " ")


def find_startups(data: PerfData, async_slices: list[AsyncSlice]) -> list[int]:
    """Fill ``data.startup_runs``/``startup_phases``; return the app pids the launches were of."""
    launches = sorted(
        (a for a in async_slices if a.name.startswith(LAUNCH_PREFIX)), key=lambda a: a.ts_ns
    )
    pids: list[int] = []
    for index, launch in enumerate(launches):
        package = launch.name[len(LAUNCH_PREFIX) :].strip()
        start_us = launch.ts_ns / 1000.0
        end_us = (launch.ts_ns + launch.dur_ns) / 1000.0
        pid = _app_pid(data, package)
        phases = [StartupPhase(name=launch.name, start_ms=0.0, dur_ms=launch.dur_ns / 1e6, thread="system_server")]
        found: set[str] = set()
        if pid is not None:
            pids.append(pid)
            main = _thread_slices(data, pid, pid)
            label = data.thread_label(pid, pid)
            for ts, dur, name in sorted(main):
                if ts < start_us or ts > end_us:
                    if not (_first_slice_name(name, _FULLY_DRAWN) and ts >= start_us):
                        continue
                for wanted in _PHASES + (_FIRST_FRAME, _FULLY_DRAWN):
                    if wanted not in found and _first_slice_name(name, wanted):
                        found.add(wanted)
                        shown = "first " + _FIRST_FRAME if wanted == _FIRST_FRAME else wanted
                        phases.append(
                            StartupPhase(
                                name=shown,
                                start_ms=(ts - start_us) / 1000.0,
                                dur_ms=dur / 1000.0,
                                thread=label,
                            )
                        )
        else:
            data.warn(f"launch of {package}: no process of that name in the trace; phases unknown")
        if "bindApplication" in found:
            kind = "cold"
        elif "activityStart" in found or "activityRestart" in found:
            kind = "warm"
        elif "activityResume" in found:
            kind = "hot"
        else:
            kind = "unknown"
        data.startup_runs.append(
            StartupRun(
                index=index,
                total_ms=launch.dur_ns / 1e6,
                kind=kind,
                ready_by="first frame (launching: slice end)",
                command=f"launch {package}",
            )
        )
        data.startup_phases.extend(phases)
        data.meta.setdefault("startup_package", package)
    return pids
