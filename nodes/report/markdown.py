"""The Markdown report: for terminals and pull requests, complete without any chart.

The same sections as the HTML page in the same order; where the page draws a chart this file
prints the table behind it (and a small text histogram of frame times, which reads well in a
terminal). The sections, their tables, rows and caps are built once (nodes/report/content.py,
nodes/report/tables.py); this file lays their blocks out. Cells are escaped so a function name
with ``|`` cannot break a table.
"""

from __future__ import annotations

import os
from typing import Any, Callable

from nodes.perf.model import Evidence
from nodes.report import charts, content, excerpt, tables
from nodes.report.tables import Code, CodeList, Link, MainThread, Muted, Table
from nodes.report.view import NARRATIVE_LABEL, NARRATIVE_UNVERIFIED, ReportView

_LANG = {".py": "python", ".js": "javascript", ".ts": "typescript", ".java": "java", ".kt": "kotlin",
         ".c": "c", ".cc": "cpp", ".cpp": "cpp", ".h": "c", ".rs": "rust", ".go": "go", ".ets": "typescript"}


def cell(s: Any) -> str:
    return str(s).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def code(s: Any) -> str:
    """An inline code span; pipes escaped because GFM splits table cells on them even inside code."""
    s = str(s).replace("\n", " ").replace("|", "\\|")
    tick = "``" if "`" in s else "`"
    pad = " " if tick == "``" else ""
    return f"{tick}{pad}{s}{pad}{tick}"


def table(head: list[str], rows: list[list[Any]], right: set[int] | None = None) -> str:
    right = right or set()
    out = ["| " + " | ".join(cell(h) for h in head) + " |",
           "|" + "|".join("---:" if i in right else "---" for i in range(len(head))) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def _cell(c: tables.Cell) -> str:
    if isinstance(c, Code):
        return code(c.text) + (f" ({cell(c.note)})" if c.note else "")
    if isinstance(c, Muted):
        return cell(c.text)
    if isinstance(c, Link):
        return f"[{cell(c.text)}]({c.href})"
    if isinstance(c, MainThread):
        return cell(c.name) + " **(main)**"
    if isinstance(c, CodeList):
        return ", ".join(code(x) for x in c.items) or "–"
    return cell(c)


def lay_out(t: Table) -> str:
    """A table of nodes/report/tables.py as GFM, every cell escaped."""
    return table([c.name for c in t.columns], [[_cell(x) for x in r] for r in t.rows],
                 {i for i, c in enumerate(t.columns) if c.numeric})


def _src(v: ReportView, ev: Evidence | None = None, *sections: str) -> str:
    """A section's Source line: its own files (``sections`` as the analysis names them)."""
    return f"_Source: {cell(v.prov.text(ev, sections=sections))}_"


def _figure(v: ReportView, b: content.Figure) -> list[str]:
    """Report.md draws no chart; the frame-time histogram is drawn as text."""
    fr = v.analysis.frames
    if b.name == "histogram" and fr is not None:
        hist = charts.text_histogram(fr.durations_ms, fr.budget_ms)
        return [hist, ""] if hist else []
    return []


def _note(b: content.Note) -> str:
    text = cell(b.text) + (f" ([docs]({b.link}))" if b.link else "")
    if b.quiet:
        return f"_{text}_"
    return f"**{cell(b.label)}:** {text}" if b.label else text


def _block(v: ReportView, b: content.Block) -> list[str]:
    """One block of a section (nodes/report/content.py) as Markdown lines, then a blank one."""
    if isinstance(b, Table):
        return ([f"**{cell(b.title)}**", ""] if b.title else []) + [lay_out(b), ""]
    if isinstance(b, content.Heading):
        return [f"### {cell(b.text)}", ""]
    if isinstance(b, content.Note):
        return [_note(b), ""]
    if isinstance(b, content.Items):
        return [f"- {cell(x)}" for x in b.items] + [""]
    if isinstance(b, content.CodeBlock):
        return ["```text", b.text, "```", ""]
    if isinstance(b, content.Source):
        return [_src(v, None, *b.sections), ""]
    if isinstance(b, content.Findings):
        out = []
        for i, f in enumerate(b.items, 1):
            out.append(f"{i}. **[{f.severity}] {f.title}** — {f.detail}")
            if f.suggestion:
                out.append(f"   Suggestion: {cell(f.suggestion)}" + (f" ([docs]({f.link}))" if f.link else ""))
            if f.metrics:
                out.append("   " + f.metrics)
            out.append("   " + _src(v, f.evidence))
        return out + [""]
    if isinstance(b, content.Excerpts):
        out = [f"### {cell(b.title)}", ""]
        for x in b.items:
            lang = _LANG.get(os.path.splitext(x.file)[1], "")
            out += [f"**{cell(x.name)}** — {code(x.loc)} — {cell(x.share)}", "", excerpt.markdown_block(x.block, lang), ""]
        return out
    return _figure(v, b)


def _section(v: ReportView, sec: content.Section | None) -> list[str]:
    """A section under its ``##`` heading; nothing when none of its blocks says anything here."""
    if sec is None:
        return []
    body = [line for b in sec.blocks for line in _block(v, b)]
    if not body and sec.lead is None:
        return []
    return [f"## {cell(sec.title)}", ""] + ([cell(sec.lead), ""] if sec.lead is not None else []) + body


def _summary(v: ReportView) -> list[str]:
    """The title, the answer's sentences and their source."""
    out: list[str] = [f"# {cell(v.title)}", ""]
    first, *rest = v.summary_sentences()
    out.append(" ".join([f"**{first}**", *rest]))
    out += ["", _src(v), ""]
    return out


def _lens(v: ReportView) -> list[str]:
    """A lens question's own section, then its lens's data: they open the report."""
    out = _section(v, v.lens_answer())
    for sec in v.lens_blocks(asked=True):
        out += _section(v, sec)
    return out


def _other_lenses(v: ReportView) -> list[str]:
    """The sections of the lenses the question did not ask about."""
    return [line for sec in v.lens_blocks(asked=False) for line in _section(v, sec)]


def _narrative(v: ReportView) -> list[str]:
    """A model's narrative, labelled, or why there is none."""
    out: list[str] = []
    if v.narrative:
        out += [f"> **{NARRATIVE_LABEL[0]}** {NARRATIVE_LABEL[1]}", ">"]
        out += ["> " + line if line.strip() else ">" for line in v.narrative.splitlines()]
        if v.narrative_unverified:
            out += [">", f"> _{NARRATIVE_UNVERIFIED}" + cell(", ".join(v.narrative_unverified)) + "_"]
        out.append("")
    elif v.narrative_note:
        out += [f"_{v.narrative_note}_", ""]
    return out


#: The text sections of nodes/report/view.py (TEXT_SECTIONS), written in Markdown; the data
#: sections are laid out from their blocks (``_section``).
_SECTIONS: dict[str, Callable[[ReportView], list[str]]] = {
    "summary": _summary, "lens": _lens, "narrative": _narrative, "other_lenses": _other_lenses,
}


def render_markdown(v: ReportView) -> str:
    """The sections in the order the view gives (``ReportView.sections()``)."""
    out: list[str] = []
    for sid in v.sections():
        out += _SECTIONS[sid](v) if sid in _SECTIONS else _section(v, v.section(sid))
    return "\n".join(out).rstrip() + "\n"
