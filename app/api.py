"""The Python API: run a request through the graph and get a typed result back.

    from app import PerfScout
    with PerfScout() as ps:
        r = ps.ask("帮我全面分析一下 examples/slow_app.py", allow_run=True)
        print(r.route, r.answer, r.report)
        if r.question:                     # the graph asked back (interrupt)
            r = ps.resume(r.thread_id, "examples/slow_app.py", allow_run=True)
        if r.status == "incomplete":       # a turn that was killed: go on from its checkpoint
            r = ps.continue_run(r.thread_id, allow_run=True)

        for ev in ps.stream("解读一下 trace.json"):   # node-by-node progress, then the result
            print(ev.kind, ev.node, ev.data)

        r = await ps.aask("what is jank?")          # the same, from async code

The CLI is a thin layer over this class, so both behave the same. Permission to run programs
(``allow_run``) is given per call — ``resume`` and ``continue_run`` take it again and never
inherit an earlier call's yes. One turn at a time writes a thread: a second one waits at most
``Settings.thread_wait_s`` and then raises ``ThreadBusy`` (app/threads/locks.py). Checkpoints are SQLite by
default, whose saver is synchronous: the async methods run the sync graph in a worker thread
rather than ``astream``, which the SQLite saver does not support.
"""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from contextlib import ExitStack
from pathlib import Path
from typing import Any, AsyncIterator, Callable, Iterator, Literal

from langchain_core.messages import HumanMessage
from langgraph.types import Command
from pydantic import BaseModel, ConfigDict, Field

from app import threads as thread_store
from app.cancel import CancelRequest, RunningTurns, cancellable
from app.checkpoint import open_checkpointer
from app.decision_log import DecisionLog
from app.errors import RequestError, RunNotAllowed, ThreadBusy, TurnInterrupted
from app.models import make_chat_model
from app.settings import Settings
from graph.builder import build_graph
from graph.enums import Lens, Node, Permission, TurnOutcome
from graph.permission import needs_permission
from graph.stages import STAGES
from nodes.run_stages.local_run import permission_for

#: Called with (node name, that node's state update) as the graph runs.
ProgressCallback = Callable[[str, dict[str, Any]], None]
EventKind = Literal["node_start", "node_end", "progress", "interrupt", "result"]


__all__ = ["AskResult", "PerfScout", "RequestError", "StreamEvent", "ThreadBusy", "TurnInterrupted", "ask"]


class StreamEvent(BaseModel):
    """One step of a running turn, as ``stream()`` yields it and the CLI draws it.

    ``node_start``/``node_end``: a node began / finished (``data`` is its state update at the
    end). ``progress``: a node's own report (``nodes.framework.context.report_progress`` /
    ``report_deadline``). ``interrupt``: the graph asked a question (``data`` is the question).
    ``result``: the last event of a turn, with the typed ``result``.
    """

    kind: EventKind
    node: str | None = None
    data: dict[str, Any] = Field(default_factory=dict)
    result: "AskResult | None" = None


#: Called with every StreamEvent as the graph runs.
EventCallback = Callable[[StreamEvent], None]


class AskResult(BaseModel):
    """What one turn produced. ``status`` is a ``graph.enums.TurnOutcome`` value (stored as its
    string): ``incomplete`` when the turn stopped before a node (killed, crashed, Ctrl-C) —
    ``continue_run`` it. The fields it shares with ``ThreadDetail`` come from one mapping,
    app/threads/status.py ``turn_fields``."""

    model_config = ConfigDict(use_enum_values=True)

    thread_id: str
    status: TurnOutcome
    route: str | None = None
    route_info: dict[str, Any] = Field(default_factory=dict)
    answer: str | None = None
    #: The pending question when status is needs_input; answer it with ``resume``.
    question: dict[str, Any] | None = None
    report: dict[str, Any] | None = None
    findings: list[dict[str, Any]] = Field(default_factory=list)
    hotspots: list[dict[str, Any]] = Field(default_factory=list)
    attribution: list[dict[str, Any]] | None = None
    exploration: dict[str, Any] | None = None
    skipped: dict[str, Any] | None = None
    diagnosis: str | None = None
    #: The failure that ended a ``failed`` turn: ``{"tool", "kind", "message"}`` (graph/payloads.py ToolError).
    error: dict[str, Any] | None = None
    route_history: list[str] = Field(default_factory=list)
    steps: int = 0
    #: Files the turn wrote (report Markdown/HTML/JSON …), by kind; only paths that exist.
    report_paths: dict[str, str] = Field(default_factory=dict)
    #: The data the thread's last analysis read (a later "the slowest frame?" asks about it).
    analysis_source: str | None = None
    #: The node an ``incomplete`` turn stopped before (``continue_run`` runs it) …
    stopped_before: str | None = None
    #: … or the node it finished last, when it stopped before the next one was chosen.
    stopped_after: str | None = None


def new_thread_id() -> str:
    return uuid.uuid4().hex[:12]


class PerfScout:
    """A configured PerfScout: settings, model, checkpointer, decision log, compiled graph."""

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        llm: Any = "configured",
        checkpointer: Any = None,
        workspace: str | Path | None = None,
    ):
        self.settings = settings or Settings.from_env()
        self._llm = make_chat_model(self.settings) if llm == "configured" else llm
        #: The runtime context every invocation passes to the graph (LangGraph context_schema).
        self.context = self.settings.node_context(self._llm)
        self._checkpointer = checkpointer
        self._stack = ExitStack()
        self._graph = None
        self._locks: thread_store.ThreadLocks | None = None
        self.workspace = str(Path(workspace or ".").resolve())
        self.decisions = DecisionLog(self.settings.decision_log)
        #: The turns this object runs right now (``cancel`` stops them; app/cancel.py).
        self.turns = RunningTurns()

    # --- lifecycle ----------------------------------------------------------------------
    def __enter__(self) -> "PerfScout":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._stack.close()
        self._graph = None
        close_locks = getattr(self._locks, "close", None)
        if close_locks is not None:
            close_locks()

    @property
    def graph(self):
        if self._graph is None:
            saver = self._checkpointer
            if saver is None:
                saver = self._stack.enter_context(open_checkpointer(self.settings.checkpoint_target))
                self._checkpointer = saver
                self._locks = thread_store.locks_for_target(self.settings.checkpoint_target)
            elif self._locks is None:
                self._locks = thread_store.locks_for_saver(saver)
            self._graph = build_graph(checkpointer=saver, context=self.context, on_decision=self.decisions.append)
        return self._graph

    # --- running ------------------------------------------------------------------------
    def config(self, thread_id: str) -> dict[str, Any]:
        """The graph config of a thread; RequestError for an id the stores cannot keep."""
        return {"configurable": {"thread_id": thread_store.check_thread_id(thread_id)}}

    @property
    def locks(self) -> thread_store.ThreadLocks:
        """One writer per thread (app/threads/locks.py): file locks beside SQLite, advisory locks on
        PostgreSQL."""
        _ = self.graph  # opens the store, which decides the kind of lock
        if self._locks is None:  # a graph swapped in from outside (tests): lock by its saver
            self._locks = thread_store.locks_for_saver(self._checkpointer)
        return self._locks

    def turn_input(
        self,
        text: str,
        thread_id: str,
        *,
        allow_run: bool = False,
        target: str | None = None,
        data_path: str | None = None,
        package: str | None = None,
        serial: str | None = None,
    ) -> dict[str, Any]:
        run_dir = self.settings.runs_dir / thread_id / time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        inp: dict[str, Any] = {
            "messages": [HumanMessage(content=text)],
            "workspace": self.workspace,
            "step_budget": self.settings.step_budget,
            "retry_budget": self.settings.retry_budget,
            "llm_turn_budget_s": self.settings.turn_model_budget_s,
            "run_dir": str(_unique_dir(run_dir)),
        }
        # Permission is given per turn: a yes (or an allowlisted program) in an earlier turn
        # never carries over to a later one.
        inp["allow_run"] = bool(allow_run)
        # The caller's target is the user's own choice for this turn (docs/permission.md); the
        # orchestrator moves it to ``target`` ahead of anything the message names.
        inp["explicit_target"] = target or None
        for key, value in (("data_path", data_path), ("package", package), ("serial", serial)):
            if value:
                inp[key] = value
        return inp

    def ask(
        self,
        text: str,
        *,
        thread_id: str | None = None,
        allow_run: bool = False,
        target: str | None = None,
        data_path: str | None = None,
        package: str | None = None,
        serial: str | None = None,
        on_progress: ProgressCallback | None = None,
        on_event: EventCallback | None = None,
        lens: str | None = None,
    ) -> AskResult:
        """Run one turn. A pending question comes back as ``status="needs_input"``. ``lens``: the
        aspect to answer (graph.enums.Lens, or an old focus name), instead of the message's."""
        tid, inp = self._prepare(text, thread_id, allow_run, target, data_path, package, serial, lens)
        return self._run(inp, tid, on_progress, on_event)

    def resume(
        self,
        thread_id: str,
        answer: str,
        *,
        allow_run: bool = False,
        on_progress: ProgressCallback | None = None,
        on_event: EventCallback | None = None,
    ) -> AskResult:
        """Answer the pending question of ``thread_id`` and continue the turn.

        ``allow_run`` is this call's permission to run programs, as for ``ask``: the yes of the
        call that asked is not inherited. Raises RequestError when the thread has no pending
        question (nothing would run), ThreadBusy when another turn holds the thread.
        """
        return self._run(_resumed(answer, allow_run), thread_id, on_progress, on_event, expect=TurnOutcome.NEEDS_INPUT)

    def continue_run(
        self,
        thread_id: str,
        *,
        allow_run: bool = False,
        on_progress: ProgressCallback | None = None,
        on_event: EventCallback | None = None,
    ) -> AskResult:
        """Continue a turn that stopped before a node (status ``incomplete``: the process was
        killed, crashed or interrupted), from its last checkpoint: that node runs again.

        ``allow_run`` is this call's permission, as for ``ask``. A thread with nothing left to
        run (its turn ended, or it waits for an answer) is returned as it is, untouched.
        Raises RequestError for an unknown thread, ThreadBusy when another turn holds it.
        """
        return self._run(_continued(allow_run), thread_id, on_progress, on_event, expect=TurnOutcome.INCOMPLETE)

    def stream(
        self,
        text: str,
        *,
        thread_id: str | None = None,
        allow_run: bool = False,
        target: str | None = None,
        data_path: str | None = None,
        package: str | None = None,
        serial: str | None = None,
        lens: str | None = None,
    ) -> Iterator[StreamEvent]:
        """Run one turn, yielding node-by-node progress; the last event carries the result.
        ``lens`` as for ``ask``."""
        tid, inp = self._prepare(text, thread_id, allow_run, target, data_path, package, serial, lens)
        yield from self._events(inp, tid)

    def stream_resume(self, thread_id: str, answer: str, *, allow_run: bool = False) -> Iterator[StreamEvent]:
        """``resume`` as a stream of events (the thread stays locked until the stream ends or
        is closed)."""
        yield from self._events(_resumed(answer, allow_run), thread_id, expect=TurnOutcome.NEEDS_INPUT)

    async def aask(self, text: str, **kwargs: Any) -> AskResult:
        """``ask`` from async code; cancelling the awaiting task stops the turn (as ``cancel``)."""
        return await _cancellable_thread(lambda: self.ask(text, **kwargs))

    async def aresume(self, thread_id: str, answer: str, **kwargs: Any) -> AskResult:
        return await _cancellable_thread(lambda: self.resume(thread_id, answer, **kwargs))

    async def acontinue_run(self, thread_id: str, **kwargs: Any) -> AskResult:
        return await _cancellable_thread(lambda: self.continue_run(thread_id, **kwargs))

    async def astream(self, text: str, **kwargs: Any) -> AsyncIterator[StreamEvent]:
        """``stream`` for async code: events arrive as the worker thread produces them."""
        async for ev in _aiter_thread(lambda: self.stream(text, **kwargs)):
            yield ev

    async def astream_resume(self, thread_id: str, answer: str, **kwargs: Any) -> AsyncIterator[StreamEvent]:
        async for ev in _aiter_thread(lambda: self.stream_resume(thread_id, answer, **kwargs)):
            yield ev

    def cancel(self, thread_id: str | None = None) -> list[str]:
        """Stop the turn running on ``thread_id`` (None: every turn this object runs), as Ctrl-C
        does: callable from any thread, it returns at once; the turn stops at its next safe point
        (a running program is polled every 0.1 s), its process tree is stopped, and the call
        that ran it raises ``TurnInterrupted``. The thread reads ``incomplete``;
        ``continue_run`` goes on from its last checkpoint. Returns the threads asked to stop."""
        return self.turns.cancel(thread_id)

    # --- threads (the checkpointer's conversations) -----------------------------------------
    @property
    def checkpointer(self) -> Any:
        _ = self.graph  # opens it
        return self._checkpointer

    def threads(self, limit: int | None = None) -> list[thread_store.ThreadSummary]:
        """The threads in the checkpoint store, newest first (status ``running`` while another
        turn holds one)."""
        return thread_store.list_threads(self.graph, self.checkpointer, self.locks, limit=limit)

    def thread(self, thread_id: str) -> thread_store.ThreadDetail | None:
        """One thread's last state, summarised, or None when the store has no such thread."""
        self.config(thread_id)  # a bad id is a RequestError, not a store error
        running = thread_id in self.locks.held([thread_id])
        return thread_store.describe(self.graph, self.checkpointer, thread_id, running=running)

    def thread_exists(self, thread_id: str) -> bool:
        """Whether the checkpoint store has the thread."""
        self.config(thread_id)
        return thread_store.exists(self.checkpointer, thread_id)

    def delete_thread(self, thread_id: str) -> bool:
        """Forget a thread's checkpoints (its run folders and reports stay). False when there
        was no such thread; ThreadBusy while a turn runs on it."""
        self.config(thread_id)
        with self.locks.hold(thread_id, self.settings.thread_wait_s):
            if not thread_store.exists(self.checkpointer, thread_id):
                return False
            self.checkpointer.delete_thread(thread_id)
            return True

    # --- internals ------------------------------------------------------------------------
    def _prepare(
        self,
        text: str,
        thread_id: str | None,
        allow_run: bool,
        target: str | None,
        data_path: str | None,
        package: str | None,
        serial: str | None,
        lens: str | None = None,
    ) -> tuple[str, Any]:
        """The turn's thread id and its input (a callable, built once the thread is held). A bad
        request is refused here, before any thread is touched: an empty message, a malformed
        thread id, a ``lens`` that is not one (graph.enums.Lens, or an old focus name)."""
        if not isinstance(text, str) or not text.strip():
            raise RequestError("the request is empty: say what to analyse, e.g. 解读一下 trace.json")
        tid = thread_store.check_thread_id(thread_id) if thread_id is not None else new_thread_id()
        named = None
        if lens:
            from graph.enums import lens_named

            try:
                named = lens_named(lens).value
            except ValueError:
                raise RequestError(f"unknown lens {lens!r}: one of {', '.join(x.value for x in Lens)}") from None

        def inp() -> dict[str, Any]:  # built once the thread is held (its run folder is unique)
            out = self.turn_input(
                text, tid, allow_run=allow_run, target=target, data_path=data_path, package=package, serial=serial
            )
            if named:
                out["explicit_lens"] = named
            return out

        return tid, inp

    def _check_continue_permission(self, tid: str, current: AskResult, inp: Any) -> None:
        """Permission is per invocation: continuing a turn stopped before a stage that starts a
        program needs this call's own yes (or an allowlist entry, or the user's confirmation of
        that exact command). Refused *before* the stage runs, so the turn stays incomplete."""
        update = getattr(inp, "update", None) or {}
        if update.get("allow_run") or not current.stopped_before:
            return
        try:
            spec = STAGES[Node(current.stopped_before)]
        except (ValueError, KeyError):
            return
        st = self.graph.get_state(self.config(tid)).values or {}
        if not needs_permission(spec.runs_programs, st):
            return  # a device measurement runs nothing on this machine
        req = st.get("run_request") or None
        # allow_run is False here (this call gave none): only a confirmed proposal or an
        # allowlisted program may go on; anything else waits for this call's own yes.
        if req and permission_for(req, {**st, "allow_run": False}, self.context) in (Permission.RUN, Permission.ALLOWLISTED):
            return
        raise RunNotAllowed(
            f"continuing thread {tid} runs {spec.node.value}, which starts a program: pass --allow-run "
            "(CLI) or allow_run=true (API, MCP); the turn stays incomplete"
        )

    def _expect(self, thread_id: str, expect: TurnOutcome) -> AskResult:
        """The thread's result, checked against what the call needs (read under its lock)."""
        r = self.result(thread_id)
        known = self.thread_exists(thread_id)
        if expect is TurnOutcome.NEEDS_INPUT and r.status != TurnOutcome.NEEDS_INPUT:
            why = "" if known else ": there is no such thread in the checkpoint store"
            if r.status == TurnOutcome.INCOMPLETE:
                why = f": its turn stopped ({r.stopped_before or r.stopped_after}); continue it without an answer"
            raise RequestError(f"thread {thread_id} has no pending question{why}")
        if expect is TurnOutcome.INCOMPLETE and not known:
            raise RequestError(f"no thread {thread_id!r} in the checkpoint store")
        return r

    def _events(self, inp: Any, tid: str, expect: TurnOutcome | None = None) -> Iterator[StreamEvent]:
        """The graph's stream as StreamEvents: tasks (start/end), custom (progress), interrupts.

        The whole turn holds the thread's lock, from reading its state to its last checkpoint.
        ``inp`` may be a callable, built once the lock is held. ``expect`` is the status the
        thread must have for this call (``needs_input`` for an answer, ``incomplete`` to
        continue; a thread that is not incomplete is returned untouched)."""
        cfg = self.config(tid)
        with self.locks.hold(tid, self.settings.thread_wait_s):
            if expect is not None:
                current = self._expect(tid, expect)
                if expect is TurnOutcome.INCOMPLETE and current.status != TurnOutcome.INCOMPLETE:
                    yield StreamEvent(kind="result", result=current)
                    return
                if expect is TurnOutcome.INCOMPLETE:
                    self._check_continue_permission(tid, current, inp)
            try:
                with self.turns.running(tid):
                    yield from self._stream(inp() if callable(inp) else inp, tid, cfg)
            except KeyboardInterrupt as e:
                if isinstance(e, TurnInterrupted):
                    raise
                raise TurnInterrupted(tid) from e

    def _stream(self, inp: Any, tid: str, cfg: dict[str, Any]) -> Iterator[StreamEvent]:
        for mode, chunk in self.graph.stream(inp, cfg, stream_mode=["tasks", "custom", "updates"], context=self.context):
            if mode == "tasks":
                name = chunk.get("name")
                if "result" not in chunk:
                    yield StreamEvent(kind="node_start", node=name)
                    continue
                interrupts = chunk.get("interrupts") or ()
                if not interrupts:  # a node that asked has not finished: it runs again on resume
                    result = chunk.get("result")
                    yield StreamEvent(
                        kind="node_end",
                        node=name,
                        data=_jsonable(result) if isinstance(result, dict) else {},
                    )
                for intr in interrupts:
                    value = intr.get("value") if isinstance(intr, dict) else getattr(intr, "value", intr)
                    yield StreamEvent(
                        kind="interrupt",
                        node=name,
                        data=value if isinstance(value, dict) else {"prompt": str(value)},
                    )
            elif mode == "custom":
                data = chunk if isinstance(chunk, dict) else {"message": str(chunk)}
                yield StreamEvent(kind="progress", node=data.get("node"), data=data)
        yield StreamEvent(kind="result", result=self.result(tid))

    def _run(
        self,
        inp: Any,
        tid: str,
        on_progress: ProgressCallback | None,
        on_event: EventCallback | None = None,
        expect: TurnOutcome | None = None,
    ) -> AskResult:
        result: AskResult | None = None
        for ev in self._events(inp, tid, expect):
            if on_event is not None:
                on_event(ev)
            if ev.kind == "node_end" and on_progress is not None:
                on_progress(ev.node or "?", ev.data)
            if ev.kind == "result":
                result = ev.result
        return result if result is not None else self.result(tid)

    def result(self, thread_id: str) -> AskResult:
        snap = self.graph.get_state(self.config(thread_id))
        st = snap.values or {}
        analysis = st.get("analysis") or {}
        fields = thread_store.turn_fields(snap)
        failed = fields["status"] is TurnOutcome.FAILED
        return AskResult(
            thread_id=thread_id,
            findings=list(analysis.get("findings") or []),
            hotspots=list(analysis.get("hotspots") or [])[:20],
            attribution=st.get("attribution"),
            exploration=st.get("exploration"),
            skipped=st.get("skipped"),
            error=dict(st["last_error"]) if failed and st.get("last_error") else None,
            steps=int(st.get("steps") or 0),
            **fields,
        )


def _resumed(answer: str, allow_run: bool) -> Command:
    """The answer to a pending question, with this call's permission: the checkpointed
    ``allow_run`` is an earlier call's, so it is overwritten before the turn goes on
    (LangGraph applies a Command's ``update`` before it resumes the interrupted node)."""
    return Command(resume=answer, update={"allow_run": bool(allow_run)})


def _continued(allow_run: bool) -> Command:
    """Go on from the last checkpoint (as ``invoke(None)`` does) with this call's permission."""
    return Command(update={"allow_run": bool(allow_run)})


def _jsonable(update: dict[str, Any]) -> dict[str, Any]:
    """A node's update as plain JSON types (messages and models dumped), for events and --json."""
    import orjson

    def default(o: Any) -> Any:
        if hasattr(o, "model_dump"):
            return o.model_dump(mode="json")
        return str(o)

    return orjson.loads(orjson.dumps(update, default=default))


#: Seconds a cancelled async call waits for its turn to stop (its process tree included).
STOP_WAIT_S = 30.0


async def _cancellable_thread(fn: Callable[[], AskResult]) -> AskResult:
    """Run a turn in a worker thread under a CancelRequest of its own (app/cancel.py): when the
    awaiting task is cancelled, the turn is asked to stop and awaited (bounded) before the
    cancellation goes on, so no program outlives the call. A turn stopped by ``cancel`` raises
    ``asyncio.CancelledError`` here: a ``KeyboardInterrupt`` inside a task would stop the
    caller's whole event loop."""
    import contextvars

    request = CancelRequest()

    def work() -> tuple[str, Any]:
        with cancellable(request):
            try:
                return "done", fn()
            except KeyboardInterrupt as e:  # TurnInterrupted: handed over as a value
                return "interrupted", e

    loop = asyncio.get_running_loop()
    fut = loop.run_in_executor(None, contextvars.copy_context().run, work)
    try:
        tag, value = await asyncio.shield(fut)
    except asyncio.CancelledError:
        request.cancel()
        await asyncio.wait({fut}, timeout=STOP_WAIT_S)
        raise
    if tag == "interrupted":
        raise asyncio.CancelledError(f"the turn of thread {getattr(value, 'thread_id', '?')} was cancelled")
    return value


async def _aiter_thread(make_iter: Callable[[], Iterator[StreamEvent]]) -> AsyncIterator[StreamEvent]:
    """Drive a blocking iterator in a worker thread, handing its items to the event loop."""
    loop = asyncio.get_running_loop()
    q: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()

    def work() -> None:
        try:
            for item in make_iter():
                loop.call_soon_threadsafe(q.put_nowait, ("item", item))
        except BaseException as e:  # re-raised in the caller's task
            loop.call_soon_threadsafe(q.put_nowait, ("error", e))
        else:
            loop.call_soon_threadsafe(q.put_nowait, ("done", None))

    worker = threading.Thread(target=work, name="perfscout-astream", daemon=True)
    worker.start()
    while True:
        tag, value = await q.get()
        if tag == "item":
            yield value
        elif tag == "error":
            raise value
        else:
            break
    worker.join()


def _unique_dir(path: Path) -> Path:
    """A run folder name no earlier run has used (a rerun never overwrites a report)."""
    candidate, n = path, 1
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.name}-{n}")
    return candidate


def ask(text: str, **kwargs: Any) -> AskResult:
    """One-shot convenience: ``app.ask("解读一下 trace.json")`` with settings from the environment."""
    with PerfScout() as ps:
        return ps.ask(text, **kwargs)


StreamEvent.model_rebuild()
