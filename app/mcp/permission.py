"""Permission over MCP is never implied: two keys, both needed, for anything to run.

1. the server's: ``--allow-run`` (any program the agent names) or ``--allow PROG`` (only those);
2. the call's: ``allow_run=true`` on ``ask`` / ``resume`` / ``continue``.

A call without the call's yes runs through a PerfScout whose allowlist is empty, so not even an
allowlisted program runs; a call with it on a server that allows nothing is refused in one line.
What the agent may name as *its* program is narrower than in the CLI: a script or executable
inside the workspace. Any other command line belongs in the message, where docs/permission.md
makes it a proposal that a person confirms (app/mcp/confirmation.py).
"""

from __future__ import annotations

import inspect
import shlex
from pathlib import Path
from typing import Any, Callable

from app.mcp.errors import fail
from app.mcp.options import ServerOptions
from app.mcp.workspace import Workspace


def may_run(opts: ServerOptions, allow_run: bool) -> bool:
    """Whether a call runs through the PerfScout that may run programs: the server and the call
    both said yes. A yes on a server that allows nothing is refused (a tool error)."""
    if allow_run and not opts.runs_anything:
        raise fail(f"allow_run=true refused: {opts.describe()}")
    return bool(allow_run and opts.runs_anything)


def ps_for(ws: Workspace, allow_run: bool) -> Any:
    """The PerfScout a call runs through (:func:`may_run` decides which)."""
    return ws.engine.ps(may_run(ws.opts, allow_run))


def graph_allow(opts: ServerOptions, allow_run: bool) -> bool:
    """The graph's allow_run: the per-turn yes, only on a server started with --allow-run (an
    allowlist-only server runs its allowlist through the context, not this flag)."""
    return bool(allow_run and opts.allow_run)


def check_target(ws: Workspace, target: str | None) -> str | None:
    """A target named by the agent (the ``target`` argument, or its answer to "which
    program?") must be a script or program inside the workspace: any other command line belongs
    in the message, where it is a proposal a person confirms."""
    if target is None:
        return None
    try:
        argv = shlex.split(target)
    except ValueError as e:
        raise fail(f"target: cannot split {target!r}: {e}") from None
    if not argv:
        raise fail("target: empty")
    first = argv[0]
    script = argv[1] if Path(first).name.startswith("python") and len(argv) > 1 else first
    real = ws.inside(script)
    if not real.is_file():
        raise fail(f"target: {script}: no such file in the workspace {ws.root}")
    return target


def _accepts(fn: Callable[..., Any], name: str) -> bool:
    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def fresh_permission(ps: Any, call: Callable[..., Any], thread: str, allow_run: bool, opts: ServerOptions) -> dict[str, Any]:
    """The keyword that gives a resumed or continued call its own permission. An API whose
    ``resume`` / ``continue_run`` take no ``allow_run`` keeps the yes of the turn that started
    the thread; a call without allow_run=true must not inherit it, so it is refused instead."""
    if _accepts(call, "allow_run"):
        return {"allow_run": graph_allow(opts, allow_run)}
    earlier = (ps.graph.get_state(ps.config(thread)).values or {}).get("allow_run")
    if earlier and not allow_run:
        raise fail(
            f"thread {thread} was started with allow_run=true and this PerfScout would keep that yes "
            "when it goes on: say allow_run=true again to continue it"
        )
    return {}
