"""What every node returns besides its own result: a step stamp, a typed error, a typed skip.

Nodes never decide where the graph goes; they report what happened in these shapes and the
pure policies in ``graph.policy`` decide.
"""

from __future__ import annotations

from typing import Any, Mapping

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from graph.enums import ErrorKind
from graph.state import HISTORY_LIMIT


class ToolFailure(Exception):
    """A tool call that failed in a way the retry policy must know about."""

    def __init__(self, kind: ErrorKind, message: str):
        self.kind = ErrorKind(kind)
        self.message = message
        super().__init__(message)


def stamp(state: Mapping[str, Any], node: str, task: str | None = None) -> dict[str, Any]:
    """Count this node execution and add it to the route history (bounded)."""
    entry = f"{node}:{task}" if task else node
    history = list(state.get("route_history") or [])
    history.append(entry)
    return {
        "steps": int(state.get("steps") or 0) + 1,
        "route_history": history[-HISTORY_LIMIT:],
    }


def attempt(state: Mapping[str, Any], tool: str) -> dict[str, int]:
    """The attempts map with one more attempt for ``tool`` (a new dict: state is never mutated)."""
    attempts = dict(state.get("attempts") or {})
    attempts[tool] = attempts.get(tool, 0) + 1
    return attempts


def failure(tool: str, err: ToolFailure) -> dict[str, Any]:
    return {"last_error": {"tool": tool, "kind": err.kind.value, "message": err.message}}


def skip(node: str, reason: str) -> dict[str, Any]:
    """A capability that cannot run here: the typed skip plus the message the user reads."""
    text = f"Skipped {node}: {reason}"
    return {
        "skipped": {"node": node, "reason": reason},
        "answer": text,
        "messages": [AIMessage(content=text, name=node)],
    }


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
