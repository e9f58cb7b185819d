"""``perfscout route``: classify messages without running the graph, one JSON object each.

It exists so anyone can measure the router on their own labelled file: every output line
carries the tier that actually decided (``rule`` / ``classifier`` / ``llm`` / ``default``),
and, when the input line had a ``route``, the expected label beside it. A bad input line gets
an error object for that line and the run goes on: one bad line must not hide the others.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Iterable, Iterator, TextIO

from nodes.routing import route_message

MAX_TEXT_CHARS = 10_000


class RouteInputError(ValueError):
    """The command's input as a whole cannot be read (missing file, no input at all)."""


def _line_text(raw: str) -> tuple[Any, dict[str, Any]]:
    """The text of one input line (plain text or a JSON object with "text") and its extras."""
    stripped = raw.strip()
    if stripped.startswith("{"):
        try:
            obj = json.loads(stripped)
        except json.JSONDecodeError as exc:
            raise ValueError(f"invalid JSON: {exc.msg} at column {exc.colno}") from None
        if not isinstance(obj, dict) or "text" not in obj:
            raise ValueError('a JSON line must be an object with a "text" field')
        extras = {"expected": obj["route"]} if isinstance(obj.get("route"), str) else {}
        return obj["text"], extras
    return stripped, {}


def check_text(text: Any) -> str | None:
    """Why this text cannot be routed, or None when it can."""
    if not isinstance(text, str):
        return f'"text" must be a string, got {type(text).__name__}'
    if not text.strip():
        return "empty text"
    if len(text) > MAX_TEXT_CHARS:
        return f"text has {len(text)} characters, more than {MAX_TEXT_CHARS}"
    return None


def route_lines(lines: Iterable[str], llm: Any = None) -> Iterator[dict[str, Any]]:
    """One result object per non-blank input line, numbered from 1."""
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            # A blank line in a JSONL file is no record; a line of spaces in plain text is no text.
            continue
        try:
            text, extras = _line_text(raw)
        except ValueError as exc:
            yield {"line": number, "error": str(exc)}
            continue
        problem = check_text(text)
        if problem:
            yield {"line": number, "error": problem}
            continue
        info = route_message(text, llm=llm)
        yield {"line": number, **info, **extras}


def route_one(text: str, llm: Any = None) -> dict[str, Any]:
    problem = check_text(text)
    if problem:
        return {"error": problem}
    return route_message(text, llm=llm)


def open_lines(jsonl: str) -> tuple[Iterable[str], TextIO | None]:
    if jsonl == "-":
        return sys.stdin, None
    try:
        fh = open(jsonl, encoding="utf-8")
    except OSError as exc:
        raise RouteInputError(f"cannot read {jsonl}: {exc.strerror or exc}") from None
    return fh, fh


def run(text: str | None, jsonl: str | None, llm: Any, out: TextIO = sys.stdout) -> int:
    """Write one JSON object per input to ``out``; 0 when every input routed, 2 otherwise."""
    if (text is None) == (jsonl is None):
        raise RouteInputError("give either TEXT or --jsonl FILE (use - for stdin)")
    ok = True
    if text is not None:
        results: Iterable[dict[str, Any]] = [route_one(text, llm)]
        close = None
    else:
        lines, close = open_lines(jsonl)  # type: ignore[arg-type]
        results = route_lines(lines, llm)
    try:
        for res in results:
            ok &= "error" not in res
            out.write(json.dumps(res, ensure_ascii=False) + "\n")
            out.flush()
    except UnicodeDecodeError as exc:
        raise RouteInputError(f"{jsonl} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    finally:
        if close is not None:
            close.close()
    return 0 if ok else 2


__all__ = ["run", "route_lines", "route_one", "check_text", "RouteInputError", "MAX_TEXT_CHARS"]
