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

    Permission names each program (docs/permission.md), decided by graph/permission.py for
    each racer: a script the message names inside the workspace (origin "workspace") runs on
    --allow-run or when the allowlist names exactly it; any other (a script outside the
    workspace) is a proposal, and the user is asked to confirm its exact argv — both racers' in
    one question when both need it (``RunRequest.confirms_also``). A refusal of either racer is raised before
    anything is asked. Then both are launched interleaved into one run folder; the
    ``collected`` is of kind "compare" and the analyzer compares the two sides.
    """
    from graph.enums import Confirmation, ErrorKind, Permission, RunGate, TargetOrigin
    from graph.permission import run_gate
    from nodes.collect.permission import build_request
    from nodes.collect.target import parse_target
    from nodes.framework.common import last_user_text
    from nodes.framework.errors import ToolFailure
    from nodes.report.language import detect_language
    from nodes.run_stages.local_run import ask_to_confirm, measure, permission_for, refuse

    workspace = state.get("workspace") or "."
    previous = state.get("run_request") or None
    # One question covers every racer that needs confirming (two questions in a row would read
    # as an oscillation to the loop guard): its answer applies to each argv it named.
    answered = [list(previous["argv"])] + [list(a) for a in previous.get("confirms_also") or []] if previous else []
    decided = []
    for t in targets[:2]:
        request = build_request(t, TargetOrigin.WORKSPACE.value, workspace)
        if request is None:
            raise ToolFailure(ErrorKind.VALIDATION, f"{t}: not a command line PerfScout can launch")
        if request["origin"] == TargetOrigin.PROPOSAL.value and request["argv"] in answered:
            request["confirmation"] = str(previous.get("confirmation") or Confirmation.NONE.value)
        decided.append((request, permission_for(request, state, ctx)))
    for request, permission in decided:
        refuse(permission, request)
    asks = [r for r, p in decided if p is Permission.CONFIRM]
    if asks:
        first = {**asks[0], "confirms_also": [r["argv"] for r in asks[1:]]}
        if len(asks) > 1:
            first["display"] = " and ".join(f"`{r['display']}`" for r in asks).strip("`")
            purpose = "Launch them against each other to compare their start-up?"
        else:
            other = next(r["display"] for r, _ in decided if r is not asks[0])
            purpose = f"Launch it against `{other}` to compare their start-up?"
        return ask_to_confirm(node, first, purpose=purpose)
    by_list = [p for _, p in decided if p is Permission.ALLOWLISTED]
    update: dict[str, Any] = {"allow_run": True} if by_list and not state.get("allow_run") else {}
    outside = {r["display"]: run_gate(r) is RunGate.CONFIRMED for r, _ in decided}
    lang = detect_language(last_user_text(state))

    a_req, b_req = decided[0][0], decided[1][0]

    def run(a: Target, run_dir: Path) -> dict[str, Any]:
        # A racer outside the workspace resolves there only because its confirmation named it.
        b = parse_target(targets[1], workspace, confirmed_outside=outside[b_req["display"]])
        return measure_ab(a, b, run_dir, opts, labels=(targets[0], targets[1]), lang=lang)

    def unreadable(t: Target, collected: Any, notes: str, run_dir: Path) -> str:
        return f"{t.display} and {targets[1]} were launched but their timings could not be written ({notes}); see {run_dir}"

    return {**update, **measure(state, ctx, "startup-ab", targets[0], run, unreadable,
                                confirmed_outside=outside[a_req["display"]])}
