"""Threads and decision logs written by PerfScout 0.1.0 load, read right and continue today.

The store and the log in tests/data/migration/ were written by the first landing's own code
(see SOURCES.md there): before the stage runner (no ``outcome`` key), before the permission
facts (no ``run_request``) and before the orchestrator's edge named nodes ("collect").
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path
from typing import Any

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from app.api import PerfScout
from app.replay import replay_file
from app.settings import Settings

DATA = Path(__file__).resolve().parent / "data" / "migration"
TRACE = Path(__file__).resolve().parent / "data" / "perf" / "viztracer-multithread.json"
#: The folders 0.1.0 ran in when it wrote the store (SOURCES.md there): its workspace and its
#: state directory. They exist only on that machine.
OLD_WORKSPACE = "/tmp/oldstate/ws"
OLD_HOME = "/tmp/oldstate/home"


def _moved(value: Any, old: str, new: str) -> Any:
    """``value`` with every string under the folder ``old`` moved under ``new``."""
    if isinstance(value, str):
        return new + value[len(old):] if value == old or value.startswith(old + "/") else value
    if isinstance(value, dict):
        return {k: _moved(v, old, new) for k, v in value.items()}
    if isinstance(value, list):
        return [_moved(v, old, new) for v in value]
    if isinstance(value, tuple):
        return tuple(_moved(v, old, new) for v in value)
    return value


def _relocate_store(store: Path, moves: dict[str, str]) -> int:
    """Rewrite the folders a checkpoint store records, as if its user had run in ``moves``' targets.

    The store holds the old thread's workspace and run folder; on any other machine they do not
    exist, so a resumed turn would fail for a reason its user never meets. Each checkpoint and
    pending write is decoded with LangGraph's own serializer, its paths moved, and written back.
    Returns how many stored values changed (the test checks the rewrite did something).
    """
    serde = JsonPlusSerializer()
    changed = 0

    def move(typ: str, blob: bytes) -> tuple[str, bytes] | None:
        nonlocal changed
        value = serde.loads_typed((typ, blob))
        new = value
        for old, target in moves.items():
            new = _moved(new, old, target)
        if new == value:
            return None
        changed += 1
        return serde.dumps_typed(new)

    with sqlite3.connect(store) as db:
        for tid, ns, cid, typ, blob in db.execute(
                "select thread_id, checkpoint_ns, checkpoint_id, type, checkpoint from checkpoints").fetchall():
            out = move(typ, blob)
            if out:
                db.execute("update checkpoints set type=?, checkpoint=? where thread_id=? and checkpoint_ns=? "
                           "and checkpoint_id=?", (*out, tid, ns, cid))
        for rowid, typ, blob in db.execute("select rowid, type, value from writes where type != 'null'").fetchall():
            out = move(typ, blob)
            if out:
                db.execute("update writes set type=?, value=? where rowid=?", (*out, rowid))
    return changed


def _ps(tmp_path: Path, store_file: str = "checkpoints.sqlite") -> PerfScout:
    home = tmp_path / "home"
    home.mkdir()
    store = home / "checkpoints.sqlite"
    shutil.copy(DATA / store_file, store)
    ws = tmp_path / "ws"
    ws.mkdir()
    # the old threads ran in OLD_WORKSPACE: move them to this test's own folders
    assert _relocate_store(store, {OLD_WORKSPACE: str(ws), OLD_HOME: str(home)}) > 0
    shutil.copy(TRACE, ws / "trace.json")
    return PerfScout(Settings(state_dir=home, offline=True, run_timeout_s=20), llm=None, workspace=ws)


def test_old_threads_read_as_they_ended(tmp_path):
    with _ps(tmp_path) as ps:
        assert ps.result("old-refused").status == "failed"
        q = ps.result("old-question")
        assert q.status == "needs_input" and q.question["field"] == "data_path"
        assert q.question["for_node"] == "perf_analyzer"  # the node's name before the rename
        assert ps.result("old-done").status == "done"
        assert {t.thread_id for t in ps.threads()} >= {"old-refused", "old-question", "old-done"}


def test_an_old_pending_question_is_answered_and_the_turn_goes_on(tmp_path):
    with _ps(tmp_path) as ps:
        # The answer reaches the node that asked, through today's policies and stage runner, and
        # the file is found in the thread's own workspace (moved into tmp_path with the store):
        # the old turn is analysed and reported, exactly as it would be for its user.
        r = ps.resume("old-question", "trace.json")
        assert "ask_user:data_path" in r.route_history and "analyzer" in r.route_history, r.route_history
        assert r.route_history.index("ask_user:data_path") < r.route_history.index("analyzer")
        # perf_analyzer asked; it is data_locator now (graph/enums.py RENAMED_NODES)
        assert r.route_history[r.route_history.index("ask_user:data_path") + 1] == "data_locator"
        assert r.status == "done" and r.report_paths.get("markdown"), r.answer
        assert Path(r.report_paths["markdown"]).is_relative_to(tmp_path)
        # …and the thread goes on: the next turn analyses the file again.
        r2 = ps.ask("解读一下 trace.json", thread_id="old-question")
        assert r2.status == "done" and r2.report_paths.get("markdown"), r2.answer


def test_an_old_thread_takes_a_new_turn(tmp_path):
    with _ps(tmp_path) as ps:
        r = ps.ask("解读一下 trace.json", thread_id="old-refused")
        assert r.status == "done" and r.route == "analyze", r.answer


def test_an_old_decision_log_replays_without_differences():
    rep = replay_file(str(DATA / "decisions.jsonl"))
    assert rep.checked >= 5 and rep.unreadable == 0 and rep.diffs == []


def test_a_thread_stopped_before_a_renamed_node_continues(tmp_path):
    """Stopped before ``perf_analyzer`` by the version before the rename: it reads incomplete
    before the node that name became, and continuing it runs that node (a node under the old
    name, graph/builder.py ``_add_renamed``) — without it the thread would read "done" and
    continuing would do nothing."""
    with _ps(tmp_path, "before-rename.sqlite") as ps:
        r = ps.result("old-stopped")
        assert (r.status, r.stopped_before) == ("incomplete", "data_locator")
        r = ps.continue_run("old-stopped")
        assert r.status == "done" and r.report_paths.get("markdown"), r.answer
        assert r.route_history == ["orchestrator:analyze", "data_locator", "analyzer", "attributor", "reporter"]


def test_a_decision_naming_a_renamed_node_replays_without_differences():
    rep = replay_file(str(DATA / "before-rename.decisions.jsonl"))
    assert rep.checked == 1 and rep.unreadable == 0 and rep.diffs == []


def test_old_node_names_read_as_the_nodes_they_became():
    from graph.enums import RENAMED_NODES, Node
    from graph.policy import GuardView, AnswerView, choose_next_after_answer

    assert Node("perf_analyzer") is Node.DATA_LOCATOR
    assert set(RENAMED_NODES).isdisjoint(n.value for n in Node)
    guard = GuardView(steps=3, step_budget=24, history=("orchestrator:analyze", "perf_analyzer"), retry_budget=1)
    d = choose_next_after_answer(AnswerView(for_node="perf_analyzer", answered=True, guard=guard))
    assert d.step is Node.DATA_LOCATOR


def test_an_old_node_name_is_written_only_in_its_translation():
    root = Path(__file__).resolve().parents[1]
    offenders = [
        str(p.relative_to(root))
        for d in ("app", "graph", "nodes")
        for p in sorted((root / d).rglob("*.py"))
        if "perf_analyzer" in p.read_text() and p.relative_to(root).as_posix() != "graph/enums.py"
    ]
    assert offenders == []
