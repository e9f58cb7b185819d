"""Permission decided once: may a run stage start this program now? Pure (no I/O).

Permission names a program (docs/permission.md). Three facts decide, and this module is the only
place that combines them:

* the run gate — who named the command and what became of it (``run_gate``: the user's own, a
  proposal from the message not yet confirmed, confirmed, declined, or of a refused shape);
* this turn's ``allow_run`` (``--allow-run``, ``allow_run=True``);
* whether the settings' allowlist names exactly this program (``nodes/collect/permission.py``
  ``is_allowlisted`` finds that out, with the file system; the caller passes the answer).

The stage policy (graph/policy.py), the run stages (nodes/run_stages/local_run.py and
startup_ab.py) and the API's check before continuing a stopped turn (app/api.py) all call
``decide``; the MCP server reaches it through the API. tests/test_permission_once.py fails if
a copy of these rules reappears elsewhere.
"""

from __future__ import annotations

from typing import Any, Mapping

from graph.enums import Confirmation, Permission, RunGate, TargetOrigin


def run_gate(request: Mapping[str, Any] | None) -> RunGate:
    """The permission fact of a run request (graph.state.RunRequest): who named the command,
    whether its shape is refused, whether the user confirmed it. No request: the user's own."""
    if not request or request.get("origin") != TargetOrigin.PROPOSAL.value:
        return RunGate.OWN
    if request.get("refusal"):
        return RunGate.FORBIDDEN
    confirmation = request.get("confirmation")
    if confirmation == Confirmation.CONFIRMED.value:
        return RunGate.CONFIRMED
    if confirmation == Confirmation.DECLINED.value:
        return RunGate.DECLINED
    return RunGate.PROPOSED


def is_device_target(state: Mapping[str, Any]) -> bool:
    """A measurement on an Android device (a package, no local target) runs nothing here."""
    return bool(state.get("package")) and not str(state.get("target") or "").strip()


def needs_permission(runs_programs: bool, state: Mapping[str, Any]) -> bool:
    """Whether a stage (``StageSpec.runs_programs``) would start a program on this machine."""
    return runs_programs and not is_device_target(state)


def decide(gate: RunGate, *, allow_run: bool, allowlisted: bool = False) -> Permission:
    """The one permission decision for a program a stage would start.

    A refused shape and a declined proposal never run; a proposal runs only once confirmed
    (``allow_run`` never confirms it, and a confirmation is permission of its own); the user's
    own program runs on ``allow_run`` or when the allowlist names exactly it.
    """
    if gate is RunGate.FORBIDDEN:
        return Permission.REFUSED_SHAPE
    if gate is RunGate.DECLINED:
        return Permission.DECLINED
    if gate is RunGate.PROPOSED:
        return Permission.CONFIRM
    if gate is RunGate.CONFIRMED or allow_run:
        return Permission.RUN
    if allowlisted:
        return Permission.ALLOWLISTED
    return Permission.REFUSED


__all__ = ["decide", "is_device_target", "needs_permission", "run_gate"]
