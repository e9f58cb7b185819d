"""A thread remembers what it collected and analysed; its state grows only by what a turn adds."""

from __future__ import annotations

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from graph.builder import build_graph
from graph.enums import Node
from nodes.framework.context import NodeContext
from graph.policy import REPEAT_LIMIT
from graph.state import HISTORY_LIMIT

from interfaces_util import Recorder, sample_analysis


def _graph(tmp_path, real_reporter: bool = False):
    """The pipeline's stand-ins; ``real_reporter``: the reporter is the real one (a follow-up on
    the thread's data is answered by it, docs/ROUTING.md rule 8), writing under ``tmp_path``."""
    data = tmp_path / "profile.json"
    data.write_text("{}")
    rec = Recorder(str(data))
    nodes = {k: v for k, v in rec.nodes().items() if not (real_reporter and k == Node.REPORTER.value)}
    g = build_graph(checkpointer=InMemorySaver(), nodes=nodes, context=NodeContext(runs_dir=str(tmp_path / "runs")))
    return g, rec, str(data)


def _turn(g, tid: str, text: str, **extra):
    return g.invoke({"messages": [HumanMessage(content=text)], **extra}, {"configurable": {"thread_id": tid}})


def test_analyse_what_was_just_collected(tmp_path):
    g, rec, data = _graph(tmp_path)
    first = _turn(g, "t", "帮我全面分析一下 examples/slow_app.py", allow_run=True, workspace=str(tmp_path))
    assert first["_route"] == "full_analysis" and rec.collections == 1
    assert rec.analyzed == [[data]]

    again = _turn(g, "t", "分析一下刚才采集的这份数据", workspace=str(tmp_path))
    assert again["_route"] == "analyze"
    assert rec.collections == 1  # nothing collected again
    assert rec.analyzed == [[data], [data]]  # the same data analysed again
    assert again["answer"] == f"analysed {data}"


def test_another_thread_has_nothing_to_analyse(tmp_path):
    g, rec, _ = _graph(tmp_path)
    _turn(g, "a", "帮我全面分析一下 examples/slow_app.py", allow_run=True, workspace=str(tmp_path))
    other = _turn(g, "b", "分析一下刚才采集的这份数据", workspace=str(tmp_path))
    assert "__interrupt__" in other  # asks which file instead of guessing
    assert len(rec.analyzed) == 1


def test_follow_ups_are_answered_from_the_last_analysis(tmp_path):
    g, rec, data = _graph(tmp_path, real_reporter=True)
    _turn(g, "t", "帮我全面分析一下 examples/slow_app.py", allow_run=True, workspace=str(tmp_path))

    en = _turn(g, "t", "now show me the slowest frame")
    # rule 8: analyze on the thread's data, straight to the reporter (no new read)
    assert en["_route"] == "analyze" and en["route_info"]["override"] == "thread"
    assert en["route_history"][-1] == "reporter"
    assert en["answer"].startswith("Slowest frame: starts at 512 ms, lasts 73.4 ms")
    assert "73.4 ms" in en["answer"] and "512 ms" in en["answer"] and data in en["answer"]
    assert "parse_rows" in en["answer"]  # what ran in that frame

    zh = _turn(g, "t", "最慢的一帧是哪一帧")
    assert "最慢的一帧" in zh["answer"] and "73.4 ms" in zh["answer"]

    hot = _turn(g, "t", "what took the most time?")
    assert hot["answer"].index("parse_rows") < hot["answer"].index("render")
    assert len(rec.analyzed) == 1  # follow-ups never re-ran the pipeline


def test_analyze_route_with_no_new_file_takes_the_follow_up_path(tmp_path):
    g, rec, _ = _graph(tmp_path, real_reporter=True)
    _turn(g, "t", "帮我全面分析一下 examples/slow_app.py", allow_run=True, workspace=str(tmp_path))
    # "这份数据" makes it an analyze request; it asks about the last result, so no re-analysis.
    out = _turn(g, "t", "这份数据里最慢的一帧是哪一帧")
    assert out["route_info"]["override"] == "thread"
    assert out["_route"] == "analyze" and out["answer"].startswith("最慢的一帧")
    assert len(rec.analyzed) == 1


def test_a_follow_up_naming_a_new_file_analyses_that_file(tmp_path):
    g, rec, _ = _graph(tmp_path)
    _turn(g, "t", "帮我全面分析一下 examples/slow_app.py", allow_run=True, workspace=str(tmp_path))
    other = tmp_path / "other.json"
    # a real (tiny) trace: a named .json counts as data by its content (nodes/perf/filetypes.py)
    other.write_text('{"traceEvents": [{"name": "x", "ph": "X", "ts": 0, "dur": 5, "pid": 1, "tid": 1}]}')
    out = _turn(g, "t", "other.json 里最慢的一帧是哪一帧", workspace=str(tmp_path))
    assert out["_route"] == "analyze"
    assert rec.analyzed[-1] == [str(other.resolve())]


def test_follow_up_without_an_analysis_gets_the_ordinary_answer():
    g = build_graph(checkpointer=InMemorySaver())
    out = _turn(g, "fresh", "which frame was the slowest?")
    assert out["_route"] == "end"
    assert "FPS" in out["answer"]  # the frames topic's offline answer, not numbers
    assert "last analysis" not in out["answer"] and "Slowest frame" not in out["answer"]


def test_state_growth_per_turn_is_bounded(tmp_path):
    g, rec, _ = _graph(tmp_path)
    cfg = {"configurable": {"thread_id": "long"}}
    _turn(g, "long", "帮我全面分析一下 examples/slow_app.py", allow_run=True, workspace=str(tmp_path))
    questions = ["你好", "now show me the slowest frame", "分析一下刚才采集的这份数据", "最慢的一帧是哪一帧", "what is jank?"]
    before = len(g.get_state(cfg).values["messages"])
    for i in range(20):
        _turn(g, "long", questions[i % len(questions)], workspace=str(tmp_path))
        st = g.get_state(cfg).values
        assert len(st["messages"]) == before + 2 * (i + 1)  # this turn's question and its answer
        assert len(st["route_history"]) <= 6 and st["route_history"][0].startswith("orchestrator:")
        assert all(v <= REPEAT_LIMIT for v in st["attempts"].values())
        assert st["steps"] <= st.get("step_budget", 24)
        assert len(st["route_history"]) <= HISTORY_LIMIT
    assert st["analysis"] == sample_analysis(source=rec.data_file)
