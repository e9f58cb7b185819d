"""The self-contained HTML report: one file, inline CSS and SVG, no script, no fetch.

A Content-Security-Policy of ``default-src 'none'`` is set in the page itself, so a browser
refuses any network or file fetch the page might attempt; the browser test watches the console
for the violation report that would cause. Light and dark follow ``prefers-color-scheme``;
wide tables and charts scroll inside their own box so the page fits a phone's width. The tables
both reports show, and their caps, are built once in nodes/report/tables.py; this file lays them
out and escapes them.
"""

from __future__ import annotations

import re
from typing import Any, Callable

from graph.enums import AttributionStatus
from nodes.perf.model import Evidence
from nodes.report import charts, excerpt, fmt, tables
from nodes.report.charts import Chart
from nodes.report.tables import Code, CodeList, Link, MainThread, Table
from nodes.report.sections import ChartSet
from nodes.report.svg import esc
from nodes.report.view import ReportView

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
        return f"<code>{esc(c.text)}</code>"
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


def _attribution_cell(v: ReportView, a: dict[str, Any] | None) -> str:
    if not a:
        return '<span class="muted">not attributed</span>'
    status = a.get("status")
    if status == AttributionStatus.FOUND.value:
        loc = f"{a.get('file')}:{a.get('line')}" if a.get("line") else str(a.get("file"))
        return f"<code>{esc(loc)}</code>"
    label = "system / library code" if status == AttributionStatus.SYSTEM.value else "not found in the workspace"
    reason = f" ({esc(a['reason'])})" if a.get("reason") else ""
    return f'<span class="muted">{label}{reason}</span>'


def _lens_section(v: ReportView, s) -> str:
    """One lens section (nodes/report/lens_sections.py): sentence (unless it is the question's lens,
    whose answer above said it), charts, tables, what is missing."""
    said = s.lens == v.lens
    parts = [f'<section id="{esc(s.id)}" data-lens="{esc(s.lens)}"><h2>{esc(s.title)}</h2>'
             + ("" if said else f"<p>{esc(s.sentence)}</p>")]
    parts += [_figure(v, c, *s.sources) for c in s.charts]
    for t in s.tables:
        if t.title:
            parts.append(f"<h3>{esc(t.title)}</h3>")
        parts.append(_table([(h, i in t.right) for i, h in enumerate(t.head)], [[esc(c) for c in r] for r in t.rows]))
    parts += [f'<p class="src">missing: {esc(m)}</p>' for m in s.missing]
    return "".join(parts) + _src(v, None, *s.sources) + "</section>"


def _summary(v: ReportView, cs: ChartSet, nav: list[tuple[str, str]], body: list[str]) -> None:
    """The verdict, the answer's sentences, their source, the key figures as tiles."""
    a = v.analysis
    sev = v.worst_severity or "info"
    nav.append(("summary", "Summary"))
    tiles = []
    src_tip = v.prov.text()
    if v.wall_ms is not None:  # one duration on the page; the others are labelled in Sources
        tiles.append(_tile(fmt.dur(v.wall_ms), "wall time of the run", f"{src_tip} · the collector's clock, launch to exit"))
    elif a.duration_ms:
        tiles.append(_tile(fmt.ms(a.duration_ms), "capture length", src_tip))
    if a.frames and a.frames.count:
        fr = a.frames
        tip = v.prov.text(sections=("frames",))
        if fr.fps:
            tiles.append(_tile(f"{fr.fps:.1f}", "frames per second", tip))
        if fr.jank_ratio is not None:
            tiles.append(_tile(fmt.ratio_pct(fr.jank_ratio), f"janky (> {fr.budget_ms:.2f} ms)", tip))
        if fr.p90_ms is not None:
            tiles.append(_tile(fmt.ms(fr.p90_ms), "frame time p90", tip))
    if a.startup and a.startup.median_ms is not None:
        tiles.append(_tile(fmt.ms(a.startup.median_ms), f"launch median ({len(a.startup.runs)} runs)",
                           v.prov.text(sections=("startup",))))
    if a.hotspots:
        h = max(a.hotspots, key=lambda h: h.self_pct)
        of = {"sample": "sampled time", "import": "import time"}.get(h.kind, "self time")
        tiles.append(_tile(fmt.pct(h.self_pct), f"{of} in {h.name}", v.prov.text(sections=("hot spots",))))
    if a.long_tasks:
        tiles.append(_tile(str(len(a.long_tasks)), "long tasks (≥ 50 ms)", v.prov.text(sections=("long tasks",))))
    sentences = "".join(f"<p>{_inline_code(s)}</p>" for s in v.summary_sentences())
    body.append(
        f'<section id="summary"><div class="card verdict"><span class="badge sev-{esc(sev)}">{esc(v.verdict)}</span>'
        f"{sentences}{_src(v)}</div>"
        + (f'<div class="tiles">{"".join(tiles)}</div>' if tiles else "")
        + "</section>"
    )


def _lens(v: ReportView, cs: ChartSet, nav: list[tuple[str, str]], body: list[str]) -> None:
    """A lens question's own section: it opens the report, right after the summary."""
    lens = v.lens_section()
    if lens is not None:
        nav.append(("lens", lens["title"]))
        parts = [f'<section id="lens"><h2>{esc(lens["title"])}</h2>']
        parts += [f"<p>{_inline_code(s)}</p>" for s in lens["lines"]]
        if lens["missing"]:
            parts.append(f"<p><strong>Missing:</strong> {esc(lens['missing'])}.</p>")
        if lens["partial"]:
            parts.append("<p>What this data can say:</p><ul>" + "".join(f"<li>{esc(x)}</li>" for x in lens["partial"]) + "</ul>")
        if lens["recipe"]:
            parts.append(f"<p>To record {esc(lens['recipe_what'])}:</p><pre><code>{esc(lens['recipe'])}</code></pre>")
        parts.append(f'<p class="src">This lens reads: {esc(lens["metrics"])}; it needs {esc(lens["needs"])}.</p></section>')
        body.append("".join(parts))
    asked = v.lens
    for sec in v.lens_sections():  # the question's lens: its data right under its answer
        if sec.lens == asked:
            nav.append((sec.id, sec.title))
            body.append(_lens_section(v, sec))


def _narrative(v: ReportView, cs: ChartSet, nav: list[tuple[str, str]], body: list[str]) -> None:
    """A model's narrative, labelled, or why there is none."""
    if v.narrative:
        unverified = (
            f'<p class="src">Numbers not found in the computed findings: {esc(", ".join(v.narrative_unverified))}</p>'
            if v.narrative_unverified
            else ""
        )
        body.append(
            '<section id="narrative" class="card narrative"><p class="label">Narrative written by a language model '
            "from the computed findings below. It adds no measurement; where it disagrees with them, the findings are right.</p>"
            + "".join(f"<p>{esc(p)}</p>" for p in v.narrative.split("\n\n") if p.strip())
            + unverified
            + "</section>"
        )
    elif v.narrative_note:
        body.append(f'<p class="src">{esc(v.narrative_note)}</p>')


def _first(v: ReportView, cs: ChartSet, nav: list[tuple[str, str]], body: list[str]) -> None:
    """The findings to look at first, and what their severities mean."""
    ranked = v.findings_to_act_on()
    if ranked:
        nav.append(("first", "Look at first"))
        items = []
        for f in ranked:
            metric = ", ".join(f"{k} = {fmt.metric(x)}" for k, x in f.metric.items())
            items.append(
                f'<li><span class="badge sev-{esc(f.severity)}">{esc(f.severity)}</span> <b>{esc(f.title)}</b>'
                f"<div>{esc(f.detail)}</div>"
                + (f"<div>Suggestion: {esc(f.suggestion)}" + (f' (<a href="{esc(f.link)}">docs</a>)' if f.link else "")
                   + "</div>" if f.suggestion else "")
                + (f'<div class="src">{esc(metric)}</div>' if metric else "")
                + _src(v, f.evidence)
                + "</li>"
            )
        legend = "".join(f'<p class="src">{esc(line)}</p>' for line in v.legend())
        body.append(f'<section id="first"><h2>What to look at first</h2><ol class="findings">{"".join(items)}</ol>'
                    f"{legend}</section>")


def _hotspots(v: ReportView, cs: ChartSet, nav: list[tuple[str, str]], body: list[str]) -> None:
    """Hot spots: the chart, the table, the source excerpts."""
    a = v.analysis
    if a.hotspots:
        nav.append(("hotspots", "Hot spots"))
        rows = []
        for i, h in enumerate(a.hotspots[:tables.HOTSPOT_ROWS], 1):
            where = f"{h.file}:{h.line}" if h.file and h.line else (h.file or "")
            att = v.attribution_for(h)
            if att and att.get("status") == AttributionStatus.FOUND.value:
                where = ""  # the source column says where, relative to the workspace
            rows.append(
                [
                    str(i),
                    f"<code>{esc(h.name)}</code>" + (f'<div class="src">{esc(where)}</div>' if where else ""),
                    esc(fmt.ms(h.self_ms)),
                    esc(fmt.pct(h.self_pct)),
                    esc(fmt.ms(h.total_ms)),
                    esc(fmt.pct(h.total_pct)),
                    esc(fmt.num(h.count)),
                    esc(h.thread or (f"{h.process}, all threads" if h.process else "all")),
                    _attribution_cell(v, att),
                ]
            )
        table = _table(
            [("#", True), ("function / slice", False), ("self", True), ("self %", True), ("total", True),
             ("total %", True), ("count", True), ("thread", False), ("source", False)],
            rows,
        )
        if a.untraced_in_tasks:
            table += f'<p class="src">{esc(v.untraced_sentence())}</p>'
        shown = []
        for h, att, ex in v.excerpts():
            loc = f"{att.get('file')}:{att.get('line')}" if att.get("line") else str(att.get("file"))
            share = f"{fmt.pct(h.self_pct)} self" if h.self_ms > 0 else f"{fmt.pct(h.total_pct)} with callees"
            shown.append(f'<div class="excerpt-head"><b>{esc(h.name)}</b> — <code>{esc(loc)}</code> '
                         f'<span class="muted">· {esc(share)}</span></div>{excerpt.html_block(ex)}')
        excerpts = f'<h3 id="excerpts">Source excerpts</h3>{"".join(shown)}' if shown else ""
        body.append(
            f'<section id="hotspots"><h2>Hot spots</h2>{_figure(v, cs.hotspots, "hot spots")}{table}'
            f"{_src(v, None, 'hot spots')}{excerpts}</section>"
        )


def _stacks(v: ReportView, cs: ChartSet, nav: list[tuple[str, str]], body: list[str]) -> None:
    """The hottest stacks as an icicle."""
    if cs.icicle:
        nav.append(("stacks", "Stacks"))
        body.append(f'<section id="stacks"><h2>Hottest stacks</h2>{_figure(v, cs.icicle, "stacks")}</section>')


def _frames(v: ReportView, cs: ChartSet, nav: list[tuple[str, str]], body: list[str]) -> None:
    """Frames: the statistics, the histogram, the worst frames."""
    a = v.analysis
    fr = a.frames
    if fr and fr.count:
        nav.append(("frames", "Frames"))
        worst = "<h3>Worst frames</h3>" + lay_out(tables.worst_frames(fr)) if fr.worst else ""
        body.append(
            f'<section id="frames"><h2>Frames</h2>{lay_out(tables.frame_stats(fr))}'
            f"{_src(v, None, 'frames')}{_figure(v, cs.histogram, 'frames')}{worst}</section>"
        )


def _timeline(v: ReportView, cs: ChartSet, nav: list[tuple[str, str]], body: list[str]) -> None:
    """Frames and long tasks on one time axis."""
    if cs.timeline:
        nav.append(("timeline", "Timeline"))
        body.append(f'<section id="timeline"><h2>Timeline</h2>{_figure(v, cs.timeline, "frames", "long tasks")}</section>')


def _startup(v: ReportView, cs: ChartSet, nav: list[tuple[str, str]], body: list[str]) -> None:
    """Startup: runs, each app launch, the charts."""
    a = v.analysis
    st = a.startup
    if st and (st.runs or st.phases or st.imports or st.median_ms is not None):
        nav.append(("startup", "Startup"))
        parts = ['<section id="startup"><h2>Startup</h2>']
        parts.append(lay_out(tables.startup_summary(st)))
        if st.runs:
            parts.append(lay_out(tables.startup_runs(st)))
        for r in [x for x in st.runs if x.package]:
            parts.append(f"<h3>{esc(r.package)} ({esc(r.kind)} start): TTID {esc(fmt.ms(r.ttid_ms))}, "
                         f"TTFD {esc(fmt.ms(r.ttfd_ms))}</h3>")
            if r.breakdown:
                parts.append(lay_out(tables.breakdown(r)))
            for x in r.slow_reasons:
                link = f' (<a href="{esc(x.link)}">docs</a>)' if x.link else ""
                parts.append(f"<p><b>{esc(x.id)}</b>: {esc(x.suggestion)}{link}</p>")
            for m in r.missing:
                parts.append(f"<p class=\"note\">missing: {esc(m)}</p>")
        parts.append(_src(v, None, "startup"))
        parts += [_figure(v, c, "startup") for c in (cs.runs, cs.waterfall, cs.imports)] + ["</section>"]
        body.append("".join(parts))


def _threads(v: ReportView, cs: ChartSet, nav: list[tuple[str, str]], body: list[str]) -> None:
    """Threads and long tasks."""
    a = v.analysis
    if a.threads or a.long_tasks:
        nav.append(("threads", "Threads"))
        parts = ['<section id="threads"><h2>Threads and long tasks</h2>']
        if a.threads:
            parts.append(lay_out(tables.threads(a.threads)))
        if a.long_tasks:
            parts.append("<h3>Long tasks</h3>")
            parts.append(lay_out(tables.long_tasks(a.long_tasks)))
        parts.append(_src(v, None, *(["threads"] if a.threads else []), *(["long tasks"] if a.long_tasks else []))
                     + "</section>")
        body.append("".join(parts))



def _other_lenses(v: ReportView, cs: ChartSet, nav: list[tuple[str, str]], body: list[str]) -> None:
    """The sections of the lenses the question did not ask about."""
    for sec in v.lens_sections():
        if sec.lens != v.lens:
            nav.append((sec.id, sec.title))
            body.append(_lens_section(v, sec))


def _counters(v: ReportView, cs: ChartSet, nav: list[tuple[str, str]], body: list[str]) -> None:
    """CPU and memory series, and the ones constant over the capture."""
    a = v.analysis
    flat = charts.constant_counters(a.counters)
    if cs.counters or flat:
        nav.append(("counters", "CPU / memory"))
        const = (
            f'<p>Constant over the capture: {esc(", ".join(charts.constant_label(c) for c in flat))}.</p>{_src(v, None, "counters")}'
            if flat else ""
        )
        body.append(
            '<section id="counters"><h2>CPU and memory over time</h2>' + "".join(_figure(v, c, "counters") for c in cs.counters)
            + const + "</section>"
        )


def _stats(v: ReportView, cs: ChartSet, nav: list[tuple[str, str]], body: list[str]) -> None:
    """Counters the tool reported."""
    a = v.analysis
    if a.stats:
        nav.append(("stats", "Counters"))
        body.append(
            '<section id="stats"><h2>Reported counters</h2>'
            + lay_out(tables.stats(a.stats))
            + _src(v, None, "stats")
            + "</section>"
        )


def _sources(v: ReportView, cs: ChartSet, nav: list[tuple[str, str]], body: list[str]) -> None:
    """Files and commands, then warnings."""
    a = v.analysis
    nav.append(("sources", "Sources"))
    warn = ""
    if a.warnings or a.partial:
        warn = "<h3>Warnings</h3><ul>" + "".join(f"<li>{esc(w)}</li>" for w in a.warnings[:tables.WARNING_ROWS]) + (
            "<li>The result is partial: part of the input was skipped.</li>" if a.partial else ""
        ) + "</ul>"
    body.append(f'<section id="sources"><h2>Sources</h2>{lay_out(tables.sources(v.source_rows()))}{warn}</section>')


#: Each section of nodes/report/view.py SECTIONS, written as HTML: it appends its part of the
#: page to ``body`` and its link to ``nav``.
_SECTIONS: dict[str, Callable[[ReportView, ChartSet, list[tuple[str, str]], list[str]], None]] = {
    "summary": _summary, "lens": _lens, "narrative": _narrative, "first": _first, "hotspots": _hotspots, "stacks": _stacks,
    "frames": _frames, "timeline": _timeline, "startup": _startup, "threads": _threads, "other_lenses": _other_lenses, "counters": _counters,
    "stats": _stats, "sources": _sources,
}


def render_html(v: ReportView, cs: ChartSet) -> str:
    """The sections in the order the view gives (``ReportView.sections()``), under a header
    that links to each."""
    a = v.analysis
    nav: list[tuple[str, str]] = []
    body: list[str] = []
    for section in v.sections():
        _SECTIONS[section](v, cs, nav, body)

    navhtml = "".join(f'<a href="#{k}">{esc(t)}</a>' for k, t in nav)
    title = f"PerfScout report — {v.subject}"
    return (
        "<!doctype html>\n"
        f'<html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        f'<meta name="color-scheme" content="light dark">'
        f"<title>{esc(title)}</title><style>{CSS}</style></head>"
        f'<body><main><header><h1>PerfScout report — {esc(v.subject)}</h1><div class="meta">{esc(a.format)}'
        f" · {esc(v.generated_at)} · files and commands under <a href=\"#sources\">Sources</a></div><nav>{navhtml}</nav></header>"
        + "".join(body)
        + "</main></body></html>\n"
    )
