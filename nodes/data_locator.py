"""Finds the existing data an ``analyze`` request means: a file it names, two sides to compare,
or what was collected.

It reads nothing but file metadata: parsing is the analyzer's. No data at all → ask the user
which file (a missing field the user can supply), never a guess.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from graph.enums import CollectionKind, ErrorKind, Node
from graph.payloads import collection
from nodes.framework.common import ask
from nodes.framework.context import NodeContext
from nodes.framework.errors import ToolFailure
from nodes.code.sandbox import PathNotFound, SandboxError, regular_file_inside, resolve_inside
from nodes.framework.stage import run_stage

NAME = Node.DATA_LOCATOR.value
DATA_PROMPT = (
    "Which file should I analyse? Give the path of a trace or profile "
    "(Perfetto, Chrome JSON, speedscope, pstats, atrace, gfxinfo …)."
)


def _side_inside(workspace: str, path: str) -> str:
    """A comparison side: an existing file or folder inside the workspace (SandboxError if not)."""
    real = resolve_inside(workspace, path)
    if not real.exists():
        raise PathNotFound(f"{path}: no such file or folder")
    if not (real.is_file() or real.is_dir()):
        raise PathNotFound(f"{path}: not a regular file or folder")
    return str(real)


def make(ctx: NodeContext) -> Callable[[dict], dict]:
    def data_locator(state: Mapping[str, Any], ctx: NodeContext) -> dict[str, Any]:
        sides = [p for p in (state.get("data_paths") or []) if p]
        if len(sides) >= 2:
            # two sides named: the analyzer compares B (the second) against A (the first)
            try:
                a, b = (_side_inside(state.get("workspace") or ".", p) for p in sides[:2])
            except SandboxError as e:
                raise ToolFailure(ErrorKind.VALIDATION, str(e)) from None
            return {"data_path": a,
                    "collected": collection(CollectionKind.COMPARE, paths={"a": a, "b": b}, source=f"{a} vs {b}")}
        path = state.get("data_path")
        if path:
            try:
                real = regular_file_inside(state.get("workspace") or ".", path)
            except SandboxError as e:
                raise ToolFailure(ErrorKind.VALIDATION, str(e)) from None
            return {
                "data_path": str(real),
                "collected": collection(CollectionKind.FILE, paths={"data": str(real)}, source=str(real)),
            }
        if (state.get("collected") or {}).get("paths"):
            return {}  # the thread's earlier collection is the data
        return ask(NAME, "data_path", DATA_PROMPT)

    return run_stage(Node.DATA_LOCATOR, data_locator, ctx)
