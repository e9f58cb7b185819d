"""The startup node: launch time of a local program, or of an Android app through adb.

A local target is launched ``ctx.startup_runs`` times and timed to exit or to "ready" (see
``nodes.collect.launches``), with one more ``-X importtime`` run for Python. An Android package
with no local target goes to the Android launch measurement (``nodes.android.launch``). As in
the collector, permission is checked before anything runs and a missing target is asked for,
never guessed.
"""

from __future__ import annotations

import os
from typing import Callable

from graph.enums import Node
from graph.permission import is_device_target
from nodes.android.launch import device_startup
from nodes.android.outcome import ANDROID_ERRORS, as_stage_error
from nodes.collect.launches import measure_startup
from nodes.collect.options import CollectOptions
from nodes.framework.common import last_user_text
from nodes.framework.context import NodeContext
from nodes.routing.extract import extract
from nodes.run_stages.local_run import run_local
from nodes.framework.stage import run_stage

TARGET_PROMPT = (
    "Which program's start-up should I measure? Give a script path or a command line, or an "
    "Android package name (com.demo.shop). 要测哪个程序的启动？请给出脚本路径、命令行或 Android 包名。"
)


def _package_answer(target: str, workspace: str) -> bool:
    """An answer like ``com.demo.shop`` names an Android package, not a local program."""
    facts = extract(target)
    return facts.packages == [target] and not os.path.exists(os.path.join(workspace, target))


def make(ctx: NodeContext) -> Callable[[dict], dict]:
    def startup(state: dict, ctx: NodeContext) -> dict:
        opts = CollectOptions.from_context(ctx)
        name = Node.STARTUP.value
        update: dict = {}
        target = str(state.get("target") or "").strip()
        workspace = state.get("workspace") or "."
        if target and _package_answer(target, workspace):
            state = {**state, "package": target, "target": None}
            update.update({"package": target, "target": None})
            target = ""
        if is_device_target(state):
            try:
                return {**update, **device_startup(state, ctx, last_user_text(state))}
            except ANDROID_ERRORS as e:
                err = as_stage_error(e)
                err.partial = {**update, **getattr(err, "partial", {})}  # the package it was told
                raise err from None
        targets = [t for t in (state.get("targets") or []) if t]
        if len(targets) >= 2:  # which of two programs starts faster (nodes/collect/ab_launches.py)
            from nodes.run_stages.startup_ab import ab_update

            return {**update, **ab_update(name, state, ctx, opts, targets)}
        return run_local(
            name, state, ctx, "startup", TARGET_PROMPT,
            lambda t, run_dir: measure_startup(t, run_dir, opts),
            lambda t, collected, notes, run_dir: (
                f"{t.display} started {collected['summary'].get('runs', 0)} times but the analyzer "
                f"can read none of the files ({notes}); they are in {run_dir}"
            ),
        )

    return run_stage(Node.STARTUP, startup, ctx)
