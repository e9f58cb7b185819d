"""The attributor: hot spots from real py-spy profiles tied to the right file, line and excerpt."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from benchmarks.attribution import analysis_from_speedscope, def_line
from graph.builder import build_graph
from graph.enums import Node
from nodes.attributor import attribute_all, make
from nodes.code.attribute import Attributor, parse_hotspot
from nodes.code.system import system_reason
from nodes.framework.common import ToolFailure, stamp
from nodes.framework.context import NodeContext

REPO = Path(__file__).resolve().parent.parent
FIXTURE = REPO / "tests" / "data" / "attrib"
RECORDED_UNDER = json.loads((FIXTURE / "profiles" / "RECORDED.json").read_text())["recorded_under"] + "/"
PY_SPY = Path(sys.executable).parent / "py-spy"


def _line(root: Path, rel: str, n: int) -> str:
    return (root / rel).read_text().splitlines()[n - 1]


# ---- names -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw, qualifiers, bare, file, line",
    [
        ("parse_frames", [], "parse_frames", None, None),
        ("RecyclerView.onBindViewHolder", ["RecyclerView"], "onBindViewHolder", None, None),
        ("com.demo.Feed$Adapter.bind", ["com", "demo", "Feed", "Adapter"], "bind", None, None),
        ("com.demo.Feed$Adapter.bind$lambda$0", ["com", "demo", "Feed", "Adapter"], "bind", None, None),
        ("com.demo.Feed$Adapter.bind(Landroid/view/View;)V", ["com", "demo", "Feed", "Adapter"], "bind", None, None),
        ("slow_app.py:quadratic", [], "quadratic", "slow_app.py", None),
        ("quadratic (examples/slow_app.py:14)", [], "quadratic", "examples/slow_app.py", 14),
        ("slow_app.py:12(quadratic)", [], "quadratic", "slow_app.py", 12),
        ("v8::internal::Heap::Scavenge", ["v8", "internal", "Heap"], "Scavenge", None, None),
    ],
)
def test_hotspot_names_are_taken_apart(raw, qualifiers, bare, file, line):
    ref = parse_hotspot(raw)
    assert (ref.qualifiers, ref.bare, ref.file, ref.line) == (qualifiers, bare, file, line)


@pytest.mark.parametrize(
    "name, file, system",
    [
        ("JSONEncoder.iterencode", "/usr/lib/python3.11/json/encoder.py", True),
        ("get", "/home/u/.venv/lib/python3.11/site-packages/requests/api.py", True),
        ("_find_and_load", "<frozen importlib._bootstrap>", True),
        ("{built-in method time.sleep}", "~", True),
        ("java.util.HashMap.get", None, True),
        ("android.view.Choreographer.doFrame", None, True),
        ("kotlin.collections.CollectionsKt.sortedBy", None, True),
        ("(garbage collector)", None, True),
        ("v8::internal::Heap::Scavenge", None, True),
        ("quadratic", "/work/proj/slow_app.py", False),
        ("com.demo.Feed$Adapter.bind", None, False),
        ("RecyclerView.onBindViewHolder", None, False),  # decided after the search, not before
    ],
)
def test_system_rules(name, file, system):
    assert bool(system_reason(name, file)) is system


# ---- a multi-language workspace ---------------------------------------------------------------


@pytest.fixture()
def app(tmp_path: Path) -> Path:
    src = tmp_path / "app" / "src" / "main" / "java" / "com" / "demo"
    src.mkdir(parents=True)
    (src / "Feed.java").write_text(
        "package com.demo;\n\npublic class Feed {\n    static class Adapter {\n        void bind(Holder h, int pos) {\n"
        "            h.set(pos);\n        }\n    }\n}\n"
    )
    (src / "Other.java").write_text(
        "package com.demo;\n\npublic class Other {\n    void bind(Holder h, int pos) {\n        h.clear();\n    }\n}\n"
    )
    (src / "FeedAdapter.kt").write_text(
        "class FeedAdapter : RecyclerView.Adapter<VH>() {\n    override fun onBindViewHolder(holder: VH, position: Int) {\n"
        "        holder.bind(items[position])\n    }\n}\n"
    )
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "a.py").write_text("def render(x):\n    return x\n")
    (tmp_path / "tools" / "b.py").write_text("def render(x):\n    return x * 2\n")
    return tmp_path


def test_qualified_jvm_name_picks_the_nested_class(app):
    r = Attributor(app).attribute({"name": "com.demo.Feed$Adapter.bind", "kind": "slice"})
    assert r["status"] == "found"
    assert (r["file"], r["line"]) == ("app/src/main/java/com/demo/Feed.java", 5)
    assert r["candidates"] and len(r["candidates"]) == 2
    assert [x["line"] for x in r["excerpt"]] == [2, 3, 4, 5, 6, 7, 8]
    assert r["excerpt"][3]["text"].strip() == "void bind(Holder h, int pos) {"


def test_framework_method_resolves_to_the_users_override(app):
    r = Attributor(app).attribute({"name": "RecyclerView.onBindViewHolder"})
    assert (r["status"], r["file"], r["line"]) == ("found", "app/src/main/java/com/demo/FeedAdapter.kt", 2)


@pytest.mark.parametrize(
    "name, status",
    [
        ("java.util.HashMap.get", "system"),
        ("Choreographer#doFrame", "system"),
        ("RV OnBindView", "system"),
        ("RecyclerView.onCreateViewHolder", "system"),  # no override in the workspace
        ("(program)", "system"),
        ("com.demo.Feed.neverDefined", "not_found"),
        ("<lambda>", "not_found"),
    ],
)
def test_system_and_not_found(app, name, status):
    r = Attributor(app).attribute({"name": name})
    assert r["status"] == status
    assert r["reason"]
    assert r["excerpt"] == [] and (r["file"] is None or status == "system")


def test_ambiguous_without_a_model_takes_the_first_and_says_so(app):
    r = Attributor(app).attribute({"name": "render"})
    assert (r["file"], r["line"]) == ("tools/a.py", 1)
    assert "2 equally good candidates" in r["reason"] and "path order" in r["reason"]


def test_model_ranks_only_ambiguous_candidates(app):
    llm = FakeListChatModel(responses=["1"])
    att = Attributor(app, llm=llm)
    r = att.attribute({"name": "render"})
    assert (r["file"], r["line"]) == ("tools/b.py", 1) and "model picked" in r["reason"]
    # An unambiguous name makes no model call at all.
    att.attribute({"name": "com.demo.Feed$Adapter.bind"})
    assert att.model_calls == 1


@pytest.mark.parametrize("reply", ["7", "-1", "the second one", "tools/zzz.py"])
def test_a_model_pick_off_the_list_is_ignored(app, reply):
    r = Attributor(app, llm=FakeListChatModel(responses=[reply])).attribute({"name": "render"})
    assert (r["file"], r["line"]) == ("tools/a.py", 1) and "path order" in r["reason"]


# ---- the stored profiles of a real open-source codebase ------------------------------------------


def _fixture_cases(profile: str):
    analysis = analysis_from_speedscope(FIXTURE / "profiles" / profile, top=15)
    user = [h for h in analysis.hotspots if h.file.startswith(RECORDED_UNDER)]
    system = [h for h in analysis.hotspots if not h.file.startswith(RECORDED_UNDER)]
    return analysis, user, system


@pytest.mark.parametrize("profile", ["sortedcontainers.speedscope.json", "frames_app.speedscope.json"])
@pytest.mark.parametrize("moved", [False, True])
def test_fixture_profiles_resolve_to_the_recorded_lines(profile, moved):
    analysis, user, system = _fixture_cases(profile)
    assert len(user) >= 5
    hotspots = []
    for h in analysis.hotspots:
        d = h.model_dump()
        if moved and d["file"].startswith(RECORDED_UNDER):
            d["file"] = "/some/other/checkout/" + d["file"][len(RECORDED_UNDER):]
        hotspots.append(d)
    out = attribute_all({"hotspots": hotspots}, str(FIXTURE))
    assert len(out) == len(hotspots)
    for h, r in zip(analysis.hotspots, out):
        if h.file.startswith(RECORDED_UNDER):
            rel = h.file[len(RECORDED_UNDER):]
            assert (r["status"], r["file"], r["line"]) == ("found", rel, h.line), r
            hit = next(x for x in r["excerpt"] if x["line"] == h.line)
            assert hit["text"] == _line(FIXTURE, rel, h.line)
        else:
            assert r["status"] == "system"
            assert r["reason"] in ("Python standard library", "Python runtime") or r["reason"].startswith("runtime code (<frozen")


def test_fixture_names_alone_resolve_to_their_definitions():
    """Without locations (a trace gives only names), the definition search finds the def line."""
    _, user, _ = _fixture_cases("sortedcontainers.speedscope.json")
    att = Attributor(FIXTURE)
    checked = 0
    for h in user:
        rel = h.file[len(RECORDED_UNDER):]
        want = def_line(FIXTURE, rel, h.name)
        if want is None:
            continue
        r = att.attribute({"name": h.name})
        assert (r["file"], r["line"]) == (rel, want), (h.name, r)
        checked += 1
    assert checked >= 4


# ---- a fresh py-spy profile of a program written here ----------------------------------------------

PROGRAM = textwrap.dedent(
    """\
    import json
    import sys
    import time


    class Decoder:
        def decode_all(self, n):
            out = []
            for i in range(n):
                out.append(json.loads(json.dumps({"i": i, "s": "x" * 40})))
            return out


    def quadratic(n):
        total = 0
        for i in range(n):
            for j in range(n):
                total += i ^ j
        return total


    if __name__ == "__main__":
        end = time.monotonic() + float(sys.argv[1])
        while time.monotonic() < end:
            Decoder().decode_all(20000)
            quadratic(600)
    """
)


def _record(tmp_path: Path) -> Path:
    (tmp_path / "proj").mkdir()
    script = tmp_path / "proj" / "hot_program.py"
    script.write_text(PROGRAM)
    out = tmp_path / "profile.json"
    r = subprocess.run(
        [str(PY_SPY), "record", "-r", "200", "-f", "speedscope", "-o", str(out), "--", sys.executable, str(script), "2"],
        capture_output=True, text=True, timeout=60,
    )
    assert r.returncode == 0 and out.exists(), f"py-spy could not record: {r.stderr.strip()[:200]}"
    return out


@pytest.fixture(scope="module")
def live_profile(tmp_path_factory) -> tuple[Path, Path]:
    assert PY_SPY.exists(), "py-spy (a project dependency) is not installed next to the interpreter"
    tmp = tmp_path_factory.mktemp("live")
    return tmp / "proj", _record(tmp)


def test_live_pyspy_profile_top_hotspots(live_profile):
    proj, prof = live_profile
    analysis = analysis_from_speedscope(prof, top=10)
    node = make(NodeContext())
    update = node({"analysis": analysis.model_dump(), "workspace": str(proj)})
    att = update["attribution"]
    assert len(att) == len(analysis.hotspots)
    ours = [(h, a) for h, a in zip(analysis.hotspots, att) if h.file and h.file.endswith("hot_program.py")]
    assert ours, "the program's own frames are among the top hot spots"
    for h, a in ours:
        assert (a["status"], a["file"], a["line"]) == ("found", "hot_program.py", h.line)
        assert next(x for x in a["excerpt"] if x["line"] == h.line)["text"] == _line(proj, "hot_program.py", h.line)
    names = {a["name"] for _, a in ours}
    assert "quadratic" in names
    hot_loop = [a for _, a in ours if a["name"] == "quadratic"]
    assert any("total += i ^ j" in _line(proj, "hot_program.py", a["line"]) for a in hot_loop)
    for h, a in zip(analysis.hotspots, att):
        if "/lib/python3" in (h.file or ""):
            assert a["status"] == "system"


# ---- the node and the graph --------------------------------------------------------------------------


def test_node_with_no_analysis_fails_validation():
    update = make(NodeContext())({})
    assert update["last_error"]["kind"] == "validation" and "attribution" not in update


def test_node_with_no_hotspots_attributes_nothing():
    update = make(NodeContext())({"analysis": {"format": "x", "source": "y", "hotspots": []}})
    assert update["attribution"] == [] and update.get("last_error") is None


def test_node_with_a_bad_workspace_fails_validation(tmp_path):
    update = make(NodeContext())(
        {"analysis": {"hotspots": [{"name": "f", "self_ms": 1, "total_ms": 1, "self_pct": 1}]}, "workspace": str(tmp_path / "no")}
    )
    assert update["last_error"]["kind"] == "validation"


def test_missing_rg_is_unavailable(tmp_path):
    with pytest.raises(ToolFailure) as e:
        attribute_all({"hotspots": [{"name": "f"}]}, str(tmp_path), rg=str(tmp_path / "no-rg"))
    assert e.value.kind.value == "unavailable"


def test_graph_full_analysis_attributes_a_real_profile(live_profile):
    """collector/analyzer stand-ins hand over a real py-spy profile; the real attributor runs."""
    proj, prof = live_profile
    analysis = analysis_from_speedscope(prof, top=10)

    def collector(state):
        return stamp(state, Node.COLLECTOR.value) | {"collected": {"kind": "profile", "paths": {"speedscope": str(prof)}}}

    def analyzer(state):
        return stamp(state, Node.ANALYZER.value) | {"analysis": analysis.model_dump()}

    def reporter(state):
        found = [a for a in state["attribution"] if a["status"] == "found"]
        text = "; ".join(f"{a['name']} {a['file']}:{a['line']}" for a in found)
        return stamp(state, Node.REPORTER.value) | {"answer": text, "messages": [AIMessage(text)],
                                                     "report": {"dir": "r"}}

    g = build_graph(checkpointer=InMemorySaver(), nodes={"collector": collector, "analyzer": analyzer, "reporter": reporter})
    out = g.invoke(
        {"messages": [HumanMessage("帮我全面分析一下 hot_program.py 的性能")], "workspace": str(proj), "allow_run": True},
        {"configurable": {"thread_id": "attrib-full"}},
    )
    assert out["_route"] == "full_analysis"
    assert Node.ATTRIBUTOR.value in out["route_history"]
    found = [a for a in out["attribution"] if a["status"] == "found"]
    assert found and all(a["file"] == "hot_program.py" for a in found)
    assert "quadratic hot_program.py:" in out["answer"]


@pytest.mark.skipif(not PY_SPY.exists() or not (REPO / "examples" / "slow_app.py").exists(), reason="needs py-spy and examples/slow_app.py")
def test_full_analysis_of_an_example_program_with_the_real_pipeline():
    g = build_graph(checkpointer=InMemorySaver())
    out = g.invoke(
        {"messages": [HumanMessage("profile examples/slow_app.py end to end")], "workspace": str(REPO), "allow_run": True},
        {"configurable": {"thread_id": "attrib-real"}},
    )
    att = out.get("attribution")
    if att is None:
        pytest.fail(f"no attribution: {out.get('diagnosis') or out.get('last_error')}")
    found = [a for a in att if a["status"] == "found" and a["file"] == "examples/slow_app.py"]
    assert found, att
    for a in found:
        shown = next(x for x in a["excerpt"] if x["line"] == a["line"])
        assert shown["text"] == _line(REPO, a["file"], a["line"])
