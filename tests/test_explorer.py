"""The explorer: its code tools, its deterministic answers, its model mode, and the graph route."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from graph.builder import build_graph
from graph.enums import ErrorKind
from nodes.code.definitions import find_definitions
from nodes.code.files import MAX_LINES, read_lines
from nodes.code.query import parse_query
from nodes.code.rg import MAX_FILE_BYTES, find_rg
from nodes.code.search import MAX_PER_FILE, glob_files, search
from nodes.framework.errors import ToolFailure
from nodes.framework.context import NodeContext
from nodes.explorer import explore, make

REPO = Path(__file__).resolve().parent.parent
FRAMES_APP = "tests/data/attrib/frames_app.py"
#: Where the fixture defines parse_frames, read from the file rather than written down here.
PARSE_FRAMES_LINE = next(
    i for i, t in enumerate((REPO / FRAMES_APP).read_text().splitlines(), 1) if t.startswith("def parse_frames(")
)


@pytest.fixture()
def ws(tmp_path: Path) -> Path:
    """A small multi-language workspace."""
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "frames.py").write_text(
        "import json\n\n\nclass Parser:\n    def parse_frames(self, data):\n        return [json.loads(x) for x in data]\n\n\n"
        "def parse_frames(text):\n    return Parser().parse_frames(text.splitlines())\n\n\nFRAME_LIMIT = 120\n"
    )
    (tmp_path / "app" / "Feed.java").write_text(
        "package com.demo;\n\npublic class Feed {\n    static class Adapter {\n        void bind(Holder h, int pos) {\n"
        "            h.set(pos);\n        }\n    }\n\n    void show() {\n        new Adapter().bind(null, 1);\n    }\n}\n"
    )
    (tmp_path / "app" / "Feed.kt").write_text(
        "class FeedAdapter : RecyclerView.Adapter<VH>() {\n    override fun onBindViewHolder(holder: VH, position: Int) {\n"
        "        holder.bind(items[position])\n    }\n}\n"
    )
    (tmp_path / "app" / "Index.ets").write_text(
        "@Entry\n@Component\nstruct Index {\n  build() {\n    Column() {\n      LazyForEach(this.data, (item: string) => {\n"
        "        Text(item)\n      })\n    }\n  }\n\n  private loadMore(count: number): void {\n    this.data.push(count)\n  }\n}\n"
    )
    (tmp_path / "app" / "render.cc").write_text(
        "#define MAX_ITEMS 10\nstruct Frame { int id; };\nstatic int\nparse_frames(const char* buf, int n) {\n  return n;\n}\n"
        "void Renderer::draw(int x) {\n  int y = parse_frames(nullptr, x);\n}\n"
    )
    (tmp_path / "ignored").mkdir()
    (tmp_path / "ignored" / "gen.py").write_text("def parse_frames(x):\n    return x\n")
    (tmp_path / ".gitignore").write_text("ignored/\n")
    (tmp_path / "blob.bin").write_bytes(b"parse_frames\x00\x01\x02" * 10)
    return tmp_path


# ---- tools ---------------------------------------------------------------------------------


def test_rg_is_the_pypi_binary_next_to_the_interpreter():
    import sys

    assert Path(find_rg()).parent == Path(sys.executable).parent


def test_search_fixed_string_with_context_and_gitignore(ws):
    res = search(ws, "parse_frames(", context=1)
    files = {m["file"] for m in res.matches}
    assert files == {"app/frames.py", "app/render.cc"}  # ignored/ and the binary blob are skipped
    m = next(m for m in res.matches if m["file"] == "app/frames.py" and m["line"] == 9)
    assert m["text"] == "def parse_frames(text):"
    assert [c["line"] for c in m["context"]] == [8, 10]
    assert m["context"][1]["text"].strip().startswith("return Parser()")


def test_search_regex_and_fixed_differ(ws):
    assert search(ws, "def \\w+_frames", fixed=True).matches == []
    rx = search(ws, r"def \w+_frames", fixed=False)
    assert [(m["file"], m["line"]) for m in rx.matches] == [("app/frames.py", 5), ("app/frames.py", 9)]


def test_search_rejects_a_bad_regex_as_validation(ws):
    with pytest.raises(ToolFailure) as e:
        search(ws, "def (", fixed=False)
    assert e.value.kind is ErrorKind.VALIDATION


def test_search_output_is_bounded(tmp_path):
    for i in range(6):
        (tmp_path / f"f{i}.py").write_text("hit = 1\n" * 50 + "x" * 5000 + " hit\n")
    res = search(tmp_path, "hit", max_matches=40)
    assert len(res.matches) == 40 and res.truncated
    per_file = {}
    for m in res.matches:
        per_file[m["file"]] = per_file.get(m["file"], 0) + 1
    assert max(per_file.values()) <= MAX_PER_FILE
    long = search(tmp_path, "x" * 20 + " hit").matches
    assert long and all(len(m["text"]) <= 300 for m in long)


def test_big_and_binary_files_are_not_dumped(ws):
    big = ws / "big.py"
    big.write_text("needle_big = 1\n" * (MAX_FILE_BYTES // 10))
    assert search(ws, "needle_big").matches == []
    r = read_lines(ws, "big.py")
    assert r["lines"] == [] and "limit" in r["note"]
    b = read_lines(ws, "blob.bin")
    assert b["lines"] == [] and "binary" in b["note"]


def test_read_range_single_line_and_past_the_end(ws):
    r = read_lines(ws, "app/frames.py", 5, 6)
    assert [x["line"] for x in r["lines"]] == [5, 6] and r["total_lines"] == 13
    one = read_lines(ws, "app/frames.py", 9)
    assert 9 in [x["line"] for x in one["lines"]] and one["lines"][0]["line"] == 1
    past = read_lines(ws, "app/frames.py", 40)
    assert "line 40 is past the end" in past["note"] and past["lines"][-1]["line"] == 13
    huge = read_lines(REPO, "nodes/perf/model.py", 1, 10_000)
    assert len(huge["lines"]) == MAX_LINES and huge["truncated"]


def test_glob_lists_files_honouring_gitignore(ws):
    files = [m["file"] for m in glob_files(ws, "*.py").matches]
    assert files == ["app/frames.py"]
    assert [m["file"] for m in glob_files(ws, "*.ets").matches] == ["app/Index.ets"]


@pytest.mark.parametrize(
    "name, expected",
    [
        ("parse_frames", {("app/frames.py", 5, "Parser"), ("app/frames.py", 9, ""), ("app/render.cc", 4, "")}),
        ("bind", {("app/Feed.java", 5, "Feed.Adapter")}),
        ("onBindViewHolder", {("app/Feed.kt", 2, "FeedAdapter")}),
        ("build", {("app/Index.ets", 4, "Index")}),
        ("loadMore", {("app/Index.ets", 12, "Index")}),
        ("Index", {("app/Index.ets", 3, "")}),
        ("draw", {("app/render.cc", 7, "Renderer")}),
        ("MAX_ITEMS", {("app/render.cc", 1, "")}),
        ("FRAME_LIMIT", {("app/frames.py", 13, "")}),
        ("LazyForEach", set()),
    ],
)
def test_definitions_by_language(ws, name, expected):
    defs, _ = find_definitions(ws, name)
    assert {(d.file, d.line, ".".join(d.owners)) for d in defs} == expected


def test_query_extraction():
    q = parse_query("打开 nodes/collector.py 看看第 40 行")
    assert (q.paths, q.line, q.wants_read) == (["nodes/collector.py"], 40, True)
    q = parse_query("where is parse_frames defined?")
    assert q.identifiers[0] == "parse_frames" and q.wants_definition
    q = parse_query("搜索一下 LazyForEach 的实现")
    assert q.identifiers == ["LazyForEach"] and q.chinese
    assert parse_query("grep for com.demo.Feed$Adapter.bind").identifiers[0] == "com.demo.Feed$Adapter.bind"
    assert parse_query("打开 /etc/passwd").paths == ["/etc/passwd"]


# ---- the node's answers ----------------------------------------------------------------------


def test_where_is_parse_frames_defined_on_this_repository():
    exploration, answer = explore("where is parse_frames defined?", str(REPO))
    defs = {(d["file"], d["line"]) for d in exploration["definitions"]}
    assert (FRAMES_APP, PARSE_FRAMES_LINE) in defs
    assert "Definitions of parse_frames" in answer
    assert f"{FRAMES_APP}:{PARSE_FRAMES_LINE}  def parse_frames(text):" in answer


def test_open_collector_line_40_on_this_repository():
    exploration, answer = explore("打开 nodes/collector.py 看看第 40 行", str(REPO))
    (read,) = exploration["reads"]
    assert read["file"] == "nodes/collector.py"
    lines = (REPO / "nodes/collector.py").read_text().splitlines()
    shown = {x["line"]: x["text"] for x in read["lines"]}
    for n, text in shown.items():
        assert lines[n - 1].rstrip() == text.rstrip()[: len(lines[n - 1].rstrip())] or text.endswith("…")
    if len(lines) >= 40:
        assert 40 in shown and re.search(r"→\s+40 \|", answer)
    else:
        assert "past the end" in answer and max(shown) == len(lines)
    assert answer.startswith("nodes/collector.py 第")


def test_search_lazyforeach_answers_even_when_nothing_is_defined():
    exploration, answer = explore("搜索一下 LazyForEach 的实现", str(REPO))
    assert exploration["definitions"] == []
    assert [c["tool"] for c in exploration["calls"]] == ["definitions", "search"]
    assert "LazyForEach" in answer and ("没有找到" in answer)


def test_nothing_found_is_a_complete_exploration(ws):
    exploration, answer = explore("where is totally_absent_symbol defined?", str(ws))
    assert exploration["matches"] == [] and exploration["definitions"] == []
    assert exploration["truncated"] is False
    assert "Nothing found for totally_absent_symbol" in answer


def test_missing_file_suggests_files_with_that_name(ws):
    exploration, answer = explore("open src/frames.py", str(ws))
    assert exploration["reads"] == []
    assert "app/frames.py" in answer and "no such file" in answer


def test_directory_is_listed(ws):
    exploration, answer = explore("看看 app/ 目录", str(ws))
    assert "app/Feed.java" in exploration["globs"][0]["files"]


@pytest.mark.parametrize("msg", ["打开 /etc/passwd", "read ../../secret.py please", "open ~/../../etc/hosts"])
def test_escapes_in_the_message_are_validation_failures(ws, msg):
    node = make(NodeContext())
    update = node({"messages": [HumanMessage(msg)], "workspace": str(ws)})
    assert update["last_error"]["kind"] == "validation"
    assert "exploration" not in update and "answer" not in update


def test_missing_rg_is_unavailable(ws):
    node = make(NodeContext(rg_path=str(ws / "no-rg-here")))
    update = node({"messages": [HumanMessage("where is parse_frames defined?")], "workspace": str(ws)})
    assert update["last_error"] == {"tool": "explorer", "kind": "unavailable", "message": update["last_error"]["message"]}
    assert "ripgrep" in update["last_error"]["message"]


def test_missing_workspace_is_validation(tmp_path):
    node = make(NodeContext())
    update = node({"messages": [HumanMessage("where is x_y defined?")], "workspace": str(tmp_path / "gone")})
    assert update["last_error"]["kind"] == "validation"


# ---- model mode -------------------------------------------------------------------------------


class _Recorder(FakeListChatModel):
    """A fake chat model that also records what it was asked (and with which max_tokens)."""

    seen: list = []

    def _call(self, messages, stop=None, run_manager=None, **kwargs):
        self.seen.append({"messages": messages, "kwargs": kwargs})
        return super()._call(messages, stop, run_manager, **kwargs)


def test_model_chooses_tools_and_the_answer_comes_from_results(ws):
    llm = _Recorder(
        responses=[
            '{"tool": "definitions", "args": {"name": "bind"}}',
            '{"tool": "read", "args": {"path": "app/Feed.java", "start": 4, "end": 7}}',
            '{"tool": "finish"}',
        ]
    )
    llm.seen = []
    exploration, answer = explore("which adapter binds rows?", str(ws), llm=llm)
    assert [c["tool"] for c in exploration["calls"]] == ["definitions", "read"]
    assert exploration["model"]["model_calls"] == 3
    assert "app/Feed.java:5" in answer and "    5 |" in answer
    assert all(call["kwargs"].get("max_tokens") == 200 for call in llm.seen)
    # The second prompt shows the model what the first tool returned.
    assert "app/Feed.java:5" in llm.seen[1]["messages"][-1].content


def test_model_text_never_reaches_the_answer(ws):
    invented = "The function is defined in src/imaginary.py line 999"
    llm = FakeListChatModel(responses=[invented])
    exploration, answer = explore("where is parse_frames defined?", str(ws), llm=llm)
    assert "imaginary" not in answer
    # Its reply was no tool call, so the deterministic plan ran and found the real definitions.
    assert "app/frames.py:9" in answer
    assert exploration["model"]["stopped"] == "model reply was not a tool call"


def test_model_is_capped_in_calls(ws):
    llm = FakeListChatModel(responses=['{"tool": "search", "args": {"pattern": "return"}}'] * 20)
    exploration, _ = explore("look around", str(ws), llm=llm)
    assert exploration["model"]["model_calls"] == 4
    assert len(exploration["calls"]) == 4


def test_model_paths_outside_the_workspace_are_refused(ws):
    llm = FakeListChatModel(
        responses=['{"tool": "read", "args": {"path": "/etc/passwd"}}', '{"tool": "search", "args": {"pattern": "x", "paths": ["../"]}}', '{"tool": "finish"}']
    )
    exploration, answer = explore("show me something", str(ws), llm=llm)
    assert exploration["reads"] == [] and exploration["matches"] == []
    assert sum("outside the workspace" in n for n in exploration["notes"]) == 2
    assert "root:" not in answer


# ---- graph level ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def graph():
    return build_graph(checkpointer=InMemorySaver())


@pytest.mark.parametrize(
    "msg, expect",
    [
        ("where is parse_frames defined?", f"{FRAMES_APP}:{PARSE_FRAMES_LINE}"),
        ("打开 nodes/collector.py 看看第 40 行", "nodes/collector.py 第"),
        ("搜索一下 LazyForEach 的实现", "LazyForEach"),
    ],
)
def test_graph_routes_to_the_explorer_and_answers(graph, msg, expect):
    out = graph.invoke(
        {"messages": [HumanMessage(msg)], "workspace": str(REPO)},
        {"configurable": {"thread_id": f"explorer-{abs(hash(msg))}"}},
    )
    assert out["_route"] == "explorer"
    assert out["exploration"] and out["exploration"]["query"] == msg
    assert expect in out["answer"]
    assert out["messages"][-1].content == out["answer"]
    assert out.get("last_error") is None
