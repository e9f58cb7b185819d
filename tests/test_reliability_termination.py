"""Every turn ends: arbitrary node outcomes never loop the graph past its step budget.

Hypothesis draws the route, the permission, and for every stage node a sequence of outcomes
(success, each error kind, skip, ask the user, nothing at all); the node functions are injected
with ``build_graph(nodes=...)`` and every interrupt is answered (sometimes with an empty answer).
The real policies, edges, guard and ``fail`` node decide. Each run must end — no
GraphRecursionError — within the step budget, with a final message.
"""

from __future__ import annotations

import uuid

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.errors import GraphRecursionError
from langgraph.types import Command

from graph.builder import build_graph
from graph.enums import ROUTE_LABELS, ErrorKind, Node
from nodes.framework.common import ToolFailure, failure, say, skip, stamp
from nodes.framework.stage import attempt

STAGES = [Node.COLLECTOR, Node.STARTUP, Node.EXPLORER, Node.ANDROID_EXPERT, Node.DATA_LOCATOR,
          Node.ANALYZER, Node.ATTRIBUTOR, Node.REPORTER]
OUTCOMES = ["ok", "ask", "skip", "nothing", *[k.value for k in ErrorKind]]
#: Nodes after which a turn may end (END edges), besides a skip.
TERMINAL = {Node.REPORTER.value, Node.FALLBACK.value, Node.FAIL.value, Node.EXPLORER.value,
            Node.ANDROID_EXPERT.value}
#: A node may run once past the budget: the guard reads the count after it ran, then ``fail`` runs.
SLACK = 2


def _success(node: Node, state: dict) -> dict:
    if node in (Node.COLLECTOR, Node.STARTUP, Node.DATA_LOCATOR):
        return {"collected": {"kind": "profile", "paths": {"data": "/tmp/x.json"}}}
    if node is Node.ANDROID_EXPERT:
        return {"collected": {"kind": "android", "paths": {"trace": "/tmp/t.pftrace"}}}
    if node is Node.ANALYZER:
        return {"analysis": {"format": "x", "findings": []}}
    if node is Node.ATTRIBUTOR:
        return {"attribution": []}
    if node is Node.EXPLORER:
        return {"exploration": {"matches": []}, **say(node.value, "found nothing")}
    return {"report": {"dir": "r"}, **say(node.value, "report written")}  # reporter


def _scripted(node: Node, script: list[str], used: list[str]):
    """A node that plays its outcomes in order, then keeps playing the last one."""

    def fn(state):
        i = sum(1 for u in used if u == node.value)
        used.append(node.value)
        outcome = script[min(i, len(script) - 1)]
        upd = stamp(state, node.value)
        upd["attempts"] = attempt(state, node.value)
        if outcome == "ok":
            upd.update(_success(node, state))
            upd.update({"last_error": None, "missing": [], "question": None})
        elif outcome == "ask":
            upd["missing"] = ["target"]
            upd["question"] = {"field": "target", "prompt": "which?", "for_node": node.value}
        elif outcome == "skip":
            upd.update(skip(node.value, "no device attached"))
        elif outcome != "nothing":
            upd.update(failure(node.value, ToolFailure(ErrorKind(outcome), f"{outcome} from {node.value}")))
        if node is Node.REPORTER and outcome != "ok":
            # Like the real reporter, it says why there is no report whatever happened.
            upd.update(say(node.value, f"No report: {outcome}"))
        return upd

    return fn


def _orchestrator(label: str):
    def fn(state):
        return {"_route": label, "steps": 1, "route_history": [f"orchestrator:{label}"], "attempts": {},
                "last_error": None, "skipped": None, "missing": [], "question": None, "answer": None}

    return fn


def _fallback(state):
    upd = stamp(state, Node.FALLBACK.value)
    upd.update(say(Node.FALLBACK.value, "general answer"))
    return upd


@settings(max_examples=150, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(
    label=st.sampled_from(ROUTE_LABELS + ("not_a_label",)),
    allow_run=st.booleans(),
    package=st.sampled_from([None, "com.demo.shop"]),
    scripts=st.fixed_dictionaries({n.value: st.lists(st.sampled_from(OUTCOMES), min_size=1, max_size=6)
                                   for n in STAGES}),
    answers=st.lists(st.sampled_from(["app.py", "", "  ", "yes", "com.demo.shop"]), min_size=1, max_size=8),
    step_budget=st.integers(min_value=1, max_value=30),
    retry_budget=st.integers(min_value=0, max_value=4),
)
def test_any_outcome_sequence_ends_within_the_step_budget(label, allow_run, package, scripts, answers,
                                                          step_budget, retry_budget):
    used: list[str] = []
    nodes = {Node(n): _scripted(Node(n), s, used) for n, s in scripts.items()}
    nodes[Node.ORCHESTRATOR] = _orchestrator(label)
    nodes[Node.FALLBACK] = _fallback
    g = build_graph(checkpointer=InMemorySaver(), nodes=nodes)
    cfg = {"configurable": {"thread_id": uuid.uuid4().hex}}
    inp = {"messages": [HumanMessage("x")], "allow_run": allow_run, "package": package,
           "step_budget": step_budget, "retry_budget": retry_budget}
    try:
        g.invoke(inp, cfg)
        resumes = 0
        while g.get_state(cfg).next:
            # Every pause is a question; the guard must end the turn before answers run out.
            assert resumes <= step_budget + SLACK, "more questions than the step budget allows"
            g.invoke(Command(resume=answers[resumes % len(answers)]), cfg)
            resumes += 1
    except GraphRecursionError as e:  # the failure this test exists to rule out
        raise AssertionError(f"the graph looped: {e}") from e
    st_ = g.get_state(cfg).values
    history = st_["route_history"]
    assert st_["steps"] == len(history) <= step_budget + SLACK, history
    assert st_.get("answer") and st_["answer"].strip(), f"no final message: {history}"
    last = history[-1].split(":", 1)[0]
    skipped = st_.get("skipped") or {}
    assert last in TERMINAL or skipped.get("node") == last, history
    if last == Node.FAIL.value:
        assert st_.get("diagnosis"), "a failed turn says why"
