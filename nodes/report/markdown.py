"""The Markdown report: for terminals and pull requests, complete without any chart.

The same sections as the HTML page in the same order; where the page draws a chart this file
prints the table behind it (and a small text histogram of frame times, which reads well in a
terminal). The tables both reports show, and their caps, are built once in
nodes/report/tables.py; this file lays them out. Cells are escaped so a function name with
``|`` cannot break a table.
"""

from __future__ import annotations

import os
from typing import Any, Callable

from graph.enums import AttributionStatus
from nodes.perf.model import Evidence
from nodes.report import excerpt, fmt, tables
from nodes.report.tables import Code, CodeList, Link, MainThread, Table
from nodes.report.view import ReportView

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
        return code(c.text)
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


def _text_histogram(durs: list[float], budget: float, width: int = 40) -> str:
    if not durs:
        return ""
    edges = [budget * f for f in (0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0)]
    labels, counts, lo = [], [], 0.0
    for e in edges:
        counts.append(sum(1 for d in durs if lo <= d < e))
        labels.append(f"{lo:6.1f}–{e:6.1f} ms")
        lo = e
    counts.append(sum(1 for d in durs if d >= lo))
    labels.append(f"  ≥ {lo:6.1f} ms   ")
    top = max(counts) or 1
    lines = []
    for i, (lab, c) in enumerate(zip(labels, counts)):
        mark = "#" if i < 4 else "!"
        lines.append(f"{lab} {mark * max(1 if c else 0, round(width * c / top))} {c}")
    lines.append(f"(# within the {budget:.2f} ms budget, ! over it)")
    return "```text\n" + "\n".join(lines) + "\n```"


def _lens_section(v: ReportView, s) -> list[str]:
    """One lens section (nodes/report/lens_sections.py): its sentence (unless it is the question's
    lens, whose answer above said it), its tables, what is missing."""
    out = [f"## {cell(s.title)}", ""] + ([cell(s.sentence), ""] if s.lens != _asked_lens(v) else [])
    for t in s.tables:
        if t.title:
            out += [f"**{cell(t.title)}**", ""]
        out += [table(t.head, [[cell(c) for c in r] for r in t.rows], t.right), ""]
    out += [f"- missing: {cell(m)}" for m in s.missing] + ([""] if s.missing else [])
    return out + [_src(v, None, *s.sources), ""]


def _asked_lens(v: ReportView) -> str | None:
    """The question's lens (ReportView.lens), None for the overview."""
    return None if v.lens in (None, "overview") else v.lens


def _summary(v: ReportView) -> list[str]:
    """The title, the answer's sentences and their source."""
    out: list[str] = [f"# PerfScout report — {cell(v.subject)}", ""]
    first, *rest = v.summary_sentences()
    out.append(" ".join([f"**{first}**", *rest]))
    out += ["", _src(v), ""]
    return out


def _lens(v: ReportView) -> list[str]:
    """A lens question's own section: it opens the report, right after the summary."""
    out: list[str] = []
    lens = v.lens_section()
    if lens is not None:
        out += [f"## {lens['title']}", "", *lens["lines"], ""]
        if lens["missing"]:
            out += [f"**Missing:** {cell(lens['missing'])}.", ""]
        if lens["partial"]:
            out += ["What this data can say:", "", *[f"- {cell(x)}" for x in lens["partial"]], ""]
        if lens["recipe"]:
            out += [f"To record {lens['recipe_what']}:", "", "```text", lens["recipe"], "```", ""]
        out += [f"_This lens reads: {cell(lens['metrics'])}; it needs {cell(lens['needs'])}._", ""]
    for sec in v.lens_sections():  # the question's lens: its data right under its answer
        if sec.lens == _asked_lens(v):
            out += _lens_section(v, sec)
    return out


def _narrative(v: ReportView) -> list[str]:
    """A model's narrative, labelled, or why there is none."""
    out: list[str] = []
    if v.narrative:
        out += ["> **Narrative written by a language model** from the computed findings below. It adds no",
                "> measurement; where it disagrees with them, the findings are right.", ">"]
        out += ["> " + line if line.strip() else ">" for line in v.narrative.splitlines()]
        if v.narrative_unverified:
            out += [">", "> _Numbers not found in the computed findings: " + cell(", ".join(v.narrative_unverified)) + "_"]
        out.append("")
    elif v.narrative_note:
        out += [f"_{v.narrative_note}_", ""]
    return out


def _first(v: ReportView) -> list[str]:
    """The findings to look at first, and what their severities mean."""
    out: list[str] = []
    ranked = v.findings_to_act_on()
    if ranked:
        out += ["## What to look at first", ""]
        for i, f in enumerate(ranked, 1):
            out.append(f"{i}. **[{f.severity}] {f.title}** — {f.detail}")
            if f.suggestion:
                out.append(f"   Suggestion: {cell(f.suggestion)}" + (f" ([docs]({f.link}))" if f.link else ""))
            if f.metric:
                out.append("   " + ", ".join(f"{k} = {fmt.metric(x)}" for k, x in f.metric.items()))
            out.append("   " + _src(v, f.evidence))
        out.append("")
        out += [f"_{cell(line)}_" for line in v.legend()] + [""]
    return out


def _hotspots(v: ReportView) -> list[str]:
    """Hot spots, with where each is in the source, and excerpts."""
    a = v.analysis
    out: list[str] = []
    if a.hotspots:
        out += ["## Hot spots", ""]
        rows = []
        for i, h in enumerate(a.hotspots[:tables.HOTSPOT_ROWS], 1):
            att = v.attribution_for(h)
            if att and att.get("status") == AttributionStatus.FOUND.value:
                where = code(f"{att.get('file')}:{att.get('line')}" if att.get("line") else att.get("file"))
            elif att:
                where = ("system / library code" if att.get("status") == AttributionStatus.SYSTEM.value else "not found in the workspace") + (
                    f" ({cell(att['reason'])})" if att.get("reason") else "")
            elif h.file:
                where = code(f"{h.file}:{h.line}" if h.line else h.file)
            else:
                where = "–"
            rows.append([i, code(h.name), fmt.ms(h.self_ms), fmt.pct(h.self_pct), fmt.ms(h.total_ms), fmt.pct(h.total_pct),
                         fmt.num(h.count), cell(h.thread or (f"{h.process}, all threads" if h.process else "all")), where])
        out.append(table(["#", "function / slice", "self", "self %", "total", "total %", "count", "thread", "source"], rows,
                         {0, 2, 3, 4, 5, 6}))
        out += ["", _src(v, None, "hot spots"), ""]
        if a.untraced_in_tasks:
            out += [v.untraced_sentence(), ""]
        shown = v.excerpts()
        if shown:
            out += ["### Source excerpts", ""]
            for h, att, ex in shown:
                loc = f"{att.get('file')}:{att.get('line')}" if att.get("line") else str(att.get("file"))
                lang = _LANG.get(os.path.splitext(str(att.get("file")))[1], "")
                share = f" — {fmt.pct(h.self_pct)} self" if h.self_ms > 0 else f" — {fmt.pct(h.total_pct)} with callees"
                out += [f"**{cell(h.name)}** — {code(loc)}{share}", "", excerpt.markdown_block(ex, lang), ""]
    return out


def _stacks(v: ReportView) -> list[str]:
    """The hottest stacks (the page draws them as an icicle)."""
    a = v.analysis
    out: list[str] = []
    if a.stacks:
        out += ["## Hottest stacks", ""]
        total = sum(s.weight_ms for s in a.stacks) or 1.0
        rows = [[fmt.ms(s.weight_ms), fmt.pct(100 * s.weight_ms / total), cell((s.thread or "–") + (" (sampled)" if s.sampled else "")),
                 code(" → ".join(s.frames[-4:]) if len(s.frames) <= 4 else "… → " + " → ".join(s.frames[-4:]))]
                for s in sorted(a.stacks, key=lambda s: -s.weight_ms)[:tables.STACK_ROWS]]
        out += [table(["time", "share", "thread", "stack (leaf last)"], rows, {0, 1}), "", _src(v, None, "stacks"), ""]
    return out


def _frames(v: ReportView) -> list[str]:
    """Frames: the statistics, a text histogram, the worst frames."""
    a = v.analysis
    out: list[str] = []
    fr = a.frames
    if fr and fr.count:
        out += ["## Frames", ""]
        out += [lay_out(tables.frame_stats(fr)), "", _src(v, None, "frames"), ""]
        hist = _text_histogram(fr.durations_ms, fr.budget_ms)
        if hist:
            out += [hist, ""]
        if fr.worst:
            out += ["### Worst frames", "", lay_out(tables.worst_frames(fr)), ""]
    return out


def _startup(v: ReportView) -> list[str]:
    """Startup: runs, each app launch, phases, imports."""
    a = v.analysis
    out: list[str] = []
    st = a.startup
    if st and (st.runs or st.phases or st.imports or st.median_ms is not None):
        out += ["## Startup", "", lay_out(tables.startup_summary(st)), ""]
        if st.runs:
            out += [lay_out(tables.startup_runs(st)), ""]
        for r in [x for x in st.runs if x.package]:
            out += [f"### {cell(r.package)} ({cell(r.kind)} start)", "",
                    table(["startup", "TTID", "TTFD", "main thread running / runnable / sleeping / D / IO"],
                          [[fmt.ms(r.total_ms), fmt.ms(r.ttid_ms), fmt.ms(r.ttfd_ms),
                            " / ".join(fmt.ms(getattr(r.main_thread, k)) for k in
                                       ("running_ms", "runnable_ms", "sleeping_ms", "uninterruptible_ms", "io_wait_ms"))
                            if r.main_thread else "– (no sched data)"]], {0, 1, 2}), ""]
            if r.breakdown:
                out += ["Breakdown (trace_processor's opinionated startup breakdown, exclusive):", "",
                        lay_out(tables.breakdown(r)), ""]
            if r.art:
                out += [f"ART: JIT {r.art.jit.count} ({fmt.ms(r.art.jit.total_ms)}), class init {r.art.class_init.count} "
                        f"({fmt.ms(r.art.class_init.total_ms)}), class verification {r.art.verify_class.count} "
                        f"({fmt.ms(r.art.verify_class.total_ms)})", ""]
            for x in r.slow_reasons:
                out += [f"- **{cell(x.id)}**: {cell(x.suggestion)}" + (f" ([docs]({x.link}))" if x.link else ""), ""]
            for m in r.missing:
                out += [f"- missing: {cell(m)}", ""]
        if st.phases:
            out += ["### Phases", "", table(["phase", "start", "duration", "thread"],
                                            [[cell(p.name), fmt.ms(p.start_ms), fmt.ms(p.dur_ms), cell(p.thread or "–")]
                                             for p in sorted(st.phases, key=lambda p: p.start_ms)], {1, 2}), ""]
        if st.imports:
            top = sorted(st.imports, key=lambda e: -e.cumulative_us)[:tables.IMPORT_ROWS]
            out += ["### Slowest imports", "", table(["module", "cumulative", "self", "depth"],
                                                    [[code(e.module), fmt.ms(e.cumulative_us / 1000), fmt.ms(e.self_us / 1000), e.depth] for e in top],
                                                    {1, 2, 3}), ""]
        out += [_src(v, None, "startup"), ""]
    return out


def _threads(v: ReportView) -> list[str]:
    """Threads and long tasks."""
    a = v.analysis
    out: list[str] = []
    if a.threads or a.long_tasks:
        out += ["## Threads and long tasks", ""]
        if a.threads:
            out += [lay_out(tables.threads(a.threads)), ""]
        if a.long_tasks:
            out += ["### Long tasks", "", lay_out(tables.long_tasks(a.long_tasks)), ""]
        out += [_src(v, None, *(["threads"] if a.threads else []), *(["long tasks"] if a.long_tasks else [])), ""]
    return out



def _other_lenses(v: ReportView) -> list[str]:
    """The sections of the lenses the question did not ask about."""
    out: list[str] = []
    for sec in v.lens_sections():
        if sec.lens != _asked_lens(v):
            out += _lens_section(v, sec)
    return out


def _counters(v: ReportView) -> list[str]:
    """CPU and memory series."""
    a = v.analysis
    out: list[str] = []
    if a.counters:
        out += ["## CPU and memory over time", "",
                table(["series", "unit", "min", "mean", "max", "last", "points"],
                      [[cell(c.name), cell(c.unit or "–"), fmt.num(c.min, 2), fmt.num(c.mean, 2), fmt.num(c.max, 2), fmt.num(c.last, 2), len(c.points)]
                       for c in a.counters], {2, 3, 4, 5, 6}), "", _src(v, None, "counters"), ""]
    return out


def _stats(v: ReportView) -> list[str]:
    """Counters the tool reported."""
    a = v.analysis
    out: list[str] = []
    if a.stats:
        out += ["## Reported counters", "", lay_out(tables.stats(a.stats)), "", _src(v, None, "stats"), ""]
    return out


def _sources(v: ReportView) -> list[str]:
    """Files and commands, then warnings."""
    a = v.analysis
    out: list[str] = []
    out += ["## Sources", "", lay_out(tables.sources(v.source_rows())), ""]
    if a.warnings or a.partial:
        out += ["### Warnings", ""] + [f"- {w}" for w in a.warnings[:tables.WARNING_ROWS]]
        if a.partial:
            out.append("- The result is partial: part of the input was skipped.")
        out.append("")
    return out


def _timeline(v: ReportView) -> list[str]:
    """The page's timeline chart: its frames and long tasks are in the Frames and Threads tables."""
    return []


#: Each section of nodes/report/view.py SECTIONS, written in Markdown.
_SECTIONS: dict[str, Callable[[ReportView], list[str]]] = {
    "summary": _summary, "lens": _lens, "narrative": _narrative, "first": _first, "hotspots": _hotspots, "stacks": _stacks,
    "frames": _frames, "timeline": _timeline, "startup": _startup, "threads": _threads, "other_lenses": _other_lenses, "counters": _counters,
    "stats": _stats, "sources": _sources,
}


def render_markdown(v: ReportView) -> str:
    """The sections in the order the view gives (``ReportView.sections()``)."""
    out: list[str] = []
    for section in v.sections():
        out += _SECTIONS[section](v)
    return "\n".join(out).rstrip() + "\n"
