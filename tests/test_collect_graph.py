"""The demo sentence through the real graph: the collector profiles examples/slow_app.py, and the
analyzer (once it exists) names the planted quadratic function as the top hot spot."""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from graph.builder import build_graph
from nodes.framework.context import NodeContext

REPO = Path(__file__).resolve().parents[1]
SLOW_APP = REPO / "examples" / "slow_app.py"
DEMO = "帮我全面分析一下 examples/slow_app.py"

pytestmark = pytest.mark.skipif(
    not (Path(sys.executable).parent / "py-spy").exists(), reason="py-spy is not installed next to the interpreter"
)


def _planted() -> range:
    for node in ast.walk(ast.parse(SLOW_APP.read_text())):
        if isinstance(node, ast.FunctionDef) and node.name == "unique_customers":
            return range(node.lineno, node.end_lineno + 1)
    raise AssertionError("unique_customers not found in examples/slow_app.py")


@pytest.fixture(scope="module")
def demo_state(tmp_path_factory):
    """One run of the demo sentence, to the end."""
    tmp = tmp_path_factory.mktemp("demo")
    graph = build_graph(checkpointer=InMemorySaver(), context=NodeContext(runs_dir=str(tmp / "runs"), run_timeout_s=120))
    config = {"configurable": {"thread_id": "demo"}}
    graph.invoke(
        {"messages": [HumanMessage(content=DEMO)], "allow_run": True, "workspace": str(REPO), "run_dir": str(tmp / "run")},
        config,
    )
    return graph.get_state(config).values


def test_demo_sentence_routes_to_the_collector_and_profiles_the_example(demo_state):
    assert demo_state["_route"] == "full_analysis"
    assert demo_state["route_history"][:2] == ["orchestrator:full_analysis", "collector"]
    assert demo_state["target"] == "examples/slow_app.py"
    collected = demo_state["collected"]
    run_dir = Path(collected["summary"]["run_dir"])
    record = json.loads((run_dir / "run.json").read_text())
    assert record["exit_code"] == 0 and record["tools"]["py-spy"]["ok"]
    assert collected["files"]["profile"] == str(run_dir / "pyspy.speedscope.json")
    frames = json.loads(Path(collected["files"]["profile"]).read_text())["shared"]["frames"]
    assert any(f["name"] == "unique_customers" and f["file"] == str(SLOW_APP) for f in frames)


def test_demo_top_hotspot_is_the_planted_quadratic_function(demo_state):
    collected = demo_state["collected"]
    assert collected["kind"] == "profile" and "profile" in collected["paths"]
    top = demo_state["analysis"]["hotspots"][0]
    assert top["name"] == "unique_customers"
    assert top["file"] and Path(top["file"]).resolve() == SLOW_APP
    assert top["line"] in _planted()


def test_no_target_is_asked_for_and_the_answer_is_profiled(tmp_path):
    graph = build_graph(
        checkpointer=InMemorySaver(),
        context=NodeContext(runs_dir=str(tmp_path / "runs"), run_timeout_s=60),
        interrupt_after=["collector"],
    )
    config = {"configurable": {"thread_id": "ask"}}
    graph.invoke(
        {"messages": [HumanMessage(content="帮我全面分析一下这个程序的性能")], "allow_run": True, "workspace": str(REPO)},
        config,
    )
    # the collector asked; resuming past the collector's breakpoint reaches ask_user's interrupt
    graph.invoke(None, config)
    snap = graph.get_state(config)
    asked = [i.value for t in snap.tasks for i in (t.interrupts or ())]
    assert asked and asked[0]["field"] == "target" and asked[0]["for_node"] == "collector"
    graph.invoke(Command(resume="examples/slow_app.py 6000"), config)
    values = graph.get_state(config).values
    assert values["target"] == "examples/slow_app.py 6000"
    assert values["route_history"][-1] == "collector"
    record = json.loads((Path(values["run_dir"]) / "run.json").read_text())
    assert record["argv"][-1] == "6000" and record["exit_code"] == 0
