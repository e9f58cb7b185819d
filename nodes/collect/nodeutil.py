"""What the collector and startup nodes share: the permission gate, the run folder, the thread."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from graph.enums import ErrorKind
from nodes.collect.rundir import open_run_dir
from nodes.collect.target import is_allowlisted
from nodes.common import ToolFailure
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
