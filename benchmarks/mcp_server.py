"""`perfscout mcp` as a coding agent's client sees it: start-up, one analyze call, a cancellation.

Drives the real server over stdio with the SDK's client on a temporary workspace, like
tests/test_mcp_server.py, and prints three figures per round (medians at the end):
  start   — from spawning the server to the tool list (imports dominate: the SDK, LangGraph);
  analyze — one ``analyze`` call on tests/data/perfetto/api32_startup_warm.perfetto-trace;
  cancel  — from cancelling a running collection to the moment the server has no child left.
Run: ``.venv/bin/python -m benchmarks.mcp_server [rounds]``.
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio
import psutil
from mcp import Client
from mcp.client.stdio import StdioServerParameters

REPO = Path(__file__).resolve().parents[1]
TRACE = REPO / "tests" / "data" / "perfetto" / "api32_startup_warm.perfetto-trace"
FOREVER = "import time\nwhile True:\n    sum(i * i for i in range(20000)); time.sleep(0.01)\n"


def _children(pid: int) -> list[psutil.Process]:
    try:
        return [p for p in psutil.Process(pid).children(recursive=True) if p.status() != psutil.STATUS_ZOMBIE]
    except psutil.Error:
        return []


async def one_round(tmp: Path) -> tuple[float, float, float]:
    ws = tmp / "ws"
    ws.mkdir()
    shutil.copy(TRACE, ws / TRACE.name)
    (ws / "forever.py").write_text(FOREVER)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "PERFSCOUT_"))}
    env.update({"PYTHONPATH": str(REPO), "PERFSCOUT_HOME": str(tmp / "home"), "PERFSCOUT_OFFLINE": "1"})
    p = StdioServerParameters(
        command=sys.executable, args=["-m", "app.cli", "mcp", "--workspace", str(ws), "--allow-run"], env=env, cwd=str(REPO)
    )
    t0 = time.perf_counter()
    async with Client(p) as c:
        await c.list_tools()
        start = time.perf_counter() - t0
        t1 = time.perf_counter()
        r = await c.call_tool("analyze", {"path": TRACE.name})
        assert not r.is_error, r.content[0].text
        analyze = time.perf_counter() - t1
        server = next(ch.pid for ch in psutil.Process().children() if "app.cli" in " ".join(ch.cmdline()))
        counting = anyio.Event()

        async def on_progress(_p: float, _t: float | None, message: str | None) -> None:
            if message and "at most" in message:
                counting.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(lambda: c.call_tool("ask", {"message": "profile forever.py", "allow_run": True}, progress_callback=on_progress))
            await counting.wait()
            await anyio.sleep(1.0)
            t2 = time.perf_counter()
            tg.cancel_scope.cancel()
        while _children(server) and time.perf_counter() - t2 < 30:
            await anyio.sleep(0.02)
        cancel = time.perf_counter() - t2
    return start, analyze, cancel


def main(rounds: int) -> None:
    rows = []
    for i in range(rounds):
        with tempfile.TemporaryDirectory() as d:
            row = anyio.run(one_round, Path(d))
        rows.append(row)
        print(f"round {i + 1}: start {row[0]:.2f} s, analyze {row[1]:.2f} s, cancel {row[2]:.2f} s", flush=True)
    med = [statistics.median(col) for col in zip(*rows)]
    print(f"median of {rounds}: start {med[0]:.2f} s, analyze {med[1]:.2f} s, cancel→no process {med[2]:.2f} s")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
