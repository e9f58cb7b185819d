"""``perfscout report PATH_OR_THREAD``: render a report again, without running anything.

What it accepts, tried in this order:

1. a report folder, or its ``report.json`` — re-render that result (new charts/templates,
   same numbers, same attribution);
2. an analysis JSON (``perfscout analyze --json`` output: an AnalysisResult);
3. any trace or profile the analyzer reads (analysed first, then reported);
4. a thread id — the newest report under ``<runs_dir>/<thread>/``.

The new report always goes to a fresh folder (``--out`` or ``<runs_dir>/<thread|local>/<time>/``);
the one it was rendered from is never touched.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from graph.enums import CollectionKind
from graph.payloads import collection
from nodes.perf.limits import ReadLimits
from nodes.report.exports import REPORT_SCHEMA
from nodes.report.output import report_dir, safe_component
from nodes.report.view import ReportInputError, build_view

#: A JSON file bigger than this is not loaded whole to see whether it is an analysis (it is a trace).
MAX_RESULT_JSON = 64 * 1024 * 1024


def _load_json_object(path: Path) -> dict[str, Any] | None:
    """The file as a JSON object when it is a small one; None when it is something else."""
    try:
        if path.stat().st_size > MAX_RESULT_JSON:
            return None
        with path.open("rb") as f:
            head = f.read(64).lstrip()
            if not head.startswith(b"{"):
                return None
            f.seek(0)
            data = json.loads(f.read().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    except RecursionError:
        # json's C scanner stops at the interpreter's recursion limit: too deep for a result
        # PerfScout wrote, so it is a trace (or nothing): the analyzer decides, in one line.
        return None
    return data if isinstance(data, dict) else None


def _is_analysis(d: dict[str, Any]) -> bool:
    return "format" in d and "source" in d and "traceEvents" not in d and "$schema" not in d


def _analyze(path: Path, limits: ReadLimits | None) -> Any:
    """The analyzer's result for a trace file, read within ``limits`` (its PerfDataError passes
    through: one line, exit 2)."""
    from nodes.perf import analysis

    root = os.getcwd()  # the CLI's workspace, as for perfscout analyze
    return analysis.analyze_file(str(path), root=root, search_path=analysis.module_search_path(root), limits=limits)


def _newest_report(folder: Path) -> Path | None:
    found = [p for p in folder.glob("*/report.json")] + [p for p in folder.glob("*/*/report.json")]
    return max(found, key=lambda p: (p.stat().st_mtime, str(p))) if found else None


def resolve_inputs(target: str, runs_dir: str, limits: ReadLimits | None = None) -> tuple[dict[str, Any], str | None]:
    """What to render (build_view keyword arguments) and the thread it belongs to, if known; a
    trace is read within ``limits`` (``Settings.read_limits()``)."""
    p = Path(target)
    thread: str | None = None
    if p.is_dir():
        if (p / "report.json").is_file():
            p = p / "report.json"
        else:
            newest = _newest_report(p)
            if newest is None:
                raise ReportInputError(f"{target}: a folder with no report.json in it or below it")
            p = newest
    elif not p.exists():
        folder = Path(runs_dir) / safe_component(target)
        newest = _newest_report(folder) if folder.is_dir() else None
        if newest is None:
            raise ReportInputError(f"{target}: no such file, and no report of a thread {target!r} in {runs_dir}")
        p, thread = newest, target
    if not p.is_file():
        raise ReportInputError(f"{target}: not a regular file")
    data = _load_json_object(p)
    if data is not None and data.get("schema") == REPORT_SCHEMA:
        if not isinstance(data.get("analysis"), dict):
            raise ReportInputError(f"{p}: a report.json without its analysis")
        return (
            {
                "analysis": data["analysis"],
                "attribution": data.get("attribution"),
                "collected": data.get("collected"),
                "route": data.get("route"),
                "route_info": data.get("route_info"),
                "question": data.get("request") or "",
                # the lens the report was written for (reports before lenses: the overview)
                "lens": data.get("lens") if isinstance(data.get("lens"), str) else None,
            },
            thread,
        )
    if data is not None and _is_analysis(data):
        return {"analysis": data, "collected": collection(CollectionKind.FILE, paths={"analysis": str(p)}, source=str(p))}, thread
    result = _analyze(p, limits)
    return {"analysis": result, "collected": collection(CollectionKind.FILE, paths={"data": str(p)}, source=str(p))}, thread


def run_report(
    target: str, *, runs_dir: str, out: str | None = None, llm: Any = None, llm_timeout_s: float = 10.0,
    limits: ReadLimits | None = None,
) -> dict[str, str]:
    """Render ``target`` into a fresh folder; returns the written paths (the ``report`` dict).

    Raises ReportInputError (or the analyzer's PerfDataError) with a one-line message on bad input.
    """
    from nodes.report.narrative import add_narrative
    from nodes.report.render import write_report

    kwargs, thread = resolve_inputs(target, runs_dir, limits)
    view = build_view(**kwargs)
    add_narrative(view, llm, deadline_s=llm_timeout_s)
    folder = report_dir(out, runs_dir, thread or "local")
    return write_report(view, folder)
