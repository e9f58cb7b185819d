"""The tool families, one module each; every module's ``register(server, ws)`` adds its tools.

Each tool checks its arguments (paths through app/mcp/workspace.py), does its work in a worker
thread, and returns ``app.mcp.results.result(...)``: bounded, structured, the same JSON as its
text. The work itself is a plain function beside it, callable without a server."""

from __future__ import annotations

from typing import Any

from mcp_types import ToolAnnotations

#: A tool that changes nothing (no file written, no program run).
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)
#: A tool that writes PerfScout's own files (reports, checkpoints) or runs what permission allows.
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)


def register_all(server: Any, ws: Any) -> None:
    """Every family's tools, in the order ``tools/list`` shows them."""
    from app.mcp.tools import builds, code, files, turns

    for family in (code, files, turns, builds):
        family.register(server, ws)
