"""Reads the data of this turn (a named file or a collection) and computes its metrics."""

from __future__ import annotations

from typing import Callable

from graph.enums import ErrorKind, Node
from nodes.common import ToolFailure, attempt, failure, stamp
from nodes.context import NodeContext
from nodes.perf.errors import PerfDataError


def make(ctx: NodeContext) -> Callable[[dict], dict]:
    def analyzer(state: dict) -> dict:
        from nodes.perf.analysis import analyze_paths  # heavy imports stay off graph build

        name = Node.ANALYZER.value
        update = stamp(state, name)
        update["attempts"] = attempt(state, name)
        paths = list(((state.get("collected") or {}).get("paths") or {}).values())
        if not paths:
            update.update(failure(name, ToolFailure(ErrorKind.VALIDATION, "no data to analyse")))
            return update
        try:
            result = analyze_paths(paths)
        except PerfDataError as e:
            update.update(failure(name, ToolFailure(ErrorKind.VALIDATION, str(e))))
            return update
        update["analysis"] = result.model_dump(mode="json")
        update["attribution"] = None
        return update

    return analyzer
