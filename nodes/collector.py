"""The collector node (full_analysis): runs the target once under py-spy, psutil and perf stat.

Permission comes first: nothing runs unless the user allowed running programs (``allow_run``)
or the settings' allowlist names this program. A turn with no target asks for one rather than
guess. Tool outcomes are returned as a typed error (attach failure → retryable, crash or bad
target → validation, hang → timeout, refusal → permission), a typed skip (py-spy missing), or
``collected``; the policy in ``graph.policy`` decides what follows.
"""

from __future__ import annotations

from typing import Callable

from graph.enums import Node
from graph.permission import is_device_target
from nodes.collect.options import CollectOptions
from nodes.collect.profile import collect_profile
from nodes.framework.context import NodeContext
from nodes.framework.errors import StageSkipped
from nodes.run_stages.local_run import run_local
from nodes.framework.stage import run_stage

TARGET_PROMPT = (
    "Which program should I profile? Give a script path (examples/slow_app.py) or a command "
    'line ("python app.py --size 1e6"). 要分析哪个程序？请给出脚本路径或命令行。'
)

ANDROID_SKIP = (
    "{package} is an Android app, and the collector profiles programs on this machine; capture a "
    "device trace instead (for example 「采集一下 {package} 的 trace」 or \"capture a trace of "
    "{package}\"), then ask to analyse it"
)


def make(ctx: NodeContext) -> Callable[[dict], dict]:
    def collector(state: dict, ctx: NodeContext) -> dict:
        opts = CollectOptions.from_context(ctx)
        name = Node.COLLECTOR.value
        if is_device_target(state):
            # Nothing local to run: an app on a device is profiled through a device trace.
            raise StageSkipped(ANDROID_SKIP.format(package=state["package"]))
        return run_local(
            name, state, ctx, "profile", TARGET_PROMPT,
            lambda t, run_dir: collect_profile(t, run_dir, opts),
            lambda t, collected, notes, run_dir: (
                f"the run of {t.display} finished but the analyzer can read none of its files "
                f"({notes}); they are in {run_dir}"
            ),
        )

    return run_stage(Node.COLLECTOR, collector, ctx)
