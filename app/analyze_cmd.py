"""Analyse a trace or profile directly (no graph, no model): a readable summary or JSON.

``run(path, as_json)`` is the whole command: it reads the file with the reader its content
calls for, computes the metrics, and prints either rich tables or JSON with at least
``format``, ``duration_ms``, ``hotspots`` (``name``, ``file``, ``line``, ``self_ms``,
``total_ms``, ``self_pct``), ``threads``, ``frames`` (``count``, ``fps``, ``jank_ratio``,
``p50_ms``, ``p90_ms``, ``p99_ms``) and ``startup``. Bad input is one line on stderr naming the
file and the problem, and exit code 2 — never a traceback.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Sequence, TextIO


from nodes.perf.units import dur
from nodes.perf.errors import PerfDataError
from nodes.perf.model import AnalysisResult

from app.exit_codes import ExitCode



def to_json(result: AnalysisResult) -> dict[str, Any]:
    """The JSON the command prints: the analysis without its bulky drawing data (flame-graph
    stacks, per-frame series, counter curves), which the report keeps."""
    data = result.model_dump(mode="json", exclude={"stacks"})
    frames = data.get("frames")
    if isinstance(frames, dict):
        frames.pop("durations_ms", None)
        frames.pop("starts_ms", None)
    for c in data.get("counters") or []:
        c.pop("points", None)
    for p in (data.get("memory") or {}).get("processes") or []:  # the memory chart's curves and GC marks
        for s in p.get("series") or []:
            s.pop("samples", None)
        if p.get("gc"):
            p["gc"].pop("starts_ms", None)
    return data


def run(paths: str | Sequence[str], as_json: bool = False, out: TextIO | None = None, err: TextIO | None = None,
        process: str | None = None, lens: str | None = None, sections: Sequence[str] = ()) -> int:
    """Analyse ``paths`` (one file, or the files of one collection) and print the result;
    ``process`` (NAME or PID) is the app the frames and hot spots are about; ``lens`` (a
    graph.enums.Lens value) the aspect the answer leads with (nodes/perf/lenses.py); ``sections``
    slice names the power and CPU lenses measure as windows of their own (without ``lens``, the
    power answer leads, with the first of them)."""
    from nodes.perf.analysis import analyze_paths, module_search_path

    out = out or sys.stdout
    err = err or sys.stderr
    if isinstance(paths, (str, os.PathLike)):
        paths = [os.fspath(paths)]
    try:
        root = os.getcwd()  # the CLI's workspace (perfscout's --workspace default)
        result = analyze_paths(list(paths), process=process, root=root, search_path=module_search_path(root),
                               sections=sections)
    except PerfDataError as e:
        err.write(f"perfscout: {str(e).splitlines()[0] if str(e) else 'unreadable data'}\n")
        return ExitCode.USAGE
    if sections and not lens:  # a named section is a question about its energy: that answer leads
        lens = "power"
    answer = lens_answer(result, lens) if lens and lens != "overview" else None
    if as_json:
        import orjson  # ~25 ms to load: only --json pays it

        data = to_json(result)
        if answer is not None:
            data["lens"], data["lens_answer"] = lens, answer
        out.write(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        if answer is not None:
            out.write("\n".join(answer["lines_shown"]) + "\n\n")
        render(result, out)
    return ExitCode.OK


def lens_answer(result: AnalysisResult, lens: str) -> dict[str, Any]:
    """The lens's answer (the report's first section and sentences) for ``result``."""
    from nodes.report.view import build_view

    view = build_view(result, lens=lens)
    return {**(view.lens_section() or {}), "sentences": view.summary_sentences(), "lines_shown": view.answer_lines()}


# --- the readable summary --------------------------------------------------------------


_ms = dur  # the one duration vocabulary (nodes/perf/units.py)


def _rich(t, title: str):
    """A table of nodes/report/tables.py as a rich table: the report's rows, order, caps and
    number formats, laid out for a terminal (every cell escaped as rich markup)."""
    from rich import box
    from rich.markup import escape as e
    from rich.table import Table

    from nodes.report.tables import Code, CodeList, Link, MainThread, Muted

    def cell(c) -> str:
        if isinstance(c, Code):
            return e(c.text) + (f" [dim]({e(c.note)})[/dim]" if c.note else "")
        if isinstance(c, Muted):
            return f"[dim]{e(c.text)}[/dim]"
        if isinstance(c, MainThread):
            return e(c.name) + "  [bold](main)[/bold]"
        if isinstance(c, CodeList):
            return e(", ".join(c.items)) or "–"
        if isinstance(c, Link):
            return e(c.text)
        return e(str(c))

    rt = Table(title=title, box=box.SIMPLE, title_justify="left")
    for col in t.columns:
        rt.add_column(col.name, justify="right" if col.numeric else "left", overflow="fold")
    for row in t.rows:
        rt.add_row(*(cell(c) for c in row))
    return rt


def render(result: AnalysisResult, out: TextIO | None = None) -> None:
    """Rich tables of the analysis, most important first; the tables are the report's
    (nodes/report/tables.py), so the terminal and report.md show the same rows."""
    from nodes.report import tables
    from rich import box
    from rich.console import Console
    from rich.markup import escape as e
    from rich.table import Table

    con = Console(file=out or sys.stdout, width=int(os.environ.get("COLUMNS", "120") or 120), soft_wrap=False)
    r = result
    title = f"[bold]{e(r.source)}[/bold]  ·  {e(r.format)}  ·  {_ms(r.duration_ms)}"
    if r.partial:
        title += "  ·  [yellow]partial[/yellow]"
    con.print(title)

    if r.findings:
        t = Table(title="Findings", box=box.SIMPLE, show_lines=False, title_justify="left")
        t.add_column("severity")
        t.add_column("finding")
        t.add_column("detail", overflow="fold")
        colors = {"high": "red", "medium": "yellow", "low": "cyan", "info": "dim"}
        from nodes.perf.findings import lead_family, to_act_on

        for f in to_act_on(list(r.findings), lead_family(r))[:12]:  # by severity: info never above a problem
            t.add_row(f"[{colors.get(f.severity, '')}]{f.severity}[/]", e(f.title), e(f.detail))
        con.print(t)

    overall = [h for h in r.hotspots if h.overall]
    if overall:
        from nodes.report.view import build_view

        con.print(_rich(tables.hotspots(overall, build_view(r).hotspot_source), "Hot spots (overall, by self time)"))
    if r.threads:
        con.print(_rich(tables.threads(r.threads), "Threads"))
    if r.long_tasks:
        con.print(_rich(tables.long_tasks(r.long_tasks), "Long tasks (≥ 50 ms)"))

    fs = r.frames
    if fs:
        line = (f"[bold]Frames[/bold]: {fs.count}"
                + (f" of {e(fs.process or str(fs.pid))} ({e(fs.chosen_by or '')})" if fs.pid is not None else "")
                + (f", {fs.fps:g} fps" if fs.fps else "")
                + (f", jank {fs.jank_ratio * 100:.1f}% ({fs.jank_count}, {e(fs.jank_source)})" if fs.jank_ratio is not None else "")
                + f", p50 {_ms(fs.p50_ms)}, p90 {_ms(fs.p90_ms)}, p99 {_ms(fs.p99_ms)}"
                + f"; budget {fs.budget_ms:g} ms ({e(fs.budget_source)})")
        con.print(line)
        if fs.jank_types:
            con.print("  jank types: " + e(", ".join(f"{k} {v}" for k, v in fs.jank_types.items())))
        if fs.causes:
            con.print("  causes: " + e(", ".join(f"{k} {v}" for k, v in fs.causes.items())))
        if fs.other_processes:
            con.print("  other processes: " + e(", ".join(f"{o.process or o.pid} {o.count}" for o in fs.other_processes[:5])))
        for m in fs.missing[:3]:
            con.print(f"  [dim]missing: {e(m.what)}[/dim]")
        if fs.reported:
            keys = [k for k, v in fs.reported.items() if not (isinstance(v, str) and len(v) > 60)][:10]
            con.print("  reported: " + e(", ".join(f"{k}={fs.reported[k]}" for k in keys)))
        for w in fs.worst[:3]:
            why = f" — {e(w.cause.value)}: {e('; '.join(w.evidence[:2]))}" if w.cause else (
                f" — {e('; '.join(w.ran[:3]))}" if w.ran else "")
            con.print(f"  worst: {_ms(w.dur_ms)} at {_ms(w.start_ms)}" + why)

    st = r.startup
    if st:
        head = f"[bold]Startup[/bold] ({e(st.kind)})"
        if st.median_ms is not None:
            head += (f": median {_ms(st.median_ms)} over {len(st.runs)} run(s), min {_ms(st.min_ms)}, "
                     f"max {_ms(st.max_ms)}, first {_ms(st.first_ms)}")
        con.print(head)
        for run in [x for x in st.runs if x.package][:4]:
            con.print(f"  {e(run.package)} ({e(run.kind)}): startup {_ms(run.total_ms)}, TTID {_ms(run.ttid_ms)}, "
                      f"TTFD {_ms(run.ttfd_ms)}"
                      + ("; breakdown: " + ", ".join(f"{e(b.reason)} {_ms(b.dur_ms)}" for b in run.breakdown[:5])
                         if run.breakdown else ""))
            for x in run.slow_reasons[:5]:
                con.print(f"    slow start: {e(x.id)} — {e(x.suggestion)}")
            for m in run.missing[:3]:
                con.print(f"    [dim]missing: {e(m)}[/dim]")
        if st.phases:
            con.print(_rich(tables.phases(st.phases), "Phases"))
        if st.imports:
            con.print(_rich(tables.imports(st.imports), "Imports (by cumulative time)"))

    if r.counters:
        con.print(_rich(tables.counters(r.counters), "Counters"))
    if r.stats:
        con.print(_rich(tables.stats(r.stats), "Statistics"))

    for w in r.warnings[:8]:
        con.print(f"[dim]warning: {e(w)}[/dim]")
