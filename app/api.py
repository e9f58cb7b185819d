"""The Python API: run a request through the graph and get a typed result back.

    from app import PerfScout
    with PerfScout() as ps:
        r = ps.ask("帮我全面分析一下 examples/slow_app.py", allow_run=True)
        print(r.route, r.answer, r.report)
        if r.question:                     # the graph asked back (interrupt)
            r = ps.resume(r.thread_id, "examples/slow_app.py")

The CLI is a thin layer over this class, so both behave the same.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from contextlib import ExitStack
from pathlib import Path
from typing import Any, Callable, Literal

from langchain_core.messages import HumanMessage
from langgraph.types import Command
from pydantic import BaseModel, Field

from app.checkpoint import open_checkpointer
from app.decision_log import DecisionLog
from app.models import make_chat_model
from app.settings import Settings
from graph.builder import build_graph
from nodes.context import NodeContext

Status = Literal["done", "needs_input", "failed", "skipped"]
#: Called with (node name, that node's state update) as the graph runs.
ProgressCallback = Callable[[str, dict[str, Any]], None]


class AskResult(BaseModel):
    """What one turn produced."""

    thread_id: str
    status: Status
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
    route_history: list[str] = Field(default_factory=list)
    steps: int = 0


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
        self._checkpointer = checkpointer
        self._stack = ExitStack()
        self._graph = None
        self.workspace = str(Path(workspace or ".").resolve())
        self.decisions = DecisionLog(self.settings.decision_log)

    # --- lifecycle ----------------------------------------------------------------------
    def __enter__(self) -> "PerfScout":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._stack.close()
        self._graph = None

    @property
    def graph(self):
        if self._graph is None:
            saver = self._checkpointer
            if saver is None:
                saver = self._stack.enter_context(open_checkpointer(self.settings.checkpoint_target))
                self._checkpointer = saver
            ctx = NodeContext(
                llm=self._llm,
                runs_dir=str(self.settings.runs_dir),
                run_timeout_s=self.settings.run_timeout_s,
                startup_runs=self.settings.startup_runs,
                allowlist=self.settings.allowlist,
            )
            self._graph = build_graph(checkpointer=saver, context=ctx, on_decision=self.decisions.append)
        return self._graph

    # --- running ------------------------------------------------------------------------
    def config(self, thread_id: str) -> dict[str, Any]:
        return {"configurable": {"thread_id": thread_id}}

    def turn_input(
        self,
        text: str,
        thread_id: str,
        *,
        allow_run: bool | None = None,
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
            "run_dir": str(_unique_dir(run_dir)),
        }
        if allow_run is not None:
            inp["allow_run"] = bool(allow_run)
        for key, value in (("target", target), ("data_path", data_path), ("package", package), ("serial", serial)):
            if value:
                inp[key] = value
        return inp

    def ask(
        self,
        text: str,
        *,
        thread_id: str | None = None,
        allow_run: bool | None = None,
        target: str | None = None,
        package: str | None = None,
        serial: str | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> AskResult:
        """Run one turn. A pending question comes back as ``status="needs_input"``."""
        tid = thread_id or new_thread_id()
        inp = self.turn_input(text, tid, allow_run=allow_run, target=target, package=package, serial=serial)
        return self._run(inp, tid, on_progress)

    def resume(self, thread_id: str, answer: str, *, on_progress: ProgressCallback | None = None) -> AskResult:
        """Answer the pending question of ``thread_id`` and continue the turn."""
        return self._run(Command(resume=answer), thread_id, on_progress)

    def continue_run(self, thread_id: str, *, on_progress: ProgressCallback | None = None) -> AskResult:
        """Resume a turn that was interrupted by a crash, from its last checkpoint."""
        return self._run(None, thread_id, on_progress)

    async def aask(self, text: str, **kwargs: Any) -> AskResult:
        return await asyncio.to_thread(self.ask, text, **kwargs)

    async def aresume(self, thread_id: str, answer: str, **kwargs: Any) -> AskResult:
        return await asyncio.to_thread(self.resume, thread_id, answer, **kwargs)

    def _run(self, inp: Any, tid: str, on_progress: ProgressCallback | None) -> AskResult:
        cfg = self.config(tid)
        for chunk in self.graph.stream(inp, cfg, stream_mode="updates"):
            if on_progress is None:
                continue
            for node, update in chunk.items():
                on_progress(node, update if isinstance(update, dict) else {"value": update})
        return self.result(tid)

    def result(self, thread_id: str) -> AskResult:
        snap = self.graph.get_state(self.config(thread_id))
        st = snap.values or {}
        question = None
        for task in snap.tasks or ():
            for intr in task.interrupts or ():
                question = intr.value if isinstance(intr.value, dict) else {"prompt": str(intr.value)}
        analysis = st.get("analysis") or {}
        if question is not None:
            status: Status = "needs_input"
        elif (st.get("route_history") or [""])[-1].startswith("fail"):
            status = "failed"
        elif st.get("skipped"):
            status = "skipped"
        else:
            status = "done"
        return AskResult(
            thread_id=thread_id,
            status=status,
            route=st.get("_route"),
            route_info=dict(st.get("route_info") or {}),
            answer=st.get("answer") if question is None else None,
            question=question,
            report=st.get("report"),
            findings=list(analysis.get("findings") or []),
            hotspots=list(analysis.get("hotspots") or [])[:20],
            attribution=st.get("attribution"),
            exploration=st.get("exploration"),
            skipped=st.get("skipped"),
            diagnosis=st.get("diagnosis"),
            route_history=list(st.get("route_history") or []),
            steps=int(st.get("steps") or 0),
        )


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
