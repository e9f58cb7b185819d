"""The API on both checkpoint stores: SQLite (default) and PostgreSQL via PERFSCOUT_CHECKPOINT_URL.

A real PostgreSQL server is found or started on loopback (tests/postgres_server.py); the tests
skip PostgreSQL only when it cannot start here, with the reason. The crash tests
(test_reliability_crash.py) run on both stores as well.
"""

from __future__ import annotations

import threading

import pytest

import postgres_server
from app.api import PerfScout
from app.checkpoint import CheckpointError, open_checkpointer
from app.settings import Settings


@pytest.fixture(params=["sqlite", "postgres"])
def store_url(request, tmp_path):
    if request.param == "sqlite":
        return str(tmp_path / "cp.sqlite")
    return postgres_server.require().create_database("api")


def _settings(tmp_path, url: str) -> Settings:
    return Settings(state_dir=tmp_path / "home", checkpoint_url=url, offline=True)


def test_a_question_asked_in_one_process_is_answered_from_another_instance(tmp_path, store_url):
    trace = tmp_path / "t.json"
    trace.write_text('{"traceEvents": [{"name": "a", "ph": "X", "ts": 0, "dur": 5000, "pid": 1, "tid": 1}]}')
    with PerfScout(_settings(tmp_path, store_url), llm=None, workspace=tmp_path) as ps:
        r = ps.ask("分析一下这份数据")
        assert r.status == "needs_input" and r.question["field"] == "data_path"
        tid = r.thread_id
    with PerfScout(_settings(tmp_path, store_url), llm=None, workspace=tmp_path) as ps2:
        r2 = ps2.resume(tid, "t.json")
        assert r2.route == "analyze"
        assert r2.route_history[:3] == ["orchestrator:analyze", "data_locator", "ask_user:data_path"]
        assert r2.status in ("done", "failed")
        assert tid in {t.thread_id for t in ps2.threads()}


def test_concurrent_threads_share_one_store(tmp_path, store_url):
    """Several threads of the same process on one store: every turn is kept, none mixed up."""
    results: dict[int, object] = {}
    errors: list[BaseException] = []
    with PerfScout(_settings(tmp_path, store_url), llm=None, workspace=tmp_path) as ps:
        _ = ps.graph  # open the store once, before the threads start

        def worker(i: int) -> None:
            try:
                results[i] = ps.ask(["你好", "what is jank?", "怎么优化列表滑动", "分析一下性能"][i % 4],
                                    thread_id=f"conc-{i}")
            except BaseException as e:  # reported below, with the thread's index
                errors.append(e)

        ts = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
        for t in ts:
            t.start()
        for t in ts:
            t.join(120)
        assert errors == []
        for i in range(8):
            st = ps.graph.get_state(ps.config(f"conc-{i}")).values
            assert st["messages"][0].content == ["你好", "what is jank?", "怎么优化列表滑动", "分析一下性能"][i % 4]
            assert st["answer"]


def test_an_unreachable_postgres_url_is_a_one_line_checkpoint_error():
    with pytest.raises(CheckpointError) as e:
        with open_checkpointer("postgresql://nobody@127.0.0.1:1/none?connect_timeout=2"):
            pass
    assert "\n" not in str(e.value) and "PostgreSQL" in str(e.value)
