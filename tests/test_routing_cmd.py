"""``perfscout route``: one JSON object per input, per-line errors, the run goes on."""

from __future__ import annotations

import dataclasses
import io
import json
import os
import subprocess
from pathlib import Path

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from app.route_cmd import MAX_TEXT_CHARS, RouteInputError, run
from nodes.routing import cascade

ROOT = Path(__file__).resolve().parent.parent


def _run(lines: list[str], llm=None, tmp_path: Path | None = None) -> tuple[int, list[dict]]:
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = io.StringIO()
    code = run(None, str(path), llm, out)
    return code, [json.loads(x) for x in out.getvalue().splitlines()]


def test_bad_lines_get_error_objects_and_the_run_continues(tmp_path):
    lines = [
        json.dumps({"text": "where is parse_frames defined?", "route": "explorer"}),
        json.dumps({"text": ""}),
        json.dumps({"text": 12}),
        json.dumps({"text": "x" * (MAX_TEXT_CHARS + 1)}),
        "{not json",
        json.dumps({"no_text": "a"}),
        "测一下 com.demo.shop 的冷启动",
    ]
    code, res = _run(lines, tmp_path=tmp_path)
    assert code == 2
    assert [r["line"] for r in res] == [1, 2, 3, 4, 5, 6, 7]
    assert res[0]["route"] == "explorer" and res[0]["expected"] == "explorer" and res[0]["tier"] == "rule"
    assert res[1]["error"] == "empty text"
    assert "must be a string" in res[2]["error"]
    assert str(MAX_TEXT_CHARS) in res[3]["error"]
    assert "invalid JSON" in res[4]["error"]
    assert '"text"' in res[5]["error"]
    assert res[6]["route"] == "startup"
    for r in (res[0], res[6]):
        assert {"route", "tier", "confidence", "reason", "latency_ms"} <= set(r)


def test_exactly_10000_characters_is_accepted(tmp_path):
    code, res = _run([json.dumps({"text": "测" * MAX_TEXT_CHARS})], tmp_path=tmp_path)
    assert code == 0 and "route" in res[0]


@pytest.fixture
def defer_to_model():
    """The process's classifier made to defer every open message to the model tier."""
    real = cascade.get_model()
    cascade.set_model(dataclasses.replace(real, t_llm=1.01))
    yield
    cascade.set_model(real)


def test_reports_the_tier_actually_used_with_a_model(tmp_path, defer_to_model):
    llm = FakeListChatModel(responses=["analyze"] * 10)
    code, res = _run(["hey", "zxqv blorp wibble"], llm=llm, tmp_path=tmp_path)
    assert code == 0
    assert res[0]["tier"] == "rule" and res[0]["route"] == "end"
    assert res[1]["tier"] == "llm" and res[1]["route"] == "analyze"
    code, res = _run(["zxqv blorp wibble"], llm=None, tmp_path=tmp_path)
    assert res[0]["tier"] in {"classifier", "default"}  # offline: never "llm"


def test_needs_exactly_one_input_source():
    with pytest.raises(RouteInputError):
        run(None, None, None, io.StringIO())
    with pytest.raises(RouteInputError):
        run("a", "b.jsonl", None, io.StringIO())
    with pytest.raises(RouteInputError, match="cannot read"):
        run(None, "/nonexistent/file.jsonl", None, io.StringIO())


PERFSCOUT = ROOT / ".venv" / "bin" / "perfscout"


@pytest.mark.skipif(not PERFSCOUT.exists(), reason="the console script is installed by make venv")
def test_cli_offline_from_stdin():
    env = {**os.environ, "OPENAI_API_KEY": "", "OPENAI_BASE_URL": ""}
    proc = subprocess.run(
        [str(PERFSCOUT), "route", "--jsonl", "-", "--offline"],
        input='怎么优化启动\n{"text": ""}\n',
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=120,
    )
    rows = [json.loads(x) for x in proc.stdout.splitlines()]
    assert rows[0]["route"] == "end" and rows[1]["error"] == "empty text"
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
