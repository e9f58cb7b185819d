"""What an ``android`` message asks the device for, read from its words (no model).

The route is already decided; this only picks which collection of the route to run and its
parameters (seconds to capture, launches to make, cold or warm). The order of the checks is
the tie-break: a message naming a trace and jank wants the trace, which shows the jank too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum


class Task(str, Enum):
    TRACE = "trace"
    FRAMES = "frames"
    LAUNCH = "launch"
    MEMORY = "memory"
    CPU = "cpu"
    BATTERY = "battery"
    DEVICES = "devices"
    INFO = "info"


_RULES: tuple[tuple[Task, re.Pattern[str]], ...] = (
    (Task.TRACE, re.compile(r"trace|perfetto|systrace|atrace|抓取?.{0,4}(?:日志|跟踪|追踪)|跟踪|追踪|追蹤", re.I)),
    (Task.FRAMES, re.compile(r"fps|帧|幀|jank|卡顿|卡頓|掉帧|流畅|流暢|gfxinfo|framestats|frame ?rate|frames?\b|smooth", re.I)),
    (Task.LAUNCH, re.compile(r"launch|startup|start-?up time|cold start|warm start|启动|啟動", re.I)),
    (Task.MEMORY, re.compile(r"meminfo|memory|内存|記憶體|内存占用|\bram\b|\bpss\b|heap|堆", re.I)),
    (Task.CPU, re.compile(r"\bcpu|cpuinfo|\btop\b|处理器|處理器|负载|負載", re.I)),
    (Task.BATTERY, re.compile(r"battery|电池|電池|电量|電量|耗电|耗電", re.I)),
    (Task.DEVICES, re.compile(r"devices?\b|设备|設備|手机列表|连了|連了|adb devices|哪台|几台|幾台", re.I)),
)

_SECONDS = re.compile(r"(\d+(?:\.\d+)?)\s*(?:s\b|sec\b|secs\b|seconds?\b|秒)", re.I)
_RUNS = re.compile(r"(\d+)\s*(?:次|遍|runs?\b|times\b|launches\b)", re.I)
_WARM = re.compile(r"warm|hot start|热启动|熱啟動|温启动|溫啟動", re.I)

MAX_SECONDS = 120.0
MAX_RUNS = 50


@dataclass(frozen=True)
class Request:
    task: Task
    seconds: float | None = None
    runs: int | None = None
    warm: bool = False


#: Package names are set aside before matching: com.trace.app asks for nothing.
_PACKAGE = re.compile(r"\b[A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z][A-Za-z0-9_]*)+\b")


def read_request(text: str) -> Request:
    text = _PACKAGE.sub(" ", text or "")
    task = next((t for t, rx in _RULES if rx.search(text)), Task.INFO)
    seconds = None
    m = _SECONDS.search(text)
    if m:
        seconds = min(MAX_SECONDS, max(1.0, float(m.group(1))))
    runs = None
    m = _RUNS.search(text)
    if m:
        runs = min(MAX_RUNS, max(1, int(m.group(1))))
    return Request(task=task, seconds=seconds, runs=runs, warm=bool(_WARM.search(text)))
