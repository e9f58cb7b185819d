"""LangGraph Studio's server (`langgraph dev`) serves the PerfScout graph: a thread, an interrupt, its resume.

The server is started from a temporary folder (it writes ``.langgraph_api/`` into its working
directory) with a copy of the repository's ``langgraph.json`` whose relative paths are made
absolute, so what is tested is the committed graph spec. It runs offline: analytics and the
version check are off and no LangSmith key is set. It is stopped by its PID.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from tests.helpers.env import scrubbed_environ

ROOT = Path(__file__).resolve().parent.parent
LANGGRAPH = Path(sys.executable).with_name("langgraph")

pytestmark = pytest.mark.skipif(not LANGGRAPH.exists(), reason="langgraph-cli[inmem] is not installed")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def absolute_config(dst: Path) -> Path:
    spec = json.loads((ROOT / "langgraph.json").read_text())
    spec["dependencies"] = [str((ROOT / d).resolve()) for d in spec.get("dependencies", [])]
    spec["graphs"] = {
        name: f"{(ROOT / ref.split(':')[0]).resolve()}:{ref.split(':')[1]}" for name, ref in spec["graphs"].items()
    }
    out = dst / "langgraph.json"
    out.write_text(json.dumps(spec))
    return out


@pytest.fixture
def server(tmp_path):
    port = free_port()
    env = scrubbed_environ()
    env |= {
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        "LANGGRAPH_NO_VERSION_CHECK": "1",
        "PERFSCOUT_HOME": str(tmp_path / "home"),
        "PERFSCOUT_OFFLINE": "1",
    }
    log = open(tmp_path / "server.log", "wb")
    proc = subprocess.Popen(
        [str(LANGGRAPH), "dev", "--no-browser", "--no-reload", "--port", str(port), "--config", str(absolute_config(tmp_path))],
        cwd=tmp_path,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        import httpx

        deadline = time.monotonic() + 90
        while True:
            if proc.poll() is not None:
                pytest.fail(f"langgraph dev exited with {proc.returncode}: {(tmp_path / 'server.log').read_text()[-2000:]}")
            try:
                if httpx.get(f"{url}/ok", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("langgraph dev did not come up within 90 s")
            time.sleep(0.3)
        yield url, tmp_path
    finally:
        children = []
        if proc.poll() is None:
            children = psutil.Process(proc.pid).children(recursive=True)
            os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
        log.close()
        _, alive = psutil.wait_procs(children, timeout=10)
        assert not alive, f"stray processes left: {alive}"


def test_studio_thread_with_interrupt_and_resume(server):
    from langgraph_sdk import get_sync_client

    url, home = server
    client = get_sync_client(url=url)
    assert [a["graph_id"] for a in client.assistants.search()] == ["perfscout"]

    thread = client.threads.create()
    tid = thread["thread_id"]
    first = client.runs.wait(tid, "perfscout", input={"messages": [{"role": "user", "content": "分析一下这份数据"}]})
    (question,) = first["__interrupt__"]
    assert question["value"]["field"] == "data_path" and question["value"]["for_node"] == "data_locator"
    state = client.threads.get_state(tid)
    assert state["next"] == ["ask_user"]

    done = client.runs.wait(tid, "perfscout", command={"resume": "missing.json"})
    assert "__interrupt__" not in done or not done["__interrupt__"]
    assert done["route_history"] == ["orchestrator:analyze", "data_locator", "ask_user:data_path", "data_locator", "fail"]
    assert "missing.json" in done["answer"]  # the answer reached the node that asked
    assert client.threads.get_state(tid)["next"] == []

    # node-by-node progress, as Studio shows it
    other = client.threads.create()["thread_id"]
    nodes = [
        list(chunk.data)[0]
        for chunk in client.runs.stream(
            other, "perfscout", input={"messages": [{"role": "user", "content": "what is jank?"}]}, stream_mode="updates"
        )
        if chunk.event == "updates"
    ]
    assert nodes == ["orchestrator", "fallback"]
    # the server's graph logs its routing decisions where PERFSCOUT_HOME says
    assert (home / "home" / "decisions.jsonl").is_file()
