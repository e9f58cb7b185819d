"""The wiring: the MCP server object, its one-line errors, the tool families, ``serve``.

Building the server registers the tools (their JSON schemas come from the signatures in
app/mcp/tools/) and imports nothing of the graph: the engine builds its PerfScouts on the first
call that needs one."""

from __future__ import annotations

import logging
import os
import sys
from contextlib import contextmanager
from typing import Any, Iterator

from pydantic import ValidationError

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver import server as sdk_server
from mcp.server.mcpserver.exceptions import ToolError

from app.mcp.errors import one_line, validation_line
from app.mcp.options import ServerOptions
from app.mcp.tools import register_all
from app.mcp.workspace import Workspace

log = logging.getLogger("perfscout.mcp")


class PerfScoutMCP(MCPServer):
    """MCPServer whose tool errors are always one line (argument errors included)."""

    workspace: Workspace

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as e:
            cause = e.__cause__
            if isinstance(cause, ValidationError):
                raise ToolError(one_line(validation_line(name, cause))) from None
            if cause is not None and not isinstance(cause, ToolError):
                # An unexpected failure: one line to the agent, the traceback only with
                # PERFSCOUT_DEBUG (and only on stderr).
                log.warning("tool %s failed: %s: %s", name, type(cause).__name__, one_line(str(cause), 300))
                if os.environ.get("PERFSCOUT_DEBUG"):
                    log.exception("tool %s", name, exc_info=cause)
                raise ToolError(one_line(f"{name}: {type(cause).__name__}: {cause}")) from None
            raise ToolError(one_line(str(e))) from None


@contextmanager
def _sdk_logging_left_alone() -> Iterator[None]:
    """Construct an MCPServer without its ``configure_logging`` call. That call imports rich
    (~0.1 s of CPU, a tenth of the time to the first ``tools/list`` reply: issue 25) to hand a
    RichHandler to ``logging.basicConfig`` — which does nothing once logging is configured, and
    :func:`serve` configures it first (one-line messages on stderr)."""
    configure = sdk_server.configure_logging
    sdk_server.configure_logging = lambda *a, **k: None
    try:
        yield
    finally:
        sdk_server.configure_logging = configure


def build_server(opts: ServerOptions) -> PerfScoutMCP:
    """The MCP server for ``opts`` (tools and resources registered, nothing started)."""
    ws = Workspace.open(opts)
    with _sdk_logging_left_alone():
        server = _new_server(ws)
    server.workspace = ws
    register_all(server, ws)
    return server


def _new_server(ws: Workspace) -> PerfScoutMCP:
    return PerfScoutMCP(
        "perfscout",
        title="PerfScout",
        instructions=(
            "Performance analysis of traces and profiles (Perfetto, Chrome, py-spy, adb) inside "
            f"the workspace {ws.root}. {ws.opts.describe()}. A command proposed in a message is only "
            "run after a person confirms it in the client."
        ),
        log_level="WARNING",
    )


def serve(opts: ServerOptions) -> None:
    """Run the server on stdin/stdout until the client closes it."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="perfscout mcp: %(message)s")
    server = build_server(opts)
    print(f"perfscout mcp: serving the workspace {server.workspace.root} on stdio; {server.workspace.opts.describe()}", file=sys.stderr)
    try:
        server.run("stdio")
    finally:
        server.workspace.engine.close()
