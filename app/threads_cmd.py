"""``perfscout threads list/show``: the thread store (app/threads/) as text for a terminal.

Everything shown was stored from user input or a model (a message, an answer, a path), so every
control character is escaped before it reaches the terminal: a stored ``ESC [ 2 J`` prints as
``\\x1b[2J``, not as a cleared screen (issue 14, item 7).
"""

from __future__ import annotations

import unicodedata

from app.threads import ThreadDetail, ThreadSummary
from graph.enums import TurnOutcome

#: Characters that steer a terminal or reorder text without being control characters (Cc):
#: the bidirectional embeddings, overrides and isolates.
_BIDI = set("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f")


def printable(text: object) -> str:
    """``text`` with every control character (C0, DEL, C1) and bidi control escaped as ``\\xNN`` /
    ``\\uNNNN``; a lone surrogate (bytes that were not UTF-8) as ``\\udcNN``."""
    out = []
    for c in str(text):
        if unicodedata.category(c) in ("Cc", "Cs") or c in _BIDI:
            out.append(f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}")
        else:
            out.append(c)
    return "".join(out)


def _width(text: str) -> int:
    """Terminal columns of ``text``: East Asian wide and full-width characters take two."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _pad(text: str, width: int) -> str:
    return text + " " * (width - _width(text))


def format_list(threads: list[ThreadSummary]) -> str:
    """One line per thread under a header, columns aligned to the longest value of each (thread
    ids are as long as the user made them; a route or status may be wide text)."""
    if not threads:
        return "no threads yet"
    rows = [("thread", "updated", "status", "route", "request")]
    for t in threads:
        when = (t.updated or "")[:19].replace("T", " ")
        status = t.status
        if t.status == TurnOutcome.INCOMPLETE:
            status += f" before {t.stopped_before}" if t.stopped_before else f" after {t.stopped_after}"
        rows.append((printable(t.thread_id), when, printable(status), printable(t.route or "-"),
                     printable(t.last_request or "")))
    widths = [max(_width(r[i]) for r in rows) for i in range(4)]
    return "\n".join("  ".join(_pad(c, w) for c, w in zip(r[:4], widths)) + "  " + r[4] for r in rows)


def format_detail(d: ThreadDetail) -> str:
    p = printable
    lines = [
        f"thread   {p(d.thread_id)}",
        f"updated  {d.updated}",
        f"status   {d.status}   route {p(d.route)}   turns {d.turns}",
        f"request  {p(d.last_request)}",
    ]
    if d.status == TurnOutcome.INCOMPLETE:
        where = f"before {p(d.stopped_before)}" if d.stopped_before else f"after {p(d.stopped_after)}"
        lines.append(f"stopped  {where}: the turn was killed, crashed or interrupted (Ctrl-C)")
        if d.error:
            lines.append(f"error    {p(d.error)}")
        lines.append(f"continue perfscout resume {p(d.thread_id)}   (add --allow-run if that node runs a program)")
    elif d.status == TurnOutcome.RUNNING:
        at = f"at {p(d.stopped_before)}: " if d.stopped_before else ""
        lines.append(f"running  {at}another turn holds the thread")
    if d.route_info:
        lines.append(f"why      {p(d.route_info.get('tier'))}: {p(d.route_info.get('reason'))}")
    if d.route_history:
        lines.append(f"steps    {p(' → '.join(d.route_history))}")
    if d.question:
        lines.append(f"asks     {p(d.question.get('prompt'))}")
    if d.analysis_source:
        lines.append(f"analysed {p(d.analysis_source)}")
    for kind, path in d.report_paths.items():
        lines.append(f"report   {p(kind)}: {p(path)}")
    if d.diagnosis:
        lines.append(f"stopped  {p(d.diagnosis)}")
    if d.answer:
        lines.append("answer")
        lines.extend(f"  {p(line)}" for line in d.answer.splitlines())
    return "\n".join(lines)
