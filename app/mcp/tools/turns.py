"""``ask``, ``resume``, ``continue``: graph turns, as ``perfscout ask`` / ``resume`` run them.

Each runs in a worker thread under app/mcp/cancellation.py (progress forwarded, cancellable);
each takes its own ``allow_run`` (app/mcp/permission.py) and ends through
app/mcp/confirmation.py, which sends a pending ``confirm_run`` question to the person."""

from __future__ import annotations

import shlex
from typing import Annotated, Any

import anyio
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult, InputRequiredResult
from pydantic import Field

from app.mcp.cancellation import drive
from app.mcp.confirmation import confirmed_round, settle
from app.mcp.errors import fail
from app.mcp.permission import check_target, fresh_permission, graph_allow, ps_for
from app.mcp.results import CONFIRM_KEY, result, turn_payload, turn_status
from app.mcp.tools import WRITES, tool
from app.mcp.workspace import Workspace, check_thread, known

Reply = CallToolResult | InputRequiredResult


async def ask_turn(ws: Workspace, ctx: Any, message: str, thread: str | None, target: str | None, allow_run: bool) -> Reply:
    again = await confirmed_round(ws, "ask", ctx)
    if again is not None:
        return again
    ps = ps_for(ws, allow_run)
    tgt = check_target(ws, target)
    tid = check_thread(thread) if thread is not None else None
    allow = graph_allow(ws.opts, allow_run)
    r = await drive(ctx, lambda emit: ps.ask(message, thread_id=tid, allow_run=allow, target=tgt, on_event=emit))
    return await settle(ws, "ask", ctx, ps, r, allow_run)


async def on_thread(ws: Workspace, thread: str, allow_run: bool) -> tuple[Any, Any]:
    """The PerfScout this call runs through (app/mcp/permission.py) and ``thread``'s current
    result; a tool error for a malformed or unknown thread id."""
    ps = ps_for(ws, allow_run)
    check_thread(thread)
    return ps, await anyio.to_thread.run_sync(lambda: known(ps, thread))


async def resume_turn(ws: Workspace, ctx: Any, thread: str, answer: str, allow_run: bool) -> Reply:
    again = await confirmed_round(ws, "resume", ctx)
    if again is not None:
        return again
    ps, current = await on_thread(ws, thread, allow_run)
    q = current.question or {}
    if current.status != "needs_input":
        raise fail(f"thread {thread} has no pending question")
    if q.get("field") == CONFIRM_KEY:
        raise fail(
            f"thread {thread} waits for a person to confirm running {shlex.join(map(str, q.get('argv') or []))}: "
            f"an answer from the agent does not count; call continue({thread!r}) to ask the person through the client"
        )
    if q.get("field") == "target":
        # The graph takes an answer to "which program?" as the user's own choice; over MCP the
        # agent answers, so it gets what the target argument gets: a program in the workspace.
        check_target(ws, answer)
    kwargs = fresh_permission(ps, ps.resume, thread, allow_run, ws.opts)
    r = await drive(ctx, lambda emit: ps.resume(thread, answer, on_event=emit, **kwargs))
    return await settle(ws, "resume", ctx, ps, r, allow_run)


async def continue_turn(ws: Workspace, ctx: Any, thread: str, allow_run: bool) -> Reply:
    again = await confirmed_round(ws, "continue", ctx)
    if again is not None:
        return again
    ps, current = await on_thread(ws, thread, allow_run)
    q = current.question or {}
    if current.status == "needs_input":
        if q.get("field") == CONFIRM_KEY:
            return await settle(ws, "continue", ctx, ps, current, allow_run)
        raise fail(f"thread {thread} asks: {q.get('prompt')} — answer it with resume")
    if turn_status(ps, current) != "incomplete":
        return result(turn_payload("continue", ps, current, ws.opts) | {"note": "nothing to continue: the turn had ended"})
    call = ps.continue_run
    kwargs = fresh_permission(ps, call, thread, allow_run, ws.opts)
    r = await drive(ctx, lambda emit: call(thread, on_event=emit, **kwargs))
    return await settle(ws, "continue", ctx, ps, r, allow_run)


def register(server: Any, ws: Workspace) -> None:
    @tool(server, WRITES)
    async def ask(
        ctx: Context,
        message: Annotated[str, Field(description="What you want, in one sentence", min_length=1, max_length=10_000)],
        thread: Annotated[str | None, Field(description="Continue this conversation thread")] = None,
        target: Annotated[
            str | None, Field(description="The program to run: a script or executable inside the workspace, with arguments")
        ] = None,
        allow_run: Annotated[bool, Field(description="This turn may run the target (the server must allow it too)")] = False,
    ) -> CallToolResult | InputRequiredResult:
        """One full PerfScout turn, as `perfscout ask`: route, collect or load data, analyse, tie
        hot spots to source, report. Running a program needs allow_run=true on a server that
        allows it; a command proposed in the message is confirmed by a person. A question from
        PerfScout comes back as status needs_input: answer with resume."""
        return await ask_turn(ws, ctx, message, thread, target, allow_run)

    @tool(server, WRITES)
    async def resume(
        ctx: Context,
        thread: Annotated[str, Field(description="The thread that asked", min_length=1)],
        answer: Annotated[str, Field(description="The answer to its question", min_length=1, max_length=10_000)],
        allow_run: Annotated[bool, Field(description="The resumed turn may run a program (the server must allow it too)")] = False,
    ) -> CallToolResult | InputRequiredResult:
        """Answer PerfScout's pending question on a thread (e.g. which program or file) and go on.
        A command to confirm is never answered here: the person confirms it in the client."""
        return await resume_turn(ws, ctx, thread, answer, allow_run)

    @tool(server, WRITES)
    async def continue_(
        ctx: Context,
        thread: Annotated[str, Field(description="The thread whose turn stopped (cancelled, crashed) or waits for a confirmation", min_length=1)],
        allow_run: Annotated[bool, Field(description="The continued turn may run a program (the server must allow it too)")] = False,
    ) -> CallToolResult | InputRequiredResult:
        """Continue a thread's turn that stopped before it finished (a cancelled or crashed call),
        or ask the person again to confirm a proposed command."""
        return await continue_turn(ws, ctx, thread, allow_run)
