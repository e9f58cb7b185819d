"""``perfscout mcp``: PerfScout as a stdio MCP server for coding agents.

Built on the official ``mcp`` Python SDK (2.x: ``mcp.server.mcpserver.MCPServer``, the class
that was called FastMCP in 1.x). Tools: ``route``, ``analyze``, ``ask``, ``resume``,
``continue``, ``explore``, ``report``; reports are also resources (``perfscout://report/THREAD``).
docs/mcp.md is the user's guide; the rules this module keeps are:

* **Permission is never implied.** The server's ``--allow-run`` (anything) or ``--allow PROG``
  (an allowlist) says what may run at all; a call's ``allow_run=true`` is the per-turn yes. Both
  are needed: a call without it runs through a PerfScout whose allowlist is empty, so not even
  an allowlisted program runs; a call with it on a server that allows nothing is refused.
* **A proposed command is confirmed by a person, never by the agent.** When the graph asks to
  confirm a command found in the message (the ``confirm_run`` question of docs/interfaces.md),
  the server asks the human through MCP elicitation — mid-call on handshake-era connections
  (``elicitation/create``), as an ``input_required`` result on 2026-07-28 connections, whose
  answer comes back in the retry (the SDK seals ``request_state``, so an agent cannot forge
  it). A client without elicitation gets a refusal; ``resume(thread, "yes")`` on such a
  question is refused too.
* **Every path lies inside ``--workspace``** (nodes/code/sandbox.py resolves it, symlinks included).
* **Long tools report progress** (the node that runs, the collection countdown) and **a
  cancelled call stops the whole process tree as Ctrl-C does**: the turn runs in a worker
  thread under a ``nodes.framework.context.CancelRequest``; cancelling sets it and the node stops at its
  next safe point with a KeyboardInterrupt, leaving the thread before that node's checkpoint —
  incomplete, unlocked, resumable with ``continue``.
* **Every error is one line** (``is_error`` result); stdout carries only protocol messages (the
  SDK points fd 1 at stderr while serving), logging goes to stderr.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import os
import shlex
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Callable, Iterator, Literal

import anyio
from mcp_types import (
    CallToolResult,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    InputRequiredResult,
    TextContent,
    ToolAnnotations,
)
from mcp_types.version import is_version_at_least
from pydantic import BaseModel, Field, ValidationError

from mcp.server.elicitation import render_elicitation_schema
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from app.mcp_bound import MAX_RESULT_CHARS, bound
from graph.enums import lens_named

log = logging.getLogger("perfscout.mcp")

#: First protocol revision that carries elicitation inside an ``input_required`` result rather
#: than as a server-to-client request in the middle of a call (mcp/server/mcpserver/resolve.py).
INPUT_REQUIRED_VERSION = "2026-07-28"
#: The key of the confirmation question in ``input_requests`` / ``input_responses``.
CONFIRM_KEY = "confirm_run"
#: Seconds a cancelled turn gets to stop its process tree before the server stops waiting.
STOP_WAIT_S = 30.0
#: Seconds between countdown notifications while a collection runs.
TICK_S = 1.0
#: Items of each list kept before the size bound applies (results are sorted, first = worst).
TOP_FINDINGS, TOP_HOTSPOTS = 12, 15
#: The lens of the question (graph.enums.Lens), and the names ``focus`` had before lenses
#: (web → page, all → overview, hotspots → cpu: graph.enums.LENS_ALIASES), still accepted.
Focus = Literal["overview", "startup", "frames", "scroll", "cpu", "memory", "power", "blocking", "page",
                "hotspots", "web", "all"]
#: The sections each lens returns (the old focus values trimmed to these).
_LENS_SECTIONS = {"overview": {"startup", "frames", "hotspots", "web"}, "startup": {"startup"}, "frames": {"frames"},
                  "scroll": {"frames"}, "cpu": {"hotspots"}, "page": {"web"}, "memory": set(), "power": set(),
                  "blocking": set()}


# --- configuration ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ServerOptions:
    """What the person who started the server allowed. Fixed for the server's life."""

    workspace: Path
    #: ``--allow-run``: any program may run (a call must still say allow_run=true).
    allow_run: bool = False
    #: ``--allow PROG`` (and PERFSCOUT_ALLOWLIST): only these may run, on a call's allow_run=true.
    allowlist: tuple[str, ...] = field(default_factory=tuple)
    offline: bool = False

    @property
    def runs_anything(self) -> bool:
        return self.allow_run or bool(self.allowlist)

    def describe(self) -> str:
        if self.allow_run:
            return "this server was started with --allow-run"
        if self.allowlist:
            return f"this server allows only {', '.join(self.allowlist)} (--allow)"
        return "this server was started without --allow-run or --allow, so it runs no program"


def _one_line(text: str, limit: int = 500) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def fail(message: str) -> ToolError:
    """A tool error in one line (the SDK sends it as an ``is_error`` result)."""
    return ToolError(_one_line(message))


def _validation_line(tool: str, err: ValidationError) -> str:
    parts = []
    for e in err.errors()[:4]:
        where = ".".join(str(p) for p in e.get("loc", ())) or "arguments"
        parts.append(f"{where}: {e.get('msg', 'invalid')}")
    return f"{tool}: bad arguments: " + "; ".join(parts)


class PerfScoutMCP(MCPServer):
    """MCPServer whose tool errors are always one line (argument errors included)."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as e:
            cause = e.__cause__
            if isinstance(cause, ValidationError):
                raise ToolError(_one_line(_validation_line(name, cause))) from None
            if cause is not None and not isinstance(cause, ToolError):
                # An unexpected failure: one line to the agent, the traceback only with
                # PERFSCOUT_DEBUG (and only on stderr).
                log.warning("tool %s failed: %s: %s", name, type(cause).__name__, _one_line(str(cause), 300))
                if os.environ.get("PERFSCOUT_DEBUG"):
                    log.exception("tool %s", name, exc_info=cause)
                raise ToolError(_one_line(f"{name}: {type(cause).__name__}: {cause}")) from None
            raise ToolError(_one_line(str(e))) from None


# --- the engine: PerfScout instances and turns in worker threads -------------------------------


class RunConfirmation(BaseModel):
    """What the person is asked when a message proposes a command."""

    run: bool = Field(description="Run exactly this command line under the profiler")


class Engine:
    """Two PerfScouts on one checkpoint store: one that may run what the server allows, one that
    runs nothing (its allowlist is empty) for calls without allow_run=true."""

    def __init__(self, opts: ServerOptions):
        self.opts = opts
        self._lock = threading.Lock()
        self._ps: dict[bool, Any] = {}

    def settings(self, may_run: bool) -> Any:
        from app.settings import Settings

        overrides: dict[str, Any] = {"offline": self.opts.offline or None}
        if not os.environ.get("PERFSCOUT_HOME"):
            overrides["state_dir"] = self.opts.workspace / ".perfscout"
        overrides["allowlist"] = tuple(self.opts.allowlist) if may_run else ()
        return Settings.from_env(**overrides)

    def ps(self, may_run: bool) -> Any:
        """The PerfScout for a call; ``may_run`` only when the server and the call both say yes."""
        from app.api import PerfScout

        with self._lock:
            if may_run not in self._ps:
                self._ps[may_run] = PerfScout(self.settings(may_run), workspace=self.opts.workspace)
            return self._ps[may_run]

    def close(self) -> None:
        with self._lock:
            for ps in self._ps.values():
                ps.close()
            self._ps.clear()


def _accepts(fn: Callable[..., Any], name: str) -> bool:
    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def _status(ps: Any, r: Any) -> str:
    """The turn's status; ``incomplete`` when it stopped before a node (cancelled, crashed)."""
    if r.status in ("done", "skipped"):
        try:
            snap = ps.graph.get_state(ps.config(r.thread_id))
        except Exception:
            return r.status
        if snap.next:
            return "incomplete"
    return r.status


def _last_error(ps: Any, thread: str) -> dict[str, Any]:
    try:
        values = ps.graph.get_state(ps.config(thread)).values or {}
    except Exception:
        return {}
    err = values.get("last_error")
    return dict(err) if isinstance(err, dict) else {}


class Progress:
    """Turns StreamEvents into MCP progress notifications.

    ``progress`` is the seconds since the call began (so it always increases, as the spec
    requires); ``total`` is set while a collection counts down to its limit, so a client can
    draw how far it is; ``message`` says which node runs and what it does."""

    def __init__(self, ctx: Context):
        self.ctx = ctx
        self.t0 = time.monotonic()
        self.last = -1.0
        self.node: str | None = None
        self.deadline: tuple[float, float, str] | None = None  # (ends at, total, label)

    async def send(self, message: str, total: float | None = None) -> None:
        p = round(time.monotonic() - self.t0, 3)
        if p <= self.last:
            p = self.last + 0.001
        self.last = p
        try:
            await self.ctx.report_progress(p, total, message)
        except Exception as e:  # a client that went away must not fail the turn
            log.debug("progress not sent: %s", e)

    async def event(self, ev: Any) -> None:
        if ev.kind == "node_start":
            self.node, self.deadline = ev.node, None
            await self.send(f"{ev.node}: running")
        elif ev.kind == "node_end":
            self.deadline = None
            await self.send(f"{ev.node}: done")
        elif ev.kind == "interrupt":
            self.deadline = None
            await self.send(f"{ev.node}: asks a question")
        elif ev.kind == "progress":
            d = ev.data or {}
            stage = d.get("progress") or self.node or "working"
            label = f"{stage}: {d.get('message')}" if d.get("message") else str(stage)
            if d.get("deadline_s") is not None:
                secs = float(d["deadline_s"])
                total = round(time.monotonic() - self.t0 + secs, 3)
                self.deadline = (time.monotonic() + secs, total, label)
                await self.send(f"{label} — at most {secs:.0f} s", total)
            elif d.get("total"):
                unit = d.get("unit") or ""
                await self.send(f"{label} — {d.get('done') or 0:.0f} / {float(d['total']):.0f} {unit}".rstrip())
            else:
                await self.send(label)

    async def tick(self) -> None:
        if self.deadline is None:
            return
        ends, total, label = self.deadline
        left = ends - time.monotonic()
        if left <= 0:
            self.deadline = None
            await self.send(f"{label} — at its time limit, stopping")
            return
        await self.send(f"{label} — {left:.0f} s left", total)


async def drive(ctx: Context, run: Callable[[Callable[[Any], None]], Any]) -> Any:
    """Run one turn in a worker thread — ``run(on_event)`` calls the API (``ask``, ``resume``,
    ``continue_run`` with ``on_event``) and returns its AskResult — forwarding its progress.

    Cancellation (the client's ``notifications/cancelled``, or the server shutting down) asks the
    turn to stop as Ctrl-C would and waits, shielded, until its process tree is gone."""
    from nodes.framework.context import CancelRequest, cancellable

    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
    request = CancelRequest()

    def put(item: tuple[str, Any]) -> None:
        try:
            loop.call_soon_threadsafe(queue.put_nowait, item)
        except RuntimeError:  # the event loop is gone (server shut down)
            pass

    def work() -> None:
        try:
            with cancellable(request):
                value = run(lambda ev: put(("event", ev)))
        except BaseException as e:  # handed to the caller
            put(("error", e))
        else:
            put(("done", value))

    worker = threading.Thread(target=work, name="perfscout-mcp-turn", daemon=True)
    worker.start()
    progress = Progress(ctx)
    try:
        while True:
            try:
                tag, value = await asyncio.wait_for(queue.get(), timeout=TICK_S)
            except asyncio.TimeoutError:
                await progress.tick()
                continue
            if tag == "event":
                if value.kind != "result":
                    await progress.event(value)
            elif tag == "error":
                raise value
            else:
                return value
    except BaseException:
        if worker.is_alive():
            request.cancel()
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(worker.join, STOP_WAIT_S)
            if worker.is_alive():
                log.warning("a cancelled turn did not stop within %.0f s; it goes on in the background", STOP_WAIT_S)
        raise


async def in_thread(fn: Callable[[], Any]) -> Any:
    """A blocking call (analysis, search, rendering) in a worker thread; a cancelled call waits
    for it (these calls run no program and end on their own)."""
    return await anyio.to_thread.run_sync(fn)


# --- shaping results ---------------------------------------------------------------------------


def _finding(f: dict[str, Any]) -> dict[str, Any]:
    out = {k: f.get(k) for k in ("title", "severity", "detail") if f.get(k) is not None}
    ev = {k: v for k, v in (f.get("evidence") or {}).items() if v not in (None, [], "")}
    if ev:
        out["evidence"] = ev
    if f.get("metric"):
        out["metric"] = f["metric"]
    for k in ("suggestion", "suggestions", "fix"):
        if f.get(k):
            out[k] = f[k]
    return out


def _hotspot(h: dict[str, Any]) -> dict[str, Any]:
    return {k: h.get(k) for k in ("name", "file", "line", "self_ms", "total_ms", "self_pct", "thread", "kind") if h.get(k) is not None}


def turn_payload(tool: str, ps: Any, r: Any, opts: ServerOptions) -> dict[str, Any]:
    """An AskResult as the structured result of ask / resume / continue."""
    status = _status(ps, r)
    out: dict[str, Any] = {"tool": tool, "status": status, "thread_id": r.thread_id, "route": r.route}
    info = {k: r.route_info.get(k) for k in ("tier", "confidence", "reason") if r.route_info.get(k) is not None}
    if info:
        out["route_info"] = info
    if r.answer:
        out["answer"] = r.answer
    if r.question:
        q = {k: v for k, v in r.question.items() if k in ("field", "prompt", "choices", "argv", "outside_workspace", "for_node")}
        if q.get("field") == CONFIRM_KEY:
            q["how_to_answer"] = (
                "only a person can confirm this command: the server asks them through the client "
                f"(MCP elicitation); call continue({r.thread_id!r}) to ask again"
            )
        else:
            q["how_to_answer"] = f"call resume({r.thread_id!r}, ANSWER)"
        out["question"] = q
    if r.findings:
        out["findings"] = [_finding(f) for f in r.findings[:TOP_FINDINGS]]
    if r.hotspots:
        out["hotspots"] = [_hotspot(h) for h in r.hotspots[:TOP_HOTSPOTS]]
    if r.attribution:
        out["attribution"] = r.attribution[:TOP_HOTSPOTS]
    for key in ("skipped", "diagnosis", "exploration"):
        value = getattr(r, key, None)
        if value:
            out[key] = value
    if r.report_paths:
        out["report_paths"] = r.report_paths
        out["report_resource"] = f"perfscout://report/{r.thread_id}"
    if status == "incomplete":
        out["next"] = f"the turn stopped before a node; call continue({r.thread_id!r}) to go on"
    out["permission"] = opts.describe()
    err = _last_error(ps, r.thread_id) if status == "failed" else {}
    if err.get("kind"):
        out["error_kind"] = err["kind"]  # typed (graph.enums.ErrorKind), unlike the message
    if err.get("kind") == "permission":
        # The graph's wording names the CLI's flags; say what works over MCP.
        out["how_to_allow"] = (
            "call again with allow_run=true" if opts.runs_anything
            else "this server runs no program: the person who configured it can restart it with --allow-run or --allow PROG"
        )
    return out


def result(payload: dict[str, Any]) -> CallToolResult:
    """The bounded structured result, with the same JSON as its text content."""
    body = bound(payload, MAX_RESULT_CHARS)
    text = json.dumps(body, ensure_ascii=False, default=str)
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=body)


# --- the server --------------------------------------------------------------------------------


def build_server(opts: ServerOptions) -> PerfScoutMCP:
    """The MCP server for ``opts`` (tools and resources registered, nothing started)."""
    from nodes.code.sandbox import SandboxError, resolve_inside, workspace_root

    try:
        root = workspace_root(opts.workspace)
    except SandboxError as e:
        raise ValueError(str(e)) from None
    opts = ServerOptions(workspace=root, allow_run=opts.allow_run, allowlist=tuple(opts.allowlist), offline=opts.offline)
    engine = Engine(opts)
    server = PerfScoutMCP(
        "perfscout",
        title="PerfScout",
        instructions=(
            "Performance analysis of traces and profiles (Perfetto, Chrome, py-spy, adb) inside "
            f"the workspace {root}. {opts.describe()}. A command proposed in a message is only "
            "run after a person confirms it in the client."
        ),
        log_level="WARNING",
    )
    server.engine = engine  # type: ignore[attr-defined]

    def inside(path: str) -> Path:
        try:
            return resolve_inside(root, path)
        except SandboxError as e:
            raise fail(str(e)) from None

    def ps_for(allow_run: bool) -> Any:
        if allow_run and not opts.runs_anything:
            raise fail(f"allow_run=true refused: {opts.describe()}")
        return engine.ps(allow_run and opts.runs_anything)

    def graph_allow(allow_run: bool) -> bool:
        """The graph's allow_run: the per-turn yes, only on a server started with --allow-run
        (an allowlist-only server runs its allowlist through the context, not this flag)."""
        return bool(allow_run and opts.allow_run)

    def check_target(target: str | None) -> str | None:
        """A target named by the agent (the ``target`` argument, or its answer to "which
        program?") must be a script or program inside the workspace: any other command line
        belongs in the message, where it is a proposal a person confirms."""
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
        real = inside(script)
        if not real.is_file():
            raise fail(f"target: {script}: no such file in the workspace {root}")
        return target

    def check_thread(thread: str) -> str:
        if not isinstance(thread, str) or not thread.strip() or len(thread) > 200 or any(c in thread for c in "/\\\x00"):
            raise fail(f"thread: not a thread id: {thread!r}")
        return thread

    def fresh_permission(ps: Any, call: Callable[..., Any], thread: str, allow_run: bool) -> dict[str, Any]:
        """The keyword that gives the call its own permission. An API whose ``resume`` /
        ``continue_run`` take no ``allow_run`` keeps the yes of the turn that started the thread;
        a call without allow_run=true must not inherit it, so it is refused instead."""
        if _accepts(call, "allow_run"):
            return {"allow_run": graph_allow(allow_run)}
        earlier = (ps.graph.get_state(ps.config(thread)).values or {}).get("allow_run")
        if earlier and not allow_run:
            raise fail(
                f"thread {thread} was started with allow_run=true and this PerfScout would keep that yes "
                "when it goes on: say allow_run=true again to continue it"
            )
        return {}

    def known(ps: Any, thread: str) -> Any:
        snap = ps.graph.get_state(ps.config(thread))
        if not snap.values:
            raise fail(f"no thread {thread!r} in the checkpoint store")
        return ps.result(thread)

    # -- confirmation of proposed commands --------------------------------------------------

    def confirm_message(q: dict[str, Any]) -> str:
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

    def can_elicit(ctx: Context) -> bool:
        caps = ctx.client_capabilities
        return caps is not None and caps.elicitation is not None

    def modern(ctx: Context) -> bool:
        v = ctx.protocol_version
        return bool(v) and is_version_at_least(v, INPUT_REQUIRED_VERSION)

    async def settle(tool: str, ctx: Context, ps: Any, r: Any, allow_run: bool) -> CallToolResult | InputRequiredResult:
        """Finish a turn: a pending confirm_run question goes to the person, never to the agent."""
        q = r.question or {}
        if r.status != "needs_input" or q.get("field") != CONFIRM_KEY:
            return result(turn_payload(tool, ps, r, opts))
        if not can_elicit(ctx):
            payload = turn_payload(tool, ps, r, opts)
            payload["status"] = "refused"
            payload["refused"] = (
                f"the message proposes running {shlex.join(map(str, q.get('argv') or []))}; only a person "
                "may confirm that, and this client does not support MCP elicitation, so nobody can be "
                "asked. Nothing ran; the thread keeps the question."
            )
            return result(payload)
        if modern(ctx):
            state = json.dumps({"tool": tool, "thread": r.thread_id, "argv": q.get("argv") or [], "allow_run": allow_run})
            return InputRequiredResult(
                input_requests={
                    CONFIRM_KEY: ElicitRequest(
                        params=ElicitRequestFormParams(
                            message=confirm_message(q), requested_schema=render_elicitation_schema(RunConfirmation)
                        )
                    )
                },
                request_state=state,
            )
        outcome = await ctx.elicit(confirm_message(q), RunConfirmation)
        yes = outcome.action == "accept" and bool(getattr(outcome, "data", None) and outcome.data.run)
        return await answer_confirmation(tool, ctx, r.thread_id, q.get("argv") or [], yes, allow_run)

    async def answer_confirmation(
        tool: str, ctx: Context, thread: str, argv: list[Any], yes: bool, allow_run: bool
    ) -> CallToolResult | InputRequiredResult:
        ps = ps_for(allow_run)
        current = await anyio.to_thread.run_sync(lambda: known(ps, thread))
        cq = current.question or {}
        if current.status != "needs_input" or cq.get("field") != CONFIRM_KEY or list(cq.get("argv") or []) != list(argv):
            raise fail(f"thread {thread}: the command to confirm changed or was answered meanwhile; nothing ran")
        kwargs = fresh_permission(ps, ps.resume, thread, allow_run)
        r = await drive(ctx, lambda emit: ps.resume(thread, "yes" if yes else "no", on_event=emit, **kwargs))
        return await settle(tool, ctx, ps, r, allow_run)

    async def confirmed_round(tool: str, ctx: Context) -> CallToolResult | InputRequiredResult | None:
        """The retry of an ``input_required`` confirmation (2026-07-28): the person's answer."""
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
        return await answer_confirmation(tool, ctx, thread, argv, yes, allow_run)

    # -- tools -----------------------------------------------------------------------------------

    read_only = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)

    @server.tool(
        name="route",
        description="Classify a request: the route (one of six labels), tier, confidence and reason. Runs nothing.",
        annotations=read_only,
    )
    async def route(
        message: Annotated[str, Field(description="The request, in one sentence (中文 or English)", min_length=1, max_length=10_000)],
    ) -> CallToolResult:
        from app.models import make_router_model
        from app.route_cmd import route_one

        settings = engine.settings(False)
        info = await in_thread(lambda: route_one(message, make_router_model(settings)))
        if "error" in info:
            raise fail(f"route: {info['error']}")
        keep = {k: info.get(k) for k in ("route", "tier", "confidence", "reason", "latency_ms") if k in info}
        return result({"tool": "route", **keep})

    @server.tool(
        name="analyze",
        description=(
            "Analyse a trace or profile inside the workspace (Perfetto, Chrome Trace Event JSON, "
            "py-spy speedscope, cProfile, adb dumps): headline, findings with evidence, and the "
            "startup / frames / hot spots / web sections; writes a report and returns its paths."
        ),
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False),
    )
    async def analyze(
        ctx: Context,
        path: Annotated[str, Field(description="The file, relative to the workspace (or absolute inside it)", min_length=1)],
        focus: Annotated[Focus, Field(description="The lens of the question: the headline answers it and only its "
                                                  "sections are returned (old names: web, hotspots, all)")] = "all",
    ) -> CallToolResult:
        from app.analyze_cmd import to_json
        from nodes.perf.analysis import analyze_paths, module_search_path
        from nodes.perf.errors import PerfDataError
        from nodes.report.output import report_dir
        from nodes.report.render import write_report
        from nodes.report.view import build_view

        real = inside(path)
        if not real.is_file():
            raise fail(f"{path}: no such file in the workspace {root}")
        settings = engine.settings(False)
        progress = Progress(ctx)
        await progress.send(f"analyze: reading {real.name} ({real.stat().st_size} bytes)")

        def work() -> tuple[dict[str, Any], list[str], dict[str, str]]:
            a = analyze_paths([str(real)], root=str(root), search_path=module_search_path(str(root)))
            collected = {"kind": "file", "paths": {"data": str(real)}, "source": str(real)}
            view = build_view(a, collected=collected, route="analyze", question=f"analyze {path}", root=str(root),
                              lens=lens)
            written = write_report(view, report_dir(None, str(settings.runs_dir), "mcp"))
            return to_json(a), view.summary_sentences(), written, view.lens_section()

        lens = lens_named(focus).value
        try:
            data, summary, written, lens_answer = await in_thread(work)
        except PerfDataError as e:
            raise fail(str(e).splitlines()[0] if str(e) else f"{path}: unreadable data") from None
        await progress.send("analyze: report written")
        payload: dict[str, Any] = {
            "tool": "analyze",
            "source": str(real.relative_to(root)),
            "format": data.get("format"),
            "duration_ms": data.get("duration_ms"),
            "headline": summary[0] if summary else None,
            "summary": summary[1:],
            "findings": [_finding(f) for f in (data.get("findings") or [])[:TOP_FINDINGS]],
        }
        payload["lens"] = lens
        if lens_answer is not None:
            payload["lens_answer"] = lens_answer
        sections = _sections(data, lens)
        payload.update(sections)
        if data.get("warnings"):
            payload["warnings"] = data["warnings"][:10]
        payload["report_paths"] = {k: v for k, v in written.items() if isinstance(v, str)}
        return result(payload)

    @server.tool(
        name="ask",
        description=(
            "One full PerfScout turn, as `perfscout ask`: route, collect or load data, analyse, "
            "tie hot spots to source, report. Running a program needs allow_run=true on a server "
            "that allows it; a command proposed in the message is confirmed by a person. A "
            "question from PerfScout comes back as status needs_input: answer with resume."
        ),
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False),
    )
    async def ask(
        ctx: Context,
        message: Annotated[str, Field(description="What you want, in one sentence", min_length=1, max_length=10_000)],
        thread: Annotated[str | None, Field(description="Continue this conversation thread")] = None,
        target: Annotated[
            str | None, Field(description="The program to run: a script or executable inside the workspace, with arguments")
        ] = None,
        allow_run: Annotated[bool, Field(description="This turn may run the target (the server must allow it too)")] = False,
    ) -> CallToolResult | InputRequiredResult:
        again = await confirmed_round("ask", ctx)
        if again is not None:
            return again
        ps = ps_for(allow_run)
        tgt = check_target(target)
        tid = check_thread(thread) if thread is not None else None
        r = await drive(
            ctx, lambda emit: ps.ask(message, thread_id=tid, allow_run=graph_allow(allow_run), target=tgt, on_event=emit)
        )
        return await settle("ask", ctx, ps, r, allow_run)

    @server.tool(
        name="resume",
        description=(
            "Answer PerfScout's pending question on a thread (e.g. which program or file) and go on. "
            "A command to confirm is never answered here: the person confirms it in the client."
        ),
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False),
    )
    async def resume(
        ctx: Context,
        thread: Annotated[str, Field(description="The thread that asked", min_length=1)],
        answer: Annotated[str, Field(description="The answer to its question", min_length=1, max_length=10_000)],
        allow_run: Annotated[bool, Field(description="The resumed turn may run a program (the server must allow it too)")] = False,
    ) -> CallToolResult | InputRequiredResult:
        again = await confirmed_round("resume", ctx)
        if again is not None:
            return again
        ps = ps_for(allow_run)
        check_thread(thread)
        current = await anyio.to_thread.run_sync(lambda: known(ps, thread))
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
            check_target(answer)
        kwargs = fresh_permission(ps, ps.resume, thread, allow_run)
        r = await drive(ctx, lambda emit: ps.resume(thread, answer, on_event=emit, **kwargs))
        return await settle("resume", ctx, ps, r, allow_run)

    async def continue_(
        ctx: Context,
        thread: Annotated[str, Field(description="The thread whose turn stopped (cancelled, crashed) or waits for a confirmation", min_length=1)],
        allow_run: Annotated[bool, Field(description="The continued turn may run a program (the server must allow it too)")] = False,
    ) -> CallToolResult | InputRequiredResult:
        again = await confirmed_round("continue", ctx)
        if again is not None:
            return again
        ps = ps_for(allow_run)
        check_thread(thread)
        current = await anyio.to_thread.run_sync(lambda: known(ps, thread))
        q = current.question or {}
        if current.status == "needs_input":
            if q.get("field") == CONFIRM_KEY:
                return await settle("continue", ctx, ps, current, allow_run)
            raise fail(f"thread {thread} asks: {q.get('prompt')} — answer it with resume")
        if _status(ps, current) != "incomplete":
            return result(turn_payload("continue", ps, current, opts) | {"note": "nothing to continue: the turn had ended"})
        call = ps.continue_run
        kwargs = fresh_permission(ps, call, thread, allow_run)
        r = await drive(ctx, lambda emit: call(thread, on_event=emit, **kwargs))
        return await settle("continue", ctx, ps, r, allow_run)

    server.add_tool(
        continue_,
        name="continue",
        description=(
            "Continue a thread's turn that stopped before it finished (a cancelled or crashed call), "
            "or ask the person again to confirm a proposed command."
        ),
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False),
    )

    @server.tool(
        name="explore",
        description="Find definitions and matches in the workspace's code (ripgrep inside the workspace sandbox).",
        annotations=read_only,
    )
    async def explore(
        query: Annotated[str, Field(description="What to look for: a name, a phrase, 'where is X defined'", min_length=1, max_length=2_000)],
    ) -> CallToolResult:
        from app.models import make_chat_model
        from nodes.framework.common import ToolFailure
        from nodes.explorer import explore as run_explore

        settings = engine.settings(False)
        llm = make_chat_model(settings)
        try:
            exploration, answer = await in_thread(lambda: run_explore(query, str(root), llm=llm))
        except ToolFailure as e:
            raise fail(f"explore: {e}") from None
        return result({"tool": "explore", "answer": answer, "exploration": exploration})

    @server.tool(
        name="report",
        description=(
            "The Markdown report of a thread (its newest), of a report folder, or of a trace or "
            "profile inside the workspace (rendered first)."
        ),
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False),
    )
    async def report(
        path_or_thread: Annotated[str, Field(description="A thread id, or a path inside the workspace", min_length=1)],
    ) -> CallToolResult:
        settings = engine.settings(False)
        md, paths = await in_thread(lambda: _report_markdown(path_or_thread, root, settings, inside))
        return result({"tool": "report", "markdown": md, "paths": paths})

    @server.resource(
        "perfscout://report/{thread}",
        name="report",
        title="PerfScout report",
        description="The newest Markdown report of a thread",
        mime_type="text/markdown",
    )
    async def report_resource(thread: str) -> str:
        check_thread(thread)
        settings = engine.settings(False)
        md, _ = await in_thread(lambda: _thread_report(thread, settings))
        return md

    return server


def _sections(data: dict[str, Any], lens: str) -> dict[str, Any]:
    """The sections ``lens`` asks for; a section the data cannot give says so (never estimated)."""
    out: dict[str, Any] = {}
    want = _LENS_SECTIONS.get(lens, _LENS_SECTIONS["overview"])
    if "startup" in want:
        out["startup"] = data.get("startup") or {"missing": "no app launch in this data (a startup trace or `perfscout ask` on a script measures one)"}
    if "frames" in want:
        frames = data.get("frames")
        out["frames"] = frames or {"missing": "no frames in this data (needs a trace with frame timeline or a Chrome trace of a page)"}
        if data.get("long_tasks"):
            out["long_tasks"] = data["long_tasks"][:10]
    if "hotspots" in want:
        hs = [_hotspot(h) for h in (data.get("hotspots") or []) if h.get("thread") is None][:TOP_HOTSPOTS]
        out["hotspots"] = hs or {"missing": "no hot spots: the data has no slices or samples with durations"}
        if data.get("threads"):
            out["threads"] = data["threads"][:10]
    if "web" in want:
        web = {k: data[k] for k in ("web", "web_vitals", "vitals") if data.get(k)}
        out["web"] = web or {"missing": "no web vitals in this data (they come from a Chrome trace of a page load)"}
    return out


def _newest_report(folder: Path) -> Path | None:
    found = list(folder.glob("*/report.md")) + list(folder.glob("*/*/report.md")) + list(folder.glob("report.md"))
    return max(found, key=lambda p: (p.stat().st_mtime, str(p))) if found else None


def _thread_report(thread: str, settings: Any) -> tuple[str, dict[str, str]]:
    from nodes.report.output import safe_component

    folder = Path(settings.runs_dir) / safe_component(thread)
    md = _newest_report(folder) if folder.is_dir() else None
    if md is None:
        raise fail(f"no report of a thread {thread!r} (in {settings.runs_dir})")
    return md.read_text(encoding="utf-8", errors="replace"), {"markdown": str(md)}


def _own_output(target: str, settings: Any) -> Path | None:
    """``target`` when it is one of the server's own reports (under its runs folder, which may lie
    outside the workspace: PERFSCOUT_HOME); None otherwise (then the workspace rule applies)."""
    from nodes.code.sandbox import SandboxError, resolve_inside

    runs = Path(settings.runs_dir)
    if not Path(target).is_absolute() or not runs.is_dir():
        return None
    try:
        return resolve_inside(runs, target)
    except SandboxError:
        return None


def _report_markdown(target: str, root: Path, settings: Any, inside: Callable[[str], Path]) -> tuple[str, dict[str, str]]:
    """What ``report`` returns: a thread's newest report, a report folder's, or a new one of a file."""
    from app.report_cmd import run_report
    from nodes.perf.errors import PerfDataError
    from nodes.report.view import ReportInputError

    looks_like_path = "/" in target or "\\" in target or target.startswith((".", "~")) or (root / target).exists()
    if not looks_like_path:
        return _thread_report(target, settings)
    real = _own_output(target, settings) or inside(target)
    if real.is_dir():
        md = real / "report.md" if (real / "report.md").is_file() else _newest_report(real)
        if md is None:
            raise fail(f"{target}: a folder with no report.md in it")
        return md.read_text(encoding="utf-8", errors="replace"), {"markdown": str(md)}
    if not real.is_file():
        raise fail(f"{target}: no such file in the workspace {root}")
    if real.name == "report.md":
        return real.read_text(encoding="utf-8", errors="replace"), {"markdown": str(real)}
    try:
        written = run_report(str(real), runs_dir=str(settings.runs_dir))
    except (ReportInputError, PerfDataError) as e:
        raise fail(str(e).splitlines()[0]) from None
    md = Path(written["markdown"])
    return md.read_text(encoding="utf-8", errors="replace"), {k: v for k, v in written.items() if isinstance(v, str)}


def serve(opts: ServerOptions) -> None:
    """Run the server on stdin/stdout until the client closes it."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="perfscout mcp: %(message)s")
    server = build_server(opts)
    print(f"perfscout mcp: serving the workspace {opts.workspace} on stdio; {ServerOptions.describe(opts)}", file=sys.stderr)
    try:
        server.run("stdio")
    finally:
        server.engine.close()  # type: ignore[attr-defined]
