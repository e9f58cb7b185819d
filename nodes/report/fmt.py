"""Number and provenance formatting shared by the Markdown and HTML renderers.

Both renderers print numbers through these helpers so the two reports can never disagree on a
value or on where it came from.
"""

from __future__ import annotations

import math
import os
from typing import Any, Mapping

from nodes.perf.model import Evidence
from nodes.perf.units import dur, ms, pct  # noqa: F401  (the renderers' names for them)


def files(source: str) -> str:
    """Several data files of one capture, their shared folder said once.

    ``a/run/x.json, a/run/y.txt`` → ``x.json, y.txt in a/run``; one file or files in different
    folders are returned as they are.
    """
    parts = [p.strip() for p in str(source).split(", ") if p.strip()]
    if len(parts) < 2:
        return str(source)
    dirs = {os.path.dirname(p) for p in parts}
    if len(dirs) != 1 or not next(iter(dirs)):
        return str(source)
    return ", ".join(os.path.basename(p) for p in parts) + f" in {next(iter(dirs))}"


def num(v: float | None, digits: int = 1) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    if float(v).is_integer() and abs(v) < 1e15:
        return f"{int(v):,}"
    return f"{v:,.{digits}f}"


def metric(v: object) -> str:
    """A finding's metric value: integers as integers, other numbers to four significant digits."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return str(v)
    if float(v).is_integer():
        return f"{int(v):,}"
    return f"{v:.4g}"


def ratio_pct(v: float | None, digits: int = 1) -> str:
    """A ratio (0–1) as percent."""
    return "–" if v is None else f"{100.0 * v:.{digits}f} %"


def span(start_ms: float | None, end_ms: float | None) -> str | None:
    if start_ms is None and end_ms is None:
        return None
    a = "?" if start_ms is None else f"{start_ms:,.1f}"
    b = "?" if end_ms is None else f"{end_ms:,.1f}"
    return f"{a}–{b} ms"


#: Prefix of the analysis meta keys that name the files behind one report section.
SECTION_KEY = "source: "


class Provenance:
    """Where the numbers of one report came from: the capture, its time range, the command."""

    def __init__(self, analysis: Any, collected: Mapping[str, Any] | None):
        self.source: str = analysis.source
        self.format: str = analysis.format
        self.duration_ms: float = analysis.duration_ms or 0.0
        collected = collected or {}
        src = collected.get("source")
        meta = analysis.meta or {}
        self.command: str | None = meta.get("command") or (
            str(src) if src and str(src) != self.source else None
        )
        self.collected_kind: str | None = collected.get("kind")
        #: section → the file names that fed it, as the merge recorded them ("source: <section>")
        self.sections: dict[str, list[str]] = {
            k[len(SECTION_KEY):]: [n.strip() for n in str(x).split(", ") if n.strip()]
            for k, x in meta.items() if k.startswith(SECTION_KEY)
        }

    def section_files(self, *sections: str) -> str:
        """The data files that fed these sections, as full paths in the capture's order.

        A collection's sections come from different files (hot spots from the profile, CPU from
        the psutil series, counters from perf stat); naming all of them under each section would
        send a reader to the wrong file. With no record for any of the sections (one-file
        analysis, an older report.json) every file of the capture is named.
        """
        names = [n for s in sections for n in self.sections.get(s, [])]
        if not names:
            return self.source
        paths = [p.strip() for p in self.source.split(", ") if p.strip()]
        picked = [p for p in paths if os.path.basename(p) in names or p in names]
        # a name the source list does not hold (renamed capture) is still named, as recorded
        known = {os.path.basename(p) for p in picked} | set(picked)
        picked += [n for n in dict.fromkeys(names) if n not in known]
        return ", ".join(picked)

    def evidence(self, ev: Evidence | None = None, *, start_ms: float | None = None, end_ms: float | None = None,
                 sections: tuple[str, ...] = ()) -> dict[str, Any]:
        """The four provenance facts for a number: file, time range, events, command.

        An Evidence object with gaps is completed from the capture itself (the files of the
        ``sections`` it belongs to, its whole time range), so no number is ever printed without
        a source.
        """
        ev = ev or Evidence()
        s = ev.start_ms if ev.start_ms is not None else start_ms
        e = ev.end_ms if ev.end_ms is not None else end_ms
        if s is None and e is None and self.duration_ms and not ev.command:
            s, e = 0.0, self.duration_ms
        return {
            "file": files(ev.source or self.section_files(*sections)),
            "range": span(s, e),
            "events": [e if len(e) <= 80 else e[:79] + "…" for e in list(ev.events or [])[:6]],
            "command": ev.command or self.command,
        }

    def text(self, ev: Evidence | None = None, **kw: Any) -> str:
        """One line: ``file · 0.0–120.0 ms · events: a, b · command: …``."""
        d = self.evidence(ev, **kw)
        parts = [d["file"]]
        if d["range"]:
            parts.append(d["range"])
        if d["events"]:
            parts.append("events: " + ", ".join(d["events"]))
        if d["command"]:
            parts.append("command: " + d["command"])
        return " · ".join(parts)
