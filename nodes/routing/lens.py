"""The lens of a message: which aspect of the data it asks about (graph.enums.Lens).

Deterministic, both languages, with the routing contract's scope rule (docs/ROUTING.md, before
rule 1): a lens the user sets aside is no request — 「不用管启动，看看内存」 is ``memory``, "not
the CPU, the frames" is ``frames``. The words are the lens table's (nodes/perf/lenses.py); when
a message names several, the table's order decides (a metric asked about during a phase: the
metric). Nothing named: ``overview``.
"""

from __future__ import annotations

from functools import lru_cache

from graph.enums import Lens
from nodes.routing.scope import split_scope


def _without_file_names(text: str) -> str:
    """The message without the data and source files it names: a file's name is no question
    ("is this page fast? scroll.trace.json.gz" asks about the page, not scrolling)."""
    from nodes.routing.extract import _FILE_EXT_HINT, _PATHLIKE

    return _PATHLIKE.sub(lambda m: " " if _FILE_EXT_HINT.search(m.group(1)) else m.group(0), text)


@lru_cache(maxsize=256)
def lens_of(text: str) -> Lens:
    """The lens ``text`` asks about, ignoring what it negates or sets aside and the files it names."""
    from nodes.perf.lenses import LENSES

    low = " ".join(split_scope(_without_file_names(text or "")).asked.lower().split())
    for lens, spec in LENSES.items():
        if spec.words and spec.said_in(low):
            return lens
    return Lens.OVERVIEW


__all__ = ["lens_of"]
