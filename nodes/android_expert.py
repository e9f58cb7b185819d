"""The android_expert node: the ``android`` route's collections and queries on a device over adb.

What it runs is read from the message (``nodes.android.intent``): a frame capture, a trace or
launches produce files under the run folder and a ``collected`` with ``paths`` (the policy then
continues to the analyzer); a device list, CPU, memory or battery query is answered here with
``say`` and a ``collected`` without paths (the policy then finishes). Every failure becomes a
typed skip, question or ToolFailure (``nodes.android.outcome``); the node never decides where
the graph goes.
"""

from __future__ import annotations

import time
from typing import Any, Callable

from graph.enums import CollectionKind, Node
from graph.payloads import collection
from nodes.android import frames, launch, system, trace
from nodes.android.devices import DeviceUnavailable, NO_DEVICE_FIX, device_info, explain, list_devices
from nodes.android.intent import Request, Task, read_request
from nodes.android.launch import describe_launches, measure_launches
from nodes.android.names import check_package
from nodes.android.outcome import ANDROID_ERRORS, NeedPackage, as_stage_error
from nodes.android.session import Session, host_adb, open_session
from nodes.framework.common import last_user_text, say
from nodes.framework.context import NodeContext
from nodes.framework.stage import run_stage

#: Seconds a frame capture or trace lasts when the message names none.
DEFAULT_CAPTURE_S = 5.0


def _capture_seconds(req: Request, ctx: NodeContext) -> float:
    if req.seconds is not None:
        return req.seconds
    return DEFAULT_CAPTURE_S if ctx.android_capture_s is None else max(0.0, float(ctx.android_capture_s))


def _device_list(ctx: NodeContext) -> dict[str, Any]:
    host = host_adb(ctx)
    devices = list_devices(host)
    if not devices:
        raise DeviceUnavailable(f"no device attached: {NO_DEVICE_FIX}")
    rows: list[dict[str, Any]] = []
    lines: list[str] = []
    for d in devices:
        row: dict[str, Any] = {"serial": d.serial, "state": d.state}
        if d.ready:
            info = device_info(host.for_device(d.serial))
            row.update({"model": info.model, "android": info.release, "sdk": info.sdk})
            lines.append(f"- {info.describe()}")
        else:
            lines.append(f"- {explain(d)}")
        rows.append(row)
    text = f"{len(devices)} Android device(s) attached:\n" + "\n".join(lines)
    collected = collection(CollectionKind.ANDROID, summary={"task": "devices", "devices": rows}, source="adb devices -l")
    return {"collected": collected, **say(Node.ANDROID_EXPERT.value, text)}


def _package_for_frames(s: Session, state: dict) -> str:
    given = state.get("package")
    if given:
        return check_package(given)
    fg = frames.foreground_package(s)
    if not fg:
        raise NeedPackage(f"No app is in the foreground on {s.serial}, and the message names none.")
    return fg


def _collect(state: dict, ctx: NodeContext, req: Request, sleep: Callable[[float], None]) -> dict[str, Any]:
    name = Node.ANDROID_EXPERT.value
    if req.task is Task.DEVICES:
        return _device_list(ctx)
    package = state.get("package") or None
    if package:
        check_package(package)
    if req.task is Task.LAUNCH and not package:
        raise NeedPackage("Which app's launch should I measure?")
    s = open_session(state, ctx)
    out: dict[str, Any] = {"run_dir": str(s.run_dir)}
    if req.task is Task.FRAMES:
        pkg = _package_for_frames(s, state)
        collected = frames.collect_frames(s, pkg, _capture_seconds(req, ctx), sleep=sleep)
        out.update({"collected": collected, "package": pkg})
        out["messages"] = say(name, "Collected frames: " + frames.describe_frames(collected["summary"]))["messages"]
        return out
    if req.task is Task.TRACE:
        seconds = _capture_seconds(req, ctx) or DEFAULT_CAPTURE_S
        collected = trace.collect_trace(s, seconds, package)
        out["collected"] = collected
        return out
    if req.task is Task.LAUNCH:
        runs = req.runs or max(1, int(ctx.startup_runs))
        collected = measure_launches(s, package, runs, warm=req.warm, pause_s=launch._pause(ctx), sleep=sleep)
        out["collected"] = collected
        out["messages"] = say(name, describe_launches(collected["summary"]))["messages"]
        return out
    if req.task is Task.CPU:
        collected, text = system.collect_cpu(s, package)
    elif req.task is Task.MEMORY:
        collected, text = system.collect_memory(s, package)
    elif req.task is Task.BATTERY:
        collected, text = system.collect_battery(s)
    else:
        collected = collection(
            CollectionKind.ANDROID,
            summary={"task": "info", "device": s.info.describe(), "model": s.info.model,
                     "android": s.info.release, "sdk": s.info.sdk},
            source=s.source("shell getprop"),
        )
        text = f"Connected: {s.info.describe()}."
    out["collected"] = collected
    out.update(say(name, text))
    return out


def make(ctx: NodeContext, sleep: Callable[[float], None] = time.sleep) -> Callable[[dict], dict]:
    def android_expert(state: dict, ctx: NodeContext) -> dict:
        req = read_request(last_user_text(state))
        try:
            return _collect(state, ctx, req, sleep)
        except ANDROID_ERRORS as e:
            raise as_stage_error(e) from None

    return run_stage(Node.ANDROID_EXPERT, android_expert, ctx)

