"""A run killed with SIGKILL resumes on the same thread with its counters intact.

The child process runs the real graph on a SQLite checkpoint file; its collector fails
retryably and hangs on the retry, where the test kills it with SIGKILL. A new process resumes
the thread: the pending retry runs, fails, and the turn ends — the crash refunded nothing.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = textwrap.dedent(
    """
    import json, sqlite3, sys, time
    from langchain_core.messages import HumanMessage
    from langgraph.checkpoint.sqlite import SqliteSaver
    from graph.builder import build_graph
    from graph.enums import ErrorKind
    from nodes.framework.common import ToolFailure, failure, stamp
    from nodes.framework.stage import attempt

    db, marker, mode = sys.argv[1:4]

    def orchestrator(state):
        return {"_route": "full_analysis", "steps": 1, "route_history": ["orchestrator:full_analysis"],
                "attempts": {}, "last_error": None}

    def collector(state):
        n = (state.get("attempts") or {}).get("collector", 0)
        with open(marker, "a") as f:
            f.write(f"attempt {n + 1}\\n")
        if mode == "hang" and n == 1:
            time.sleep(600)  # the parent kills us here, mid-retry
        upd = stamp(state, "collector")
        upd["attempts"] = attempt(state, "collector")
        upd.update(failure("collector", ToolFailure(ErrorKind.RETRYABLE, "py-spy could not attach")))
        return upd

    saver = SqliteSaver(sqlite3.connect(db, check_same_thread=False))
    g = build_graph(checkpointer=saver, nodes={"orchestrator": orchestrator, "collector": collector})
    cfg = {"configurable": {"thread_id": "crash-1"}}
    if mode == "hang":
        g.invoke({"messages": [HumanMessage("profile app.py")], "allow_run": True}, cfg, durability="sync")
    else:
        out = g.invoke(None, cfg, durability="sync")
        print(json.dumps({"attempts": out["attempts"], "history": out["route_history"],
                          "steps": out["steps"], "answer": out["answer"]}))
    """
)


def test_sigkill_mid_retry_resumes_without_refunding_the_retry(tmp_path):
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    db, marker = tmp_path / "cp.sqlite", tmp_path / "attempts.log"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    child = subprocess.Popen([sys.executable, str(script), str(db), str(marker), "hang"], env=env, cwd=ROOT)
    deadline = time.time() + 60
    while time.time() < deadline:
        if marker.exists() and "attempt 2" in marker.read_text():
            break
        assert child.poll() is None, "child ended before the retry"
        time.sleep(0.05)
    else:
        child.kill()
        raise AssertionError("the retry never started")
    os.kill(child.pid, signal.SIGKILL)
    child.wait(timeout=10)
    assert child.returncode == -signal.SIGKILL

    done = subprocess.run(
        [sys.executable, str(script), str(db), str(marker), "resume"],
        env=env, cwd=ROOT, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    # The killed retry was never checkpointed; the resumed run executes it once, and no more.
    assert marker.read_text().splitlines() == ["attempt 1", "attempt 2", "attempt 2"]
    assert out["attempts"] == {"collector": 2}
    assert out["history"] == ["orchestrator:full_analysis", "collector", "collector", "fail"]
    assert "retry budget spent" in out["answer"]
