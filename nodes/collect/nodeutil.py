"""What the collector and startup nodes share: the permission gate, the question for a missing
target, the run folder, and running one measurement into a typed node update."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Mapping

from graph.enums import ErrorKind
from nodes.collect.rundir import open_run_dir
from nodes.collect.target import Target, is_allowlisted, parse_target
from nodes.common import ToolFailure, failure, skip
from nodes.context import NodeContext


def thread_id() -> str | None:
    """The graph thread this node runs in, or None outside a graph run (a direct call in a test)."""
    try:
        from langgraph.config import get_config

        return ((get_config() or {}).get("configurable") or {}).get("thread_id")
    except (RuntimeError, ImportError):
        return None


def permission(state: Mapping[str, Any], ctx: NodeContext) -> tuple[bool, bool]:
    """(allowed, allowed only by the allowlist). Reads nothing but the state and the settings."""
    if state.get("allow_run"):
        return True, False
    listed = is_allowlisted(state.get("target"), ctx.allowlist, state.get("workspace") or ".")
    return listed, listed


def refused(node: str) -> ToolFailure:
    return ToolFailure(
        ErrorKind.PERMISSION,
        f"{node} runs programs on this machine, and running programs is off: pass --allow-run, "
        "answer yes when asked, or add the program to the allowlist in the settings",
    )


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
) -> dict[str, Any]:
    """Run ``measure`` on ``target`` in a fresh run folder and turn the outcome into an update.

    A missing tool (``UNAVAILABLE``) is a typed skip, any other tool failure a typed error, a
    folder that cannot be written an ``UNAVAILABLE`` error, and a run whose files the analyzer
    cannot read an ``UNAVAILABLE`` error that says where they are (``unreadable`` words it).
    """
    update: dict[str, Any] = {}
    try:
        t = parse_target(target, state.get("workspace") or ".")
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
    """Permission first, then the target (asked for when missing), then the measurement."""
    allowed, by_allowlist = permission(state, ctx)
    if not allowed:
        return failure(node, refused(node))
    update: dict[str, Any] = {"allow_run": True} if by_allowlist else {}
    target = str(state.get("target") or "").strip()
    if not target:
        return {**update, **ask_for_target(node, prompt)}
    return {**update, **measure_into(node, state, ctx, kind, target, measure, unreadable)}
