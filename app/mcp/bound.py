"""Bounded tool results: every MCP tool answer fits in ``MAX_RESULT_CHARS`` and says what was cut.

Coding agents put a tool's result into their model's context; the common clients cap one result
(Claude Code warns above 25,000 tokens and truncates, others cut at a character budget). A
PerfScout result can be far bigger — a hot-spot table of a long trace, a 40 KB report — so the
MCP server shrinks every result *before* sending it, the same way each time:

* the result is measured as the JSON text the client receives (``json.dumps``, UTF-8 kept);
* while it is too long, the largest list is cut to the share that fits, at most half (its first
  items kept: results are sorted most-important-first) or, when a string is the largest part, that string is cut by what is
  over the budget (never below a readable floor);
* each cut is recorded in ``truncated`` as "``path``: kept N of M items" / "kept N of M
  characters", so an agent knows that more exists and where (``report`` gives the full text).

Pure functions, no MCP imports: tests check the bound on hostile shapes directly.
"""

from __future__ import annotations

import json
from typing import Any

#: Characters one tool result may take (the JSON text), under what the common clients accept.
MAX_RESULT_CHARS = 20_000
#: Room kept for the ``truncated`` list itself.
_NOTE_ROOM = 1_500
#: A string is never cut below this many characters (a cut path or headline stays readable).
_MIN_STRING = 200
#: A list is never cut below this many items.
_MIN_ITEMS = 1
#: A list longer than this is cut as a whole, not searched item by item (keeps one pass cheap).
_WALK_ITEMS = 50


def size(obj: Any) -> int:
    """Characters of ``obj`` as the client receives it."""
    return len(json.dumps(obj, ensure_ascii=False, default=str))


Best = tuple[int, str, Any, Any]  # (size, path, container, key) of a cuttable part


def _walk(obj: Any, path: str = "") -> tuple[int, Best | None]:
    """(approximate JSON size of ``obj``, its largest cuttable list or string below it).

    One pass, sizes summed bottom-up (a leaf is measured by ``json.dumps``), so finding the next
    cut costs one walk of the result rather than one ``dumps`` per node."""
    if isinstance(obj, dict):
        items: list[tuple[Any, Any]] = list(obj.items())
    elif isinstance(obj, list) and len(obj) <= _WALK_ITEMS:
        items = list(enumerate(obj))
    else:  # a leaf, or a long list: cut as a whole (its items are not looked into)
        return size(obj), None
    total, best = 2, None
    for key, value in items:
        if key == "truncated" and path == "":
            continue
        sub = (f"{path}.{key}" if isinstance(key, str) else f"{path}[{key}]").lstrip(".")
        n, inner = _walk(value, sub)
        total += n + 1 + (size(key) + 1 if isinstance(key, str) else 0)
        if inner is not None and (best is None or inner[0] > best[0]):
            best = inner
        cuttable = (isinstance(value, list) and len(value) > _MIN_ITEMS) or (
            isinstance(value, str) and len(value) > _MIN_STRING
        )
        if cuttable and (best is None or n >= best[0]):
            best = (n, sub, obj, key)
    return total, best


def _largest(obj: Any) -> Best | None:
    return _walk(obj)[1]


def bound(result: dict[str, Any], limit: int = MAX_RESULT_CHARS) -> dict[str, Any]:
    """A copy of ``result`` whose JSON text is at most ``limit`` characters, with ``truncated``
    listing every cut (absent when nothing was cut)."""
    out: dict[str, Any] = json.loads(json.dumps(result, ensure_ascii=False, default=str))
    cuts: dict[str, str] = {}
    originals: dict[str, int] = {}
    budget = max(1_000, limit - _NOTE_ROOM)
    current = size(out)
    while current > budget:
        found = _largest(out)
        if found is None:
            break
        _, path, container, key = found
        value = container[key]
        if isinstance(value, list):
            originals.setdefault(path, len(value))
            # Keep about the share of items that fits, at most half (items are of similar size).
            share = 1 - (current - budget) / max(1, found[0])
            keep = max(_MIN_ITEMS, min(len(value) // 2, int(len(value) * share)))
            container[key] = value[:keep]
            cuts[path] = f"kept {keep} of {originals[path]} items"
        else:
            originals.setdefault(path, len(value))
            # A string is cut once, by what is over (or to its floor), not halved repeatedly.
            keep = max(_MIN_STRING, len(value) - (current - budget) - 16)
            container[key] = value[:keep] + " […]"
            cuts[path] = f"kept {keep} of {originals[path]} characters"
        current = size(out)
        if current <= budget:
            break
        if len(cuts) > 200:  # pathological shapes: stop cutting piecemeal
            break
    if cuts:
        out["truncated"] = [f"{p}: {c}" for p, c in cuts.items()][:40]
    if size(out) > limit:
        # Still too big (thousands of small keys): keep only the headline fields, say so.
        keep_keys = [k for k in ("tool", "status", "thread_id", "error", "headline", "answer") if k in out]
        slim = {k: out[k] for k in keep_keys}
        slim["truncated"] = [f"the result had {size(out)} characters; only {', '.join(keep_keys) or 'nothing'} kept"]
        for k in list(slim):
            if isinstance(slim[k], str) and len(slim[k]) > limit // 4:
                slim[k] = slim[k][: limit // 4] + " […]"
        out = slim
    return out
