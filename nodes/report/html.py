"""The self-contained HTML report: one file, inline CSS and SVG, no script, no fetch.

A Content-Security-Policy of ``default-src 'none'`` is set in the page itself, so a browser
refuses any network or file fetch the page might attempt; the browser test watches the console
for the violation report that would cause. Light and dark follow ``prefers-color-scheme``;
wide tables and charts scroll inside their own box so the page fits a phone's width. The sections,
their tables, rows and caps are built once (nodes/report/content.py, nodes/report/tables.py);
this file lays their blocks out and escapes them.
"""

from __future__ import annotations

import re
from typing import Callable

from nodes.perf.model import Evidence
from nodes.report import content, excerpt, tables
from nodes.report.charts import Chart
from nodes.report.tables import Code, CodeList, Link, MainThread, Muted, Table
from nodes.report.sections import ChartSet
from nodes.report.svg import esc
from nodes.report.view import NARRATIVE_LABEL, NARRATIVE_UNVERIFIED, ReportView

CSS = """
:root{--bg:#fbfbfc;--fg:#1d2127;--muted:#5d6673;--card:#fff;--line:#d9dde3;--accent:#2f6fd6;--soft:#b9cff2;
--ok:#3a9d5d;--bad:#d0453b;--warn:#c98a12;--task:#8a5cd0;--code:#f2f4f7;--lane:#f0f2f5;--hot:#fde8e6;color-scheme:light dark}
@media (prefers-color-scheme:dark){:root{--bg:#14171b;--fg:#e6e9ee;--muted:#9aa4b2;--card:#1c2026;--line:#343a43;
--accent:#6ea2ff;--soft:#2f4775;--ok:#4fbf78;--bad:#ff6b5e;--warn:#e6ad3a;--task:#b48cff;--code:#23282f;--lane:#20252c;--hot:#4a2523}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,
"Noto Sans","PingFang SC","Microsoft YaHei",sans-serif}
main{max-width:1180px;margin:0 auto;padding:16px}
h1{font-size:1.6em;margin:.2em 0}h2{font-size:1.25em;margin:1.6em 0 .5em;border-bottom:1px solid var(--line);padding-bottom:.2em}
h3{font-size:1.05em;margin:1.1em 0 .4em}
a{color:var(--accent)}
nav{display:flex;flex-wrap:wrap;gap:.3em .9em;font-size:.92em;margin:.6em 0}
.meta,.src,figcaption{color:var(--muted);font-size:.86em;overflow-wrap:anywhere}
.badge{display:inline-block;padding:.05em .55em;border-radius:1em;font-size:.8em;font-weight:600;color:#fff;vertical-align:middle}
.sev-high{background:var(--bad)}.sev-medium{background:var(--warn)}.sev-low{background:var(--accent)}.sev-info{background:var(--muted)}
.verdict{font-size:1.05em;overflow-wrap:anywhere}
.card{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:12px 16px;margin:.8em 0}
.tiles{display:grid;grid-template-columns:repeat(auto-fill,minmax(170px,1fr));gap:10px;margin:.8em 0}
.tile{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:10px 12px;min-width:0;overflow-wrap:anywhere}
.tile b{display:block;font-size:1.35em}.tile span{color:var(--muted);font-size:.82em}
.narrative{border-left:4px solid var(--warn)}
.narrative .label{font-weight:600;color:var(--warn)}
ol.findings{padding-left:1.3em}ol.findings li{margin:.5em 0}
.tbl{overflow-x:auto;margin:.5em 0}
table{border-collapse:collapse;font-size:.9em;min-width:100%}
th,td{border-bottom:1px solid var(--line);padding:.3em .55em;text-align:left;vertical-align:top}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.88em}
code{background:var(--code);padding:.05em .3em;border-radius:4px;overflow-wrap:anywhere}
pre{background:var(--code);padding:.6em .8em;border-radius:6px;overflow-x:auto;margin:.3em 0}
figure{margin:.8em 0;background:var(--card);border:1px solid var(--line);border-radius:10px;padding:10px}
.chartbox{overflow-x:auto}
svg.chart{display:block;width:100%;min-width:600px;height:auto}
svg .ax{stroke:var(--muted);stroke-width:1}svg .grid{stroke:var(--line);stroke-width:1}
svg .tick{fill:var(--muted);font-size:11px}svg .lbl{fill:var(--fg);font-size:12px}svg .strong{font-weight:600}
svg .ok{fill:var(--ok)}svg .bad{fill:var(--bad)}svg .task{fill:var(--task)}svg .accent{fill:var(--accent)}
svg .first{fill:var(--warn)}svg .soft{fill:var(--soft)}svg .lane{fill:var(--lane)}
svg .budget{stroke:var(--bad);stroke-width:2;stroke-dasharray:6 4}svg .median{stroke:var(--fg);stroke-width:1.5;stroke-dasharray:5 4}
svg .series{fill:none;stroke:var(--accent);stroke-width:2}svg .area{fill:var(--soft);opacity:.55}svg .peak{fill:var(--bad)}
svg .ice{stroke:var(--card);stroke-width:.5}svg .ice-lbl{fill:#111;font-size:11px;pointer-events:none}
details summary{cursor:pointer}
pre.excerpt{line-height:1.45;padding:.5em 0}pre.excerpt code{background:none;padding:0;display:block;min-width:max-content}
pre.excerpt .ln{display:inline-block;color:var(--muted);padding:0 .9em 0 .8em;text-align:right;user-select:none;-webkit-user-select:none}
pre.excerpt .hot{display:inline-block;min-width:100%;background:var(--hot);box-shadow:inset 3px 0 0 var(--bad)}
.excerpt-head{margin:.9em 0 .2em}
.muted{color:var(--muted)}
@media (max-width:600px){main{padding:10px}body{font-size:14px}h1{font-size:1.35em}table{min-width:600px}td code{overflow-wrap:normal}}
"""

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


def _src(v: ReportView, ev: Evidence | None = None, *sections: str) -> str:
    """A section's Source line: its own files (``sections`` as the analysis names them)."""
    return f'<div class="src">Source: {esc(v.prov.text(ev, sections=sections))}</div>'


def _figure(v: ReportView, c: Chart | None, *sections: str) -> str:
    if not c:
        return ""
    return (
        f'<figure data-kind="{esc(c.kind)}"><div class="chartbox">{c.svg}</div>'
        f"<figcaption>{esc(c.note)} Source: {esc(v.prov.text(sections=sections))}</figcaption></figure>"
    )


def _table(head: list[tuple[str, bool]], rows: list[list[str]]) -> str:
    th = "".join(f'<th class="n">{esc(h)}</th>' if n else f"<th>{esc(h)}</th>" for h, n in head)
    body = "".join(
        "<tr>" + "".join(f'<td class="n">{c}</td>' if head[i][1] else f"<td>{c}</td>" for i, c in enumerate(r)) + "</tr>"
        for r in rows
    )
    return f'<div class="tbl"><table><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table></div>'


def _cell(c: tables.Cell) -> str:
    if isinstance(c, Code):
        return f"<code>{esc(c.text)}</code>" + (f'<div class="src">{esc(c.note)}</div>' if c.note else "")
    if isinstance(c, Muted):
        return f'<span class="muted">{esc(c.text)}</span>'
    if isinstance(c, Link):
        return f'<a href="{esc(c.href)}">{esc(c.text)}</a>'
    if isinstance(c, MainThread):
        return esc(c.name) + " <b>(main)</b>"
    if isinstance(c, CodeList):
        return ", ".join(f"<code>{esc(x)}</code>" for x in c.items) or "–"
    return esc(c)


def lay_out(t: Table) -> str:
    """A table of nodes/report/tables.py as HTML, every cell escaped."""
    return _table([(c.name, c.numeric) for c in t.columns], [[_cell(x) for x in r] for r in t.rows])


def _inline_code(s: str) -> str:
    """Escaped text with its `backtick` spans (the quoted hot line) set as <code>."""
    return re.sub(r"(?<!`)(`+) ?(.+?) ?(?<!`)\1(?!`)", r"<code>\2</code>", esc(s))


def _tile(value: str, label: str, tip: str) -> str:
    return f'<div class="tile" title="{esc(tip)}"><b>{esc(value)}</b><span>{esc(label)}</span></div>'


def _note(b: content.Note) -> str:
    link = f' (<a href="{esc(b.link)}">docs</a>)' if b.link else ""
    label = f"<b>{esc(b.label)}:</b> " if b.label else ""
    cls = ' class="src"' if b.quiet else ""
    return f"<p{cls}>{label}{_inline_code(b.text)}{link}</p>"


def _block(v: ReportView, cs: ChartSet, b: content.Block, sources: tuple[str, ...] = ()) -> str:
    """One block of a section (nodes/report/content.py) as HTML; ``sources``: the section's,
    for the caption of a chart drawn in a table's place."""
    if isinstance(b, Table):
        drawn = getattr(cs, b.drawn_as) if b.drawn_as else None
        if drawn:  # the page draws the table's rows; report.md keeps the table
            return "".join(_figure(v, c, *sources) for c in (drawn if isinstance(drawn, list) else [drawn]))
        return (f"<h3>{esc(b.title)}</h3>" if b.title else "") + lay_out(b)
    if isinstance(b, content.Heading):
        return f"<h3>{esc(b.text)}</h3>"
    if isinstance(b, content.Note):
        return _note(b)
    if isinstance(b, content.Items):
        return "<ul>" + "".join(f"<li>{esc(x)}</li>" for x in b.items) + "</ul>"
    if isinstance(b, content.CodeBlock):
        return f"<pre><code>{esc(b.text)}</code></pre>"
    if isinstance(b, content.Source):
        return _src(v, None, *b.sections)
    if isinstance(b, content.Findings):
        return '<ol class="findings">' + "".join(
            f'<li><span class="badge sev-{esc(f.severity)}">{esc(f.severity)}</span> <b>{esc(f.title)}</b>'
            f"<div>{esc(f.detail)}</div>"
            + (f"<div>Suggestion: {esc(f.suggestion)}" + (f' (<a href="{esc(f.link)}">docs</a>)' if f.link else "")
               + "</div>" if f.suggestion else "")
            + (f'<div class="src">{esc(f.metrics)}</div>' if f.metrics else "")
            + _src(v, f.evidence) + "</li>" for f in b.items) + "</ol>"
    if isinstance(b, content.Excerpts):
        return f'<h3 id="excerpts">{esc(b.title)}</h3>' + "".join(
            f'<div class="excerpt-head"><b>{esc(x.name)}</b> — <code>{esc(x.loc)}</code> '
            f'<span class="muted">· {esc(x.share)}</span></div>{excerpt.html_block(x.block)}' for x in b.items)
    return _figure(v, b.chart or (getattr(cs, b.name) if b.name else None), *b.sources)


def _section(v: ReportView, cs: ChartSet, sec: content.Section | None, nav: list[tuple[str, str]], body: list[str]) -> None:
    """A section with its link in the header; nothing when none of its blocks shows here."""
    if sec is None:
        return
    sources = next((b.sections for b in sec.blocks if isinstance(b, content.Source)), ())
    inner = "".join(_block(v, cs, b, sources) for b in sec.blocks)
    if not inner and sec.lead is None:
        return
    nav.append((sec.id, sec.nav or sec.title))
    lens = f' data-lens="{esc(sec.lens)}"' if sec.lens else ""
    lead = f"<p>{_inline_code(sec.lead)}</p>" if sec.lead is not None else ""
    body.append(f'<section id="{esc(sec.id)}"{lens}><h2>{esc(sec.title)}</h2>{lead}{inner}</section>')


def _summary(v: ReportView, cs: ChartSet, nav: list[tuple[str, str]], body: list[str]) -> None:
    """The verdict, the answer's sentences, their source, the key figures as tiles."""
    sev = v.worst_severity or "info"
    nav.append(("summary", "Summary"))
    tiles = [_tile(value, label, tip) for value, label, tip in v.tiles()]
    sentences = "".join(f"<p>{_inline_code(s)}</p>" for s in v.summary_sentences())
    body.append(
        f'<section id="summary"><div class="card verdict"><span class="badge sev-{esc(sev)}">{esc(v.verdict)}</span>'
        f"{sentences}{_src(v)}</div>"
        + (f'<div class="tiles">{"".join(tiles)}</div>' if tiles else "")
        + "</section>"
    )


def _lens(v: ReportView, cs: ChartSet, nav: list[tuple[str, str]], body: list[str]) -> None:
    """A lens question's own section, then its lens's data: they open the report."""
    _section(v, cs, v.lens_answer(), nav, body)
    for sec in v.lens_blocks(asked=True):
        _section(v, cs, sec, nav, body)


def _other_lenses(v: ReportView, cs: ChartSet, nav: list[tuple[str, str]], body: list[str]) -> None:
    """The sections of the lenses the question did not ask about."""
    for sec in v.lens_blocks(asked=False):
        _section(v, cs, sec, nav, body)


def _narrative(v: ReportView, cs: ChartSet, nav: list[tuple[str, str]], body: list[str]) -> None:
    """A model's narrative, labelled, or why there is none."""
    if v.narrative:
        unverified = (
            f'<p class="src">{esc(NARRATIVE_UNVERIFIED)}{esc(", ".join(v.narrative_unverified))}</p>'
            if v.narrative_unverified
            else ""
        )
        body.append(
            f'<section id="narrative" class="card narrative"><p class="label">{esc(" ".join(NARRATIVE_LABEL))}</p>'
            + "".join(f"<p>{esc(p)}</p>" for p in v.narrative.split("\n\n") if p.strip())
            + unverified
            + "</section>"
        )
    elif v.narrative_note:
        body.append(f'<p class="src">{esc(v.narrative_note)}</p>')


#: The text sections of nodes/report/view.py (TEXT_SECTIONS), written as HTML: each appends its
#: part of the page to ``body`` and its link to ``nav``; the data sections are laid out from
#: their blocks (``_section``).
_SECTIONS: dict[str, Callable[[ReportView, ChartSet, list[tuple[str, str]], list[str]], None]] = {
    "summary": _summary, "lens": _lens, "narrative": _narrative, "other_lenses": _other_lenses,
}


def render_html(v: ReportView, cs: ChartSet) -> str:
    """The sections in the order the view gives (``ReportView.sections()``), under a header
    that links to each."""
    a = v.analysis
    nav: list[tuple[str, str]] = []
    body: list[str] = []
    for sid in v.sections():
        if sid in _SECTIONS:
            _SECTIONS[sid](v, cs, nav, body)
        else:
            _section(v, cs, v.section(sid), nav, body)

    navhtml = "".join(f'<a href="#{k}">{esc(t)}</a>' for k, t in nav)
    title = v.title
    return (
        "<!doctype html>\n"
        f'<html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        f'<meta name="color-scheme" content="light dark">'
        f"<title>{esc(title)}</title><style>{CSS}</style></head>"
        f'<body><main><header><h1>{esc(title)}</h1><div class="meta">{esc(a.format)}'
        f" · {esc(v.generated_at)} · files and commands under <a href=\"#sources\">Sources</a></div><nav>{navhtml}</nav></header>"
        + "".join(body)
        + "</main></body></html>\n"
    )
