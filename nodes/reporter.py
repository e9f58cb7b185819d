"""The reporter: writes the turn's report (Markdown, HTML with charts, JSON, viewer exports).

It is the last node of every analysis pipeline. The report is complete without a model; with
one configured, a short narrative is added on top, marked as model-written. It answers with the
headline (what ran, for how long, where the time went and the source line the attributor
found), the verdict and the report's path. Bad input is a typed validation failure, a folder it cannot write
a typed permission/unavailable failure: one line each, never a traceback.
"""

from __future__ import annotations

import errno
from typing import Any, Callable, Mapping

from graph.enums import ErrorKind, Node
from nodes.framework.common import last_user_text, say
from nodes.framework.context import NodeContext, thread_id
from nodes.framework.errors import ToolFailure
from nodes.framework.model_call import spend, time_left_s
from nodes.framework.stage import run_stage


#: The lens each recognised follow-up (nodes/report/followup.py) answers: it leads the answer when
#: the question's lens is that one (or the overview); "why is the main thread blocked?" is the
#: blocking lens's, not the busiest-threads answer's.
_INTENT_LENS = {"slowest_frame": "frames", "frames": "frames", "startup": "startup", "hotspot": "cpu",
                "thread": "cpu", "long_task": "overview", "findings": "overview"}


def _answer(view: Any, report: Mapping[str, str], lead: str | None = None) -> str:
    """The headline (what ran, how long, where the time went with its file:line) first — for a
    lens question the lens's numbers — then the verdict and the first findings, then where the
    full report is; no paths in the sentences. ``lead``: a follow-up's own answer, first."""
    lines = ([lead] if lead else []) + view.answer_lines()
    # the verdict's order (nodes/perf/findings to_act_on): its "look first at X" is item 1 here,
    # not a startup's info fact the first sentence already said (api24: "1. [info] Cold startup")
    ranked = view.findings_to_act_on()
    if view.lens_reading() is not None:
        ranked = [f for f in ranked if view.in_lens(f)]  # the others are the "also" sentence
    ranked = ranked[:3]
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
    from nodes.report.language import detect_language

    cmp = Comparison.from_dict(state["comparison"])
    written = write_comparison(cmp, Path(report["dir"]))
    report.update({f"compare_{k}": v for k, v in written.items() if k != "dir"})
    lang = detect_language(last_user_text(state))
    race = ((state.get("collected") or {}).get("summary") or {}).get("sentence")  # two programs' launches
    answer = comparison_answer(cmp, lang, {"html": written["html"]}, extra=["", "B (after):", text])
    return f"{race}\n{answer}" if race else answer


def make(ctx: NodeContext) -> Callable[..., dict]:
    name = Node.REPORTER.value

    def no_report(kind: ErrorKind, msg: str) -> ToolFailure:
        # The user reads why there is no report even when the policy then retries or fails.
        return ToolFailure(kind, msg, partial=say(name, f"No report: {msg}."))

    def reporter(state: Mapping[str, Any], ctx: NodeContext) -> dict[str, Any]:
        from nodes.report.narrative import add_narrative
        from nodes.report.output import report_dir
        from nodes.report.render import write_report
        from nodes.report.view import ReportInputError, build_view

        raw = state.get("analysis")
        if not raw:
            raise no_report(ErrorKind.VALIDATION, "nothing to report: this turn produced no analysis")
        try:
            view = build_view(
                raw,
                attribution=state.get("attribution"),
                collected=state.get("collected"),
                route=state.get("_route"),
                route_info=state.get("route_info"),
                question=last_user_text(state),
                lens=state.get("lens"),
            )
        except ReportInputError as e:
            raise no_report(ErrorKind.VALIDATION, str(e)) from None
        # Its deadline is what is left of the turn's model budget (nodes/framework/model_call.py).
        spent = add_narrative(view, ctx.llm, deadline_s=time_left_s(ctx, state))
        try:
            folder = report_dir(state.get("run_dir"), ctx.runs_dir, thread_id())
            report = write_report(view, folder)
        except OSError as e:
            kind = ErrorKind.PERMISSION if e.errno in (errno.EACCES, errno.EPERM, errno.EROFS) else ErrorKind.UNAVAILABLE
            where = e.filename or state.get("run_dir") or ctx.runs_dir
            raise no_report(kind, f"cannot write the report to {where}: {e.strerror or e}") from None
        lead = None
        if state.get("thread_data"):  # rule 8: a recognised follow-up's own answer leads (nodes/report/followup.py)
            from nodes.report import followup

            text_in = last_user_text(state)
            asks = _INTENT_LENS.get(followup.intent(text_in) or "", view.lens)
            if view.lens == "overview" or asks in (view.lens, "overview"):
                lead = followup.answer(text_in, state.get("analysis"), state.get("previous_analysis"))
        else:
            # 「最慢的一帧是哪一帧 x.pftrace」 asks for one frame, which no lens sentence names: the
            # follow-up's answer leads this turn's analysis too (before the frames lens's aggregate)
            from nodes.report import followup

            text_in = last_user_text(state)
            if followup.intent(text_in) == "slowest_frame" and view.lens in ("frames", "overview"):
                lead = followup.answer(text_in, state.get("analysis"), from_thread=False)
        text = _answer(view, report, lead)
        if state.get("comparison") and not state.get("thread_data"):
            # two sides compared this turn (nodes/analyzer.py): the comparison leads; a follow-up
            # on the thread's data answers its own question (the previous run: ``lead`` above)
            try:
                text = _with_comparison(state, report, text)
            except OSError as e:
                raise no_report(ErrorKind.UNAVAILABLE, f"cannot write the comparison to {report['dir']}: "
                                f"{e.strerror or e}") from None
        return {"report": report, "run_dir": report["dir"], **spend(state, spent), **say(name, text)}

    return run_stage(Node.REPORTER, reporter, ctx)
