"""Asks the user for a missing field through ``interrupt()``.

LangGraph re-runs a node from its top when it is resumed, so nothing here has a side effect
before the interrupt: the question is built from the state, asked, and the answer returned.
"""

from __future__ import annotations

from typing import Callable

from langgraph.types import interrupt

from graph.enums import Confirmation, Node
from nodes.run_stages.local_run import YES
from nodes.framework.common import stamp
from nodes.framework.context import NodeContext

#: Which state key an answer to each field fills.
ANSWER_KEYS = {
    "target": "target",
    "data_path": "data_path",
    "package": "package",
    "serial": "serial",
    "query": "answer_to_question",
}

_DEFAULT_PROMPTS = {
    "target": "Which program should I run? Give a script path or a command line.",
    "data_path": "Which file should I analyse? Give the path of a trace or profile.",
    "package": "Which Android package? (for example com.demo.shop)",
    "serial": "Which device? Give its serial (see `adb devices -l`).",
    "confirm_run": "Run the command your message proposes? (yes/no)",
}


def make(ctx: NodeContext) -> Callable[[dict], dict]:
    def ask_user(state: dict) -> dict:
        q = dict(state.get("question") or {})
        field = q.get("field") or ((state.get("missing") or ["query"])[0])
        q.setdefault("field", field)
        q.setdefault("prompt", _DEFAULT_PROMPTS.get(field, f"Please provide {field}."))
        answer = interrupt(q)
        text = answer if isinstance(answer, str) else (answer or {}).get("answer", "")
        text = str(text or "").strip()
        update = stamp(state, Node.ASK_USER.value, field)
        update.update({"answer_to_question": text, "missing": [], "question": q})
        if field == "confirm_run":
            # A yes confirms exactly the argv that was asked about, this turn (docs/permission.md).
            req = dict(state.get("run_request") or {})
            if req and list(req.get("argv") or []) == list(q.get("argv") or []):
                yes = text.lower().strip(" .!。！") in YES
                req["confirmation"] = (Confirmation.CONFIRMED if yes else Confirmation.DECLINED).value
                update["run_request"] = req
        elif field in ANSWER_KEYS and ANSWER_KEYS[field] != "answer_to_question" and text:
            update[ANSWER_KEYS[field]] = text
        return update

    return ask_user
