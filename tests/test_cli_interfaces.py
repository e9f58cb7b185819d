"""The real `perfscout` console script in subprocesses: exit codes, --json, errors, asking back."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.env import scrubbed_environ

ROOT = Path(__file__).resolve().parent.parent
PERFSCOUT = Path(sys.executable).with_name("perfscout")

pytestmark = pytest.mark.skipif(not PERFSCOUT.exists(), reason="the perfscout console script is not installed")


@pytest.fixture
def env(tmp_path):
    return scrubbed_environ(PERFSCOUT_HOME=str(tmp_path / "home"))


def run(env, *args: str, cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(PERFSCOUT), *args],
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def one_line_error(p: subprocess.CompletedProcess) -> str:
    assert "Traceback" not in p.stderr
    lines = [line for line in p.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, p.stderr
    return lines[0]


def test_ask_answers_on_stdout_and_is_quiet_when_not_a_terminal(env, tmp_path):
    p = run(env, "ask", "怎么优化启动", cwd=tmp_path)
    assert p.returncode == 0
    assert "测一下 com.demo.shop 的冷启动耗时" in p.stdout
    assert "\x1b[" not in p.stdout + p.stderr  # no progress drawing into a pipe
    assert "route end" in p.stderr


def test_json_question_exit_3_then_resume(env, tmp_path):
    p = run(env, "ask", "分析一下这份数据", "--json", cwd=tmp_path)
    assert p.returncode == 3
    out = json.loads(p.stdout)  # stdout is one JSON document and nothing else
    assert out["status"] == "needs_input" and out["question"]["field"] == "data_path"
    tid = out["thread_id"]

    shown = json.loads(run(env, "threads", "show", tid, "--json", cwd=tmp_path).stdout)
    assert shown["status"] == "needs_input" and shown["question"]["field"] == "data_path"

    r = run(env, "resume", tid, "missing.json", "--json", cwd=tmp_path)
    assert r.returncode == 2  # a file the user named that is not there: bad input (app/exit_codes.py)
    res = json.loads(r.stdout)
    assert res["status"] == "failed" and "missing.json" in res["diagnosis"]

    again = run(env, "resume", tid, "x", cwd=tmp_path)
    assert again.returncode == 2
    assert "no pending question" in one_line_error(again)


def test_non_tty_question_says_how_to_resume(env, tmp_path):
    p = run(env, "ask", "分析一下这份数据", cwd=tmp_path)
    assert p.returncode == 3
    assert "stdin is not a terminal" in p.stderr and "perfscout resume" in p.stderr
    assert "Traceback" not in p.stderr


def test_threads_commands(env, tmp_path):
    assert json.loads(run(env, "threads", "list", "--json", cwd=tmp_path).stdout) == []
    assert run(env, "threads", "list", cwd=tmp_path).stdout.strip() == "no threads yet"
    tid = json.loads(run(env, "ask", "你好", "--json", cwd=tmp_path).stdout)["thread_id"]
    listed = json.loads(run(env, "threads", "list", "--json", cwd=tmp_path).stdout)
    assert [t["thread_id"] for t in listed] == [tid] and listed[0]["route"] == "end"
    text = run(env, "threads", "show", tid, cwd=tmp_path).stdout
    assert f"thread   {tid}" in text and "PerfScout" in text

    refused = run(env, "threads", "delete", tid, cwd=tmp_path)
    assert refused.returncode == 2 and "--yes" in one_line_error(refused)
    deleted = run(env, "threads", "delete", tid, "--yes", "--json", cwd=tmp_path)
    assert deleted.returncode == 0 and json.loads(deleted.stdout) == {"thread_id": tid, "deleted": True}
    gone = run(env, "threads", "show", tid, cwd=tmp_path)
    assert gone.returncode == 2 and "no thread" in one_line_error(gone)


@pytest.mark.parametrize(
    "args, env_extra, expect",
    [
        (("ask", "  "), {}, "empty"),
        (("ask", "hi", "--no-such-flag"), {}, "no-such-flag"),
        (("ask", "hi"), {"PERFSCOUT_STEP_BUDGET": "lots"}, "PERFSCOUT_STEP_BUDGET"),
        (("replay", "nothing-here.jsonl"), {}, "no such file"),
        (("analyze",), {}, "--thread"),
        (("analyze", "nothing-here.json"), {}, "no such file"),
        (("threads", "show"), {}, "Missing argument"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(env, tmp_path, args, env_extra, expect):
    p = run(env | env_extra, *args, cwd=tmp_path)
    assert p.returncode == 2
    assert "Traceback" not in p.stderr
    assert expect in p.stderr


def test_replay_json_over_the_decisions_the_cli_logged(env, tmp_path):
    run(env, "ask", "你好", cwd=tmp_path)
    log = Path(env["PERFSCOUT_HOME"]) / "decisions.jsonl"
    p = run(env, "replay", str(log), "--json", cwd=tmp_path)
    assert p.returncode == 0
    rep = json.loads(p.stdout)
    assert rep["checked"] >= 1 and rep["diffs"] == []


def _pty_session(env, args, answers, cwd, timeout=120.0) -> tuple[int, str]:
    """Run the CLI on a pseudo-terminal, typing each answer when a prompt ends with ': '."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([str(PERFSCOUT), *args], stdin=slave, stdout=slave, stderr=slave, env=env, cwd=cwd)
    os.close(slave)
    out = b""
    pending = list(answers)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            out += chunk
            if pending and out.rstrip().endswith(b":"):
                os.write(master, pending.pop(0).encode() + b"\n")
        elif proc.poll() is not None:
            break
    code = proc.wait(timeout=10)
    os.close(master)
    return code, out.decode(errors="replace")


def test_terminal_session_asks_interactively_and_shows_progress(env, tmp_path):
    env = env | {"TERM": "xterm", "COLUMNS": "100"}
    code, out = _pty_session(env, ["ask", "分析一下这份数据"], ["missing.json"], cwd=tmp_path)
    assert "Which file should I analyse" in out  # asked on the terminal, not exit 3
    assert "✓ orchestrator" in out and "✓ data_locator" in out  # which node ran
    assert "Stopped:" in out and "missing.json" in out
    assert code == 2  # the answer named a file that is not there: bad input


def test_analyze_a_file_then_ask_a_follow_up_in_its_thread(env):
    direct = run(env, "analyze", "notebooks/data/tiny_trace.json", "--json", cwd=ROOT)
    assert direct.returncode == 0, direct.stderr
    alone = json.loads(direct.stdout)  # the analyzer alone: the JSON keys
    assert alone["format"] == "trace_event" and alone["hotspots"] and "duration_ms" in alone
    p = run(env, "analyze", "notebooks/data/tiny_trace.json", "--thread", "t-analyze", "--json", cwd=ROOT)
    assert p.returncode == 0, p.stderr
    res = json.loads(p.stdout)
    assert res["route"] == "analyze" and res["status"] == "done"
    assert res["analysis_source"].endswith("tiny_trace.json")
    f = run(env, "ask", "what took the most time?", "--thread", res["thread_id"], "--json", cwd=ROOT)
    follow = json.loads(f.stdout)
    # docs/ROUTING.md rule 8: analyze on the thread's data, answered from it
    assert follow["route"] == "analyze" and follow["route_info"].get("override") == "thread"
    assert "tiny_trace.json" in follow["answer"]


def test_route_and_analyze_show_the_lens_on_the_command_line(env, tmp_path):
    """`perfscout route MESSAGE [--thread T]` prints the lens and rule 8's decision; `perfscout
    analyze FILE --focus LENS` leads with that lens (a capture with no launch: what is missing,
    the recipe, what it can say)."""
    p = run(env, "analyze", "notebooks/data/tiny_trace.json", "--thread", "t-lens", "--json", cwd=ROOT)
    assert p.returncode == 0, p.stderr
    on = json.loads(run(env, "route", "--offline", "那内存呢？", "--thread", "t-lens", cwd=ROOT).stdout)
    assert (on["route"], on["lens"], on["thread_data"], on["override"]) == ("analyze", "memory", True, "thread")
    assert "rule 8" in on["reason"]
    off = json.loads(run(env, "route", "--offline", "那内存呢？", cwd=ROOT).stdout)
    assert (off["route"], off["lens"]) == ("android", "memory") and "thread_data" not in off
    dev = json.loads(run(env, "route", "--offline", "采集一下内存", "--thread", "t-lens", cwd=ROOT).stdout)
    assert dev["route"] == "android" and dev["thread_data"] is False
    unknown = run(env, "route", "--offline", "那内存呢？", "--thread", "nope", cwd=ROOT)
    assert unknown.returncode != 0 and "no thread 'nope'" in unknown.stderr and "Traceback" not in unknown.stderr

    a = run(env, "analyze", "tests/data/perfetto/ms_android12_emulator_sched_cpusampling.pftrace", "--focus", "startup",
            cwd=ROOT, timeout=300)
    assert a.returncode == 0, a.stderr
    lines = a.stdout.splitlines()
    assert lines[0].startswith("This trace cannot tell the launch time: no launch events")
    assert lines[1].startswith("To record a trace that can answer it, capture a system trace of the launch")
    bad = run(env, "analyze", "notebooks/data/tiny_trace.json", "--focus", "everything", cwd=ROOT)
    assert bad.returncode != 0 and "--focus 'everything': one of overview" in bad.stderr
