"""Finds the existing data an ``analyze`` request means: a file it names, or what was collected.

It reads nothing but file metadata: parsing is the analyzer's. No data at all → ask the user
which file (a missing field the user can supply), never a guess.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from graph.enums import CollectionKind, ErrorKind, Node
from graph.payloads import collection
from nodes.common import ask
from nodes.context import NodeContext
from nodes.errors import ToolFailure
from nodes.sandbox import SandboxError, regular_file_inside
from nodes.stage import run_stage

NAME = Node.PERF_ANALYZER.value
DATA_PROMPT = (
    "Which file should I analyse? Give the path of a trace or profile "
    "(Perfetto, Chrome JSON, speedscope, pstats, atrace, gfxinfo …)."
)


def make(ctx: NodeContext) -> Callable[[dict], dict]:
    def perf_analyzer(state: Mapping[str, Any], ctx: NodeContext) -> dict[str, Any]:
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

    return run_stage(Node.PERF_ANALYZER, perf_analyzer, ctx)
