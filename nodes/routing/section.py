"""The sections a message names: slices the power and CPU lenses measure as windows of their
own, as ``perfscout analyze --section NAME`` does (nodes/perf/metrics/power.py).

Only what the user typed as a name counts, and only beside a word for a section: a quoted name
(「"startActivityAndWait" 这段的耗电」, 'energy in the "measureBlock" section') or an
identifier-shaped one next to the word (``section measureBlock``, ``the measureBlock slice``).
A name no slice has is named in the analysis's warnings, and the answer says so first.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"section|slice|trace\s*section|段|区间|區間|切片|区段|區段", re.I)
#: An identifier-shaped name (camelCase, with '#', ':', '_' or '.') right before or after the word.
_NAME = r"([A-Za-z_][\w.#:$]*[A-Z_#:.$][\w.#:$]*)"
_BESIDE = re.compile(rf"(?:--section[=\s]+|(?i:section|slice)\s+){_NAME}|{_NAME}\s*(?:这|這|那)?\s*(?:(?i:section|slice)|段|区间|切片)", re.ASCII)


def sections_of(text: str, quoted: list[str], paths: list[str]) -> list[str]:
    """The section names in ``text`` (its ``quoted`` strings that are not ``paths``, then
    identifier-shaped names beside a section word), in order, once each; [] without the word."""
    if not text or not _WORD.search(text):
        return []
    out = [q for q in quoted if q not in paths and "/" not in q and len(q) <= 200]
    for m in _BESIDE.finditer(text):
        name = m.group(1) or m.group(2)
        if name and name not in paths:
            out.append(name)
    return list(dict.fromkeys(out))


__all__ = ["sections_of"]
