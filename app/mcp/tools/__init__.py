"""The tool families, one module each; every module's ``register(server, ws)`` adds its tools.

Each tool checks its arguments (paths through app/mcp/workspace.py), does its work in a worker
thread, and returns ``app.mcp.results.result(...)``: bounded, structured, the same JSON as its
text. The work itself is a plain function beside it, callable without a server. The two helpers
here are that shape, written once: :func:`tool` registers a coroutine under its own name with its
docstring as the description, :func:`respond` runs the work and returns the bounded result."""

from __future__ import annotations

from typing import Any, Callable

from mcp_types import CallToolResult, ToolAnnotations

from app.mcp.cancellation import in_thread
from app.mcp.progress import Progress
from app.mcp.results import result

#: A tool that changes nothing (no file written, no program run).
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)
#: A tool that writes PerfScout's own files (reports, checkpoints) or runs what permission allows.
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)


def tool(server: Any, annotations: ToolAnnotations) -> Callable[[Any], Any]:
    """Register the decorated coroutine as a tool named as the function (a trailing ``_`` dropped:
    ``continue_`` is ``continue``, a Python keyword), its docstring on one line the description
    the agent reads; the JSON schema comes from its signature (the SDK)."""

    def register(fn: Any) -> Any:
        description = " ".join((fn.__doc__ or "").split())
        server.add_tool(fn, name=fn.__name__.rstrip("_"), description=description, annotations=annotations)
        return fn

    return register


async def respond(
    work: Callable[[], dict[str, Any]], ctx: Any = None, *, before: str | None = None, after: str | None = None
) -> CallToolResult:
    """``work()`` — a payload function of the tool's module — in a worker thread, as the bounded
    result; with ``ctx``, ``before`` and ``after`` go out as progress lines around it."""
    progress = Progress(ctx) if ctx is not None else None
    if progress is not None and before:
        await progress.send(before)
    payload = await in_thread(work)
    if progress is not None and after:
        await progress.send(after)
    return result(payload)


def register_all(server: Any, ws: Any) -> None:
    """Every family's tools, in the order ``tools/list`` shows them."""
    from app.mcp.tools import builds, code, files, turns

    for family in (code, files, turns, builds):
        family.register(server, ws)
