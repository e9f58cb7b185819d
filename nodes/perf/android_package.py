"""Which processes of a trace are an Android package's: the one rule, shared by the Perfetto
reader (whose counters it keeps) and the startup metrics (which process a launch is of).

trace_processor's ``android_startup_processes`` (stdlib android/startup/startups.sql) joins a
startup's package to ``android_process_metadata``: by ``package_name`` when the trace has a
package list, otherwise any process whose name matches ``GLOB '<package>*'`` — the package's
main process, its ``:service`` processes, and any name that starts with it. We read no package
list, so the GLOB is the rule.
"""

from __future__ import annotations

#: ActivityManager's async slice for a launch: ``launching: <package>``.
LAUNCHING = "launching: "


def launched_package(slice_name: str) -> str | None:
    """The package a ``launching: <package>`` slice launched; None for any other name."""
    if not slice_name.startswith(LAUNCHING):
        return None
    return slice_name[len(LAUNCHING):].strip() or None


def app_pids(processes: dict[int, str], package: str) -> list[int]:
    """The pids whose process name starts with ``package`` (GLOB ``package*``), in pid order;
    empty for an empty package name."""
    if not package:
        return []
    return sorted(pid for pid, name in processes.items() if name and name.startswith(package))
