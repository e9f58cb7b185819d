"""A proposed command is confirmed by a person, never by the agent.

When a turn asks to confirm a command found in the message (the ``confirm_run`` question of
docs/interfaces.md), the server asks the human through MCP elicitation:

* on a 2026-07-28 connection the question travels as an ``input_required`` result and the
  person's answer comes back in the client's retry of the same call (the SDK seals the
  ``request_state`` the server sends, so an agent cannot forge a confirmation);
* on a handshake-era connection it is an ``elicitation/create`` request in the middle of the call;
* a client without elicitation gets ``status: refused`` — nobody can be asked, nothing ran, the
  thread keeps the question (app/mcp/tools/turns.py refuses ``resume(thread, "yes")`` on it too).
"""

from __future__ import annotations

import json
import shlex
from typing import Any

import anyio
from mcp_types import CallToolResult, ElicitRequest, ElicitRequestFormParams, ElicitResult, InputRequiredResult
from mcp_types.version import is_version_at_least
from pydantic import BaseModel, Field, ValidationError

from mcp.server.elicitation import render_elicitation_schema

from app.mcp.cancellation import drive
from app.mcp.errors import fail
from app.mcp.permission import fresh_permission, ps_for
from app.mcp.results import CONFIRM_KEY, result, turn_payload
from app.mcp.workspace import Workspace, known

#: First protocol revision that carries elicitation inside an ``input_required`` result rather
#: than as a server-to-client request in the middle of a call (mcp/server/mcpserver/resolve.py).
INPUT_REQUIRED_VERSION = "2026-07-28"


class RunConfirmation(BaseModel):
    """What the person is asked when a message proposes a command."""

    run: bool = Field(description="Run exactly this command line under the profiler")


def confirm_message(q: dict[str, Any], root: Any) -> str:
    """The form's text: the exact command line, the workspace, the paths outside it."""
    argv = [str(a) for a in q.get("argv") or []]
    lines = [
        "PerfScout was asked (by the coding agent) to run and profile this command:",
        "    " + shlex.join(argv),
        f"in the workspace {root}.",
    ]
    if q.get("outside_workspace"):
        lines.append("It names paths outside the workspace: " + ", ".join(map(str, q["outside_workspace"])))
    lines.append("Run it?")
    return "\n".join(lines)


def can_elicit(ctx: Any) -> bool:
    caps = ctx.client_capabilities
    return caps is not None and caps.elicitation is not None


def in_result(ctx: Any) -> bool:
    """Whether the connection asks through an ``input_required`` result (2026-07-28 and later)."""
    v = ctx.protocol_version
    return bool(v) and is_version_at_least(v, INPUT_REQUIRED_VERSION)


async def settle(ws: Workspace, tool: str, ctx: Any, ps: Any, r: Any, allow_run: bool) -> CallToolResult | InputRequiredResult:
    """Finish a turn: a pending confirm_run question goes to the person, never to the agent."""
    q = r.question or {}
    if r.status != "needs_input" or q.get("field") != CONFIRM_KEY:
        return result(turn_payload(tool, ps, r, ws.opts))
    if not can_elicit(ctx):
        payload = turn_payload(tool, ps, r, ws.opts)
        payload["status"] = "refused"
        payload["refused"] = (
            f"the message proposes running {shlex.join(map(str, q.get('argv') or []))}; only a person "
            "may confirm that, and this client does not support MCP elicitation, so nobody can be "
            "asked. Nothing ran; the thread keeps the question."
        )
        return result(payload)
    if in_result(ctx):
        state = json.dumps({"tool": tool, "thread": r.thread_id, "argv": q.get("argv") or [], "allow_run": allow_run})
        return InputRequiredResult(
            input_requests={
                CONFIRM_KEY: ElicitRequest(
                    params=ElicitRequestFormParams(
                        message=confirm_message(q, ws.root), requested_schema=render_elicitation_schema(RunConfirmation)
                    )
                )
            },
            request_state=state,
        )
    outcome = await ctx.elicit(confirm_message(q, ws.root), RunConfirmation)
    yes = outcome.action == "accept" and bool(getattr(outcome, "data", None) and outcome.data.run)
    return await answer(ws, tool, ctx, r.thread_id, q.get("argv") or [], yes, allow_run)


async def answer(
    ws: Workspace, tool: str, ctx: Any, thread: str, argv: list[Any], yes: bool, allow_run: bool
) -> CallToolResult | InputRequiredResult:
    """Hand the person's yes or no to the thread — only if it still asks about this very argv."""
    ps = ps_for(ws, allow_run)
    current = await anyio.to_thread.run_sync(lambda: known(ps, thread))
    cq = current.question or {}
    if current.status != "needs_input" or cq.get("field") != CONFIRM_KEY or list(cq.get("argv") or []) != list(argv):
        raise fail(f"thread {thread}: the command to confirm changed or was answered meanwhile; nothing ran")
    kwargs = fresh_permission(ps, ps.resume, thread, allow_run, ws.opts)
    r = await drive(ctx, lambda emit: ps.resume(thread, "yes" if yes else "no", on_event=emit, **kwargs))
    return await settle(ws, tool, ctx, ps, r, allow_run)


async def confirmed_round(ws: Workspace, tool: str, ctx: Any) -> CallToolResult | InputRequiredResult | None:
    """The retry of an ``input_required`` confirmation (2026-07-28): the person's answer; None
    when this call is no such retry."""
    if not ctx.request_state:
        return None
    try:
        state = json.loads(ctx.request_state)
        thread, argv, allow_run = state["thread"], list(state["argv"]), bool(state["allow_run"])
    except (ValueError, KeyError, TypeError):
        raise fail("request_state: not one this server wrote") from None
    response = (ctx.input_responses or {}).get(CONFIRM_KEY)
    yes = False
    if isinstance(response, ElicitResult) and response.action == "accept":
        try:
            yes = RunConfirmation.model_validate(response.content or {}).run
        except ValidationError:
            raise fail("the confirmation answer does not match its form; nothing ran") from None
    return await answer(ws, tool, ctx, thread, argv, yes, allow_run)
