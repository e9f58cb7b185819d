"""Render a view into its files: report.md, report.html, report.json and the viewer exports.

Used by the reporter node and by ``perfscout report``; both get the same folder layout.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from nodes.report.exports import report_json, speedscope, trace_events
from nodes.report.html import render_html
from nodes.report.markdown import render_markdown
from nodes.report.output import write_atomic
from nodes.report.sections import build_charts
from nodes.report.view import ReportView

FILES = {
    "markdown": "report.md",
    "html": "report.html",
    "json": "report.json",
    "speedscope": "profile.speedscope.json",
    "trace_events": "timeline.trace.json",
}


def _dumps(obj: Any) -> bytes:
    return orjson.dumps(obj, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS, default=str)


def write_report(view: ReportView, folder: Path) -> dict[str, str]:
    """Write every file of the report into ``folder``; returns the ``report`` state entry.

    Exports are written first and report.md last: report.md marks the folder as done, so a
    crash half-way leaves no folder that looks complete.
    """
    out: dict[str, str] = {"dir": str(folder)}
    ss = speedscope(view)
    te = trace_events(view)
    if ss is not None:
        view.exports["speedscope (open in speedscope.app)"] = FILES["speedscope"]
    if te is not None:
        view.exports["Trace Event JSON (open in ui.perfetto.dev)"] = FILES["trace_events"]
    view.exports["full result (JSON)"] = FILES["json"]
    if ss is not None:
        write_atomic(folder / FILES["speedscope"], _dumps(ss))
        out["speedscope"] = str(folder / FILES["speedscope"])
    if te is not None:
        write_atomic(folder / FILES["trace_events"], _dumps(te))
        out["trace_events"] = str(folder / FILES["trace_events"])
    write_atomic(folder / FILES["json"], _dumps(report_json(view)))
    out["json"] = str(folder / FILES["json"])
    write_atomic(folder / FILES["html"], render_html(view, build_charts(view)).encode("utf-8"))
    out["html"] = str(folder / FILES["html"])
    write_atomic(folder / FILES["markdown"], render_markdown(view).encode("utf-8"))
    out["markdown"] = str(folder / FILES["markdown"])
    return out
