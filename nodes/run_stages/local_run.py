"""What the collector and startup stages share: permission for the exact program, the question
for a missing target or a proposed command, the run folder, and one measurement's result.

Permission names a program (docs/permission.md): the exact argv, who named it and — for a
command the message proposed — the user's confirmation decide, through the same ``run_gate``
the stage policy reads. Nothing starts unless that says so.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Mapping

from graph.enums import ErrorKind, Permission, RunGate
from graph.payloads import Collected, RunRequest
from graph.permission import decide, run_gate
from nodes.collect.permission import build_request, is_allowlisted
from nodes.collect.rundir import open_run_dir
from nodes.collect.target import Target, parse_target
from nodes.framework.common import ask
from nodes.framework.context import NodeContext, thread_id
from nodes.framework.errors import StageSkipped, ToolFailure

#: Answers that confirm a proposed command (anything else declines it).
YES = frozenset({"y", "yes", "ok", "okay", "sure", "confirm", "是", "是的", "好", "好的", "可以", "允许", "确认", "確認", "允許"})

Measure = Callable[[Target, Path], Collected]
Unreadable = Callable[[Target, Collected, str, Path], str]


def refused(request: RunRequest | None) -> ToolFailure:
    """The refusal of the user's own program without permission. The policy's reason names the
    argv (``StageView.command``); this says how to allow it."""
    what = "it" if request else "a program (name it with --target)"
    return ToolFailure(
        ErrorKind.PERMISSION,
        f"to run {what}, pass --allow-run (CLI) or allow_run=True (API), or allow the program by name "
        "in PERFSCOUT_ALLOWLIST (comma-separated, e.g. PERFSCOUT_ALLOWLIST=examples/slow_app.py)",
        partial={"run_request": request} if request else None,
    )


def refused_shape(request: RunRequest) -> ToolFailure:
    return ToolFailure(
        ErrorKind.PERMISSION,
        f"{request['refusal']}. PerfScout never runs such a command from a message, confirmed or "
        "not; to profile it anyway, give it yourself with --target (CLI) or target= (API)",
        partial={"run_request": request},
    )


def declined(request: RunRequest) -> ToolFailure:
    return ToolFailure(ErrorKind.PERMISSION, "nothing was run", partial={"run_request": request})


def permission_for(request: RunRequest, state: Mapping[str, Any], ctx: NodeContext) -> Permission:
    """graph/permission.py's decision for this request in this turn (the allowlist looked up
    here: it reads the file system)."""
    allowlisted = is_allowlisted(request["argv"], ctx.allowlist, state.get("workspace") or ".")
    return decide(run_gate(request), allow_run=bool(state.get("allow_run")), allowlisted=allowlisted)


def refuse(permission: Permission, request: RunRequest) -> None:
    """Raise the refusal a decision names (none for RUN, ALLOWLISTED, CONFIRM)."""
    if permission is Permission.REFUSED_SHAPE:
        raise refused_shape(request)
    if permission is Permission.DECLINED:
        raise declined(request)
    if permission is Permission.REFUSED:
        raise refused(request)


def ask_to_confirm(node: str, request: RunRequest, purpose: str = "Run it and profile it?") -> dict[str, Any]:
    """The question for a proposed command: confirm this exact argv (docs/permission.md)."""
    outside = list(request.get("outside_workspace") or [])
    note = f" It names paths outside the workspace: {', '.join(outside)}." if outside else ""
    prompt = (
        f"Your message proposes running `{request['display']}`.{note} {purpose} (yes/no) "
        "消息中提议运行该命令，确认运行吗？"
    )
    return {
        "run_request": request,
        **ask(node, "confirm_run", prompt, choices=["yes", "no"], argv=list(request["argv"]), outside_workspace=outside),
    }


def measure(
    state: Mapping[str, Any],
    ctx: NodeContext,
    kind: str,
    target: str,
    run: Measure,
    unreadable: Unreadable,
    *,
    confirmed_outside: bool = False,
) -> dict[str, Any]:
    """Run ``run`` on ``target`` in a fresh run folder: the stage's result, or it raises.

    A missing tool (``UNAVAILABLE``) is a typed skip, any other tool failure a typed error, a
    folder that cannot be written an ``UNAVAILABLE`` error, and a run whose files the analyzer
    cannot read an ``UNAVAILABLE`` error that says where they are (``unreadable`` words it).
    """
    run_dir: Path | None = None
    try:
        t = parse_target(target, state.get("workspace") or ".", confirmed_outside=confirmed_outside)
        run_dir = open_run_dir(state.get("run_dir"), ctx.runs_dir, thread_id(), kind)
        collected = run(t, run_dir)
    except ToolFailure as e:
        if e.kind is ErrorKind.UNAVAILABLE:
            raise StageSkipped(e.message, partial={"run_dir": str(run_dir)} if run_dir else None) from None
        if run_dir is not None:  # the folder with what the failed run left (run.json, output)
            e.partial = {"run_dir": str(run_dir), **e.partial}
        raise
    except OSError as e:  # the run folder could not be written (disk full, read-only …)
        msg = f"could not write the run folder {run_dir or ctx.runs_dir}: {e.strerror or e}"
        raise ToolFailure(ErrorKind.UNAVAILABLE, msg) from None
    if not collected["paths"]:
        notes = "; ".join(collected["summary"].get("notes") or []) or "no readable files"
        raise ToolFailure(ErrorKind.UNAVAILABLE, unreadable(t, collected, notes, run_dir), partial={"run_dir": str(run_dir)})
    return {"collected": collected, "run_dir": str(run_dir)}


def run_local(
    node: str,
    state: Mapping[str, Any],
    ctx: NodeContext,
    kind: str,
    prompt: str,
    run: Measure,
    unreadable: Unreadable,
) -> dict[str, Any]:
    """Permission first, then the target (asked for when missing), then the measurement."""
    target = str(state.get("target") or "").strip()
    workspace = state.get("workspace") or "."
    allow_run = bool(state.get("allow_run"))
    if not target:
        if decide(RunGate.OWN, allow_run=allow_run) is Permission.REFUSED:
            raise refused(None)
        return {**ask(node, "target", prompt)}
    request = build_request(target, state.get("target_origin"), workspace, state.get("run_request"))
    if request is None:  # not a readable command line: parse_target says why
        return measure(state, ctx, kind, target, run, unreadable)
    update: dict[str, Any] = {"run_request": request}
    gate = run_gate(request)
    permission = permission_for(request, state, ctx)
    if permission is Permission.CONFIRM:
        return ask_to_confirm(node, request)
    refuse(permission, request)
    if permission is Permission.ALLOWLISTED:
        update["allow_run"] = True  # the settings' allowlist names exactly this program
    confirmed = gate is RunGate.CONFIRMED  # its confirmation named any path outside the workspace
    try:
        return {**update, **measure(state, ctx, kind, target, run, unreadable, confirmed_outside=confirmed)}
    except ToolFailure as e:
        e.partial = {**update, **e.partial}
        raise
