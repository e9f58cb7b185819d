"""The reporter node: run folders, atomic files, typed failures, and the optional model narrative."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph

from graph.enums import ErrorKind, Node
from graph.state import PerfScoutState
from nodes import reporter
from nodes.framework.context import NodeContext
from nodes.report import output
from nodes.report.narrative import unverified_numbers

from tests.helpers.report_sample import SAMPLE_ATTRIBUTION, sample_analysis


def _state(**kw):
    s = {
        "messages": [HumanMessage(content="帮我全面分析一下 examples/slow_app.py")],
        "_route": "full_analysis",
        "route_info": {"route": "full_analysis", "tier": "rule", "reason": "全面 + a target"},
        "analysis": sample_analysis().model_dump(mode="json"),
        "attribution": SAMPLE_ATTRIBUTION,
        "collected": {"kind": "profile", "paths": {"profile": "p.json"}, "source": "py-spy record -- python examples/slow_app.py"},
    }
    s.update(kw)
    return s


def _graph(ctx: NodeContext):
    g = StateGraph(PerfScoutState)
    g.add_node(Node.REPORTER.value, reporter.make(ctx))
    g.add_edge(START, Node.REPORTER.value)
    g.add_edge(Node.REPORTER.value, END)
    return g.compile(checkpointer=InMemorySaver())


def test_report_goes_to_runs_dir_thread_time_and_a_rerun_gets_a_new_folder(tmp_path):
    ctx = NodeContext(runs_dir=str(tmp_path / "runs"))
    g = _graph(ctx)
    cfg = {"configurable": {"thread_id": "t-42"}}
    first = g.invoke(_state(), cfg)["report"]
    before = Path(first["markdown"]).read_bytes()
    second = g.invoke(_state(analysis=sample_analysis(seed=8).model_dump(mode="json")), cfg)["report"]
    assert Path(first["dir"]).parent == tmp_path / "runs" / "t-42"
    assert first["dir"] != second["dir"]
    for rep in (first, second):
        for key in ("markdown", "html", "json", "speedscope", "trace_events"):
            assert Path(rep[key]).is_file() and Path(rep[key]).parent == Path(rep["dir"])
    assert Path(first["markdown"]).read_bytes() == before  # the earlier report is untouched
    assert Path(second["markdown"]).read_bytes() != before
    assert not list((tmp_path / "runs").rglob("*.tmp"))


def test_answer_names_the_verdict_the_first_findings_and_the_path(tmp_path):
    out = reporter.make(NodeContext(runs_dir=str(tmp_path)))(_state())
    ans = out["answer"]
    first, second = ans.splitlines()[:2]
    assert first.startswith("py-spy record -- python slow_app.py covers ") and "600 frames" in first
    assert second.startswith("Needs attention: 3 serious findings")
    assert "1. [high] Janky scrolling" in ans
    assert out["report"]["html"] in ans
    assert out["messages"][-1].content == ans and out["messages"][-1].name == "reporter"
    assert out["steps"] == 1 and out["route_history"] == ["reporter"]
    assert out.get("last_error") is None


def test_state_run_dir_is_used_once_then_a_subfolder(tmp_path):
    run = tmp_path / "run1"
    node = reporter.make(NodeContext(runs_dir=str(tmp_path / "unused")))
    a = node(_state(run_dir=str(run)))["report"]
    b = node(_state(run_dir=str(run)))["report"]
    assert a["dir"] == str(run)
    assert Path(b["dir"]).parent == run and Path(b["dir"]).name.startswith("report-")
    assert not (tmp_path / "unused").exists()


def test_thread_ids_cannot_escape_the_runs_dir(tmp_path):
    for tid in ("../../etc", "/abs/path", "..", "a/b"):
        d = output.report_dir(None, str(tmp_path), tid)
        assert d.resolve().parent.parent == tmp_path.resolve(), tid


def test_folder_names_never_collide(tmp_path):
    from datetime import datetime, timezone

    now = datetime(2025, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
    names = {output.report_dir(None, str(tmp_path), "t", now=now).name for _ in range(5)}
    assert len(names) == 5


def test_a_write_that_fails_halfway_leaves_no_report_file(tmp_path, monkeypatch):
    real_replace = os.replace
    calls = []

    def flaky(src, dst):
        calls.append(dst)
        if str(dst).endswith("report.html"):
            raise OSError(28, "No space left on device", str(dst))
        return real_replace(src, dst)

    monkeypatch.setattr(output.os, "replace", flaky)
    out = reporter.make(NodeContext(runs_dir=str(tmp_path)))(_state())
    assert out["last_error"]["kind"] == ErrorKind.UNAVAILABLE.value
    assert "No space left on device" in out["last_error"]["message"]
    assert "\n" not in out["last_error"]["message"]
    assert "report" not in out
    assert not list(tmp_path.rglob("report.md")) and not list(tmp_path.rglob("report.html"))
    assert not list(tmp_path.rglob("*.tmp"))


def test_unwritable_runs_dir_is_a_typed_failure(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    out = reporter.make(NodeContext(runs_dir=str(blocker / "runs")))(_state())
    assert out["last_error"]["tool"] == "reporter"
    assert out["last_error"]["kind"] in (ErrorKind.UNAVAILABLE.value, ErrorKind.PERMISSION.value)
    assert out["answer"].startswith("No report: cannot write the report to")


@pytest.mark.parametrize(
    "analysis, kind, text",
    [
        (None, "validation", "no analysis"),
        ({"format": "x"}, "validation", "analysis is not a valid result: source"),
    ],
)
def test_missing_or_bad_analysis_is_a_validation_failure(tmp_path, analysis, kind, text):
    out = reporter.make(NodeContext(runs_dir=str(tmp_path)))(_state(analysis=analysis))
    assert out["last_error"]["kind"] == kind and text in out["last_error"]["message"]
    assert out["answer"].startswith("No report:")
    assert not any(tmp_path.iterdir())


# --- the narrative ---------------------------------------------------------------------------


class _Seen(BaseCallbackHandler):
    def __init__(self):
        self.params: list[dict] = []
        self.prompts: list[str] = []

    def on_chat_model_start(self, serialized, messages, **kw):
        self.params.append(kw.get("invocation_params") or {})
        self.prompts.append(messages[0][-1].content)


def test_model_narrative_is_added_marked_and_checked(tmp_path):
    text = "Scrolling janks: 77 of 600 frames miss the budget. Fix ImageDecoder.decode (33.6 %) first; it costs 999 ms."
    seen = _Seen()
    llm = FakeListChatModel(responses=[text], callbacks=[seen])
    out = reporter.make(NodeContext(llm=llm, runs_dir=str(tmp_path)))(_state())
    md = Path(out["report"]["markdown"]).read_text()
    html = Path(out["report"]["html"]).read_text()
    assert "Narrative written by a language model" in md and "> Scrolling janks" in md
    assert "Narrative written by a language model" in html
    # the computed sections are all still there, after it
    assert md.index("Narrative written") < md.index("## What to look at first")
    # 77, 600 and 33.6 are in the findings; 999 is not
    assert "Numbers not found in the computed findings: 999" in md
    data = json.loads(Path(out["report"]["json"]).read_text())
    assert data["narrative"]["unverified_numbers"] == ["999"]
    # the model saw the computed facts and a token cap
    assert '"verdict": "Needs attention"' in seen.prompts[0]
    assert seen.params[0].get("max_tokens") == 300


def test_model_output_is_escaped_in_html(tmp_path):
    llm = FakeListChatModel(responses=["<script>alert(1)</script> all good"])
    out = reporter.make(NodeContext(llm=llm, runs_dir=str(tmp_path)))(_state())
    html = Path(out["report"]["html"]).read_text()
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_a_failing_model_leaves_the_report_complete(tmp_path):
    class Boom(FakeListChatModel):
        def _call(self, *a, **kw):
            raise ConnectionError("model down")

    out = reporter.make(NodeContext(llm=Boom(responses=["x"]), runs_dir=str(tmp_path)))(_state())
    md = Path(out["report"]["markdown"]).read_text()
    assert "No model narrative: model call failed: ConnectionError: model down" in md
    assert "## What to look at first" in md and out.get("last_error") is None


def test_offline_report_has_no_narrative(tmp_path):
    out = reporter.make(NodeContext(runs_dir=str(tmp_path)))(_state())
    md = Path(out["report"]["markdown"]).read_text()
    assert "language model" not in md and "narrative" not in md.lower()


@pytest.mark.parametrize(
    "narrative, bad",
    [
        ("12.8 % of frames are janky", []),  # jank_ratio 0.128 cited as a percentage
        ("median 655 ms", []),
        ("median 655.1 ms and 4,321 frames", ["4,321"]),
    ],
)
def test_unverified_numbers(narrative, bad):
    assert unverified_numbers(narrative, '{"jank_ratio": 0.128, "median_ms": 655.1, "count": 600}') == bad


def test_the_analyze_route_ends_in_a_report_through_the_real_graph(tmp_path):
    """Orchestrator → data_locator → analyzer → attributor → reporter, the last two stages stubbed."""
    import shutil

    from graph.builder import build_graph
    from nodes.framework.common import stamp

    shutil.copy(Path(__file__).parent / "data" / "report" / "chrome116-devtools-trace.json", tmp_path / "trace.json")

    def analyzer(state):
        u = stamp(state, "analyzer")
        u["analysis"] = sample_analysis().model_dump(mode="json")
        u["attribution"] = None
        return u

    def attributor(state):
        u = stamp(state, "attributor")
        u["attribution"] = SAMPLE_ATTRIBUTION
        return u

    g = build_graph(InMemorySaver(), context=NodeContext(runs_dir=str(tmp_path / "runs")),
                    nodes={Node.ANALYZER: analyzer, Node.ATTRIBUTOR: attributor})
    out = g.invoke({"messages": [HumanMessage(content="解读一下 trace.json")], "workspace": str(tmp_path)},
                   {"configurable": {"thread_id": "g1"}})
    assert out["route_history"][-1] == "reporter" and out["_route"] == "analyze"
    assert Path(out["report"]["dir"]).parent == tmp_path / "runs" / "g1"
    md = Path(out["report"]["markdown"]).read_text()
    assert "| request | 解读一下 trace.json |" in md and "| route | analyze" in md
    assert out["answer"].endswith(out["report"]["markdown"] + " (also json, speedscope, trace_events)")


def test_the_verdict_names_item_one_of_the_listed_findings_on_a_cold_start(tmp_path):
    """api24's cold start: the verdict said 'look first at "Janky frames …"' while the list began
    '1. [info] Cold startup' (the startup's fact, which the first sentence already says). The
    list now has the verdict's order (nodes/perf/findings to_act_on)."""
    import re

    from nodes.perf.analysis import analyze_file

    a = analyze_file(str(Path(__file__).parent / "data" / "perfetto" / "api24_startup_cold.perfetto-trace"))
    state = _state(analysis=a.model_dump(mode="json"), attribution=None, collected=None,
                   messages=[HumanMessage(content="analyze api24_startup_cold.perfetto-trace")],
                   _route="analyze", route_info={"route": "analyze", "tier": "rule", "reason": "a trace"})
    ans = reporter.make(NodeContext(runs_dir=str(tmp_path)))(state)["answer"]
    named = re.search(r'look first at "([^"]+)"', ans).group(1)
    listed = re.findall(r"^  \d+\. \[(\w+)\] (.+)$", ans, re.M)
    assert listed[0] == ("high", named)
    assert [s for s, _ in listed] == sorted((s for s, _ in listed), key=["high", "medium", "low", "info"].index)
