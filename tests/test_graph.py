"""The compiled graph: wiring, retries, guards, skips and the decision log, with a fresh
checkpointer per test."""

from __future__ import annotations

import uuid

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from app.decision_log import DecisionLog
from app.replay import replay_file
from graph.builder import build_graph
from graph.enums import ErrorKind, Node
from nodes.framework.common import ToolFailure, failure, say, stamp
from nodes.framework.stage import attempt


def _cfg():
    return {"configurable": {"thread_id": uuid.uuid4().hex}}


def _route_as(label: str):
    """An orchestrator that writes a fixed label (wiring tests must not depend on the router)."""

    def orchestrator(state):
        return {"_route": label, "steps": 1, "route_history": [f"orchestrator:{label}"], "attempts": {},
                "last_error": None, "skipped": None, "missing": [], "question": None}

    return orchestrator


def _recording(node: Node, calls: list[str]):
    def fn(state):
        calls.append(node.value)
        upd = stamp(state, node.value)
        upd.update(say(node.value, f"{node.value} ran"))
        if node is Node.EXPLORER:
            upd["exploration"] = {"matches": []}
        if node is Node.ATTRIBUTOR:
            upd["attribution"] = []
        if node is Node.REPORTER:
            upd["report"] = {"dir": "/tmp/r"}
        return upd

    return fn


ROUTE_FIRST_NODE = {
    "full_analysis": Node.COLLECTOR,
    "startup": Node.STARTUP,
    "explorer": Node.EXPLORER,
    "android": Node.ANDROID_EXPERT,
    "analyze": Node.DATA_LOCATOR,
    "end": Node.FALLBACK,
}


@pytest.mark.parametrize("label,first", ROUTE_FIRST_NODE.items())
def test_each_route_reaches_its_node(label, first):
    calls: list[str] = []
    nodes = {Node.ORCHESTRATOR: _route_as(label)}
    nodes.update({n: _recording(n, calls) for n in ROUTE_FIRST_NODE.values()})
    g = build_graph(checkpointer=InMemorySaver(), nodes=nodes)
    out = g.invoke({"messages": [HumanMessage("x")], "allow_run": True}, _cfg())
    assert calls and calls[0] == first.value
    assert out["route_history"][1] == first.value


def test_real_router_sends_examples_to_their_routes():
    g = build_graph(checkpointer=InMemorySaver())
    for text, node in [("你好", "fallback"), ("分析一下这份数据", "data_locator")]:
        cfg = _cfg()
        g.invoke({"messages": [HumanMessage(text)], "workspace": "."}, cfg)
        assert g.get_state(cfg).values["route_history"][1] == node


def _flaky_collector(kind: ErrorKind, calls: list[int]):
    def collector(state):
        calls.append(1)
        upd = stamp(state, "collector")
        upd["attempts"] = attempt(state, "collector")
        upd.update(failure("collector", ToolFailure(kind, "py-spy could not attach")))
        return upd

    return collector


def test_retryable_error_is_retried_once_then_fails_with_explanation():
    calls: list[int] = []
    g = build_graph(
        checkpointer=InMemorySaver(),
        nodes={Node.ORCHESTRATOR: _route_as("full_analysis"),
               Node.COLLECTOR: _flaky_collector(ErrorKind.RETRYABLE, calls)},
    )
    out = g.invoke({"messages": [HumanMessage("x")], "allow_run": True}, _cfg())
    assert len(calls) == 2
    assert out["attempts"]["collector"] == 2
    assert out["route_history"][-1] == "fail"
    assert "retry budget spent" in out["answer"] and "py-spy could not attach" in out["answer"]


def test_non_retryable_error_fails_at_once():
    calls: list[int] = []
    g = build_graph(
        checkpointer=InMemorySaver(),
        nodes={Node.ORCHESTRATOR: _route_as("full_analysis"),
               Node.COLLECTOR: _flaky_collector(ErrorKind.VALIDATION, calls)},
    )
    out = g.invoke({"messages": [HumanMessage("x")], "allow_run": True}, _cfg())
    assert len(calls) == 1 and "not retryable" in out["answer"]


def test_retry_budget_from_state_is_honoured():
    calls: list[int] = []
    g = build_graph(
        checkpointer=InMemorySaver(),
        nodes={Node.ORCHESTRATOR: _route_as("full_analysis"),
               Node.COLLECTOR: _flaky_collector(ErrorKind.RETRYABLE, calls)},
    )
    g.invoke({"messages": [HumanMessage("x")], "allow_run": True, "retry_budget": 0}, _cfg())
    assert len(calls) == 1


def test_a_timeout_is_not_retried():
    """The same run would end at the same limit: one attempt, and the answer says so."""
    calls: list[int] = []
    g = build_graph(
        checkpointer=InMemorySaver(),
        nodes={Node.ORCHESTRATOR: _route_as("full_analysis"),
               Node.COLLECTOR: _flaky_collector(ErrorKind.TIMEOUT, calls)},
    )
    out = g.invoke({"messages": [HumanMessage("x")], "allow_run": True, "retry_budget": 3}, _cfg())
    assert len(calls) == 1 and "not retryable" in out["answer"]


def test_missing_permission_is_rejected_before_anything_runs():
    g = build_graph(checkpointer=InMemorySaver(), nodes={Node.ORCHESTRATOR: _route_as("full_analysis")})
    out = g.invoke({"messages": [HumanMessage("x")], "target": "app.py"}, _cfg())
    assert out["route_history"][-1] == "fail"
    assert "would run `app.py`" in out["answer"] and "--allow-run" in out["answer"]


def test_forced_oscillation_stops_at_the_guard_with_a_diagnosis():
    def always_asks(state):
        upd = stamp(state, "collector")
        upd["missing"] = ["target"]
        upd["question"] = {"field": "target", "prompt": "which?", "for_node": "collector"}
        return upd

    g = build_graph(
        checkpointer=InMemorySaver(),
        nodes={Node.ORCHESTRATOR: _route_as("full_analysis"), Node.COLLECTOR: always_asks},
    )
    cfg = _cfg()
    g.invoke({"messages": [HumanMessage("x")], "allow_run": True}, cfg)
    for answer in ["a.py", "b.py", "c.py", "d.py"]:
        if not g.get_state(cfg).next:
            break
        g.invoke(Command(resume=answer), cfg)
    st = g.get_state(cfg).values
    assert not g.get_state(cfg).next
    assert st["route_history"][-1] == "fail"
    assert "oscillation" in st["diagnosis"]


def test_step_budget_stops_a_long_turn():
    g = build_graph(checkpointer=InMemorySaver(), nodes={Node.ORCHESTRATOR: _route_as("analyze")})
    out = g.invoke(
        {"messages": [HumanMessage("x")], "step_budget": 2, "collected": {"paths": {"d": "/nonexistent"}}},
        _cfg(),
    )
    assert "step budget exhausted" in out["answer"]


def test_skipped_capability_ends_with_its_reason():
    def no_device(state):
        upd = stamp(state, "android_expert")
        upd.update({"skipped": {"node": "android_expert", "reason": "no device attached"},
                    "answer": "Skipped android_expert: no device attached"})
        return upd

    g = build_graph(checkpointer=InMemorySaver(),
                    nodes={Node.ORCHESTRATOR: _route_as("android"), Node.ANDROID_EXPERT: no_device})
    out = g.invoke({"messages": [HumanMessage("x")]}, _cfg())
    assert out["route_history"][-1] == "android_expert"
    assert "no device attached" in out["answer"]


def test_ask_user_interrupt_and_resume_fills_the_field(tmp_path):
    trace = tmp_path / "t.json"
    trace.write_text('{"traceEvents": []}')
    seen: list[str] = []

    def analyzer(state):
        seen.append(state["collected"]["paths"]["data"])
        upd = stamp(state, "analyzer")
        upd["analysis"] = {"format": "x"}
        return upd

    g = build_graph(checkpointer=InMemorySaver(),
                    nodes={Node.ORCHESTRATOR: _route_as("analyze"), Node.ANALYZER: analyzer,
                           Node.ATTRIBUTOR: _recording(Node.ATTRIBUTOR, []),
                           Node.REPORTER: _recording(Node.REPORTER, [])})
    cfg = _cfg()
    g.invoke({"messages": [HumanMessage("分析一下这份数据")], "workspace": str(tmp_path)}, cfg)
    snap = g.get_state(cfg)
    assert snap.next == ("ask_user",)
    assert snap.tasks[0].interrupts[0].value["field"] == "data_path"
    g.invoke(Command(resume="t.json"), cfg)
    assert seen == [str(trace.resolve())]
    assert g.get_state(cfg).values["route_history"][-1] == "reporter"


def test_a_reporter_that_fails_is_retried_then_explained():
    calls: list[int] = []

    def reporter(state):
        calls.append(1)
        upd = stamp(state, "reporter")
        upd["attempts"] = attempt(state, "reporter")
        upd.update(failure("reporter", ToolFailure(ErrorKind.RETRYABLE, "disk full")))
        return upd

    g = build_graph(checkpointer=InMemorySaver(), nodes={
        Node.ORCHESTRATOR: _route_as("analyze"),
        Node.DATA_LOCATOR: lambda s: stamp(s, "data_locator") | {"collected": {"paths": {"d": "x"}}},
        Node.ANALYZER: lambda s: stamp(s, "analyzer") | {"analysis": {"format": "x"}},
        Node.ATTRIBUTOR: _recording(Node.ATTRIBUTOR, []),
        Node.REPORTER: reporter,
    })
    out = g.invoke({"messages": [HumanMessage("x")]}, _cfg())
    assert len(calls) == 2 and out["route_history"][-1] == "fail"
    assert "disk full" in out["answer"]


def test_decisions_are_logged_with_reasons_and_replay_detects_a_policy_change(tmp_path, monkeypatch):
    log = DecisionLog(tmp_path / "decisions.jsonl")
    g = build_graph(checkpointer=InMemorySaver(), on_decision=log.append,
                    nodes={Node.ORCHESTRATOR: _route_as("full_analysis")})
    g.invoke({"messages": [HumanMessage("x")], "target": "app.py"}, _cfg())
    recs = list(log.records())
    assert [r["node"] for r in recs] == ["orchestrator", "collector"]
    assert recs[1]["decision"] == "reject" and "running programs is off" in recs[1]["reason"]
    assert recs[1]["input"]["needs_permission"] is True
    assert replay_file(str(log.path)).diffs == []

    import graph.policy as policy

    original = policy.choose_next_after_stage

    def lenient(v):  # a "policy change": permission no longer checked
        if v.needs_permission and not v.has_permission:
            return policy.Decision(policy.NextStep.CONTINUE, "changed")
        return original(v)

    monkeypatch.setattr(policy, "choose_next_after_stage", lenient)
    rep = replay_file(str(log.path))
    assert len(rep.diffs) == 1 and rep.diffs[0].recorded == "reject" and rep.diffs[0].now == "continue"
