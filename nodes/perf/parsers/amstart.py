"""``adb shell am start -W [-S] -n <component>`` output: one or more app launches.

Each launch prints a block like::

    Stopping: com.demo.shop                         (with -S, on some versions)
    Starting: Intent { cmp=com.demo.shop/.MainActivity }
    Status: ok
    LaunchState: COLD                               (Android 10+; ThisTime before it)
    Activity: com.demo.shop/.MainActivity
    TotalTime: 712
    WaitTime: 745
    Complete

``TotalTime`` is the launch time the system measured (ms); ``WaitTime`` includes the
ActivityManager's own overhead. A launch whose ``Status`` is not ``ok`` or that printed an
``Error:`` is not a measurement: it becomes a warning, never a number. A file may hold several
launches; PerfScout's collector precedes each with ``# run N: <command>``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from nodes.perf.errors import PerfDataError
from nodes.perf.model import PerfData, StartupRun
from nodes.perf.parsers import android_capture

FORMAT = "amstart"
_MAX_BYTES = 8 * 1024 * 1024

_FIELD = re.compile(r"^\s*(Status|LaunchState|Activity|ThisTime|TotalTime|WaitTime):\s*(.*?)\s*$")
_RUN_COMMENT = re.compile(r"^#\s*run\s+(\d+)(?:\s*\(([^)]*)\))?:\s*(.*?)\s*$")


@dataclass
class Launch:
    """One ``am start -W`` block as printed."""

    command: str | None = None
    label: str | None = None
    status: str | None = None
    launch_state: str | None = None
    activity: str | None = None
    this_time: int | None = None
    total_time: int | None = None
    wait_time: int | None = None
    complete: bool = False
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return (self.status or "ok").lower() == "ok" and not self.errors and self.total_time is not None

    def problem(self) -> str:
        if self.errors:
            return self.errors[0]
        if self.status and self.status.lower() != "ok":
            return f"Status: {self.status}"
        return "no TotalTime printed"


def read_launches(text: str) -> tuple[dict[str, object], list[Launch]]:
    """(PerfScout meta, launches in order). Never raises."""
    meta, body = android_capture.split(text)
    launches: list[Launch] = []
    cur: Launch | None = None
    pending_command: tuple[str | None, str | None] = (None, None)

    def new() -> Launch:
        nonlocal cur, pending_command
        cur = Launch(command=pending_command[1], label=pending_command[0])
        pending_command = (None, None)
        launches.append(cur)
        return cur

    for raw in body.splitlines():
        line = raw.strip()
        if not line:
            continue
        m = _RUN_COMMENT.match(line)
        if m:
            pending_command = (m.group(2), m.group(3))
            cur = None
            continue
        if line.startswith("#"):
            continue
        if line.startswith("Stopping:"):
            new()
            continue
        if line.startswith("Starting:"):
            if cur is None or cur.status is not None or cur.total_time is not None or cur.errors:
                new()
            continue
        target = cur or new()
        m = _FIELD.match(line)
        if m:
            key, value = m.group(1), m.group(2)
            if key == "Status":
                target.status = value
            elif key == "LaunchState":
                target.launch_state = value
            elif key == "Activity":
                target.activity = value
            else:
                num = int(value) if value.isdigit() else None
                setattr(target, {"ThisTime": "this_time", "TotalTime": "total_time", "WaitTime": "wait_time"}[key], num)
            continue
        if line == "Complete":
            target.complete = True
        elif line.startswith(("Error", "Exception", "java.lang.", "Security exception")):
            target.errors.append(line[:300])
        elif line.startswith("Warning:"):
            target.warnings.append(line[:300])
    return meta, [l for l in launches if l.status or l.total_time is not None or l.errors]


def _kind(launch: Launch, meta: dict[str, object]) -> str:
    if launch.launch_state:
        return launch.launch_state.lower()
    cmd = f" {launch.command or ''} "
    if " -S " in cmd:
        return "cold"
    mode = meta.get("launch_mode")
    return str(mode) if mode in ("cold", "warm", "hot") else "unknown"


def to_perfdata(meta: dict[str, object], launches: list[Launch], source: str) -> PerfData:
    if not launches:
        raise PerfDataError(source, "no `am start -W` launch found (no Status/TotalTime lines)")
    pd = PerfData(FORMAT, source)
    pd.meta.note_all(android_capture.meta_strings(meta))
    index = 0
    for launch in launches:
        if launch.label == "warm-up":
            continue
        index += 1
        if not launch.ok:
            pd.warn(f"launch {index} did not complete: {launch.problem()}")
            continue
        for w in launch.warnings:
            pd.warn(f"launch {index}: {w}")
        pd.add_startup_run(
            StartupRun(
                index=index,
                total_ms=float(launch.total_time or 0),
                wait_ms=float(launch.wait_time) if launch.wait_time is not None else None,
                kind=_kind(launch, meta),
                ready_by="TotalTime (am start -W)",
                command=launch.command,
            )
        )
        if launch.activity:
            pd.meta.note("activity", launch.activity, replace=False)
    if not pd.startup_runs:
        raise PerfDataError(source, "no launch completed: " + "; ".join(pd.warnings[:3]))
    pd.add_stat("launches", len(pd.startup_runs))
    return pd


def sniff(head: bytes, name: str) -> bool:
    text = head[:65536].decode("utf-8", "replace")
    if "Starting: Intent" in text and ("TotalTime:" in text or "Status:" in text):
        return True
    return "am start -W" in text.split("\n", 1)[0] and "TotalTime:" in text


def parse(path: str) -> PerfData:
    meta, launches = read_launches(android_capture.read_text(path, _MAX_BYTES, "`am start -W` output"))
    return to_perfdata(meta, launches, path)
