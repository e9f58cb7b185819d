"""A system trace for N seconds: Perfetto where the device has it (Android 9+), else atrace.

Perfetto gets a text config on stdin (``perfetto --txt -c -``): stdin works on every release,
whereas a config file pushed to ``/data/local/tmp`` is unreadable to ``traced`` on Android 12+.
The trace is written where ``traced`` may write (``/data/misc/perfetto-traces``), pulled to the
run folder, removed from the device, and kept for the user to open in ui.perfetto.dev. If the
Perfetto capture is refused (tracing service off on Android 9/10, old binary without ``--txt``)
the node falls back to ``atrace`` and says so. Both files are checked with the analyzer's own
readers before the node reports success, so a capture that cannot be read fails here, naming
the command, rather than later in the analyzer.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from graph.enums import CollectionKind, ErrorKind
from graph.payloads import collection
from nodes.android.adb import AdbResult
from nodes.android.names import check_package
from nodes.android.session import Session
from nodes.framework.errors import ToolFailure
from nodes.perf.errors import PerfDataError

#: atrace categories the issue asks for; ``sched`` is a kernel category in atrace's list.
ATRACE_CATEGORIES = ("gfx", "view", "input", "am", "wm", "dalvik", "sched")
#: The same user-space categories for Perfetto (scheduling comes from ftrace events there).
PERFETTO_ATRACE_CATEGORIES = ("gfx", "view", "input", "am", "wm", "dalvik")
SCHED_EVENTS = (
    "sched/sched_switch",
    "sched/sched_waking",
    "sched/sched_wakeup_new",
    "sched/sched_process_exit",
    "sched/sched_process_free",
    "task/task_newtask",
    "task/task_rename",
    "power/suspend_resume",
)
REMOTE_PERFETTO = "/data/misc/perfetto-traces/perfscout.perfetto-trace"
REMOTE_ATRACE = "/data/local/tmp/perfscout.atrace"
#: Perfetto reached the device's tracing service from Android 9 (API 28).
PERFETTO_MIN_SDK = 28
#: Seconds allowed on top of the capture itself (start-up, flush, write).
SLACK_S = 30.0


def perfetto_config(seconds: float, package: str | None) -> str:
    """The text-proto TraceConfig: ftrace (atrace categories + sched), frame timeline, process stats."""
    ms = int(round(seconds * 1000))
    events = "\n".join(f'      ftrace_events: "{e}"' for e in SCHED_EVENTS)
    cats = "\n".join(f'      atrace_categories: "{c}"' for c in PERFETTO_ATRACE_CATEGORIES)
    apps = f'\n      atrace_apps: "{package}"' if package else ""
    return f"""buffers {{
  size_kb: 65536
  fill_policy: RING_BUFFER
}}
buffers {{
  size_kb: 4096
  fill_policy: RING_BUFFER
}}
data_sources {{
  config {{
    name: "linux.ftrace"
    target_buffer: 0
    ftrace_config {{
{events}
{cats}{apps}
      compact_sched {{
        enabled: true
      }}
      buffer_size_kb: 16384
      drain_period_ms: 250
    }}
  }}
}}
data_sources {{
  config {{
    name: "android.surfaceflinger.frametimeline"
    target_buffer: 0
  }}
}}
data_sources {{
  config {{
    name: "linux.process_stats"
    target_buffer: 1
    process_stats_config {{
      scan_all_processes_on_start: true
      proc_stats_poll_ms: 1000
    }}
  }}
}}
data_sources {{
  config {{
    name: "linux.sys_stats"
    target_buffer: 1
    sys_stats_config {{
      stat_period_ms: 1000
      stat_counters: STAT_CPU_TIMES
    }}
  }}
}}
duration_ms: {ms}
write_into_file: true
file_write_period_ms: 1000
flush_period_ms: 5000
"""


def _check_with_reader(module: str, path: str, command: str) -> dict[str, Any]:
    """Read the pulled file with the analyzer's reader; a capture it cannot read fails here."""
    try:
        reader = importlib.import_module(module)
    except ImportError as e:
        return {"checked": False, "check_note": f"reader {module} is not available here ({e})"}
    try:
        pd = reader.parse(path)
    except PerfDataError as e:
        raise ToolFailure(ErrorKind.VALIDATION, f"`{command}` produced a trace that does not parse: {e.problem}") from None
    return {
        "checked": True,
        "slices": pd.slice_count,
        "threads": len(pd.threads),
        "frames": len(pd.frames),
        "duration_ms": round(pd.duration_us / 1000.0, 1),
    }


def _pull(s: Session, remote: str, local: Path, seconds: float) -> None:
    s.adb.pull(remote, str(local), timeout_s=max(s.adb.timeout_s, 60.0))
    s.adb.shell(["rm", "-f", remote], check=False)
    if local.stat().st_size == 0:
        raise ToolFailure(ErrorKind.VALIDATION, f"`adb -s {s.serial} pull {remote}` brought back an empty file")


def capture_perfetto(s: Session, seconds: float, package: str | None) -> tuple[Path, AdbResult]:
    config = perfetto_config(seconds, package)
    res = s.adb.shell(
        ["perfetto", "--txt", "-c", "-", "-o", REMOTE_PERFETTO],
        stdin=config.encode(),
        timeout_s=seconds + SLACK_S,
    )
    local = s.run_dir / "trace.perfetto-trace"
    (s.run_dir / "perfetto-config.pbtxt").write_text(config, encoding="utf-8")
    _pull(s, REMOTE_PERFETTO, local, seconds)
    return local, res


def capture_atrace(s: Session, seconds: float, package: str | None) -> tuple[Path, AdbResult]:
    args = ["atrace", "-t", str(int(round(seconds))), "-b", "16384"]
    if package:
        args += ["-a", package]
    args += ["-o", REMOTE_ATRACE, *ATRACE_CATEGORIES]
    res = s.adb.shell(args, timeout_s=seconds + SLACK_S)
    local = s.run_dir / "trace.atrace.txt"
    _pull(s, REMOTE_ATRACE, local, seconds)
    return local, res


def collect_trace(s: Session, seconds: float, package: str | None) -> dict[str, Any]:
    """The ``collected`` entry for a trace capture. Raises ToolFailure."""
    if package:
        package = check_package(package)
    notes: list[str] = []
    use_perfetto = (s.info.sdk or 0) >= PERFETTO_MIN_SDK
    if use_perfetto:
        try:
            local, res = capture_perfetto(s, seconds, package)
            summary = {"tool": "perfetto", **_check_with_reader("nodes.perf.parsers.perfetto", str(local), res.command)}
            summary["open_in"] = "https://ui.perfetto.dev (Open trace file)"
            key = "perfetto"
        except ToolFailure as e:
            if e.kind is not ErrorKind.VALIDATION:
                raise
            notes.append(
                f"Perfetto capture failed ({e.message}); fell back to atrace. On Android 9/10 the "
                "tracing service may be off: `adb shell setprop persist.traced.enable 1`"
            )
            use_perfetto = False
    else:
        notes.append(f"Android API {s.info.sdk or 'unknown'} has no Perfetto service: used atrace")
    if not use_perfetto:
        local, res = capture_atrace(s, seconds, package)
        summary = {"tool": "atrace", **_check_with_reader("nodes.perf.parsers.atrace", str(local), res.command)}
        key = "atrace"
    summary.update({"task": "trace", "device": s.info.describe(), "seconds": seconds, "package": package})
    if notes:
        summary["notes"] = notes
    return collection(CollectionKind.ANDROID, paths={key: str(local)}, summary=summary, source=res.command)
