"""The shapes every node writes besides its own result: a step stamp, a typed error, a typed
skip, a question, an answer.

Nodes never decide where the graph goes; they report what happened in these shapes and the
pure policies in ``graph.policy`` decide. Only node modules (nodes/*.py) build state updates;
toolkits raise ``nodes.framework.errors`` exceptions and the stage runner (nodes/framework/stage.py) calls these.
"""

from __future__ import annotations

from typing import Any, Mapping

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from graph.enums import TurnOutcome
from graph.payloads import HISTORY_LIMIT, Question
from nodes.framework.errors import ToolFailure  # noqa: F401  (the name nodes and tests raise)


def stamp(state: Mapping[str, Any], node: str, task: str | None = None) -> dict[str, Any]:
    """Count this node execution and add it to the route history (bounded)."""
    entry = f"{node}:{task}" if task else node
    history = list(state.get("route_history") or [])
    history.append(entry)
    return {
        "steps": int(state.get("steps") or 0) + 1,
        "route_history": history[-HISTORY_LIMIT:],
    }


def failure(tool: str, err: ToolFailure) -> dict[str, Any]:
    return {"last_error": {"tool": tool, "kind": err.kind.value, "message": err.message}}


def skip(node: str, reason: str) -> dict[str, Any]:
    """A capability that cannot run here: the typed skip plus the message the user reads."""
    text = f"Skipped {node}: {reason}"
    return {
        "skipped": {"node": node, "reason": reason},
        "outcome": TurnOutcome.SKIPPED.value,
        "answer": text,
        "messages": [AIMessage(content=text, name=node)],
    }


def ask(node: str, field: str, prompt: str, *, choices: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    """The one way a stage asks the user for ``field`` (answered through ask_user's interrupt).

    A result kept from an earlier turn must not pass for this turn's evidence, so the
    collection and the answer are cleared, whichever stage asks.
    """
    q: Question = {"field": field, "prompt": prompt, "for_node": node}
    if choices:
        q["choices"] = list(choices)
    q.update(extra)  # type: ignore[typeddict-item]
    return {"missing": [field], "question": q, "collected": None, "answer": None}


def last_user_text(state: Mapping[str, Any]) -> str:
    """The newest human message's text ('' when there is none)."""
    for m in reversed(list(state.get("messages") or [])):
        if isinstance(m, HumanMessage) or (isinstance(m, BaseMessage) and m.type == "human"):
            return m.content if isinstance(m.content, str) else str(m.content)
        if isinstance(m, dict) and m.get("role") in ("user", "human"):
            return str(m.get("content", ""))
    return ""


def say(node: str, text: str) -> dict[str, Any]:
    """The final answer of a turn, as state and as the last AI message."""
    return {"answer": text, "messages": [AIMessage(content=text, name=node)]}
