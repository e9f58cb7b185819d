"""Finds the existing data an ``analyze`` request means: a file it names, or what was collected.

It reads nothing but file metadata: parsing is the analyzer's. No data at all → ask the user
which file (a missing field the user can supply), never a guess.
"""

from __future__ import annotations

from typing import Callable

from graph.enums import ErrorKind, Node
from nodes.common import ToolFailure, attempt, failure, stamp
from nodes.context import NodeContext
from nodes.sandbox import SandboxError, regular_file_inside


def make(ctx: NodeContext) -> Callable[[dict], dict]:
    def perf_analyzer(state: dict) -> dict:
        name = Node.PERF_ANALYZER.value
        update = stamp(state, name)
        update["attempts"] = attempt(state, name)
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
