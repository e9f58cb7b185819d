"""The Python API: typed results, asking back, streaming, async, threads; and terminal progress."""

from __future__ import annotations

import asyncio
import io

import pytest
from rich.console import Console

from app.api import AskResult, PerfScout, RequestError, StreamEvent
from app.progress import ProgressView
from app.settings import Settings
from graph.builder import build_graph
from graph.enums import Node
from nodes.framework.common import stamp
from nodes.framework.stage import attempt
from nodes.framework.context import report_deadline, report_progress

from interfaces_util import Recorder


@pytest.fixture
def ps(tmp_path, perfscout_home):
    with PerfScout(Settings.from_env(), workspace=tmp_path) as p:
        yield p


def _with_nodes(ps: PerfScout, nodes: dict) -> None:
    """Swap in stand-in nodes, keeping the PerfScout's own checkpointer and decision log."""
    ps._graph = build_graph(checkpointer=ps.checkpointer, nodes=nodes, on_decision=ps.decisions.append)


def test_ask_returns_a_typed_result(ps):
    r = ps.ask("what is jank?")
    assert isinstance(r, AskResult)
    assert (r.status, r.route) == ("done", "end")
    assert "16.7 ms" in r.answer
    assert r.route_history == ["orchestrator:end", "fallback"] and r.steps == 2
    assert r.route_info["tier"]
    assert r.model_dump(mode="json")["thread_id"] == r.thread_id
    assert ps.decisions.path.is_file()  # the routing decision was logged


def test_question_then_resume(ps, tmp_path):
    r = ps.ask("分析一下这份数据")
    assert r.status == "needs_input" and r.answer is None
    assert r.question["field"] == "data_path" and r.question["for_node"] == "data_locator"
    again = ps.result(r.thread_id)
    assert again.status == "needs_input"  # the question survives in the checkpoint
    done = ps.resume(r.thread_id, "missing.json")
    assert done.status == "failed"
    assert "missing.json" in done.diagnosis
    assert "ask_user:data_path" in done.route_history


def test_resume_feeds_the_answer_into_the_pipeline(ps, tmp_path):
    data = tmp_path / "trace.json"
    data.write_text("{}")
    rec = Recorder(str(data))
    _with_nodes(ps, rec.nodes())
    r = ps.ask("分析一下这份数据")
    done = ps.resume(r.thread_id, "trace.json")
    assert done.status == "done"
    assert rec.analyzed == [[str(data.resolve())]]
    assert done.findings and done.findings[0]["title"] == "Slow frames"
    assert done.analysis_source == str(data.resolve())


def test_bad_requests_raise_one_typed_error(ps):
    with pytest.raises(RequestError, match="empty"):
        ps.ask("   ")
    with pytest.raises(RequestError, match="no pending question"):
        ps.resume("no-such-thread", "x")
    done = ps.ask("你好")
    with pytest.raises(RequestError, match="no pending question"):
        ps.resume(done.thread_id, "x")


def test_report_paths_lists_only_files_that_exist(ps, tmp_path):
    html = tmp_path / "report.html"
    html.write_text("<html></html>")

    def reporter(state: dict) -> dict:
        u = stamp(state, Node.REPORTER.value)
        u["report"] = {"dir": str(tmp_path), "html": str(html), "markdown": str(tmp_path / "gone.md"), "charts": 3}
        u["answer"] = "report written"
        return u

    data = tmp_path / "t.json"  # a real (tiny) trace: a .json is data by its content
    data.write_text('{"traceEvents": [{"name": "x", "ph": "X", "ts": 0, "dur": 5, "pid": 1, "tid": 1}]}')
    nodes = Recorder(str(data)).nodes() | {Node.REPORTER.value: reporter}
    _with_nodes(ps, nodes)
    r = ps.ask("解读一下 t.json")
    assert r.report_paths == {"html": str(html)}


def _progressing_collector(state: dict) -> dict:
    report_deadline("collect", 30, "py-spy record")
    for done in (0, 50, 100):
        report_progress("parse", done=done, total=100, unit="bytes", message="profile.json")
    u = stamp(state, Node.COLLECTOR.value)
    u["attempts"] = attempt(state, Node.COLLECTOR.value)
    u["collected"] = {"kind": "profile", "paths": {"p": state["workspace"] + "/p.json"}}
    return u


def test_stream_yields_node_by_node_progress_then_the_result(ps, tmp_path):
    (tmp_path / "p.json").write_text("{}")
    rec = Recorder(str(tmp_path / "p.json"))
    _with_nodes(ps, rec.nodes() | {Node.COLLECTOR.value: _progressing_collector})
    events = list(ps.stream("帮我全面分析一下 examples/slow_app.py", allow_run=True))
    kinds = [(e.kind, e.node) for e in events]
    assert kinds[0] == ("node_start", "orchestrator")
    starts = [n for k, n in kinds if k == "node_start"]
    assert starts == ["orchestrator", "collector", "analyzer", "attributor", "reporter"]
    progress = [e.data for e in events if e.kind == "progress"]
    assert progress[0] == {"progress": "collect", "deadline_s": 30.0, "message": "py-spy record"}
    assert [p["done"] for p in progress[1:]] == [0, 50, 100]
    # progress arrives while the collector runs: after its start, before its end
    i_start = kinds.index(("node_start", "collector"))
    i_end = kinds.index(("node_end", "collector"))
    assert all(i_start < i < i_end for i, e in enumerate(events) if e.kind == "progress")
    end = events[kinds.index(("node_end", "orchestrator"))]
    assert end.data["_route"] == "full_analysis"
    assert events[-1].kind == "result" and events[-1].result.status == "done"
    assert sum(e.kind == "result" for e in events) == 1


def test_stream_reports_the_interrupt_and_stream_resume_finishes(ps):
    events = list(ps.stream("分析一下这份数据"))
    asks = [e for e in events if e.kind == "interrupt"]
    assert len(asks) == 1 and asks[0].node == "ask_user" and asks[0].data["field"] == "data_path"
    assert ("node_end", "ask_user") not in [(e.kind, e.node) for e in events]  # it runs again on resume
    assert events[-1].result.status == "needs_input"
    tid = events[-1].result.thread_id
    tail = list(ps.stream_resume(tid, "missing.json"))
    assert [e.node for e in tail if e.kind == "node_start"][:2] == ["ask_user", "data_locator"]
    assert tail[-1].result.status == "failed"


def test_on_event_and_on_progress_callbacks(ps):
    seen: list[StreamEvent] = []
    nodes: list[str] = []
    r = ps.ask("你好", on_event=seen.append, on_progress=lambda n, u: nodes.append(n))
    assert nodes == ["orchestrator", "fallback"]
    assert seen[-1].kind == "result" and seen[-1].result == r


def test_async_api(ps):
    async def main():
        r = await ps.aask("分析一下这份数据")
        assert r.status == "needs_input"
        events = [e async for e in ps.astream("what is jank?", thread_id=r.thread_id + "-2")]
        done = await ps.aresume(r.thread_id, "missing.json")
        cont = await ps.acontinue_run(done.thread_id)
        return events, done, cont

    events, done, cont = asyncio.run(main())
    assert events[-1].result.route == "end" and events[0].kind == "node_start"
    assert done.status == "failed"
    assert cont.status == "failed" and cont.steps == done.steps  # nothing left to run


def test_async_stream_propagates_errors(ps):
    async def main():
        return [e async for e in ps.astream("")]

    with pytest.raises(RequestError):
        asyncio.run(main())


def test_threads_list_show_delete(ps):
    a = ps.ask("你好")
    b = ps.ask("分析一下这份数据")
    listed = ps.threads()
    assert [t.thread_id for t in listed] == [b.thread_id, a.thread_id]  # newest first
    assert listed[0].status == "needs_input" and listed[1].route == "end"
    assert ps.threads(limit=1)[0].thread_id == b.thread_id
    d = ps.thread(a.thread_id)
    assert d.answer == a.answer and d.turns == 1 and d.messages == 2
    assert d.route_history == ["orchestrator:end", "fallback"]
    assert ps.thread("nope") is None
    assert ps.delete_thread(a.thread_id) is True
    assert ps.delete_thread(a.thread_id) is False
    assert [t.thread_id for t in ps.threads()] == [b.thread_id]


def test_progress_view_draws_nodes_countdown_and_bytes():
    buf = io.StringIO()
    view = ProgressView(Console(file=buf, force_terminal=True, width=100, color_system=None))
    view(StreamEvent(kind="node_start", node="collector"))
    view(StreamEvent(kind="progress", data={"progress": "collect", "deadline_s": 30.0, "message": "py-spy"}))
    view._progress.refresh()
    view(StreamEvent(kind="progress", data={"progress": "parse", "done": 3 * 2**20, "total": 8 * 2**20, "unit": "bytes"}))
    view._progress.refresh()
    view(StreamEvent(kind="node_end", node="collector"))
    view(StreamEvent(kind="interrupt", node="ask_user", data={"prompt": "?"}))
    out = buf.getvalue()
    assert "collect: py-spy" in out and "s left" in out
    assert "3.0 MB / 8.0 MB" in out
    assert "✓ collector" in out
    assert view._progress is None  # stopped before a prompt is drawn
