"""The report's tables, built once: columns, rows and the caps on how many rows a table shows.

Both renderers (nodes/report/markdown.py, nodes/report/html.py) lay these out and escape them —
the pyinstrument shape (one model, one renderer per format): a row, a column or a cap changed
here changes both reports, so they cannot drift apart again (issue 26, item 6: the two copies
already disagreed, the Markdown report lacking the HTML page's "sleeping", "ready by" and "exit"
columns). Cells are plain values: text, or one of the small types below that a renderer
marks up in its own syntax; nothing here is escaped. Each row's order, each cell's number format
and each label is decided here (or in the ``ReportView`` helper it is passed), never in a
renderer (tests/test_report_tables.py reads the renderers' code to hold them to that).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

from typing import Callable, Sequence

from nodes.perf.findings.startup import part_share
from nodes.perf.model import (CounterSummary, FrameStats, Hotspot, ImportEntry, LongTask, StackWeight, StartupPhase,
                              StartupRun, StartupStats, ThreadStat)
from nodes.report import fmt

#: How many rows each table shows at most (the full data is in the JSON export).
HOTSPOT_ROWS = 30
STACK_ROWS = 10
WORST_FRAME_ROWS = 15
#: Slices named per worst frame ("what ran").
WORST_FRAME_SLICES = 6
THREAD_ROWS = 25
LONG_TASK_ROWS = 25
IMPORT_ROWS = 15
WARNING_ROWS = 50


@dataclass(frozen=True)
class Code:
    """Text set as code (a function, a command, a path), with an optional plain note after it
    (the profile's own location of a hot spot whose source column names no file)."""

    text: str
    note: str | None = None


@dataclass(frozen=True)
class Muted:
    """Text that says why there is no value (shown quieter on the page)."""

    text: str


@dataclass(frozen=True)
class Link:
    text: str
    href: str


@dataclass(frozen=True)
class MainThread:
    """A thread name marked as the app's main thread (when its name does not say so)."""

    name: str


@dataclass(frozen=True)
class CodeList:
    """Code spans joined by commas; "–" when there are none."""

    items: tuple[str, ...]


Cell = Union[str, Code, Muted, Link, MainThread, CodeList]


@dataclass(frozen=True)
class Column:
    name: str
    #: Right-aligned, tabular figures.
    numeric: bool = False


@dataclass
class Table:
    columns: tuple[Column, ...]
    rows: list[list[Cell]] = field(default_factory=list)
    #: A caption above the table (bold in Markdown, a sub-heading on the page).
    title: str | None = None
    #: The chart (a ``ChartSet`` field, nodes/report/sections.py) the page draws in the table's
    #: place; report.md, which has no charts, keeps the table (and so does the page when the
    #: chart is absent).
    drawn_as: str | None = None


def _cols(*spec: tuple[str, bool]) -> tuple[Column, ...]:
    return tuple(Column(n, num) for n, num in spec)


def plain(head: Sequence[str], rows: list[list[Cell]], right: set[int] | frozenset[int] = frozenset(),
          title: str | None = None) -> Table:
    """A table from its column names and the indexes of its numeric columns (the lens tables)."""
    return Table(tuple(Column(h, i in right) for i, h in enumerate(head)), rows, title)


def hotspots(hs: Sequence[Hotspot], source: Callable[[Hotspot], tuple[Cell, str | None]]) -> Table:
    """The top HOTSPOT_ROWS hot spots in the analysis's order. ``source`` gives a row's source
    cell and the profile's own location when that cell names none (``ReportView.hotspot_source``)."""
    rows: list[list[Cell]] = []
    for i, h in enumerate(hs[:HOTSPOT_ROWS], 1):
        where, note = source(h)
        rows.append([str(i), Code(h.name, note), fmt.ms(h.self_ms), fmt.pct(h.self_pct), fmt.ms(h.total_ms),
                     fmt.pct(h.total_pct), fmt.num(h.count), hotspot_scope(h), where])
    return Table(_cols(("#", True), ("function / slice", False), ("self", True), ("self %", True), ("total", True),
                       ("total %", True), ("count", True), ("thread", False), ("source", False)), rows)


def hotspot_scope(h: Hotspot) -> str:
    """What a hot-spot row covers: its thread, a process's threads, or all the data."""
    return h.thread or (f"{h.process}, all threads" if h.process else "all")


def stack_text(frames: Sequence[str]) -> str:
    """A stack's last four frames, leaf last (``… →`` when it is deeper)."""
    tail = " → ".join(frames[-4:])
    return tail if len(frames) <= 4 else "… → " + tail


def stacks(ss: Sequence[StackWeight]) -> Table:
    """The STACK_ROWS heaviest stacks, each as a share of all the stacks' time (the page draws
    them as an icicle)."""
    total = sum(s.weight_ms for s in ss) or 1.0
    return Table(
        _cols(("time", True), ("share", True), ("thread", False), ("stack (leaf last)", False)),
        [[fmt.ms(s.weight_ms), fmt.pct(100 * s.weight_ms / total), (s.thread or "–") + (" (sampled)" if s.sampled else ""),
          Code(stack_text(s.frames))]
         for s in sorted(ss, key=lambda s: -s.weight_ms)[:STACK_ROWS]],
        drawn_as="icicle",
    )


def frame_stats(fr: FrameStats) -> Table:
    rows: list[list[Cell]] = [
        ["frames", fmt.num(fr.count)],
        ["FPS", fmt.num(fr.fps)],
        ["janky", f"{fmt.num(fr.jank_count)} ({fmt.ratio_pct(fr.jank_ratio)})"],
        ["budget", f"{fmt.ms(fr.budget_ms)} — {fr.budget_source}"],
        ["p50 / p90 / p99", " / ".join(fmt.ms(x) for x in (fr.p50_ms, fr.p90_ms, fr.p99_ms))],
        ["worst", fmt.ms(fr.max_ms)],
    ]
    rows += [[f"reported by the tool: {k}", fmt.num(x) if isinstance(x, (int, float)) else str(x)]
             for k, x in fr.reported.items()]
    return Table(_cols(("metric", False), ("value", False)), rows)


def worst_frames(fr: FrameStats) -> Table:
    return Table(
        _cols(("start", True), ("duration", True), ("jank type", False), ("what ran", False)),
        [[fmt.ms(w.start_ms), fmt.ms(w.dur_ms), w.jank_type or "–", CodeList(tuple(w.ran[:WORST_FRAME_SLICES]))]
         for w in fr.worst[:WORST_FRAME_ROWS]],
    )


def startup_summary(st: StartupStats) -> Table:
    return Table(_cols(("metric", False), ("value", False)), [
        ["kind", st.kind],
        ["median", fmt.ms(st.median_ms)],
        ["min / max", f"{fmt.ms(st.min_ms)} / {fmt.ms(st.max_ms)}"],
        ["spread", fmt.ms(st.spread_ms)],
        ["first run (coldest)", fmt.ms(st.first_ms)],
    ])


def startup_runs(st: StartupStats) -> Table:
    return Table(
        _cols(("run", True), ("total", True), ("wait", True), ("kind", False), ("ready by", False), ("exit", True),
              ("command", False)),
        [[str(r.index), fmt.ms(r.total_ms), fmt.ms(r.wait_ms), r.kind, r.ready_by or "–",
          "–" if r.exit_code is None else str(r.exit_code), Code(r.command) if r.command else "–"] for r in st.runs],
    )


#: The main thread's states over a launch, in the launch table's order (``MainThreadState``).
MAIN_THREAD_STATES = ("running_ms", "runnable_ms", "sleeping_ms", "uninterruptible_ms", "io_wait_ms")


def launch(r: StartupRun) -> Table:
    """One app launch of a system trace: its time, TTID, TTFD and the main thread's states."""
    states = (" / ".join(fmt.ms(getattr(r.main_thread, k)) for k in MAIN_THREAD_STATES)
              if r.main_thread else "– (no sched data)")
    return Table(_cols(("startup", True), ("TTID", True), ("TTFD", True),
                       ("main thread running / runnable / sleeping / D / IO", False)),
                 [[fmt.ms(r.total_ms), fmt.ms(r.ttid_ms), fmt.ms(r.ttfd_ms), states]])


def breakdown(r: StartupRun) -> Table:
    """trace_processor's opinionated startup breakdown (exclusive), with each reason's share."""
    return Table(
        _cols(("reason", False), ("time", True), ("share", True)),
        [[b.reason, fmt.ms(b.dur_ms), fmt.pct(part_share(r, b))] for b in r.breakdown],
        title="Breakdown (trace_processor's opinionated startup breakdown, exclusive)",
    )


def phases(ps: Sequence[StartupPhase]) -> Table:
    """Startup phases by start time (the page draws them as a waterfall)."""
    return Table(_cols(("phase", False), ("start", True), ("duration", True), ("thread", False)),
                 [[p.name, fmt.ms(p.start_ms), fmt.ms(p.dur_ms), p.thread or "–"]
                  for p in sorted(ps, key=lambda p: p.start_ms)],
                 drawn_as="waterfall")


def imports(entries: Sequence[ImportEntry]) -> Table:
    """The IMPORT_ROWS slowest imports by cumulative time (the page draws the import tree)."""
    return Table(_cols(("module", False), ("cumulative", True), ("self", True), ("depth", True)),
                 [[Code(e.module), fmt.ms(e.cumulative_us / 1000), fmt.ms(e.self_us / 1000), str(e.depth)]
                  for e in sorted(entries, key=lambda e: -e.cumulative_us)[:IMPORT_ROWS]],
                 drawn_as="imports")


def counters(cs: Sequence[CounterSummary]) -> Table:
    """Each CPU / memory series in one row (the page draws the varying ones as curves)."""
    return Table(_cols(("series", False), ("unit", False), ("min", True), ("mean", True), ("max", True), ("last", True),
                       ("points", True)),
                 [[c.name, c.unit or "–", fmt.num(c.min, 2), fmt.num(c.mean, 2), fmt.num(c.max, 2), fmt.num(c.last, 2),
                   str(len(c.points))] for c in cs],
                 drawn_as="counters")


def threads(ts: Sequence[ThreadStat]) -> Table:
    """The main thread first, then the busiest."""
    rows: list[list[Cell]] = []
    for t in sorted(ts, key=lambda t: (not t.is_main, -t.busy_ms))[:THREAD_ROWS]:
        name: Cell = MainThread(t.name) if t.is_main and "main" not in t.name.lower() else t.name
        rows.append([name, str(t.process or t.pid), fmt.ms(t.busy_ms), fmt.num(t.slice_count), fmt.ms(t.running_ms),
                     fmt.ms(t.runnable_ms), fmt.ms(t.sleeping_ms)])
    return Table(_cols(("thread", False), ("process", False), ("busy", True), ("slices", True), ("running", True),
                       ("runnable", True), ("sleeping", True)), rows)


def long_tasks(tasks: Sequence[LongTask]) -> Table:
    """The longest first."""
    return Table(
        _cols(("task", False), ("thread", False), ("start", True), ("duration", True)),
        [[Code(t.name), t.thread, fmt.ms(t.start_ms), fmt.ms(t.dur_ms)]
         for t in sorted(tasks, key=lambda t: -t.dur_ms)[:LONG_TASK_ROWS]],
    )


def stats(values: dict[str, float]) -> Table:
    return Table(_cols(("name", False), ("value", True)), [[Code(k), fmt.num(x, 3)] for k, x in values.items()])


def sources(rows: list[tuple[str, str, str]]) -> Table:
    """``ReportView.source_rows()``: (label, value, style) with style text, code or link."""
    def value(v: str, style: str) -> Cell:
        return Code(v) if style == "code" else Link(v, v) if style == "link" else v

    return Table(_cols(("item", False), ("value", False)), [[label, value(v, style)] for label, v, style in rows])
