"""Finds the existing data an ``analyze`` request means: a file it names, two sides to compare,
or what was collected.

It reads nothing but file metadata: parsing is the analyzer's. No data at all → ask the user
which file (a missing field the user can supply), never a guess.
"""

from __future__ import annotations

from typing import Callable

from graph.enums import ErrorKind, Node
from nodes.common import ToolFailure, attempt, failure, stamp
from nodes.context import NodeContext
from nodes.sandbox import PathNotFound, SandboxError, regular_file_inside, resolve_inside


def _side_inside(workspace: str, path: str) -> str:
    """A comparison side: an existing file or folder inside the workspace (SandboxError if not)."""
    real = resolve_inside(workspace, path)
    if not real.exists():
        raise PathNotFound(f"{path}: no such file or folder")
    if not (real.is_file() or real.is_dir()):
        raise PathNotFound(f"{path}: not a regular file or folder")
    return str(real)


def make(ctx: NodeContext) -> Callable[[dict], dict]:
    def perf_analyzer(state: dict) -> dict:
        name = Node.PERF_ANALYZER.value
        update = stamp(state, name)
        update["attempts"] = attempt(state, name)
        sides = [p for p in (state.get("data_paths") or []) if p]
        if len(sides) >= 2:
            # two sides named: the analyzer compares B (the second) against A (the first)
            try:
                a, b = (_side_inside(state.get("workspace") or ".", p) for p in sides[:2])
            except SandboxError as e:
                update.update(failure(name, ToolFailure(ErrorKind.VALIDATION, str(e))))
                return update
            update["data_path"] = a
            update["collected"] = {"kind": "compare", "paths": {"a": a, "b": b}, "source": f"{a} vs {b}"}
            return update
        path = state.get("data_path")
        if path:
            try:
                real = regular_file_inside(state.get("workspace") or ".", path)
            except SandboxError as e:
                update.update(failure(name, ToolFailure(ErrorKind.VALIDATION, str(e))))
                return update
            update["data_path"] = str(real)
            update["collected"] = {"kind": "file", "paths": {"data": str(real)}, "source": str(real)}
            return update
        if (state.get("collected") or {}).get("paths"):
            return update  # the thread's earlier collection is the data
        update["missing"] = ["data_path"]
        update["question"] = {
            "field": "data_path",
            "prompt": "Which file should I analyse? Give the path of a trace or profile "
            "(Perfetto, Chrome JSON, speedscope, pstats, atrace, gfxinfo …).",
            "for_node": name,
        }
        return update

    return perf_analyzer
