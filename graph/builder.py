"""Builds the PerfScout graph: nodes, and conditional edges that call the pure policies.

Every conditional edge has a ``path_map`` listing every value its policy can return, ``END``
included: LangGraph raises ``KeyError`` at run time on an unmapped value, and with no map at all
it ends the run silently. Route values are enums, so the maps are built from the enums and a
test checks they are total.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph

from graph.enums import RENAMED_NODES, NextStep, Node
from graph.policy import decide_after
from graph.stages import ASKING_NODES, ROUTE_START, STAGES
from graph.state import PerfScoutState
from nodes import (
    analyzer,
    android_expert,
    ask_user,
    attributor,
    collector,
    explorer,
    fail,
    fallback,
    orchestrator,
    data_locator,
    reporter,
    startup,
)
from nodes.framework.context import NodeContext

#: Called with one record per routing decision (the app writes them to the decision log).
DecisionSink = Callable[[dict[str, Any]], None]
#: Version of a decision record. 1 (no "schema" key): stage views without ``run_gate`` and
#: ``command``; 2: with them; 3: the orchestrator's decision is the first node's name
#: ("collector", not "collect"). app/replay.py reads all three.
DECISION_SCHEMA = 3

_FACTORIES: dict[Node, Callable[[NodeContext], Callable[[dict], dict]]] = {
    Node.ORCHESTRATOR: orchestrator.make,
    Node.COLLECTOR: collector.make,
    Node.STARTUP: startup.make,
    Node.EXPLORER: explorer.make,
    Node.ANDROID_EXPERT: android_expert.make,
    Node.DATA_LOCATOR: data_locator.make,
    Node.ANALYZER: analyzer.make,
    Node.ATTRIBUTOR: attributor.make,
    Node.REPORTER: reporter.make,
    Node.FALLBACK: fallback.make,
    Node.ASK_USER: ask_user.make,
    Node.FAIL: fail.make,
}

#: The orchestrator's edge: each route's first node, or the fail node (graph/stages.py).
#: The reporter too: an ``analyze`` turn on the thread's last analysis goes straight to it.
ROUTE_PATH_MAP: dict[str, str] = {n.value: n.value for n in (*ROUTE_START.values(), Node.REPORTER, Node.FAIL)}

ANSWER_PATH_MAP: dict[str, str] = {n.value: n.value for n in ASKING_NODES} | {
    Node.FAIL.value: Node.FAIL.value,
    END: END,
}


def stage_path_map(stage: Node) -> dict[str, str]:
    """The total map for a stage's edge: every NextStep has a target, END included."""
    nxt = STAGES[stage].continue_to
    return {
        NextStep.CONTINUE.value: nxt.value if nxt else END,
        NextStep.RETRY.value: stage.value,
        NextStep.ASK_USER.value: Node.ASK_USER.value,
        NextStep.REJECT.value: Node.FAIL.value,
        NextStep.SKIP.value: END,
        NextStep.FAIL.value: Node.FAIL.value,
        NextStep.FINISH.value: END,
        NextStep.REPORT.value: Node.REPORTER.value,
    }


def _edge(node: Node, sink: DecisionSink | None) -> Callable[[Mapping[str, Any], RunnableConfig], str]:
    def route(state: Mapping[str, Any], config: RunnableConfig) -> str:
        policy, view, decision = decide_after(state, node)
        if sink is not None:
            thread = ((config or {}).get("configurable") or {}).get("thread_id")
            sink(
                {
                    "schema": DECISION_SCHEMA,
                    "thread": thread,
                    "node": node.value,
                    "policy": policy,
                    "input": view,
                    "decision": decision.step.value,
                    "reason": decision.reason,
                    "tier": (state.get("route_info") or {}).get("tier") if node is Node.ORCHESTRATOR else None,
                    # the aspect the question asks about (graph.enums.Lens); records before it have none
                    "lens": state.get("lens") if node is Node.ORCHESTRATOR else None,
                }
            )
        return decision.step.value

    route.__name__ = f"choose_next_after_{node.value}"
    return route


def _add_renamed(g: StateGraph, built: Mapping[Node, Callable[[dict], dict]], sink: DecisionSink | None) -> None:
    """A node under each earlier name (graph/enums.py ``RENAMED_NODES``), running the node it
    became with that node's edge. No edge leads to one: only a thread checkpointed by an
    earlier version, stopped before the old name (killed, crashed, Ctrl-C), reaches it when it
    is continued — without it LangGraph would find no task and the turn would read "done"."""
    for old, new in RENAMED_NODES.items():
        node = Node(new)
        g.add_node(old, built[node])
        if node in STAGES:
            g.add_conditional_edges(old, _edge(node, sink), stage_path_map(node))


def build_graph(
    checkpointer: Any = None,
    llm: Any = None,
    *,
    context: NodeContext | None = None,
    nodes: Mapping[Node | str, Callable[[dict], dict]] | None = None,
    on_decision: DecisionSink | None = None,
    **compile_kwargs: Any,
):
    """The compiled graph.

    ``llm``: a chat model for the routing tier and the fallback, or None (offline).
    ``nodes``: replacements for node functions, by name (tests inject failing tools this way).
    ``on_decision``: receives every routing decision with its reason and exact input.
    """
    ctx = context or NodeContext(llm=llm)
    if llm is not None and ctx.llm is None:
        from dataclasses import replace

        ctx = replace(ctx, llm=llm)
    overrides = {Node(k): v for k, v in (nodes or {}).items()}
    # The context is LangGraph's context_schema: the shell passes one per invocation
    # (invoke(..., context=ctx)); ``ctx`` here is the default for one that passes none.
    g = StateGraph(PerfScoutState, context_schema=NodeContext)
    built: dict[Node, Callable[[dict], dict]] = {}
    for node, factory in _FACTORIES.items():
        built[node] = overrides.get(node) or factory(ctx)
        g.add_node(node.value, built[node])

    g.add_edge(START, Node.ORCHESTRATOR.value)
    g.add_conditional_edges(Node.ORCHESTRATOR.value, _edge(Node.ORCHESTRATOR, on_decision), ROUTE_PATH_MAP)
    for stage in STAGES:
        g.add_conditional_edges(stage.value, _edge(stage, on_decision), stage_path_map(stage))
    g.add_conditional_edges(Node.ASK_USER.value, _edge(Node.ASK_USER, on_decision), ANSWER_PATH_MAP)
    for terminal in (Node.FALLBACK, Node.FAIL):
        g.add_edge(terminal.value, END)
    _add_renamed(g, built, on_decision)
    return g.compile(checkpointer=checkpointer, **compile_kwargs)
