"""The one stage runner: a retry that succeeds reads as a success, for every stage.

Each stage whose real tool can fail retryably is run through the whole graph with that real
tool failing once and then working: ripgrep (explorer, attributor), py-spy under the runner
(collector), adb (startup on a device, android_expert). The other stages get an injected
retryable error. In every case the turn ends done, with 2 attempts of the stage and no error
left behind — the bug was "explorer failed (retryable) after 2 attempts" although the retry
found the definition.
"""

from __future__ import annotations

import os
import shutil
import sys
import uuid
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from graph.builder import build_graph
from graph.enums import ErrorKind, Node
from nodes.code.rg import find_rg
from nodes.framework.context import NodeContext
from nodes.framework.errors import ToolFailure
from tests.fake_adb.harness import FakeAdb

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "tests" / "data"
PYSPY = Path(sys.executable).parent / "py-spy"
S = "emulator-5554"
PKG = "com.demo.shop"


def _fails_once(tmp_path: Path, name: str, real: str, stderr: str, rc: int = 2, before: str = "") -> Path:
    """A wrapper that makes the real tool fail the first time it is run, then execs it."""
    mark = tmp_path / f"{name}.failed-once"
    wrapper = tmp_path / "bin" / name
    wrapper.parent.mkdir(exist_ok=True)
    wrapper.write_text(
        "#!/bin/sh\n"
        f'if [ ! -e "{mark}" ]; then touch "{mark}"; {before}echo "{stderr}" >&2; exit {rc}; fi\n'
        f'exec "{real}" "$@"\n'
    )
    wrapper.chmod(0o755)
    return wrapper


def _run(text: str, ctx: NodeContext, workspace: Path, **state):
    g = build_graph(checkpointer=InMemorySaver(), context=ctx)
    cfg = {"configurable": {"thread_id": uuid.uuid4().hex}}
    return g.invoke({"messages": [HumanMessage(text)], "workspace": str(workspace), **state}, cfg)


def _done_after_one_retry(out: dict, stage: Node) -> None:
    hist = out["route_history"]
    assert out.get("outcome") is None and "fail" not in hist, (hist, out.get("answer"))
    assert out["attempts"][stage.value] == 2, out["attempts"]
    assert hist.count(stage.value) == 2 and hist[hist.index(stage.value) + 1] == stage.value
    assert out.get("last_error") is None


def test_explorer_with_rg_failing_once_ends_done(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "policy.py").write_text("def choose_next_after_stage(view):\n    return view\n")
    rg = _fails_once(tmp_path, "rg", find_rg(), "rg: ./policy.py: Input/output error (os error 5)")
    out = _run("where is choose_next_after_stage defined?", NodeContext(rg_path=str(rg)), ws)
    _done_after_one_retry(out, Node.EXPLORER)
    assert "policy.py" in out["answer"] and "retry budget" not in out["answer"]


def test_attributor_with_rg_failing_once_ends_done(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    shutil.copy(DATA / "perf" / "slowapp.py", ws / "slowapp.py")
    shutil.copy(DATA / "perf" / "pyspy-slowapp.speedscope.json", ws / "profile.speedscope.json")
    rg = _fails_once(tmp_path, "rg", find_rg(), "rg: ./slowapp.py: Input/output error (os error 5)")
    ctx = NodeContext(rg_path=str(rg), runs_dir=str(tmp_path / "runs"))
    out = _run("解读一下 profile.speedscope.json", ctx, ws)
    _done_after_one_retry(out, Node.ATTRIBUTOR)
    assert out["report"] and any(a["status"] == "found" for a in out["attribution"])


@pytest.mark.skipif(not PYSPY.exists() or shutil.which("setpriv") is None, reason="needs py-spy and setpriv")
def test_collector_with_py_spy_refused_once_ends_done(tmp_path):
    """Every py-spy of the first attempt runs as nobody (ptrace refused: retryable); the second
    attempt's is the real one. Refused with --subprocesses, py-spy says "no python processes
    found" — the words it also says when it looked before Python was up — but the program had
    Python loaded, so it is a refusal: the stage retries (docs/collector.md). The stand-in tells
    the attempts apart by the program's pid, so the test does not lean on the clock."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "tiny.py").write_text("import time\nt = time.time()\nwhile time.time() - t < 10.0:\n    sum(range(1000))\n")
    first = tmp_path / "py-spy.first-pid"
    wrapper = tmp_path / "bin" / "py-spy"
    wrapper.parent.mkdir()
    wrapper.write_text(
        "#!/bin/sh\n"
        'pid=""; prev=""; for a in "$@"; do [ "$prev" = "--pid" ] && pid="$a"; prev="$a"; done\n'
        f'[ -e "{first}" ] || echo "$pid" > "{first}"\n'
        f'if [ "$pid" = "$(cat "{first}")" ]; then exec setpriv --reuid=65534 --regid=65534 --clear-groups "{PYSPY}" "$@"; fi\n'
        f'exec "{PYSPY}" "$@"\n'
    )
    wrapper.chmod(0o755)
    ctx = NodeContext(runs_dir=str(tmp_path / "runs"), run_timeout_s=30, pyspy_path=str(wrapper))
    out = _run("帮我全面分析一下 tiny.py", ctx, ws, allow_run=True)
    _done_after_one_retry(out, Node.COLLECTOR)
    assert out["collected"]["paths"]


COLD = ("Stopping: com.demo.shop\nStarting: Intent { cmp=com.demo.shop/.MainActivity }\nStatus: ok\n"
        "LaunchState: COLD\nActivity: com.demo.shop/.MainActivity\nTotalTime: {t}\nWaitTime: {t}\nComplete\n")
GONE = {"stderr": f"error: device '{S}' not found\n", "rc": 1}


def test_startup_on_a_device_with_adb_losing_it_once_ends_done(tmp_path, monkeypatch):
    fake = FakeAdb(tmp_path, monkeypatch).device(S)
    fake.shell(S, f"cmd package resolve-activity --brief -c android.intent.category.LAUNCHER {PKG}",
               GONE, f"{PKG}/.MainActivity\n")
    fake.shell(S, f"am start -W -S -n {PKG}/.MainActivity", COLD.replace("{t}", "640"))
    ctx = NodeContext(runs_dir=str(tmp_path / "runs"), startup_runs=2, android_launch_pause_s=0)
    out = _run(f"测一下 {PKG} 的冷启动耗时", ctx, tmp_path)
    _done_after_one_retry(out, Node.STARTUP)
    assert out["collected"]["summary"]["runs_ok"] == 2


def test_android_expert_with_adb_losing_the_device_once_ends_done(tmp_path, monkeypatch):
    fake = FakeAdb(tmp_path, monkeypatch).device(S)
    meminfo = (DATA / "android" / "meminfo-app-android13.txt").read_text()
    fake.shell(S, f"dumpsys meminfo {PKG}", GONE, meminfo)
    out = _run(f"dump meminfo of {PKG}", NodeContext(runs_dir=str(tmp_path / "runs")), tmp_path)
    _done_after_one_retry(out, Node.ANDROID_EXPERT)
    assert "memory" in out["answer"].lower() or "PSS" in out["answer"]


def _once(monkeypatch, module, attr, kind=ErrorKind.RETRYABLE):
    real = getattr(module, attr)
    calls = []

    def flaky(*a, **kw):
        calls.append(1)
        if len(calls) == 1:
            raise ToolFailure(kind, f"{attr} failed once (injected)")
        return real(*a, **kw)

    monkeypatch.setattr(module, attr, flaky)
    return calls


@pytest.mark.parametrize("stage", [Node.DATA_LOCATOR, Node.ANALYZER, Node.REPORTER])
def test_other_stages_with_an_injected_retryable_error_end_done(tmp_path, monkeypatch, stage):
    import nodes.perf.analysis as analysis
    import nodes.report.render as render
    import nodes.code.sandbox as sandbox
    import nodes.data_locator as data_locator

    ws = tmp_path / "ws"
    ws.mkdir()
    shutil.copy(DATA / "perf" / "viztracer-multithread.json", ws / "trace.json")
    if stage is Node.DATA_LOCATOR:
        _once(monkeypatch, data_locator, "regular_file_inside")
    elif stage is Node.ANALYZER:
        _once(monkeypatch, analysis, "analyze_paths")
    else:
        _once(monkeypatch, render, "write_report")
    out = _run("解读一下 trace.json", NodeContext(runs_dir=str(tmp_path / "runs")), ws)
    _done_after_one_retry(out, stage)
    assert out["report"]
    assert sandbox  # the data_locator stand-in patches the name the node imported


def test_a_failure_that_stays_is_still_a_failure(tmp_path):
    """The other half: an rg that always fails is retried once, then explained."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "policy.py").write_text("def choose_next_after_stage(view):\n    return view\n")
    rg = tmp_path / "rg"
    rg.write_text('#!/bin/sh\necho "rg: ./policy.py: Input/output error (os error 5)" >&2\nexit 2\n')
    rg.chmod(0o755)
    out = _run("where is choose_next_after_stage defined?", NodeContext(rg_path=str(rg)), ws)
    assert out["route_history"][-3:] == ["explorer", "explorer", "fail"]
    assert out["outcome"] == "failed" and "retry budget spent" in out["answer"]
