"""Ends a turn that cannot go on, saying exactly why: guard, rejection, or tool failure.

The reason is the policy's own: the node re-asks the (pure) policy of the edge that led here,
so what the user reads is what decided.
"""

from __future__ import annotations

from typing import Callable

from graph.enums import Node, RunGate, TurnOutcome
from graph.permission import run_gate
from graph.policy import decide_after
from nodes.framework.common import say, stamp
from nodes.framework.context import NodeContext


def _previous_node(state: dict) -> Node:
    for entry in reversed(state.get("route_history") or []):
        name = entry.split(":", 1)[0]
        if name in Node._value2member_map_ and name != Node.FAIL.value:
            return Node(name)
    return Node.ORCHESTRATOR


def make(ctx: NodeContext) -> Callable[[dict], dict]:
    def fail(state: dict) -> dict:
        _, _, decision = decide_after(state, _previous_node(state))
        err = state.get("last_error") or None
        text = decision.reason
        if err and err.get("message"):
            text = f"{text}. {err.get('tool')}: {err.get('message')}"
        if decision.step.value == "reject" and not err and run_gate(state.get("run_request")) is RunGate.OWN:
            text += ". Allow it with --allow-run (CLI), allow_run=True (API) or PERFSCOUT_ALLOWLIST (comma-separated program names)."
        update = stamp(state, Node.FAIL.value)
        update.update(say(Node.FAIL.value, f"Stopped: {text}"))
        update["diagnosis"] = text
        update["outcome"] = TurnOutcome.FAILED.value
        return update

    return fail
