"""How numbers read: the one duration, percent and severity vocabulary of PerfScout.

The finding texts, the reports, the follow-up answers and the analyze summary all print
through these, so one value never reads as "123,456 ms" in one place and "123.46 s" in another.
Pure and tiny: everything imports it.
"""

from __future__ import annotations

import math

#: Severity from most to least serious (nodes/perf/model.py ``Severity``).
SEVERITY_ORDER: dict[str, int] = {"high": 0, "medium": 1, "low": 2, "info": 3}


def _missing(v: object) -> bool:
    return v is None or (isinstance(v, float) and not math.isfinite(v))


def ms(v: float | None, digits: int | None = None) -> str:
    """Milliseconds as people read them: 3 significant-ish digits, thousands separated."""
    if _missing(v):
        return "–"
    if digits is None:
        digits = 0 if abs(v) >= 100 else 1 if abs(v) >= 10 else 2
    return f"{v:,.{digits}f} ms"


def dur(v: float | None) -> str:
    """A length of time for a sentence: milliseconds below a second, else seconds to 3 digits."""
    if _missing(v):
        return "–"
    if abs(v) < 1000:
        return ms(v)
    s = v / 1000.0
    return f"{s:.2f} s" if abs(s) < 10 else f"{s:.1f} s" if abs(s) < 100 else f"{s:,.0f} s"


def pct(v: float | None, digits: int = 1) -> str:
    """A share already expressed in percent (0–100)."""
    return "–" if _missing(v) else f"{v:,.{digits}f} %"


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """A count with its noun in the right number, thousands grouped: "1 binder call", "3 scrolls",
    "1,204 frames" — never "call(s)". ``plural`` for nouns that do not take an "s" ("1 reply",
    "2 replies"); the noun may be several words: the last one is the one inflected."""
    return f"{n:,} {noun if n == 1 else (plural or noun + 's')}"
