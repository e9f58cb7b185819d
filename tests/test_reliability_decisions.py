"""The decision log with real writers: whole turns from several processes, a SIGKILL during an
append, and ``perfscout replay`` (the real console script) on the result.

The lead's tests/test_decision_log.py covers the DecisionLog class with synthetic records; these
go through the graph and the CLI.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import orjson

from app.decision_log import DecisionLog
from tests.helpers.env import scrubbed_environ

ROOT = Path(__file__).resolve().parents[1]
PERFSCOUT = ROOT / ".venv" / "bin" / "perfscout"
CLI = [str(PERFSCOUT)] if PERFSCOUT.exists() else [sys.executable, "-c", "from app.cli import main; main()"]


def _env(home: Path) -> dict[str, str]:
    return scrubbed_environ(PERFSCOUT_HOME=str(home), PERFSCOUT_OFFLINE="1", PYTHONPATH=str(ROOT))


def _turns(home: str, who: int, n: int) -> None:
    """Whole offline turns into a shared PERFSCOUT_HOME (one checkpoint file per writer: SQLite
    is one writer at a time; the decision log is what they share)."""
    from app.api import PerfScout
    from app.settings import Settings

    settings = Settings(state_dir=Path(home), checkpoint_url=str(Path(home) / f"cp-{who}.sqlite"), offline=True)
    with PerfScout(settings, llm=None, workspace=home) as ps:
        for i in range(n):
            ps.ask(["你好", "怎么优化列表滑动", "what is jank?", "分析一下性能"][i % 4])
            ps.ask("帮我全面分析一下 app.py 的性能", target="app.py")  # rejected: no permission


def test_turns_from_several_processes_log_whole_lines_and_replay_clean(tmp_path):
    procs = [mp.get_context("spawn").Process(target=_turns, args=(str(tmp_path), w, 6)) for w in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(180)
        assert p.exitcode == 0
    log = tmp_path / "decisions.jsonl"
    lines = log.read_bytes().splitlines()
    recs = [orjson.loads(line) for line in lines]  # every line is one whole record
    # Each writer: 6 general turns (orchestrator decision) + 6 rejected ones (orchestrator, collector).
    assert len(recs) == 3 * (6 + 2 * 6)
    assert sum(r["decision"] == "reject" for r in recs) == 3 * 6
    out = subprocess.run([*CLI, "replay", str(log)], capture_output=True, text=True, env=_env(tmp_path),
                         cwd=tmp_path, timeout=120)
    assert out.returncode == 0, out.stderr
    assert f"{len(recs)} decisions checked, 0 differ, 0 unreadable" in out.stdout


def test_replay_cli_reports_a_decision_the_current_policy_would_change(tmp_path):
    """A log written under another policy: the run was let through without permission."""
    env = _env(tmp_path)
    done = subprocess.run([*CLI, "ask", "帮我全面分析一下 app.py 的性能", "--target", "app.py", "--json"],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert done.returncode == 1, done.stderr  # failed: rejected
    log = tmp_path / "decisions.jsonl"
    recs = [orjson.loads(line) for line in log.read_bytes().splitlines()]
    assert [r["decision"] for r in recs] == ["collector", "reject"]
    recs[1]["decision"] = "continue"  # what the old, lenient policy decided
    log.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in recs))
    with open(log, "ab") as f:
        f.write(b'{"policy": "choose_next_after_stage", "inp')  # and a torn tail from a crash
    out = subprocess.run([*CLI, "replay", str(log)], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert out.returncode == 1
    assert "after collector: recorded continue, now reject" in out.stdout
    assert "2 decisions checked, 1 differ, 0 unreadable" in out.stdout
    js = subprocess.run([*CLI, "replay", str(log), "--json"], capture_output=True, text=True, env=env, cwd=tmp_path,
                        timeout=120)
    body = orjson.loads(js.stdout)
    assert body["diffs"][0]["recorded"] == "continue" and body["diffs"][0]["now"] == "reject"


def test_replay_cli_on_a_missing_or_garbage_log_is_one_line(tmp_path):
    env = _env(tmp_path)
    out = subprocess.run([*CLI, "replay", str(tmp_path / "nope.jsonl")], capture_output=True, text=True, env=env,
                         cwd=tmp_path, timeout=120)
    assert out.returncode != 0 and "Traceback" not in out.stderr
    assert len((out.stderr + out.stdout).strip().splitlines()) == 1
    garbage = tmp_path / "g.jsonl"
    garbage.write_bytes(b"\x00\xff not json\n[1]\n" + b'{"policy": "nope", "input": {}}\n')
    out = subprocess.run([*CLI, "replay", str(garbage)], capture_output=True, text=True, env=env, cwd=tmp_path,
                         timeout=120)
    # Nothing in it could be checked: that is an error (issue 14), not "0 decisions checked", exit 0.
    assert out.returncode == 2 and "Traceback" not in out.stderr, out
    assert len(out.stderr.strip().splitlines()) == 1 and "1 record(s), none of them" in out.stderr


def _append_forever(path: str, started: str) -> None:
    log = DecisionLog(path)
    Path(started).touch()
    i = 0
    while True:
        log.append({"i": i, "reason": "r" * 50_000})  # large lines: a kill mid-write is likely
        i += 1


def test_sigkill_during_appends_leaves_at_most_a_torn_tail_that_the_next_append_repairs(tmp_path):
    path, started = tmp_path / "d.jsonl", tmp_path / "started"
    for round_ in range(3):
        p = mp.get_context("fork").Process(target=_append_forever, args=(str(path), str(started)))
        p.start()
        while not started.exists():
            time.sleep(0.01)
        time.sleep(0.2 + 0.05 * round_)
        os.kill(p.pid, signal.SIGKILL)
        p.join(10)
        started.unlink()
    before = list(DecisionLog(path).records())
    DecisionLog(path).append({"i": -1, "reason": "after the crash"})
    raw = path.read_bytes()
    assert raw.endswith(b"\n")
    recs = [orjson.loads(line) for line in raw.splitlines()]  # no torn line is left anywhere
    assert recs[-1]["i"] == -1
    assert len(recs) == len(before) + 1 and len(before) > 3
