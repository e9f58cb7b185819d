"""A configured model choosing the explorer's tool calls: capped in calls and tokens.

The model only picks calls among the same four tools, one JSON object a turn, and reads the
one-line observations they return. Its own words never reach the answer; the answer is
composed from the tool results (``explore.compose_answer``). Anything it says that is not a
well-formed tool call ends its turn; if it made no useful call, the deterministic plan runs.
Plain-text JSON instead of native tool calling keeps this working with any chat model,
including the fake models tests use (they do not implement ``bind_tools``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any


from nodes.code.explore import TOOLS, Exploration

#: Model calls per exploration, and tokens: per reply and in total (prompt + replies).
MAX_MODEL_CALLS = 4
MAX_REPLY_TOKENS = 200
TOKEN_BUDGET = 6000
#: Observation text kept per call in the next prompt.
MAX_OBSERVATION_CHARS = 1500

SYSTEM = """You pick code-search tools for PerfScout. The user's workspace is searched only
through these tools; you never answer from memory. Reply with exactly ONE JSON object:
{"tool": "search", "args": {"pattern": "...", "regex": false, "paths": ["dir"], "glob": "*.py"}}
{"tool": "definitions", "args": {"name": "identifier"}}
{"tool": "glob", "args": {"pattern": "*.ets"}}
{"tool": "read", "args": {"path": "relative/file.py", "start": 30, "end": 50}}
{"tool": "finish"}
Paths are relative to the workspace. Finish as soon as the results answer the question."""


@dataclass
class ModelUse:
    calls: int = 0
    tokens: int = 0
    stopped: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"model_calls": self.calls, "tokens": self.tokens, "stopped": self.stopped}


def plan_with_model(llm: Any, ex: Exploration, hints: dict[str, Any], *, max_calls: int = MAX_MODEL_CALLS, token_budget: int = TOKEN_BUDGET) -> ModelUse:
    """Let ``llm`` drive ``ex`` until it finishes, errs, or a cap is reached."""
    use = ModelUse()
    observations: list[str] = []
    while True:
        if use.calls >= max_calls:
            use.stopped = f"model call limit ({max_calls}) reached"
            break
        if ex.calls_left <= 0:
            use.stopped = "tool call limit reached"
            break
        prompt = _prompt(ex.query.text, hints, observations)
        cost = _approx_tokens(SYSTEM) + _approx_tokens(prompt) + MAX_REPLY_TOKENS
        if use.tokens + cost > token_budget:
            use.stopped = f"token budget ({token_budget}) reached"
            break
        try:
            from langchain_core.messages import HumanMessage, SystemMessage  # only when a model is called
            reply = llm.invoke([SystemMessage(SYSTEM), HumanMessage(prompt)], max_tokens=MAX_REPLY_TOKENS)
        except Exception as e:  # noqa: BLE001 - any model failure falls back to the plan
            use.stopped = f"model error: {type(e).__name__}"
            break
        use.calls += 1
        use.tokens += _used_tokens(reply, cost)
        call = parse_call(getattr(reply, "content", reply))
        if call is None:
            use.stopped = "model reply was not a tool call"
            break
        tool, args = call
        if tool == "finish":
            use.stopped = "model finished"
            break
        obs = ex.call(tool, args)
        observations.append(f"{tool} {json.dumps(args, ensure_ascii=False)} → {obs[:MAX_OBSERVATION_CHARS]}")
    return use


def parse_call(content: Any) -> tuple[str, dict[str, Any]] | None:
    """The (tool, args) of a reply holding one JSON object, or None."""
    if not isinstance(content, str):
        content = " ".join(c.get("text", "") if isinstance(c, dict) else str(c) for c in content or [])
    m = re.search(r"\{.*\}", content, re.S)
    if not m:
        return None
    try:
        obj = json.loads(m.group(0))
    except json.JSONDecodeError:
        return None
    if not isinstance(obj, dict):
        return None
    tool = obj.get("tool")
    args = obj.get("args") or {}
    if tool == "finish":
        return "finish", {}
    if tool not in TOOLS or not isinstance(args, dict):
        return None
    return tool, args


def _prompt(text: str, hints: dict[str, Any], observations: list[str]) -> str:
    parts = [f"User request: {text}", f"Extracted from it: {json.dumps(hints, ensure_ascii=False)}"]
    if observations:
        parts.append("Results so far:\n" + "\n".join(observations))
    parts.append("Next tool call (one JSON object):")
    return "\n\n".join(parts)


def _approx_tokens(text: str) -> int:
    return len(text) // 3 + 1


def _used_tokens(reply: Any, estimate: int) -> int:
    usage = getattr(reply, "usage_metadata", None) or {}
    total = usage.get("total_tokens") if isinstance(usage, dict) else None
    return int(total) if total else estimate
