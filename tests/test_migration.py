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


def _ps(tmp_path: Path) -> PerfScout:
    home = tmp_path / "home"
    home.mkdir()
    store = home / "checkpoints.sqlite"
    shutil.copy(DATA / "checkpoints.sqlite", store)
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
