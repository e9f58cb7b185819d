"""The state that every node reads and every policy decides from.

A ``TypedDict`` on purpose: a pydantic state model treats a leading-underscore key such as
``_route`` as a private attribute, so LangGraph would store the orchestrator's write while
nodes and routers keep seeing the default. Everything a policy reads is a declared key here;
every budget and counter lives here too, so a checkpoint carries it across a crash.
"""

from __future__ import annotations

from typing import Annotated, Any, TypedDict

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages

#: Default number of node executions one turn may take before the guard stops it.
DEFAULT_STEP_BUDGET = 24
#: Default number of *extra* attempts a retryable tool error gets.
DEFAULT_RETRY_BUDGET = 1
#: How many route-history entries a thread keeps (the oscillation guard needs a short tail).
HISTORY_LIMIT = 64


class RouteInfo(TypedDict, total=False):
    """Why the orchestrator chose ``_route``: which tier decided, how sure, and why."""

    route: str
    tier: str
    confidence: float
    reason: str
    latency_ms: float
    override: str | None


class ToolError(TypedDict):
    """The last tool failure. Policies read ``kind`` only; ``message`` is for people."""

    tool: str
    kind: str
    message: str


class Skip(TypedDict):
    """A capability that could not run here, and why ("no device attached", …)."""

    node: str
    reason: str


class Question(TypedDict, total=False):
    """A missing field the user can supply, asked through ``interrupt()``."""

    field: str
    prompt: str
    for_node: str
    choices: list[str]


class RunRequest(TypedDict, total=False):
    """The exact program a run stage would start, and what permission it has (docs/permission.md).

    Built by the stage (nodes/collect/permission.py) from ``target`` and ``target_origin``;
    the stage policy reads ``origin``, ``refusal`` and ``confirmation`` only.
    """

    argv: list[str]
    #: The argv as one shell-quoted line, for prompts and refusals.
    display: str
    #: graph.enums.TargetOrigin value.
    origin: str
    #: Why this proposal is never run, even when confirmed (None: it may run once confirmed).
    refusal: str | None
    #: Arguments that point outside the workspace (named in the confirmation).
    outside_workspace: list[str]
    #: graph.enums.Confirmation value.
    confirmation: str


class PerfScoutState(TypedDict, total=False):
    """One thread's state. Keys not declared here are dropped by LangGraph, silently."""

    # --- conversation -------------------------------------------------------------------
    messages: Annotated[list[AnyMessage], add_messages]
    #: The orchestrator's label: one of graph.enums.ROUTE_LABELS.
    _route: str
    route_info: RouteInfo
    #: "node" or "node:task" entries of this turn, newest last, at most HISTORY_LIMIT.
    route_history: list[str]

    # --- budgets and counters (checkpointed: a resume never refunds them) -----------------
    steps: int
    step_budget: int
    retry_budget: int
    #: Attempts made this turn, per tool/node name.
    attempts: dict[str, int]
    last_error: ToolError | None

    # --- facts the policies need ----------------------------------------------------------
    #: The user allowed PerfScout to run programs on this machine (--allow-run, allowlist, yes).
    allow_run: bool
    #: What to run or measure: a command line, a script path, or an Android package.
    target: str | None
    #: Who named ``target`` (graph.enums.TargetOrigin value); missing means the caller set it.
    target_origin: str | None
    #: A target the caller gave for this turn only (CLI --target, API target=): it wins over
    #: anything the message names; the orchestrator moves it to ``target`` and clears it.
    explicit_target: str | None
    #: The exact argv a run stage would start and its permission (per turn, never carried over).
    run_request: RunRequest | None
    #: An existing data file to analyse.
    data_path: str | None
    #: Android: package name and device serial, when given.
    package: str | None
    serial: str | None
    #: The root every path is resolved in (the explorer's sandbox).
    workspace: str
    #: Fields the current stage needs and the user can supply.
    missing: list[str]
    question: Question | None
    #: The user's answer to ``question`` (written by ask_user after resume).
    answer_to_question: str | None
    skipped: Skip | None

    # --- results (JSON-able references, never large payloads) ------------------------------
    #: What a collection produced: {"kind", "paths": {...}, "summary": {...}, "source": ...}.
    collected: dict[str, Any] | None
    #: The analyzer's typed result (nodes.perf.model.AnalysisResult, as JSON).
    analysis: dict[str, Any] | None
    #: One entry per hot spot: status found/system/not_found, file, line, excerpt.
    attribution: list[dict[str, Any]] | None
    #: Explorer results: matches with file, line and context.
    exploration: dict[str, Any] | None
    #: Where the reporter wrote: {"dir", "markdown", "html", "json", ...}.
    report: dict[str, Any] | None
    #: The run folder for this turn's artefacts.
    run_dir: str | None
    #: The turn's final answer text, also sent as the last AI message.
    answer: str | None
    #: Why a turn stopped early (guard, failure, rejection).
    diagnosis: str | None
