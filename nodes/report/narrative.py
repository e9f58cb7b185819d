"""An optional model-written narrative on top of the computed report.

The model sees only the computed facts (``ReportView.facts``) and is asked for a short plain
paragraph. Its text is shown under a label that says a model wrote it, escaped like any other
input, capped in length, and checked: numbers it cites that appear nowhere in the facts are
listed next to it as unverified. A model failure never fails the report: the narrative is just
left out, with a note saying why.
"""

from __future__ import annotations

import json
import re
from typing import Any


from nodes.framework.model_call import DEFAULT_CALL_TIMEOUT_S, call_model
from nodes.report.view import ReportView

MAX_CHARS = 1500
MAX_TOKENS = 300

SYSTEM = (
    "You write the opening paragraph of a performance report. Use ONLY the facts in the JSON you are "
    "given; do not invent numbers, causes or file names. At most 120 words, plain text, no headings. "
    "Say what matters most first and which finding to act on."
)

_NUM = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?")


def _numbers(text: str) -> set[str]:
    out = set()
    for m in _NUM.findall(text):
        v = m.replace(",", "")
        try:
            f = float(v)
        except ValueError:
            continue
        out.add(f"{f:.10g}")
        out.add(f"{round(f):d}")
        out.add(f"{round(f, 1):.10g}")
        out.add(f"{round(f, 2):.10g}")
    return out


def unverified_numbers(narrative: str, facts_text: str) -> list[str]:
    """Numbers in the narrative that match no number in the facts (at 0–2 decimals, or as %)."""
    known = _numbers(facts_text)
    # ratios in the facts may be cited as percentages
    for m in _NUM.findall(facts_text):
        try:
            f = float(m.replace(",", ""))
        except ValueError:
            continue
        if 0 < f <= 1:
            known |= _numbers(f"{100 * f:.2f} {100 * f:.1f} {round(100 * f)}")
    bad = []
    for m in _NUM.findall(narrative):
        f = float(m.replace(",", ""))
        forms = {f"{f:.10g}", f"{round(f, 1):.10g}", f"{round(f, 2):.10g}"}
        if not (forms & known) and m not in bad:
            bad.append(m)
    return bad


def add_narrative(view: ReportView, llm: Any, deadline_s: float = DEFAULT_CALL_TIMEOUT_S) -> float:
    """Ask ``llm`` for the narrative and attach it to ``view``; the wall seconds spent (never raises).

    The call has a wall-clock deadline of ``deadline_s`` (body included, nodes/framework/model_call.py);
    with no time left in the turn's model budget it is not made, and the note says so.
    """
    if llm is None:
        return 0.0
    facts = json.dumps(view.facts(), ensure_ascii=False, default=str)
    from langchain_core.messages import HumanMessage, SystemMessage  # only when a model is called

    reply = call_model(llm, [SystemMessage(content=SYSTEM), HumanMessage(content=facts)],
                       deadline_s=deadline_s, max_chars=MAX_CHARS, name="narrative", max_tokens=MAX_TOKENS)
    if reply.error is not None:
        view.narrative_note = f"No model narrative: {reply.error}."
        return reply.elapsed_s
    text = (reply.text or "").strip()
    if not text:
        view.narrative_note = "No model narrative: the model returned nothing."
        return reply.elapsed_s
    view.narrative = text
    view.narrative_unverified = unverified_numbers(text, facts + " " + " ".join(view.summary_sentences()))
    return reply.elapsed_s
