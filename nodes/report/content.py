"""The report's data sections, built once from a ``ReportView`` for every renderer.

A :class:`Section` is what a report shows under one heading: an id (the page's anchor and the
key in ``nodes/report/view.py`` SECTIONS), a title, an optional lead sentence and its blocks in
order — tables (nodes/report/tables.py), sub-headings, notes, lists, source excerpts, the
charts the page draws and the Source line. The Markdown and HTML renderers walk the blocks and
only lay each one out in their own syntax and escape it: which rows, in what order, with what
caps, labels and number formats, is decided here or in the table builders, so report.md and
report.html cannot say different things (issue 26, item 6; tests/test_report_tables.py).

The summary, the lens answer and the narrative are text sections: their sentences come from the
view (``summary_sentences``, ``lens_answer``, ``NARRATIVE_LABEL``) and each renderer writes them
in its own way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Union

from nodes.perf.model import Evidence
from nodes.report import charts, excerpt, fmt, tables
from nodes.report.charts import Chart
from nodes.report.tables import Table

if TYPE_CHECKING:
    from nodes.report.lens_sections import LensSection
    from nodes.report.view import ReportView


@dataclass(frozen=True)
class Heading:
    """A sub-heading inside a section (### / <h3>)."""

    text: str


@dataclass(frozen=True)
class Note:
    """One paragraph: ``label: text``, with a docs link when there is one; ``quiet`` for a
    remark about the data rather than a fact from it. Backtick spans in ``text`` are code."""

    text: str
    label: str | None = None
    link: str | None = None
    quiet: bool = False


@dataclass(frozen=True)
class Items:
    """A bulleted list (the warnings, what a lens's data can say)."""

    items: tuple[str, ...]


@dataclass(frozen=True)
class CodeBlock:
    """Lines to copy as they are (a capture recipe)."""

    text: str


@dataclass(frozen=True)
class Figure:
    """A chart the page draws here: a ``ChartSet`` field by name (nodes/report/sections.py), or
    one already built (a lens section's). Report.md draws none (frames: a text histogram)."""

    name: str | None = None
    chart: Chart | None = None
    #: The analysis sections its caption names as the source.
    sources: tuple[str, ...] = ()


@dataclass(frozen=True)
class Excerpt:
    """The source lines of one hot spot, as the attributor showed them."""

    name: str
    loc: str
    #: "12.5 % self" or "40.0 % with callees".
    share: str
    file: str
    block: excerpt.Excerpt


@dataclass(frozen=True)
class Excerpts:
    title: str
    items: tuple[Excerpt, ...]


@dataclass(frozen=True)
class FindingItem:
    """One finding of the list to look at first: its words, its metric line, its evidence."""

    severity: str
    title: str
    detail: str
    suggestion: str | None
    link: str | None
    #: ``ReportView.finding_metrics``: "median_ms = 812.5, runs = 5", or "".
    metrics: str
    evidence: Evidence | None


@dataclass(frozen=True)
class Findings:
    """A numbered list of findings."""

    items: tuple[FindingItem, ...]


@dataclass(frozen=True)
class Source:
    """The Source line: the files (and time range, command) the numbers above came from."""

    sections: tuple[str, ...] = ()


Block = Union[Table, Heading, Note, Items, CodeBlock, Figure, Excerpts, Findings, Source]


@dataclass
class Section:
    id: str
    title: str
    blocks: list[Block] = field(default_factory=list)
    #: A sentence under the heading (a lens section's summary).
    lead: str | None = None
    #: The lens a lens section answers (data-lens on the page); None otherwise.
    lens: str | None = None
    #: Its link in the page's header, when shorter than the title.
    nav: str | None = None

    def tables(self) -> list[Table]:
        return [b for b in self.blocks if isinstance(b, Table)]


# --- the data sections, one function per id of view.SECTIONS --------------------------------


def _first(v: ReportView) -> Section | None:
    """The findings to look at first (``findings_to_act_on``), then what their severities mean."""
    ranked = v.findings_to_act_on()
    if not ranked:
        return None
    items = tuple(FindingItem(f.severity, f.title, f.detail, f.suggestion, f.link, v.finding_metrics(f), f.evidence)
                  for f in ranked)
    return Section("first", "What to look at first", [Findings(items), *(Note(line, quiet=True) for line in v.legend())],
                   nav="Look at first")


def _hotspots(v: ReportView) -> Section | None:
    a = v.analysis
    if not a.hotspots:
        return None
    blocks: list[Block] = [Figure("hotspots", sources=("hot spots",)), tables.hotspots(a.hotspots, v.hotspot_source)]
    if a.untraced_in_tasks:
        blocks.append(Note(v.untraced_sentence(), quiet=True))
    blocks.append(Source(("hot spots",)))
    shown = [Excerpt(h.name, loc, share, str(att.get("file")), ex) for h, att, ex, loc, share in v.excerpt_rows()]
    if shown:
        blocks.append(Excerpts("Source excerpts", tuple(shown)))
    return Section("hotspots", "Hot spots", blocks)


def _stacks(v: ReportView) -> Section | None:
    a = v.analysis
    if not a.stacks:
        return None
    return Section("stacks", "Hottest stacks", [tables.stacks(a.stacks), Source(("stacks",))], nav="Stacks")


def _frames(v: ReportView) -> Section | None:
    fr = v.analysis.frames
    if not (fr and fr.count):
        return None
    blocks: list[Block] = [tables.frame_stats(fr), Source(("frames",)), Figure("histogram", sources=("frames",))]
    if fr.worst:
        blocks += [Heading("Worst frames"), tables.worst_frames(fr)]
    return Section("frames", "Frames", blocks)


def _timeline(v: ReportView) -> Section | None:
    """Frames and long tasks on one time axis: a chart only (their rows are in Frames and Threads)."""
    return Section("timeline", "Timeline", [Figure("timeline", sources=("frames", "long tasks"))])


def _startup(v: ReportView) -> Section | None:
    st = v.analysis.startup
    if not (st and (st.runs or st.phases or st.imports or st.median_ms is not None)):
        return None
    blocks: list[Block] = [tables.startup_summary(st)]
    if st.runs:
        blocks += [tables.startup_runs(st), Figure("runs", sources=("startup",))]
    for r in [x for x in st.runs if x.package]:
        blocks += [Heading(f"{r.package} ({r.kind} start)"), tables.launch(r)]
        if r.breakdown:
            blocks.append(tables.breakdown(r))
        if r.art:
            blocks.append(Note(f"JIT {r.art.jit.count} ({fmt.ms(r.art.jit.total_ms)}), class init {r.art.class_init.count} "
                               f"({fmt.ms(r.art.class_init.total_ms)}), class verification {r.art.verify_class.count} "
                               f"({fmt.ms(r.art.verify_class.total_ms)})", label="ART"))
        blocks += [Note(x.suggestion, label=x.id, link=x.link) for x in r.slow_reasons]
        blocks += [Note(m, label="missing") for m in r.missing]
    if st.phases:
        blocks += [Heading("Phases"), tables.phases(st.phases)]
    if st.imports:
        blocks += [Heading("Slowest imports"), tables.imports(st.imports)]
    blocks.append(Source(("startup",)))
    return Section("startup", "Startup", blocks)


def _threads(v: ReportView) -> Section | None:
    a = v.analysis
    if not (a.threads or a.long_tasks):
        return None
    blocks: list[Block] = []
    if a.threads:
        blocks.append(tables.threads(a.threads))
    if a.long_tasks:
        blocks += [Heading("Long tasks"), tables.long_tasks(a.long_tasks)]
    blocks.append(Source((*(["threads"] if a.threads else []), *(["long tasks"] if a.long_tasks else []))))
    return Section("threads", "Threads and long tasks", blocks, nav="Threads")


def _counters(v: ReportView) -> Section | None:
    a = v.analysis
    if not a.counters:
        return None
    blocks: list[Block] = [tables.counters(a.counters)]
    flat = charts.constant_counters(a.counters)
    if flat:
        blocks.append(Note("Constant over the capture: " + ", ".join(charts.constant_label(c) for c in flat) + "."))
    blocks.append(Source(("counters",)))
    return Section("counters", "CPU and memory over time", blocks, nav="CPU / memory")


def _stats(v: ReportView) -> Section | None:
    a = v.analysis
    if not a.stats:
        return None
    return Section("stats", "Reported counters", [tables.stats(a.stats), Source(("stats",))], nav="Counters")


def _sources(v: ReportView) -> Section:
    a = v.analysis
    blocks: list[Block] = [tables.sources(v.source_rows())]
    if a.warnings or a.partial:
        blocks += [Heading("Warnings"), Items(tuple(a.warnings[:tables.WARNING_ROWS])
                                              + (("The result is partial: part of the input was skipped.",) if a.partial else ()))]
    return Section("sources", "Sources", blocks)


#: The data sections of view.SECTIONS (the others are the text sections the renderers write).
DATA_SECTIONS: dict[str, Callable[[ReportView], Section | None]] = {
    "first": _first, "hotspots": _hotspots, "stacks": _stacks, "frames": _frames, "timeline": _timeline, "startup": _startup,
    "threads": _threads, "counters": _counters, "stats": _stats, "sources": _sources,
}


def lens_section(s: LensSection, asked: str | None) -> Section:
    """A lens section (nodes/report/lens_sections.py) as blocks: its sentence unless it is the
    question's lens (whose answer above said it), its charts, its tables, what is missing."""
    blocks: list[Block] = [Figure(chart=c, sources=s.sources) for c in s.charts]
    blocks += list(s.tables)
    blocks += [Note(m, label="missing") for m in s.missing]
    blocks.append(Source(s.sources))
    return Section(s.id, s.title, blocks, lead=None if s.lens == asked else s.sentence, lens=s.lens)
