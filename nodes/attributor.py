"""The attributor node: each hot spot of the analysis, tied to a line of the user's source.

Reads ``analysis["hotspots"]`` (``nodes.perf.model.Hotspot`` as JSON) and the ``workspace``, and
writes ``attribution``: one entry per hot spot, ``{name, status, file, line, excerpt, reason}``
with status ``found`` / ``system`` / ``not_found`` (see ``nodes.code.attribute`` for the order
of the rules). An empty list means there was nothing to attribute; the key stays None only
when the node did not run. The reporter shows the entries; this node does not answer.
"""

from __future__ import annotations

from typing import Any, Callable

from graph.enums import ErrorKind, Node
from nodes.code.attribute import Attributor
from nodes.code.rg import find_rg
from nodes.framework.context import NodeContext
from nodes.framework.errors import ToolFailure
from nodes.code.sandbox import SandboxError
from nodes.framework.stage import run_stage

NAME = Node.ATTRIBUTOR.value
#: Hot spots attributed per run, in the analysis' order (the hottest first).
MAX_HOTSPOTS = 20


def make(ctx: NodeContext) -> Callable[[dict], dict]:
    def attributor(state: dict, ctx: NodeContext) -> dict:
        return {"attribution": attribute_all(state.get("analysis"), state.get("workspace") or ".", llm=ctx.llm, rg=ctx.rg_path)}

    return run_stage(Node.ATTRIBUTOR, attributor, ctx)


def attribute_all(
    analysis: dict[str, Any] | None, workspace: str, *, llm: Any = None, rg: str | None = None
) -> list[dict[str, Any]]:
    """The attribution list for an analysis. Raises ToolFailure with a typed kind."""
    if not isinstance(analysis, dict):
        raise ToolFailure(ErrorKind.VALIDATION, "there is no analysis to attribute hot spots from")
    hotspots = analysis.get("hotspots") or []
    if not isinstance(hotspots, list):
        raise ToolFailure(ErrorKind.VALIDATION, "analysis.hotspots is not a list")
    if not hotspots:
        return []
    try:
        att = Attributor(workspace, llm=llm, rg=rg)
    except SandboxError as e:
        raise ToolFailure(ErrorKind.VALIDATION, str(e)) from None
    find_rg(rg)
    out = []
    for h in hotspots[:MAX_HOTSPOTS]:
        if not isinstance(h, dict) or not h.get("name"):
            continue
        entry = att.attribute(h)
        for k in ("self_ms", "self_pct", "kind"):
            if k in h:
                entry[k] = h[k]
        out.append(entry)
    return out
