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


def add_narrative(view: ReportView, llm: Any) -> None:
    """Ask ``llm`` for the narrative and attach it to ``view`` (never raises)."""
    if llm is None:
        return
    facts = json.dumps(view.facts(), ensure_ascii=False, default=str)
    try:
        model = llm.bind(max_tokens=MAX_TOKENS) if hasattr(llm, "bind") else llm
        from langchain_core.messages import HumanMessage, SystemMessage  # only when a model is called

        msg = model.invoke([SystemMessage(content=SYSTEM), HumanMessage(content=facts)])
        text = msg.content if isinstance(msg.content, str) else " ".join(
            str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in msg.content
        )
    except Exception as e:  # noqa: BLE001 — any model failure only drops the optional narrative
        view.narrative_note = f"No model narrative: the model call failed ({type(e).__name__})."
        return
    text = text.strip()
    if not text:
        view.narrative_note = "No model narrative: the model returned nothing."
        return
    if len(text) > MAX_CHARS:
        text = text[: MAX_CHARS - 1].rstrip() + "…"
    view.narrative = text
    view.narrative_unverified = unverified_numbers(text, facts + " " + " ".join(view.summary_sentences()))
