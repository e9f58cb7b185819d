"""Bounded tool results: every MCP tool answer fits in ``MAX_RESULT_CHARS`` and says what was cut.

Coding agents put a tool's result into their model's context; the common clients cap one result
(Claude Code warns above 25,000 tokens and truncates, others cut at a character budget). A
PerfScout result can be far bigger — a hot-spot table of a long trace, a 40 KB report — so the
MCP server shrinks every result *before* sending it, the same way each time:

* the result is measured as the JSON text the client receives (``json.dumps``, UTF-8 kept);
* while it is too long, the largest list is halved (its first items kept: results are sorted
  most-important-first) or, when a string is the largest part, that string is cut to half;
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


def size(obj: Any) -> int:
    """Characters of ``obj`` as the client receives it."""
    return len(json.dumps(obj, ensure_ascii=False, default=str))


def _largest(obj: Any, path: str = "") -> tuple[int, str, Any, Any] | None:
    """(size, path, container, key) of the largest cuttable list or string below ``obj``."""
    best: tuple[int, str, Any, Any] | None = None
    items: list[tuple[Any, Any]]
    if isinstance(obj, dict):
        items = list(obj.items())
    elif isinstance(obj, list):
        items = list(enumerate(obj))
    else:
        return None
    for key, value in items:
        if key == "truncated" and path == "":
            continue
        sub = f"{path}.{key}" if isinstance(key, str) else f"{path}[{key}]"
        sub = sub.lstrip(".")
        if isinstance(value, list) and len(value) > _MIN_ITEMS:
            cand = (size(value), sub, obj, key)
            if best is None or cand[0] > best[0]:
                best = cand
        elif isinstance(value, str) and len(value) > _MIN_STRING:
            cand = (size(value), sub, obj, key)
            if best is None or cand[0] > best[0]:
                best = cand
        inner = _largest(value, sub)
        if inner is not None and (best is None or inner[0] > best[0]):
            best = inner
    return best


def bound(result: dict[str, Any], limit: int = MAX_RESULT_CHARS) -> dict[str, Any]:
    """A copy of ``result`` whose JSON text is at most ``limit`` characters, with ``truncated``
    listing every cut (absent when nothing was cut)."""
    out: dict[str, Any] = json.loads(json.dumps(result, ensure_ascii=False, default=str))
    cuts: dict[str, str] = {}
    originals: dict[str, int] = {}
    budget = max(1_000, limit - _NOTE_ROOM)
    while size(out) > budget:
        found = _largest(out)
        if found is None:
            break
        _, path, container, key = found
        value = container[key]
        if isinstance(value, list):
            originals.setdefault(path, len(value))
            keep = max(_MIN_ITEMS, len(value) // 2)
            container[key] = value[:keep]
            cuts[path] = f"kept {keep} of {originals[path]} items"
        else:
            originals.setdefault(path, len(value))
            keep = max(_MIN_STRING, len(value) // 2)
            container[key] = value[:keep] + " […]"
            cuts[path] = f"kept {keep} of {originals[path]} characters"
        if size(out) <= budget:
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
