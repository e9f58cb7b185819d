"""``route`` (classify a request) and ``explore`` (definitions and matches in the workspace):
the tools that read the request and the code, and run nothing."""

from __future__ import annotations

from typing import Annotated, Any

from mcp_types import CallToolResult
from pydantic import Field

from app.mcp.errors import fail
from app.mcp.tools import READ_ONLY, respond, tool
from app.mcp.workspace import Workspace


def route_payload(ws: Workspace, message: str) -> dict[str, Any]:
    """The router's label for ``message``, as ``perfscout route`` gives it."""
    from app.models import make_router_model
    from app.route_cmd import route_one

    info = route_one(message, make_router_model(ws.settings()))
    if "error" in info:
        raise fail(f"route: {info['error']}")
    keep = {k: info.get(k) for k in ("route", "tier", "confidence", "reason", "latency_ms") if k in info}
    return {"tool": "route", **keep}


def explore_payload(ws: Workspace, query: str) -> dict[str, Any]:
    """The explorer route's answer for ``query``, searched inside the workspace only."""
    from app.models import make_chat_model
    from nodes.explorer import explore as run_explore
    from nodes.framework.common import ToolFailure

    llm = make_chat_model(ws.settings())
    try:
        exploration, answer = run_explore(query, str(ws.root), llm=llm)
    except ToolFailure as e:
        raise fail(f"explore: {e}") from None
    return {"tool": "explore", "answer": answer, "exploration": exploration}


def register(server: Any, ws: Workspace) -> None:
    @tool(server, READ_ONLY)
    async def route(
        message: Annotated[str, Field(description="The request, in one sentence (中文 or English)", min_length=1, max_length=10_000)],
    ) -> CallToolResult:
        """Classify a request: the route (one of six labels), tier, confidence and reason. Runs nothing."""
        return await respond(lambda: route_payload(ws, message))

    @tool(server, READ_ONLY)
    async def explore(
        query: Annotated[str, Field(description="What to look for: a name, a phrase, 'where is X defined'", min_length=1, max_length=2_000)],
    ) -> CallToolResult:
        """Find definitions and matches in the workspace's code (ripgrep inside the workspace sandbox)."""
        return await respond(lambda: explore_payload(ws, query))
