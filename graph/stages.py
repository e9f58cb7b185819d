"""The stage table: every fact about each node of the graph, in one place.

The builder (graph/builder.py) wires the graph from it and the policies (graph/policy.py) read
it, so a new stage, or a changed pipeline, is one row here — not an edit in eight tables in
two files. Pure: no LangGraph, no I/O; a row's predicates read declared state keys only.

The routes of the contract (docs/ROUTING.md) start at the node ``ROUTE_START`` names; from
there each stage's ``continue_to`` is the next one of its pipeline.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from graph.enums import NextStep, Node, Route

#: What a stage's success leads to, from the turn's route and the stage's state.
SuccessRule = Callable[[str, Mapping[str, Any]], NextStep]
#: Whether the stage produced what the next one needs.
EvidenceRule = Callable[[Mapping[str, Any]], bool]


def _always(step: NextStep) -> SuccessRule:
    def rule(route: str, state: Mapping[str, Any]) -> NextStep:
        return step

    rule.__name__ = f"always_{step.value}"
    return rule


def _has_data(state: Mapping[str, Any]) -> bool:
    return bool((state.get("collected") or {}).get("paths") or state.get("data_path"))


def _android_success(route: str, state: Mapping[str, Any]) -> NextStep:
    # A device query that collected analysable data continues to the analyzer; a device list
    # or a meminfo dump is answered where it was read.
    return NextStep.CONTINUE if (state.get("collected") or {}).get("paths") else NextStep.FINISH


def _analyzer_success(route: str, state: Mapping[str, Any]) -> NextStep:
    # Only source-level hot spots are worth attributing; a startup goes straight to the report.
    return NextStep.REPORT if route == Route.STARTUP.value else NextStep.CONTINUE


@dataclass(frozen=True, kw_only=True)
class StageSpec:
    """One stage: where CONTINUE leads, whether it runs programs, its evidence, its success.
    Rows are written by keyword (``kw_only``): six positional fields, three of them booleans,
    read wrong too easily."""

    node: Node
    #: The next stage of the pipeline (``NextStep.CONTINUE``); None is the graph's END.
    continue_to: Node | None
    #: It starts programs on this machine: the permission step applies (docs/permission.md).
    runs_programs: bool
    #: It produced its result.
    evidence: EvidenceRule
    #: Where its success leads (CONTINUE, REPORT or FINISH).
    on_success: SuccessRule
    #: It may ask the user for a missing field and be resumed with the answer.
    may_ask: bool


def _has_device_answer(state: Mapping[str, Any]) -> bool:
    return bool(state.get("collected") or state.get("answer"))


STAGES: dict[Node, StageSpec] = {
    s.node: s
    for s in (
        StageSpec(node=Node.COLLECTOR, continue_to=Node.ANALYZER, runs_programs=True,
                  evidence=_has_data, on_success=_always(NextStep.CONTINUE), may_ask=True),
        StageSpec(node=Node.STARTUP, continue_to=Node.ANALYZER, runs_programs=True,
                  evidence=_has_data, on_success=_always(NextStep.CONTINUE), may_ask=True),
        StageSpec(node=Node.DATA_LOCATOR, continue_to=Node.ANALYZER, runs_programs=False,
                  evidence=_has_data, on_success=_always(NextStep.CONTINUE), may_ask=True),
        StageSpec(node=Node.ANDROID_EXPERT, continue_to=Node.ANALYZER, runs_programs=False,
                  evidence=_has_device_answer, on_success=_android_success, may_ask=True),
        StageSpec(node=Node.ANALYZER, continue_to=Node.ATTRIBUTOR, runs_programs=False,
                  evidence=lambda st: bool(st.get("analysis")), on_success=_analyzer_success, may_ask=False),
        StageSpec(node=Node.ATTRIBUTOR, continue_to=Node.REPORTER, runs_programs=False,
                  evidence=lambda st: st.get("attribution") is not None, on_success=_always(NextStep.CONTINUE),
                  may_ask=False),
        StageSpec(node=Node.EXPLORER, continue_to=Node.REPORTER, runs_programs=False,
                  evidence=lambda st: bool(st.get("exploration")), on_success=_always(NextStep.FINISH), may_ask=True),
        # The reporter is a stage too: a report that could not be written is retried or
        # explained by the same policy as any other tool, not ended on a plain edge.
        StageSpec(node=Node.REPORTER, continue_to=None, runs_programs=False,
                  evidence=lambda st: bool(st.get("report")), on_success=_always(NextStep.FINISH), may_ask=False),
    )
}

#: The first node of each route's pipeline (the contract's six labels, docs/ROUTING.md).
ROUTE_START: dict[Route, Node] = {
    Route.FULL_ANALYSIS: Node.COLLECTOR,
    Route.STARTUP: Node.STARTUP,
    Route.EXPLORER: Node.EXPLORER,
    Route.ANDROID: Node.ANDROID_EXPERT,
    Route.ANALYZE: Node.DATA_LOCATOR,
    Route.END: Node.FALLBACK,
}

#: Nodes that may ask the user and be resumed with the answer.
ASKING_NODES: tuple[Node, ...] = tuple(n for n, s in STAGES.items() if s.may_ask)

__all__ = ["ASKING_NODES", "ROUTE_START", "STAGES", "StageSpec"]
