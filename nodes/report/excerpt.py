"""Source excerpts from the attributor, shown as numbered code with the hot line marked.

The attributor hands ``excerpt`` as a list of ``{"line": n, "text": s}``; a report.json written
by hand or by an older build may carry one plain string instead (sometimes already numbered,
``"86  fun decode(…"``). Every renderer goes through :func:`parse`, so the Markdown page, the
HTML page and the one-line verdict show the same lines and mark the same one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from nodes.report.svg import esc

#: A plain-string excerpt counts as numbered when every non-empty line starts like this.
_NUMBERED = re.compile(r"\s*(\d{1,7})(?:\s*[:|│] ?| {2}|\t)(.*)")
#: Longest hot-line snippet quoted in a sentence.
MAX_SNIPPET = 72


@dataclass(frozen=True)
class Excerpt:
    #: (line number or None when unknown, text) in file order.
    lines: tuple[tuple[int | None, str], ...]
    #: The line the hot spot points at, when it is among ``lines``.
    hot: int | None

    @property
    def numbered(self) -> bool:
        return any(n is not None for n, _ in self.lines)

    def hot_text(self) -> str | None:
        for n, t in self.lines:
            if n is not None and n == self.hot:
                return t
        return None


def parse(raw: Any, hot_line: Any = None) -> Excerpt | None:
    """The excerpt in one shape (None when there is nothing to show)."""
    hot = hot_line if isinstance(hot_line, int) and not isinstance(hot_line, bool) else None
    lines: list[tuple[int | None, str]] = []
    if isinstance(raw, str):
        text = raw.rstrip("\n")
        if not text.strip():
            return None
        rows = text.split("\n")
        matches = [_NUMBERED.fullmatch(r) for r in rows]
        numbers = [int(m.group(1)) for m in matches if m]
        # numbered only if every non-empty row is, and the numbers count up one by one
        if all(m or not r.strip() for m, r in zip(matches, rows)) and numbers and numbers == list(
            range(numbers[0], numbers[0] + len(numbers))
        ):
            lines = [(int(m.group(1)), m.group(2)) if m else (None, "") for m in matches]
        else:
            lines = [(None, r) for r in rows]
    elif isinstance(raw, (list, tuple)):
        for item in raw:
            if isinstance(item, dict):
                n = item.get("line")
                n = n if isinstance(n, int) and not isinstance(n, bool) else None
                lines.append((n, str(item.get("text", "")).rstrip("\n")))
            elif isinstance(item, str):
                lines.append((None, item.rstrip("\n")))
        if not any(t.strip() for _, t in lines):
            return None
    else:
        return None
    return Excerpt(tuple(lines), hot if any(n == hot for n, _ in lines) else None)


def snippet(ex: Excerpt | None) -> str | None:
    """The hot line as a short quote for a sentence: trimmed, trailing comment dropped, cut."""
    if ex is None:
        return None
    t = ex.hot_text()
    if t is None:
        return None
    t = t.strip()
    # a trailing "# …" / "// …" comment, when no quote comes before it (so not inside a string)
    m = re.search(r"\s+(#|//)", t)
    if m and not re.search(r"[\"'`]", t[: m.start()]):
        t = t[: m.start()].rstrip()
    if not t:
        return None
    return t if len(t) <= MAX_SNIPPET else t[: MAX_SNIPPET - 1] + "…"


def _gutter(ex: Excerpt) -> int:
    return max((len(str(n)) for n, _ in ex.lines if n is not None), default=0)


def markdown_block(ex: Excerpt, lang: str = "") -> str:
    """A fenced block: ``> 35 | code`` on the hot line, ``  34 | code`` on the others.

    The fence is longer than any backtick run inside, so code that holds a fence cannot end
    the block early.
    """
    if ex.numbered:
        w = _gutter(ex)
        body = "\n".join(
            f"{'>' if n is not None and n == ex.hot else ' '} {'' if n is None else n:>{w}} | {t}".rstrip()
            for n, t in ex.lines
        )
    else:
        body = "\n".join(t for _, t in ex.lines).rstrip()
    fence = "`" * max(3, 1 + max((len(r) for r in re.findall(r"`+", body)), default=0))
    return f"{fence}{lang}\n{body}\n{fence}"


def html_block(ex: Excerpt) -> str:
    """A ``<pre>`` with unselectable line numbers and the hot line highlighted."""
    w = _gutter(ex)
    rows = []
    for n, t in ex.lines:
        num = f'<span class="ln">{"" if n is None else n:>{w}}</span>' if ex.numbered else ""
        row = f"{num}{esc(t)}"
        rows.append(f'<span class="hot">{row}</span>' if n is not None and n == ex.hot else row)
    return f'<pre class="excerpt"><code>{chr(10).join(rows)}</code></pre>'
