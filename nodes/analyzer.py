"""Reads the data of this turn (a named file or a collection) and computes its metrics.

Two sides to compare (``collected.kind == "compare"``, set by data_locator or by the startup
node's two-program launches) are loaded as runs and compared (nodes/compare/): ``comparison``
holds the table, ``analysis`` is side B's (the "after", which the attributor and the report
describe) and ``previous_analysis`` side A's. Every new analysis moves the thread's last one to
``previous_analysis``, so a follow-up "is it better than the previous run?" compares the last two.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from graph.enums import CollectionKind, ErrorKind, Node
from nodes.framework.context import NodeContext
from nodes.framework.errors import ToolFailure
from nodes.perf.errors import PerfDataError
from nodes.framework.stage import run_stage


def _compare(paths: Mapping[str, str], labels: Mapping[str, str] | None = None) -> dict[str, Any]:
    from nodes.compare.diff import MismatchError, compare_sides
    from nodes.compare.sides import SideError, load_side

    try:
        a, b = load_side(paths["a"]), load_side(paths["b"])
        a.spec, b.spec = (labels or {}).get("a") or a.spec, (labels or {}).get("b") or b.spec
        cmp = compare_sides(a, b)
    except (SideError, MismatchError) as e:
        raise ToolFailure(ErrorKind.VALIDATION, str(e)) from None
    return {"analysis": b.runs[0].analysis, "previous_analysis": a.runs[0].analysis,
            "comparison": cmp.to_dict(), "attribution": None}


def make(ctx: NodeContext) -> Callable[[dict], dict]:
    def analyzer(state: Mapping[str, Any], ctx: NodeContext) -> dict[str, Any]:
        from nodes.perf.analysis import analyze_paths, module_search_path  # heavy imports stay off graph build

        collected = state.get("collected") or {}
        if collected.get("kind") == CollectionKind.COMPARE.value and {"a", "b"} <= set(collected.get("paths") or {}):
            return _compare(collected["paths"], (collected.get("summary") or {}).get("labels"))
        paths = list((collected.get("paths") or {}).values())
        if not paths:
            raise ToolFailure(ErrorKind.VALIDATION, "no data to analyse")
        try:
            root = state.get("workspace") or "."
            result = analyze_paths(paths, root=root, search_path=module_search_path(root),
                                   sections=state.get("sections") or ())  # named in the message
        except PerfDataError as e:
            raise ToolFailure(ErrorKind.VALIDATION, str(e)) from None
        update: dict[str, Any] = {"analysis": result.model_dump(mode="json"), "attribution": None, "comparison": None}
        if state.get("analysis"):
            from nodes.compare.sides import slim

            update["previous_analysis"] = slim(dict(state["analysis"]))
        return update

    return run_stage(Node.ANALYZER, analyzer, ctx)
