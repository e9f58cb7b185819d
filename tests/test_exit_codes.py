"""One exit-code contract across the commands (README "Exit codes", app/exit_codes.py): bad input
2, a failed gate or a refused run 1, a question back 3, interrupted 130, done 0 — checked per
command through the installed console script, on bundled inputs."""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.exit_codes import ExitCode, for_turn
from tests.helpers.env import scrubbed_environ

ROOT = Path(__file__).resolve().parent.parent
PERFSCOUT = Path(sys.executable).with_name("perfscout")
LAUNCH = ROOT / "examples" / "traces" / "launch.perfetto-trace"
RUNS = ROOT / "examples" / "runs"
BUDGETS = ROOT / "examples" / "perfscout.toml"

pytestmark = pytest.mark.skipif(not PERFSCOUT.exists(), reason="the perfscout console script is not installed")


@pytest.fixture
def ws(tmp_path):
    """A workspace with the bundled samples, its own PERFSCOUT_HOME, and no model."""
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    env = scrubbed_environ()
    env["PERFSCOUT_HOME"] = str(tmp_path / "state")
    return tmp_path, env


def run(ws, *args: str, timeout: float = 180) -> subprocess.CompletedProcess:
    cwd, env = ws
    return subprocess.run([str(PERFSCOUT), *args], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=timeout)


def _clean(p: subprocess.CompletedProcess, needle: str) -> None:
    out = p.stdout + p.stderr
    assert "Traceback" not in out, out
    assert needle in out, out


def test_the_codes_are_the_documented_ones():
    assert [int(c) for c in ExitCode] == [0, 1, 2, 3, 130]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = readme.split("### Exit codes", 1)[1].split("\n## ", 1)[0]
    assert [int(m) for m in re.findall(r"^\| \*\*(\d+)\*\*", table, re.M)] == [0, 1, 2, 3, 130]


def test_a_turn_s_code_follows_its_outcome():
    assert for_turn("done") is ExitCode.OK and for_turn("skipped") is ExitCode.OK
    assert for_turn("needs_input") is ExitCode.NEEDS_INPUT
    bad_file = {"tool": "data_locator", "kind": "validation", "message": "x.json: no such file"}
    assert for_turn("failed", "analyze", bad_file) is ExitCode.USAGE
    unreadable = {"tool": "analyzer", "kind": "validation", "message": "x.json: not JSON"}
    assert for_turn("failed", "analyze", unreadable) is ExitCode.USAGE
    # the same stage failing on data PerfScout collected itself is no input of the user's
    assert for_turn("failed", "full_analysis", unreadable) is ExitCode.FAILED
    assert for_turn("failed", "full_analysis", {"tool": "collector", "kind": "validation"}) is ExitCode.FAILED
    assert for_turn("failed", "analyze", {"tool": "data_locator", "kind": "permission"}) is ExitCode.FAILED
    # an error stored by a thread from before the node's rename (graph/enums.py RENAMED_NODES)
    assert for_turn("failed", "analyze", {"tool": "perf_analyzer", "kind": "validation"}) is ExitCode.USAGE
    assert for_turn("failed", None, None) is ExitCode.FAILED


def test_ask(ws):
    p = run(ws, "ask", "解读一下 traces/launch.json")  # no such file
    assert p.returncode == ExitCode.USAGE, p.stdout + p.stderr
    _clean(p, "traces/launch.json: no such file")
    p = run(ws, "ask", "帮我全面分析一下 examples/slow_app.py")  # no --allow-run: refused
    assert p.returncode == ExitCode.FAILED, p.stdout + p.stderr
    _clean(p, "--allow-run")
    p = run(ws, "ask", "分析一下这份数据")  # which file? stdin is no terminal
    assert p.returncode == ExitCode.NEEDS_INPUT
    _clean(p, "perfscout resume")
    p = run(ws, "ask", "解读一下 examples/traces/launch.perfetto-trace")
    assert p.returncode == ExitCode.OK
    _clean(p, "cold start")


def test_analyze(ws):
    p = run(ws, "analyze", "missing.json")
    assert p.returncode == ExitCode.USAGE
    _clean(p, "missing.json")
    p = run(ws, "analyze", "missing.json", "--thread", "t")
    assert p.returncode == ExitCode.USAGE
    _clean(p, "missing.json")
    assert run(ws, "analyze", "examples/traces/gfxinfo.txt").returncode == ExitCode.OK


def test_compare(ws):
    p = run(ws, "compare", "examples/runs/before.pftrace", "examples/runs/nope.pftrace")
    assert p.returncode == ExitCode.USAGE
    _clean(p, "nope.pftrace")
    pyspy = str(ROOT / "tests" / "data" / "perf" / "pyspy-slowapp.speedscope.json")
    p = run(ws, "compare", pyspy, "examples/traces/gfxinfo.txt")  # nothing in common
    assert p.returncode == ExitCode.USAGE, p.stdout + p.stderr
    assert run(ws, "compare", "examples/runs/before.pftrace", "examples/runs/after.pftrace").returncode == ExitCode.OK


def test_check(ws):
    gate = ["--baseline", "examples/runs/main/", "--budgets", "examples/perfscout.toml"]
    assert run(ws, "check", "examples/runs/branch/", *gate).returncode == ExitCode.FAILED
    assert run(ws, "check", "examples/runs/main/", *gate).returncode == ExitCode.OK
    p = run(ws, "check", "examples/runs/branch/", "--budgets", "examples/perfscout.toml")  # regression needs a baseline
    assert p.returncode == ExitCode.USAGE
    _clean(p, "--baseline")


def test_report(ws):
    p = run(ws, "report", "missing.json")
    assert p.returncode == ExitCode.USAGE
    _clean(p, "missing.json")
    p = run(ws, "report", "examples/traces/gfxinfo.txt", "--narrative")
    assert p.returncode == ExitCode.USAGE
    _clean(p, "OPENAI_API_KEY")
    assert not (ws[0] / "state" / "runs").exists(), "a refused report wrote a folder"
    assert run(ws, "report", "examples/traces/gfxinfo.txt").returncode == ExitCode.OK


def test_mcp(ws):
    p = run(ws, "mcp", "--workspace", "no-such-folder")
    assert p.returncode == ExitCode.USAGE
    _clean(p, "no-such-folder")


def test_interrupted_is_130(ws):
    """Ctrl-C (SIGINT) while a turn runs a program: 130, and one line saying how to go on."""
    cwd, env = ws
    p = subprocess.Popen([str(PERFSCOUT), "ask", "profile examples/sleepy_worker.py end to end", "--allow-run",
                          "--thread", "int"], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    runs = cwd / "state" / "runs" / "int"
    deadline = time.monotonic() + 90
    while not (runs.exists() and any(runs.iterdir())) and time.monotonic() < deadline and p.poll() is None:
        time.sleep(0.2)  # until the collection has started
    time.sleep(0.5)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=120)
    assert p.returncode == ExitCode.INTERRUPTED, (out, err)
    assert "Traceback" not in out + err
    assert "perfscout: interrupted" in err and "perfscout resume int" in err, err
