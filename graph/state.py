"""The state that every node reads and every policy decides from.

A ``TypedDict`` on purpose: a pydantic state model treats a leading-underscore key such as
``_route`` as a private attribute, so LangGraph would store the orchestrator's write while
nodes and routers keep seeing the default. Everything a policy reads is a declared key here;
every budget and counter lives here too, so a checkpoint carries it across a crash. The
payload types live in graph/payloads.py, which imports no LangGraph.
"""

from __future__ import annotations

from typing import Annotated, Any, TypedDict

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages

from graph.payloads import (  # noqa: F401  (re-exported: the state's own vocabulary)
    DEFAULT_RETRY_BUDGET,
    DEFAULT_STEP_BUDGET,
    HISTORY_LIMIT,
    Attribution,
    Collected,
    Exploration,
    Question,
    Report,
    RouteInfo,
    RunRequest,
    Skip,
    ToolError,
)


class PerfScoutState(TypedDict, total=False):
    """One thread's state. Keys not declared here are dropped by LangGraph, silently."""

    # --- conversation -------------------------------------------------------------------
    messages: Annotated[list[AnyMessage], add_messages]
    #: The orchestrator's label: one of graph.enums.ROUTE_LABELS.
    _route: str
    route_info: RouteInfo
    #: "node" or "node:task" entries of this turn, newest last, at most HISTORY_LIMIT.
    route_history: list[str]
    #: The aspect this turn's question asks about: a graph.enums.Lens value (the answer leads
    #: with it; nodes/perf/lenses.py). Set per turn by the orchestrator, or by --focus / focus=.
    lens: str
    #: A lens the caller gave for this turn (CLI --focus, MCP focus=): it wins over the message's.
    explicit_lens: str | None
    #: This turn answers from the thread's last analysis (docs/ROUTING.md rule 8): no new read.
    thread_data: bool
    #: Slices this turn's message names as sections (nodes/routing/section.py): the analyzer
    #: measures power and CPU over each, and the power answer leads with the first.
    sections: list[str]

    # --- budgets and counters (checkpointed: a resume never refunds them) -----------------
    steps: int
    step_budget: int
    retry_budget: int
    #: Attempts made this turn, per tool/node name.
    attempts: dict[str, int]
    last_error: ToolError | None
    #: Model seconds this turn may spend in total (PERFSCOUT_LLM_TURN_BUDGET), and has spent:
    #: every model call's deadline is the smaller of the call timeout and what is left
    #: (nodes/framework/model_call.py). Reset per turn by the orchestrator; a resume never refunds it.
    llm_turn_budget_s: float
    llm_time_s: float

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
    #: Two programs whose launch times are compared (nodes/collect/ab_launches.py), A first;
    #: each is a script the message names, run only under the same permission as ``target``.
    targets: list[str] | None
    #: An existing data file to analyse (the first of ``data_paths``).
    data_path: str | None
    #: Every data file or folder this message names, in order: two or more with a comparison
    #: cue are the two sides of a comparison, A first (nodes/compare/intent.py).
    data_paths: list[str] | None
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
    #: What a collection produced (graph.payloads.collection builds it).
    collected: Collected | None
    #: The analyzer's typed result (nodes.perf.model.AnalysisResult, as JSON).
    analysis: dict[str, Any] | None
    #: The thread's analysis before ``analysis`` (without its drawing data), so that "is it better
    #: than the previous run?" compares the last two (nodes/compare/answer.py).
    previous_analysis: dict[str, Any] | None
    #: The last comparison of two sides (nodes/compare/diff.py Comparison.to_dict()), or None.
    comparison: dict[str, Any] | None
    #: One entry per hot spot: status (graph.enums.AttributionStatus), file, line, excerpt.
    attribution: list[Attribution] | None
    #: Explorer results: matches with file, line and context.
    exploration: Exploration | None
    #: Where the reporter wrote: the folder and each file by kind.
    report: Report | None
    #: The run folder for this turn's artefacts.
    run_dir: str | None
    #: The turn's final answer text, also sent as the last AI message.
    answer: str | None
    #: Why a turn stopped early (guard, failure, rejection).
    diagnosis: str | None
    #: How the turn ended (graph.enums.TurnOutcome value) when a node decided it: the fail
    #: node writes ``failed``, a skip ``skipped``; None while it runs or when it simply finished.
    outcome: str | None
