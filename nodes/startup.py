"""The startup node: launch time of a local program, or of an Android app through adb.

A local target is launched ``ctx.startup_runs`` times and timed to exit or to "ready" (see
``nodes.collect.launches``), with one more ``-X importtime`` run for Python. An Android package
with no local target goes to the Android launch measurement (``nodes.android.launch``); where
that is not installed, the node skips with the reason. As in the collector, permission is
checked before anything runs and a missing target is asked for, never guessed.
"""

from __future__ import annotations

import os
from typing import Any, Callable

from graph.enums import ErrorKind, Node
from nodes.collect.launches import measure_startup
from nodes.collect.nodeutil import permission, refused, run_folder
from nodes.collect.options import CollectOptions
from nodes.collect.target import parse_target
from nodes.common import ToolFailure, attempt, failure, skip, stamp
from nodes.context import NodeContext
from nodes.extract import extract

TARGET_PROMPT = (
    "Which program's start-up should I measure? Give a script path or a command line, or an "
    "Android package name (com.demo.shop). 要测哪个程序的启动？请给出脚本路径、命令行或 Android 包名。"
)
ANDROID_SKIP = (
    "measuring Android launches needs adb and a connected device, and the Android launch "
    "support (nodes.android.launch) is not available here"
)


def _package_answer(target: str, workspace: str) -> bool:
    """An answer like ``com.demo.shop`` names an Android package, not a local program."""
    facts = extract(target)
    return facts.packages == [target] and not os.path.exists(os.path.join(workspace, target))


def _android(state: dict[str, Any], ctx: NodeContext) -> dict[str, Any]:
    try:
        from nodes.android.launch import startup_update
    except ModuleNotFoundError as e:
        if (e.name or "").startswith("nodes.android"):
            return skip(Node.STARTUP.value, ANDROID_SKIP)
        raise
    return startup_update(state, ctx)


def make(ctx: NodeContext) -> Callable[[dict], dict]:
    opts = CollectOptions.from_context(ctx)

    def startup(state: dict) -> dict:
        name = Node.STARTUP.value
        update = stamp(state, name)
        update["attempts"] = attempt(state, name)
        target = str(state.get("target") or "").strip()
        workspace = state.get("workspace") or "."
        if target and _package_answer(target, workspace):
            state = {**state, "package": target, "target": None}
            update.update({"package": target, "target": None})
            target = ""
        if state.get("package") and not target:
            update.update(_android(state, ctx))
            return update
        allowed, by_allowlist = permission(state, ctx)
        if not allowed:
            update.update(failure(name, refused(name)))
            return update
        if by_allowlist:
            update["allow_run"] = True
        if not target:
            update.update({"collected": None, "missing": ["target"]})
            update["question"] = {"field": "target", "prompt": TARGET_PROMPT, "for_node": name}
            return update
        try:
            t = parse_target(target, workspace)
            run_dir = run_folder(state, ctx, "startup")
            update["run_dir"] = str(run_dir)
            collected = measure_startup(t, run_dir, opts)
        except ToolFailure as e:
            if e.kind is ErrorKind.UNAVAILABLE:
                update.update(skip(name, e.message))
            else:
                update.update(failure(name, e))
            return update
        except OSError as e:  # the run folder could not be written (disk full, read-only …)
            msg = f"could not write the run folder {update.get('run_dir') or ctx.runs_dir}: {e.strerror or e}"
            update.update(failure(name, ToolFailure(ErrorKind.UNAVAILABLE, msg)))
            return update
        if not collected["paths"]:
            notes = "; ".join(collected["summary"].get("notes") or []) or "no readable files"
            update.update(
                failure(
                    name,
                    ToolFailure(
                        ErrorKind.UNAVAILABLE,
                        f"{t.display} started {collected['summary'].get('runs', 0)} times but the analyzer "
                        f"can read none of the files ({notes}); they are in {run_dir}",
                    ),
                )
            )
            return update
        update.update({"collected": collected, "last_error": None, "missing": [], "question": None})
        return update

    return startup
