"""Issue 14 item 7 (the input half): odd paths and odd files end in one line, never a hang.

Each case runs the real ``perfscout`` in a subprocess, as a user would: deeply nested JSON
through ``route --jsonl`` and ``report`` (before: "unexpected error: RecursionError", exit 1);
``replay`` on a file that is no decision log (before: "0 decisions checked", exit 0);
``analyze`` on a directory, a FIFO or a device (before: "no such file"); ``route --jsonl`` on a
FIFO with no writer (before: blocked forever) and with one; ``ask`` on a trace outside the
workspace (before: refused without saying how to allow it).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PERFSCOUT = ROOT / ".venv" / "bin" / "perfscout"
TRACE = ROOT / "tests" / "data" / "perf" / "chrome116-devtools-trace.json"


def _run(tmp_path: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT), PERFSCOUT_HOME=str(tmp_path / "home"), PERFSCOUT_OFFLINE="1")
    return subprocess.run([str(PERFSCOUT), *args], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def _one_line_error(p: subprocess.CompletedProcess, *words: str) -> None:
    assert p.returncode == 2, (p.returncode, p.stdout[-500:], p.stderr[-500:])
    assert "Traceback" not in p.stderr and "unexpected error" not in p.stderr, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1, p.stderr
    for w in words:
        assert w in p.stderr, (w, p.stderr)


def test_deeply_nested_json_through_route_jsonl_is_that_lines_error(tmp_path):
    p = tmp_path / "deep.jsonl"
    p.write_text('{"text": ' + "[" * 50_000 + "]" * 50_000 + "}\n" + '{"text": "搜一下启动相关的代码"}\n')
    out = _run(tmp_path, "route", "--jsonl", str(p))
    assert out.returncode == 2 and "Traceback" not in out.stderr and "unexpected" not in out.stderr, out.stderr
    first, second = (json.loads(x) for x in out.stdout.splitlines())
    assert first == {"line": 1, "error": "JSON nested too deeply"}
    assert second["line"] == 2 and second["route"] == "explorer"


@pytest.mark.parametrize("shape", ["array", "object", "args"])
def test_deeply_nested_json_through_report_is_one_line(tmp_path, shape):
    deep = "[" * 200_000 + "]" * 200_000
    body = {
        "array": '{"a": ' + deep + "}",
        "object": '{"format": "x", "source": "y", "a": ' + deep + "}",
        "args": '{"traceEvents": [{"name": "a", "ph": "X", "ts": 0, "dur": 1, "pid": 1, "tid": 1, "args": ' + deep + "}]}",
    }[shape]
    p = tmp_path / "deep.json"
    p.write_text(body)
    _one_line_error(_run(tmp_path, "report", str(p), "--out", str(tmp_path / "r")), "deep.json")
    assert not (tmp_path / "r").exists() or not any((tmp_path / "r").iterdir())  # nothing half-written


@pytest.mark.parametrize(
    "content, words",
    [
        (b"hello world\nthis is not json\n", ("not a decision log", "2 line(s)")),
        (b"", ("empty",)),
        (b'{"a": 1}\n', ("none of them a policy decision",)),
    ],
)
def test_replay_on_a_file_that_is_no_decision_log_exits_non_zero(tmp_path, content, words):
    p = tmp_path / "log.jsonl"
    p.write_bytes(content)
    _one_line_error(_run(tmp_path, "replay", str(p)), "log.jsonl", *words)


def test_replay_on_a_directory_or_fifo_says_what_it_is(tmp_path):
    (tmp_path / "d").mkdir()
    os.mkfifo(tmp_path / "f")
    _one_line_error(_run(tmp_path, "replay", "d"), "is a directory")
    _one_line_error(_run(tmp_path, "replay", "f", timeout=60), "is a FIFO")


def test_analyze_on_a_directory_fifo_or_device_says_what_it_is_and_never_blocks(tmp_path):
    (tmp_path / "traces").mkdir()
    os.mkfifo(tmp_path / "pipe.json")
    _one_line_error(_run(tmp_path, "analyze", "traces"), "traces: is a directory")
    _one_line_error(_run(tmp_path, "analyze", "pipe.json", timeout=60), "pipe.json: is a FIFO")
    _one_line_error(_run(tmp_path, "analyze", "/dev/zero", timeout=60), "/dev/zero: is a character device")
    _one_line_error(_run(tmp_path, "analyze", "missing.json"), "missing.json: no such file")


def test_route_jsonl_on_a_fifo_without_a_writer_gives_up_in_bounded_time(tmp_path):
    os.mkfifo(tmp_path / "msgs")
    t0 = time.monotonic()
    out = _run(tmp_path, "route", "--jsonl", "msgs", timeout=90)
    assert time.monotonic() - t0 < 60
    _one_line_error(out, "msgs", "FIFO", "no writer")


def test_route_jsonl_reads_a_fifo_as_a_stream(tmp_path):
    fifo = tmp_path / "msgs"
    os.mkfifo(fifo)

    def writer() -> None:
        with open(fifo, "w", encoding="utf-8") as f:  # blocks until the reader opens it
            f.write('{"text": "搜一下启动相关的代码"}\n你好\n')

    t = threading.Thread(target=writer, daemon=True)
    t.start()
    out = _run(tmp_path, "route", "--jsonl", "msgs", timeout=90)
    t.join(10)
    assert out.returncode == 0, out.stderr
    assert [json.loads(x)["line"] for x in out.stdout.splitlines()] == [1, 2]


def test_ask_on_a_trace_outside_the_workspace_says_how_to_allow_it(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    downloads = tmp_path / "Downloads"
    downloads.mkdir()
    shutil.copy(TRACE, downloads / "x.json")
    env_home = dict(HOME=str(tmp_path))
    env = dict(os.environ, PYTHONPATH=str(ROOT), PERFSCOUT_HOME=str(tmp_path / "home"), PERFSCOUT_OFFLINE="1",
               **env_home)
    out = subprocess.run([str(PERFSCOUT), "ask", "解读一下 ~/Downloads/x.json"], cwd=ws, env=env,
                         capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert out.returncode != 0
    said = out.stdout + out.stderr
    assert "outside the workspace" in said and f"--workspace {downloads}" in said, said
    # Following the advice works.
    out = subprocess.run([str(PERFSCOUT), "ask", "解读一下 ~/Downloads/x.json", "--workspace", str(downloads)],
                         cwd=ws, env=env, capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)
    assert out.returncode == 0, out.stdout[-1000:] + out.stderr[-1000:]
