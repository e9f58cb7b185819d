"""The decision log under concurrent writers and torn tails."""

from __future__ import annotations

import multiprocessing as mp

import orjson

from app.decision_log import DecisionLog


def _writer(path: str, who: int, n: int) -> None:
    log = DecisionLog(path)
    for i in range(n):
        log.append({"who": who, "i": i, "reason": "x" * (100 + 37 * who)})


def test_concurrent_appends_from_processes_never_interleave(tmp_path):
    path = tmp_path / "d.jsonl"
    procs = [mp.get_context("spawn").Process(target=_writer, args=(str(path), w, 200)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    lines = path.read_bytes().splitlines()
    assert len(lines) == 800
    recs = [orjson.loads(line) for line in lines]  # every line is one whole record
    for w in range(4):
        assert [r["i"] for r in recs if r["who"] == w] == list(range(200))


def test_torn_tail_is_repaired_on_next_append_and_never_read(tmp_path):
    path = tmp_path / "d.jsonl"
    log = DecisionLog(path)
    log.append({"n": 1})
    with open(path, "ab") as f:
        f.write(b'{"n": 2, "reason": "crash mid-wri')  # a torn last line
    assert [r["n"] for r in log.records()] == [1]
    log.append({"n": 3})
    assert [r["n"] for r in log.records()] == [1, 3]
    assert path.read_bytes().count(b"\n") == 2


def test_corrupt_middle_line_is_skipped(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_bytes(b'{"n": 1}\nnot json\n[1,2]\n{"n": 2}\n')
    assert [r["n"] for r in DecisionLog(path).records()] == [1, 2]


def test_replay_reads_older_schemas(tmp_path):
    """Logs written before the permission facts (schema 1) and before the orchestrator's edge
    named nodes (schema 1–2) replay with no difference under today's policies."""
    from app.replay import replay

    guard = {"steps": 1, "step_budget": 24, "history": ["orchestrator:full_analysis"], "retry_budget": 1}
    v1_stage = {"stage": "collector", "guard": {**guard, "history": ["orchestrator:full_analysis", "collector"], "steps": 2},
                "needs_permission": True, "has_permission": False, "error_kind": "permission", "attempts": 1,
                "retry_budget": 1, "skipped": False, "evidence_complete": False, "missing_field": None,
                "on_success": "continue"}
    recs = [
        {"policy": "choose_next_after_orchestrator", "input": {"route": "full_analysis", "guard": guard}, "decision": "collect"},
        {"policy": "choose_next_after_orchestrator", "input": {"route": "analyze", "guard": guard}, "decision": "load_data", "schema": 2},
        {"policy": "choose_next_after_stage", "input": v1_stage, "decision": "reject"},
        {"policy": "choose_next_after_stage", "input": {**v1_stage, "run_gate": "proposed", "command": "make"},
         "decision": "ask_user", "schema": 2},
        {"policy": "choose_next_after_orchestrator", "input": {"route": "end", "guard": guard}, "decision": "fallback", "schema": 3},
    ]
    rep = replay(recs)
    assert rep.checked == 5 and rep.unreadable == 0 and rep.diffs == []
    assert replay([{**recs[0], "schema": 99}]).unreadable == 1  # a newer writer: not misread
