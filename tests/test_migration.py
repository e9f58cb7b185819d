"""Threads and decision logs written by PerfScout 0.1.0 load, read right and continue today.

The store and the log in tests/data/migration/ were written by the first landing's own code
(see SOURCES.md there): before the stage runner (no ``outcome`` key), before the permission
facts (no ``run_request``) and before the orchestrator's edge named nodes ("collect").
"""

from __future__ import annotations

import shutil
from pathlib import Path

from app.api import PerfScout
from app.replay import replay_file
from app.settings import Settings

DATA = Path(__file__).resolve().parent / "data" / "migration"
TRACE = Path(__file__).resolve().parent / "data" / "perf" / "viztracer-multithread.json"


def _ps(tmp_path: Path) -> PerfScout:
    home = tmp_path / "home"
    home.mkdir()
    shutil.copy(DATA / "checkpoints.sqlite", home / "checkpoints.sqlite")
    ws = tmp_path / "ws"
    ws.mkdir()
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
        # The answer reaches the node that asked, through today's policies and stage runner; the
        # thread's workspace is the scratch folder 0.1.0 ran in, so the file is looked up there
        # and the turn ends with that typed reason, not a crash.
        r = ps.resume("old-question", "trace.json")
        assert r.route_history[-3:-1] == ["ask_user:data_path", "perf_analyzer"], r.route_history
        assert r.status == "failed" and "trace.json" in (r.answer or "")
        # …and the thread goes on: the next turn, in today's workspace, analyses the file.
        r2 = ps.ask("解读一下 trace.json", thread_id="old-question")
        assert r2.status == "done" and r2.report_paths.get("markdown"), r2.answer


def test_an_old_thread_takes_a_new_turn(tmp_path):
    with _ps(tmp_path) as ps:
        r = ps.ask("解读一下 trace.json", thread_id="old-refused")
        assert r.status == "done" and r.route == "analyze", r.answer


def test_an_old_decision_log_replays_without_differences():
    rep = replay_file(str(DATA / "decisions.jsonl"))
    assert rep.checked >= 5 and rep.unreadable == 0 and rep.diffs == []
