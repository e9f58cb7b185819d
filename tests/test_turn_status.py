"""One status vocabulary (graph.enums.TurnOutcome) and one mapping from the graph's state keys
to the fields a turn's result (AskResult) and a thread's detail (ThreadDetail) report
(app/threads/status.py). Issue 26, item 7."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

from app.api import AskResult
from app.threads import ThreadDetail, ThreadSummary, turn_fields, turn_state
from app.threads.listing import describe
from graph.enums import TurnOutcome

ROOT = Path(__file__).resolve().parents[1]


def _snap(values: dict, next_: tuple = (), tasks: tuple = ()) -> SimpleNamespace:
    return SimpleNamespace(values=values, next=next_, tasks=tasks)


def _schema_enum(model: type) -> set[str]:
    schema = model.model_json_schema()
    ref = schema["properties"]["status"]["$ref"].rsplit("/", 1)[-1]
    return set(schema["$defs"][ref]["enum"])


def test_results_and_listings_admit_exactly_the_turn_outcomes():
    values = {o.value for o in TurnOutcome}
    assert _schema_enum(AskResult) == values
    assert _schema_enum(ThreadSummary) == values
    assert _schema_enum(ThreadDetail) == values


def test_status_is_stored_as_its_plain_string():
    r = AskResult(thread_id="t", status=TurnOutcome.NEEDS_INPUT)
    assert type(r.status) is str and r.status == "needs_input"
    assert r.model_dump()["status"] == "needs_input"
    assert f"{r.status}" == "needs_input"


def test_one_mapping_fills_both_result_and_detail():
    state = {
        "_route": "file",
        "route_info": {"tier": "rules"},
        "answer": "the main thread is busy",
        "route_history": ["orchestrator", "reporter"],
        "diagnosis": "why",
        "analysis": {"source": "/tmp/trace.json", "findings": [{"id": "x"}]},
        "report": {"dir": "/nowhere", "md": "/nowhere/report.md"},
    }
    fields = turn_fields(_snap(state))
    assert fields["status"] is TurnOutcome.DONE
    assert fields["route"] == "file" and fields["analysis_source"] == "/tmp/trace.json"
    assert fields["report_paths"] == {}  # only files that exist
    assert set(fields) <= set(AskResult.model_fields) and set(fields) <= set(ThreadDetail.model_fields)
    asked = AskResult(thread_id="t", **fields)
    detail = ThreadDetail(thread_id="t", **fields)
    for key in fields:
        assert getattr(asked, key) == getattr(detail, key), key


def test_an_answer_is_not_reported_while_a_question_is_pending():
    task = SimpleNamespace(interrupts=(SimpleNamespace(value={"prompt": "which file?"}),), name="ask_user")
    fields = turn_fields(_snap({"answer": "stale"}, next_=("ask_user",), tasks=(task,)))
    assert fields["status"] is TurnOutcome.NEEDS_INPUT
    assert fields["answer"] is None and fields["question"] == {"prompt": "which file?"}


def test_a_failed_and_a_legacy_failed_turn():
    assert turn_state(_snap({"outcome": "failed"})).status is TurnOutcome.FAILED
    assert turn_state(_snap({"route_history": ["orchestrator", "fail"]})).status is TurnOutcome.FAILED


def test_a_held_thread_is_listed_as_running():
    class Saver:
        def get_tuple(self, cfg):
            return SimpleNamespace(checkpoint={"ts": "2026-01-01T00:00:00+00:00"})

    class Graph:
        def get_state(self, cfg):
            return _snap({"_route": "file"}, next_=("analyzer",), tasks=(SimpleNamespace(name="analyzer", error=None, interrupts=()),))

    assert describe(Graph(), Saver(), "t").status == "incomplete"
    held = describe(Graph(), Saver(), "t", running=True)
    assert held.status == TurnOutcome.RUNNING and held.stopped_before == "analyzer"


def _sources() -> list[tuple[Path, str]]:
    return [(p, p.read_text()) for d in ("app", "graph", "nodes") for p in sorted((ROOT / d).rglob("*.py"))]


def test_no_second_copy_of_the_status_vocabulary():
    """A Literal of the statuses, or "running" assigned as a status, outside graph/enums.py."""
    literal = re.compile(r"""Literal\[\s*["'](done|needs_input|incomplete)["']""")
    running = re.compile(r"""status\s*=\s*["']running["']""")
    offenders = [str(p.relative_to(ROOT)) for p, text in _sources() if literal.search(text) or running.search(text)]
    assert offenders == []


def test_state_keys_are_mapped_to_result_fields_in_one_place():
    mapping = ROOT / "app" / "threads" / "status.py"
    offenders = [
        str(p.relative_to(ROOT))
        for p, text in _sources()
        if p.parts[-3:-1] != ("app", "threads") and p.is_relative_to(ROOT / "app") and 'get("_route")' in text
    ]
    assert 'get("_route")' in mapping.read_text()
    assert offenders == []
