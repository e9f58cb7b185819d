"""The reporter: writes the turn's report (Markdown, HTML with charts, JSON, viewer exports).

It is the last node of every analysis pipeline. The report is complete without a model; with
one configured, a short narrative is added on top, marked as model-written. It answers with the
headline (what ran, for how long, where the time went and the source line the attributor
found), the verdict and the report's path. Bad input is a typed validation failure, a folder it cannot write
a typed permission/unavailable failure: one line each, never a traceback.
"""

from __future__ import annotations

import errno
from typing import Any, Callable, Mapping, Optional

from langchain_core.runnables import RunnableConfig

from graph.enums import ErrorKind, Node
from nodes.common import ToolFailure, attempt, failure, last_user_text, say, stamp
from nodes.context import NodeContext


def _thread_id(config: Mapping[str, Any] | None) -> str | None:
    tid = ((config or {}).get("configurable") or {}).get("thread_id")
    return str(tid) if tid is not None else None


def _answer(view: Any, report: Mapping[str, str]) -> str:
    """The headline (what ran, how long, where the time went with its file:line) first, then the
    verdict and the first findings, then where the full report is; no paths in the sentences."""
    lines = list(view.summary_sentences())
    ranked = view.ranked_findings()[:3]
    if len(ranked) > 1:  # a single finding is already named by the verdict sentence
        lines.append("Look at first:")
        lines += [f"  {i}. [{f.severity}] {f.title}" for i, f in enumerate(ranked, 1)]
    lines.append(f"Report: {report['html']}")
    lines.append(f"        {report['markdown']} (also {', '.join(k for k in ('json', 'speedscope', 'trace_events') if k in report)})")
    return "\n".join(lines)


def _with_comparison(state: Mapping[str, Any], report: dict, text: str) -> str:
    """Write compare.md/.html/.json beside the report and lead the answer with the comparison."""
    from pathlib import Path

    from nodes.compare.answer import comparison_answer
    from nodes.compare.diff import Comparison
    from nodes.compare.render import write_comparison
    from nodes.language import detect_language

    cmp = Comparison.from_dict(state["comparison"])
    written = write_comparison(cmp, Path(report["dir"]))
    report.update({f"compare_{k}": v for k, v in written.items() if k != "dir"})
    lang = detect_language(last_user_text(state))
    race = ((state.get("collected") or {}).get("summary") or {}).get("sentence")  # two programs' launches
    answer = comparison_answer(cmp, lang, {"html": written["html"]}, extra=["", "B (after):", text])
    return f"{race}\n{answer}" if race else answer


def make(ctx: NodeContext) -> Callable[..., dict]:
    # Spelled Optional[...] on purpose: with postponed annotations LangGraph matches the annotation
    # *string*, accepts only "RunnableConfig" / "Optional[RunnableConfig]", and otherwise warns and
    # silently passes no config (so no thread id).
    def reporter(state: dict, config: Optional[RunnableConfig] = None) -> dict:
        from nodes.report.narrative import add_narrative
        from nodes.report.output import report_dir
        from nodes.report.render import write_report
        from nodes.report.view import ReportInputError, build_view

        name = Node.REPORTER.value
        update = stamp(state, name)
        update["attempts"] = attempt(state, name)
        raw = state.get("analysis")
        if not raw:
            msg = "nothing to report: this turn produced no analysis"
            update.update(failure(name, ToolFailure(ErrorKind.VALIDATION, msg)))
            update.update(say(name, f"No report: {msg}."))
            return update
        try:
            view = build_view(
                raw,
                attribution=state.get("attribution"),
                collected=state.get("collected"),
                route=state.get("_route"),
                route_info=state.get("route_info"),
                question=last_user_text(state),
            )
        except ReportInputError as e:
            update.update(failure(name, ToolFailure(ErrorKind.VALIDATION, str(e))))
            update.update(say(name, f"No report: {e}."))
            return update
        add_narrative(view, ctx.llm)
        try:
            folder = report_dir(state.get("run_dir"), ctx.runs_dir, _thread_id(config))
            report = write_report(view, folder)
        except OSError as e:
            kind = ErrorKind.PERMISSION if e.errno in (errno.EACCES, errno.EPERM, errno.EROFS) else ErrorKind.UNAVAILABLE
            where = e.filename or state.get("run_dir") or ctx.runs_dir
            msg = f"cannot write the report to {where}: {e.strerror or e}"
            update.update(failure(name, ToolFailure(kind, msg)))
            update.update(say(name, f"No report: {msg}."))
            return update
        update["report"] = report
        update["run_dir"] = report["dir"]
        text = _answer(view, report)
        if state.get("comparison"):  # two sides compared (nodes/analyzer.py): the comparison leads
            text = _with_comparison(state, report, text)
        update.update(say(name, text))
        return update

    return reporter
