"""`perfscout mcp` starts light: spawning it and answering `tools/list` imports neither LangGraph
(or LangChain) nor the graph nor the API's models — they load on the first call that needs them
(app/mcp/engine.py). Issue 25 wants the reply within 1.5 s of the spawn; the time itself is
measured in benchmarks/mcp_server.py, never here: this checks what makes it possible.

The real server process is the fresh interpreter: started with ``-X importtime``, which writes a
line for every module it imports to stderr, it gets the handshake and `tools/list` on stdin and
is closed once it has replied."""

from __future__ import annotations

import json
import queue
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.helpers.env import scrubbed_environ

pytest.importorskip("mcp", reason="the mcp SDK is a dependency of `perfscout mcp`")

ROOT = Path(__file__).resolve().parent.parent
FRAMEWORK = ("langgraph", "langchain_core", "langchain_openai", "langchain")
#: The graph and what builds it, the Python API (pydantic models, the checkpointer), the analysers.
HEAVY = ("graph.builder", "app.api", "app.checkpoint", "nodes.perf.analysis", "nodes.compare.diff")
#: What the SDK's MCPServer would import for a log handler we do not use (app/mcp/server.py).
RICH = ("rich.console", "rich.logging")
HANDSHAKE = [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}},
]


def test_starting_and_listing_the_tools_imports_no_framework_and_no_graph(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    env = scrubbed_environ(PYTHONPATH=str(ROOT), PERFSCOUT_HOME=str(tmp_path / "home"), PERFSCOUT_OFFLINE="1")
    log = tmp_path / "stderr.txt"  # a file, not a pipe: thousands of import lines never block the server
    with log.open("w") as err_file:
        proc = subprocess.Popen(
            [sys.executable, "-X", "importtime", "-m", "app.cli", "mcp", "--workspace", str(ws), "--allow-run"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err_file, text=True, cwd=tmp_path, env=env,
        )
        replies: queue.Queue = queue.Queue()
        threading.Thread(target=lambda: [replies.put(line) for line in proc.stdout], daemon=True).start()
        reply = None
        try:
            proc.stdin.write("".join(json.dumps(m) + "\n" for m in HANDSHAKE))
            proc.stdin.flush()
            while reply is None:
                message = json.loads(replies.get(timeout=120))
                if message.get("id") == 2:
                    reply = message
            proc.stdin.close()  # the server ends
            proc.wait(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
    err = log.read_text()
    assert reply is not None, err[-2000:]
    tools = {t["name"] for t in reply["result"]["tools"]}
    assert tools == {"route", "analyze", "ask", "resume", "continue", "explore", "report", "compare", "check"}
    imported = set(re.findall(r"^import time:\s+\d+ \|\s+\d+ \| +([\w.]+)$", err, flags=re.M))
    assert "mcp.server.mcpserver" in imported and "app.mcp.server" in imported  # the log is complete
    assert sorted(m for m in imported if m.split(".")[0] in FRAMEWORK) == []
    assert sorted(m for m in imported if m in HEAVY) == []
    assert sorted(m for m in imported if m in RICH) == []
