"""Every tool error is one line: the SDK sends a :class:`ToolError` as an ``is_error`` result."""

from __future__ import annotations

from pydantic import ValidationError

from mcp.server.mcpserver.exceptions import ToolError


def one_line(text: str, limit: int = 500) -> str:
    """``text`` on one line (whitespace runs become one space), at most ``limit`` characters."""
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def fail(message: str) -> ToolError:
    """A tool error in one line (raise it: the SDK sends it as an ``is_error`` result)."""
    return ToolError(one_line(message))


def validation_line(tool: str, err: ValidationError) -> str:
    """Bad arguments as one line naming each field (at most four) and what is wrong with it."""
    parts = []
    for e in err.errors()[:4]:
        where = ".".join(str(p) for p in e.get("loc", ())) or "arguments"
        parts.append(f"{where}: {e.get('msg', 'invalid')}")
    return f"{tool}: bad arguments: " + "; ".join(parts)
