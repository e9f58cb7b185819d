"""The report's tables, built once: columns, rows and the caps on how many rows a table shows.

Both renderers (nodes/report/markdown.py, nodes/report/html.py) lay these out and escape them —
the pyinstrument shape (one model, one renderer per format): a row, a column or a cap changed
here changes both reports, so they cannot drift apart again (issue 26, item 6: the two copies
already disagreed, the Markdown report lacking the HTML page's "sleeping", "ready by" and "exit"
columns). Cells are plain values: text, or one of the small types below that a renderer
marks up in its own syntax; nothing here is escaped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

from nodes.perf.model import FrameStats, StartupRun, StartupStats, ThreadStat, LongTask
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
    """Text set as code (a function, a command, a path)."""

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


Cell = Union[str, Code, Link, MainThread, CodeList]


@dataclass(frozen=True)
class Column:
    name: str
    #: Right-aligned, tabular figures.
    numeric: bool = False


@dataclass
class Table:
    columns: tuple[Column, ...]
    rows: list[list[Cell]] = field(default_factory=list)


def _cols(*spec: tuple[str, bool]) -> tuple[Column, ...]:
    return tuple(Column(n, num) for n, num in spec)


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


def breakdown(r: StartupRun) -> Table:
    """trace_processor's opinionated startup breakdown (exclusive), with each reason's share."""
    return Table(
        _cols(("reason", False), ("time", True), ("share", True)),
        [[b.reason, fmt.ms(b.dur_ms), fmt.pct(100.0 * b.dur_ms / r.total_ms if r.total_ms else 0.0)]
         for b in r.breakdown],
    )


def threads(ts: list[ThreadStat]) -> Table:
    """The main thread first, then the busiest."""
    rows: list[list[Cell]] = []
    for t in sorted(ts, key=lambda t: (not t.is_main, -t.busy_ms))[:THREAD_ROWS]:
        name: Cell = MainThread(t.name) if t.is_main and "main" not in t.name.lower() else t.name
        rows.append([name, str(t.process or t.pid), fmt.ms(t.busy_ms), fmt.num(t.slice_count), fmt.ms(t.running_ms),
                     fmt.ms(t.runnable_ms), fmt.ms(t.sleeping_ms)])
    return Table(_cols(("thread", False), ("process", False), ("busy", True), ("slices", True), ("running", True),
                       ("runnable", True), ("sleeping", True)), rows)


def long_tasks(tasks: list[LongTask]) -> Table:
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
