"""Reads the data of this turn (a named file or a collection) and computes its metrics."""

from __future__ import annotations

from typing import Any, Callable, Mapping

from graph.enums import ErrorKind, Node
from nodes.context import NodeContext
from nodes.errors import ToolFailure
from nodes.perf.errors import PerfDataError
from nodes.stage import run_stage


def make(ctx: NodeContext) -> Callable[[dict], dict]:
    def analyzer(state: Mapping[str, Any], ctx: NodeContext) -> dict[str, Any]:
        from nodes.perf.analysis import analyze_paths  # heavy imports stay off graph build

        paths = list(((state.get("collected") or {}).get("paths") or {}).values())
        if not paths:
            raise ToolFailure(ErrorKind.VALIDATION, "no data to analyse")
        try:
            result = analyze_paths(paths)
        except PerfDataError as e:
            raise ToolFailure(ErrorKind.VALIDATION, str(e)) from None
        return {"analysis": result.model_dump(mode="json"), "attribution": None}

    return run_stage(Node.ANALYZER, analyzer, ctx)
