"""One model call with a wall-clock deadline, a capped reply, and a per-turn model-time budget.

Why not the client's own timeout: ``ChatOpenAI(timeout=…)`` becomes an ``httpx`` timeout, and
httpx timeouts are per operation (connect, each read), not per request. A server that sends its
headers and then one byte a second never trips a read timeout, so the call lasts as long as the
server likes (issue 14: 60–120 s with ``PERFSCOUT_LLM_TIMEOUT=3``). The OpenAI client has no
total-request deadline either. So every model call PerfScout makes (router tier
``nodes/routing/llm_tier.py``, fallback ``nodes/fallback.py``, report narrative
``nodes/report/narrative.py``) goes through :func:`call_model`, which runs ``llm.invoke`` in a
daemon thread and stops waiting at the deadline: the turn goes on with "timed out after N s".
The abandoned request itself is cut off by ``app.models``' HTTP transport, which stops reading a
body once the same deadline has passed (so no thread keeps a trickling connection open).

The turn's total model time is bounded too: ``PERFSCOUT_LLM_TURN_BUDGET`` seconds (default twice
the call timeout), stored in the checkpointed state (``llm_turn_budget_s``, spent in
``llm_time_s``), so a resumed turn does not get its model time back. Each call's deadline is the
smaller of the call timeout and what is left of the budget; with nothing left the call is not
made at all.

Replies are capped (``max_chars``) and made safe to print: terminal control sequences (ANSI
CSI/OSC, C0/C1 controls other than newline and tab) are shown escaped, never sent raw.
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

#: The default per-call deadline when a context does not say (seconds).
DEFAULT_CALL_TIMEOUT_S = 10.0
#: The turn budget is this many call timeouts when the state does not carry one.
TURN_BUDGET_FACTOR = 2.0

#: C0 controls except \t and \n, DEL, and C1 controls (U+0080–U+009F: a raw 0x9B is a CSI on
#: some terminals), plus the bidi overrides that reorder what a reader sees.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def escape_controls(text: str) -> str:
    """``text`` with every terminal control character shown as a visible escape (``\\x1b``).

    Newlines and tabs stay; ``\\r`` is escaped too (it lets a reply overwrite what was printed
    before it on the same line)."""
    return _UNSAFE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def cap_text(text: str, max_chars: int) -> tuple[str, bool]:
    """``text`` escaped and cut to at most ``max_chars`` characters (an ellipsis marks a cut)."""
    safe = escape_controls(text)
    if len(safe) <= max_chars:
        return safe, False
    return safe[: max(0, max_chars - 1)].rstrip() + "…", True


@dataclass(frozen=True)
class ModelReply:
    """What one call gave: the (capped, escaped) text, or why there is none."""

    text: str | None
    #: None on success; else a short reason ("timed out after 3 s", "failed: APIError: …").
    error: str | None
    #: Wall time the turn spent on this call (never more than the deadline plus a little).
    elapsed_s: float
    truncated: bool = False
    #: The reply's length before the cap (characters), for the reason a caller gives.
    raw_chars: int = 0


def reply_text(result: Any) -> str:
    """The text of a chat model's result (a message with str or content-block content)."""
    content = getattr(result, "content", result)
    if isinstance(content, list):  # content blocks
        content = "".join(b.get("text", "") if isinstance(b, dict) else str(b) for b in content)
    return str(content if content is not None else "")


def call_model(
    llm: Any,
    messages: Sequence[Any],
    *,
    deadline_s: float,
    max_chars: int,
    name: str = "model",
    **invoke_kwargs: Any,
) -> ModelReply:
    """``llm.invoke(messages, **invoke_kwargs)``, abandoned after ``deadline_s`` wall seconds.

    Never raises: a failure, a timeout or an empty budget is a reply with ``error`` set.
    """
    if deadline_s <= 0:
        return ModelReply(None, "no model time left in this turn's budget", 0.0)
    box: dict[str, Any] = {}

    def call() -> None:
        try:
            box["result"] = llm.invoke(list(messages), **invoke_kwargs)
        except BaseException as exc:  # reported as the reason, never raised into the graph
            box["error"] = exc

    t0 = time.monotonic()
    worker = threading.Thread(target=call, name=f"perfscout-{name}-call", daemon=True)
    worker.start()
    worker.join(deadline_s)
    elapsed = time.monotonic() - t0
    if worker.is_alive():
        return ModelReply(None, f"model call timed out after {round(deadline_s, 1):g} s", elapsed)
    if "error" in box:
        exc = box["error"]
        detail = escape_controls(str(exc).splitlines()[0] if str(exc) else "")[:120]
        return ModelReply(None, f"model call failed: {type(exc).__name__}: {detail}".rstrip(": "), elapsed)
    raw = reply_text(box.get("result"))
    text, cut = cap_text(raw, max_chars)
    return ModelReply(text, None, elapsed, truncated=cut, raw_chars=len(raw))


# --- the turn's budget (state keys declared in graph/state.py) -------------------------------


def turn_budget_s(state: Mapping[str, Any], call_timeout_s: float, default_s: float | None = None) -> float:
    """The turn's model-time budget: the state's ``llm_turn_budget_s`` (set per turn from
    Settings), else ``default_s`` (the context's), else 2× the call timeout."""
    b = state.get("llm_turn_budget_s")
    if isinstance(b, (int, float)) and not isinstance(b, bool) and b >= 0:
        return float(b)
    if default_s is not None:
        return float(default_s)
    return TURN_BUDGET_FACTOR * call_timeout_s


def time_left_s(ctx: Any, state: Mapping[str, Any], spent_s: float | None = None) -> float:
    """Seconds the next call may take: the call timeout (``ctx.llm_timeout_s``), or less when
    the turn's budget is nearly spent; 0 when it is spent."""
    timeout = float(getattr(ctx, "llm_timeout_s", DEFAULT_CALL_TIMEOUT_S))
    used = spent_s if spent_s is not None else float(state.get("llm_time_s") or 0.0)
    budget = turn_budget_s(state, timeout, getattr(ctx, "llm_turn_budget_s", None))
    return max(0.0, min(timeout, budget - used))


def spend(state: Mapping[str, Any], elapsed_s: float) -> dict[str, float]:
    """The state update after a call: this turn's model time so far."""
    return {"llm_time_s": round(float(state.get("llm_time_s") or 0.0) + max(0.0, elapsed_s), 3)}


__all__ = [
    "ModelReply",
    "call_model",
    "cap_text",
    "escape_controls",
    "reply_text",
    "spend",
    "time_left_s",
    "turn_budget_s",
    "DEFAULT_CALL_TIMEOUT_S",
]
