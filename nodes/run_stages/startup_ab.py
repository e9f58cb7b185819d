"""The startup stage's two-program race: permission for each program, then the interleaved
launches (nodes/collect/ab_launches.py measures; this module is the stage side, as
nodes/run_stages/local_run.py is for one program — toolkits build no state updates, tests/test_pure_boundary.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from nodes.collect.ab_launches import measure_ab
from nodes.collect.options import CollectOptions
from nodes.collect.target import Target


def ab_update(node: str, state: dict[str, Any], ctx: Any, opts: CollectOptions, targets: Sequence[str]) -> dict[str, Any]:
    """The startup stage's result for two programs (raises like any run stage).

    Permission names each program (docs/permission.md): each racer is a script the message names
    (origin "workspace"; a command that is not one becomes a proposal and is refused here — a
    race never runs a proposed command, confirmed or not), and each runs only on --allow-run or
    when the allowlist names exactly it. Then both are launched interleaved into one run folder;
    the ``collected`` is of kind "compare" and the analyzer compares the two sides.
    """
    from graph.enums import ErrorKind, RunGate, TargetOrigin
    from graph.policy import run_gate
    from nodes.collect.permission import build_request, is_allowlisted
    from nodes.collect.target import parse_target
    from nodes.framework.common import last_user_text
    from nodes.framework.errors import ToolFailure
    from nodes.report.language import detect_language
    from nodes.run_stages.local_run import measure, refused, refused_shape

    workspace = state.get("workspace") or "."
    by_list = []
    for t in targets[:2]:
        request = build_request(t, TargetOrigin.WORKSPACE.value, workspace)
        if request is None:
            raise ToolFailure(ErrorKind.VALIDATION, f"{t}: not a command line PerfScout can launch")
        gate = run_gate(request)
        if gate is RunGate.FORBIDDEN:
            raise refused_shape(request)
        if gate is not RunGate.OWN:
            raise ToolFailure(ErrorKind.PERMISSION,
                              f"{request['display']}: only scripts inside the workspace that the message names are "
                              "launched against each other; give a command with --target to measure it alone")
        if not state.get("allow_run"):
            if not is_allowlisted(request["argv"], ctx.allowlist, workspace):
                raise refused(request)
            by_list.append(True)
    update: dict[str, Any] = {"allow_run": True} if by_list and not state.get("allow_run") else {}
    lang = detect_language(last_user_text(state))

    def run(a: Target, run_dir: Path) -> dict[str, Any]:
        b = parse_target(targets[1], workspace)
        return measure_ab(a, b, run_dir, opts, labels=(targets[0], targets[1]), lang=lang)

    def unreadable(t: Target, collected: Any, notes: str, run_dir: Path) -> str:
        return f"{t.display} and {targets[1]} were launched but their timings could not be written ({notes}); see {run_dir}"

    return {**update, **measure(state, ctx, "startup-ab", targets[0], run, unreadable)}
