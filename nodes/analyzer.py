"""Reads the data of this turn (a named file or a collection) and computes its metrics.

Two sides to compare (``collected.kind == "compare"``, set by perf_analyzer) are loaded as
runs and compared (nodes/compare/): ``comparison`` holds the table, ``analysis`` is side B's
(the "after", which the attributor and the report describe) and ``previous_analysis`` side A's.
Every new analysis moves the thread's last one to ``previous_analysis``, so a follow-up
"is it better than the previous run?" compares the last two.
"""

from __future__ import annotations

from typing import Callable

from graph.enums import ErrorKind, Node
from nodes.common import ToolFailure, attempt, failure, stamp
from nodes.context import NodeContext
from nodes.perf.errors import PerfDataError


def _compare(update: dict, name: str, paths: dict, labels: dict | None = None) -> dict:
    from nodes.compare.diff import MismatchError, compare_sides
    from nodes.compare.sides import SideError, load_side

    try:
        a, b = load_side(paths["a"]), load_side(paths["b"])
        a.spec, b.spec = (labels or {}).get("a") or a.spec, (labels or {}).get("b") or b.spec
        cmp = compare_sides(a, b)
    except (SideError, MismatchError) as e:
        update.update(failure(name, ToolFailure(ErrorKind.VALIDATION, str(e))))
        return update
    update["analysis"] = b.runs[0].analysis
    update["previous_analysis"] = a.runs[0].analysis
    update["comparison"] = cmp.to_dict()
    update["attribution"] = None
    return update


def make(ctx: NodeContext) -> Callable[[dict], dict]:
    def analyzer(state: dict) -> dict:
        from nodes.perf.analysis import analyze_paths  # heavy imports stay off graph build

        name = Node.ANALYZER.value
        update = stamp(state, name)
        update["attempts"] = attempt(state, name)
        collected = state.get("collected") or {}
        if collected.get("kind") == "compare" and {"a", "b"} <= set(collected.get("paths") or {}):
            return _compare(update, name, collected["paths"], collected.get("labels"))
        paths = list((collected.get("paths") or {}).values())
        if not paths:
            update.update(failure(name, ToolFailure(ErrorKind.VALIDATION, "no data to analyse")))
            return update
        try:
            result = analyze_paths(paths)
        except PerfDataError as e:
            update.update(failure(name, ToolFailure(ErrorKind.VALIDATION, str(e))))
            return update
        if state.get("analysis"):
            from nodes.compare.sides import slim

            update["previous_analysis"] = slim(state["analysis"])
        update["analysis"] = result.model_dump(mode="json")
        update["comparison"] = None
        update["attribution"] = None
        return update

    return analyzer
