"""What the collector and startup nodes share: the permission gate, the question for a missing
target, the run folder, and running one measurement into a typed node update."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Mapping

from graph.enums import ErrorKind, RunGate
from graph.policy import run_gate
from graph.state import RunRequest
from nodes.collect.permission import build_request, is_allowlisted
from nodes.collect.rundir import open_run_dir
from nodes.collect.target import Target, parse_target
from nodes.common import ToolFailure, failure, skip
from nodes.context import NodeContext


def thread_id() -> str | None:
    """The graph thread this node runs in, or None outside a graph run (a direct call in a test)."""
    try:
        from langgraph.config import get_config

        return ((get_config() or {}).get("configurable") or {}).get("thread_id")
    except (RuntimeError, ImportError):
        return None


#: Answers that confirm a proposed command (anything else declines it).
YES = frozenset({"y", "yes", "ok", "okay", "sure", "confirm", "是", "是的", "好", "好的", "可以", "允许", "确认", "確認", "允許"})


def refused(node: str, request: RunRequest | None) -> ToolFailure:
    """The refusal of the user's own program without permission. The policy's reason names the
    argv (``StageView.command``); this says how to allow it."""
    what = "it" if request else "a program (name it with --target)"
    return ToolFailure(
        ErrorKind.PERMISSION,
        f"to run {what}, pass --allow-run (CLI) or allow_run=True (API), or add the program to the "
        "allowlist in the settings",
    )


def refused_shape(request: RunRequest) -> ToolFailure:
    return ToolFailure(
        ErrorKind.PERMISSION,
        f"{request['refusal']}. PerfScout never runs such a command from a message, confirmed or "
        "not; to profile it anyway, give it yourself with --target (CLI) or target= (API)",
    )


def declined(request: RunRequest) -> ToolFailure:
    return ToolFailure(ErrorKind.PERMISSION, "nothing was run")


def ask_to_confirm(node: str, request: RunRequest) -> dict[str, Any]:
    """The question for a proposed command: confirm this exact argv (docs/permission.md)."""
    outside = list(request.get("outside_workspace") or [])
    note = f" It names paths outside the workspace: {', '.join(outside)}." if outside else ""
    prompt = (
        f"Your message proposes running `{request['display']}`.{note} Run it and profile it? (yes/no) "
        "消息中提议运行该命令，确认运行吗？"
    )
    return {
        "collected": None,
        "missing": ["confirm_run"],
        "question": {
            "field": "confirm_run",
            "prompt": prompt,
            "for_node": node,
            "argv": list(request["argv"]),
            "outside_workspace": outside,
            "choices": ["yes", "no"],
        },
    }


def run_folder(state: Mapping[str, Any], ctx: NodeContext, kind: str) -> Path:
    return open_run_dir(state.get("run_dir"), ctx.runs_dir, thread_id(), kind)


def ask_for_target(node: str, prompt: str) -> dict[str, Any]:
    """The update that asks the user which program to run (an earlier turn's collection must
    not pass for this turn's evidence, so it is cleared)."""
    return {
        "collected": None,
        "missing": ["target"],
        "question": {"field": "target", "prompt": prompt, "for_node": node},
    }


def measure_into(
    node: str,
    state: Mapping[str, Any],
    ctx: NodeContext,
    kind: str,
    target: str,
    measure: Callable[[Target, Path], dict[str, Any]],
    unreadable: Callable[[Target, dict[str, Any], str, Path], str],
    *,
    confirmed_outside: bool = False,
) -> dict[str, Any]:
    """Run ``measure`` on ``target`` in a fresh run folder and turn the outcome into an update.

    A missing tool (``UNAVAILABLE``) is a typed skip, any other tool failure a typed error, a
    folder that cannot be written an ``UNAVAILABLE`` error, and a run whose files the analyzer
    cannot read an ``UNAVAILABLE`` error that says where they are (``unreadable`` words it).
    """
    update: dict[str, Any] = {}
    try:
        t = parse_target(target, state.get("workspace") or ".", confirmed_outside=confirmed_outside)
        run_dir = run_folder(state, ctx, kind)
        update["run_dir"] = str(run_dir)
        collected = measure(t, run_dir)
    except ToolFailure as e:
        update.update(skip(node, e.message) if e.kind is ErrorKind.UNAVAILABLE else failure(node, e))
        return update
    except OSError as e:  # the run folder could not be written (disk full, read-only …)
        msg = f"could not write the run folder {update.get('run_dir') or ctx.runs_dir}: {e.strerror or e}"
        update.update(failure(node, ToolFailure(ErrorKind.UNAVAILABLE, msg)))
        return update
    if not collected["paths"]:
        notes = "; ".join(collected["summary"].get("notes") or []) or "no readable files"
        update.update(failure(node, ToolFailure(ErrorKind.UNAVAILABLE, unreadable(t, collected, notes, run_dir))))
        return update
    update.update({"collected": collected, "last_error": None, "missing": [], "question": None})
    return update


def run_local(
    node: str,
    state: Mapping[str, Any],
    ctx: NodeContext,
    kind: str,
    prompt: str,
    measure: Callable[[Target, Path], dict[str, Any]],
    unreadable: Callable[[Target, dict[str, Any], str, Path], str],
) -> dict[str, Any]:
    """Permission first, then the target (asked for when missing), then the measurement.

    Permission names a program (docs/permission.md): the exact argv, who named it and — for a
    command the message proposed — the user's confirmation decide; the same ``run_gate`` the
    stage policy reads. Nothing starts unless that says so.
    """
    target = str(state.get("target") or "").strip()
    workspace = state.get("workspace") or "."
    if not target:
        if not state.get("allow_run"):
            return failure(node, refused(node, None))
        return ask_for_target(node, prompt)
    request = build_request(target, state.get("target_origin"), workspace, state.get("run_request"))
    if request is None:  # not a readable command line: parse_target says why
        return measure_into(node, state, ctx, kind, target, measure, unreadable)
    update: dict[str, Any] = {"run_request": request}
    gate = run_gate(request)
    if gate is RunGate.FORBIDDEN:
        return {**update, **failure(node, refused_shape(request))}
    if gate is RunGate.DECLINED:
        return {**update, **failure(node, declined(request))}
    if gate is RunGate.PROPOSED:
        return {**update, **ask_to_confirm(node, request)}
    if gate is RunGate.OWN and not state.get("allow_run"):
        if not is_allowlisted(request["argv"], ctx.allowlist, workspace):
            return {**update, **failure(node, refused(node, request))}
        update["allow_run"] = True  # the settings' allowlist names exactly this program
    confirmed = gate is RunGate.CONFIRMED  # its confirmation named any path outside the workspace
    return {**update, **measure_into(node, state, ctx, kind, target, measure, unreadable, confirmed_outside=confirmed)}
