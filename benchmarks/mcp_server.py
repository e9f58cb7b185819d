"""`perfscout mcp` as a coding agent's client sees it: start-up, one analyze call, a cancellation.

Drives the real server over stdio with the SDK's client on a temporary workspace, like
tests/test_mcp_server.py.

**Start** (issue 25: within 1.5 s on an idle machine) — from spawning ``perfscout mcp`` to the
reply to the first ``tools/list``: the client's handshake included, as an agent waits for it.
Measured N times, least and median, with the server process's own CPU (user + sys) at that
moment, beside two baselines spawned in the same rounds, interleaved: ``python -c pass`` (a
bare interpreter) and ``python -c "import mcp.server.mcpserver"`` (the SDK's own import, the
floor for any server built on it). Then the same with two CPU-bound processes running (on a
2-core machine: each core busy), as on a loaded laptop.

**Rounds** (unless ``--start-only``) — one ``analyze`` of
tests/data/perfetto/api32_startup_warm.perfetto-trace, and one cancellation: from cancelling a
running collection to the moment the server has no child process left.

The project's bytecode is compiled first, as ``make`` leaves it (these machines set
PYTHONDONTWRITEBYTECODE). Results: benchmarks/results/mcp_server.json.

    .venv/bin/python -m benchmarks.mcp_server [--start N] [--rounds N] [--start-only]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import psutil
from mcp import Client
from mcp.client.stdio import StdioServerParameters

REPO = Path(__file__).resolve().parents[1]
PERFSCOUT = Path(sys.executable).with_name("perfscout")
TRACE = REPO / "tests" / "data" / "perfetto" / "api32_startup_warm.perfetto-trace"
FOREVER = "import time\nwhile True:\n    sum(i * i for i in range(20000)); time.sleep(0.01)\n"
RESULTS = REPO / "benchmarks" / "results" / "mcp_server.json"
BASELINES = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "python -c 'import mcp.server.mcpserver'": [sys.executable, "-c", "import mcp.server.mcpserver"],
}


def _env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "PERFSCOUT_"))}
    env.update({"PERFSCOUT_HOME": str(tmp / "home"), "PERFSCOUT_OFFLINE": "1"})
    return env


def _children(pid: int) -> list[psutil.Process]:
    try:
        return [p for p in psutil.Process(pid).children(recursive=True) if p.status() != psutil.STATUS_ZOMBIE]
    except psutil.Error:
        return []


def _server_pid() -> int:
    return next(ch.pid for ch in psutil.Process().children() if "perfscout" in " ".join(ch.cmdline()) and "mcp" in ch.cmdline())


def _params(ws: Path, tmp: Path, *flags: str) -> StdioServerParameters:
    """The server as a client's configuration starts it: the installed ``perfscout`` script."""
    return StdioServerParameters(command=str(PERFSCOUT), args=["mcp", "--workspace", str(ws), *flags], env=_env(tmp), cwd=str(tmp))


async def _start_once(ws: Path, tmp: Path) -> tuple[float, float, int]:
    """(seconds from spawn to the tools/list reply, the server's CPU seconds then, tools listed)."""
    t0 = time.perf_counter()
    async with Client(_params(ws, tmp)) as c:
        tools = (await c.list_tools()).tools
        wall = time.perf_counter() - t0
        cpu = psutil.Process(_server_pid()).cpu_times()
    return wall, cpu.user + cpu.system, len(tools)


def _wall(argv: list[str]) -> tuple[float, float]:
    """(wall seconds, the child's own CPU seconds: user + sys, from its wait4) of one run of ``argv``."""
    t = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=REPO)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    proc.returncode = os.waitstatus_to_exitcode(status)
    assert proc.returncode == 0, argv
    return wall, usage.ru_utime + usage.ru_stime


def _summary(values: list[float]) -> dict[str, float]:
    return {"least": round(min(values), 3), "median": round(statistics.median(values), 3)}


def measure_start(n: int, label: str) -> dict[str, Any]:
    """``n`` starts of the server, each beside one run of each baseline."""
    walls: list[float] = []
    cpus: list[float] = []
    base: dict[str, list[float]] = {k: [] for k in BASELINES}
    base_cpu: dict[str, list[float]] = {k: [] for k in BASELINES}
    load = os.getloadavg()[0]
    tools = 0
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        ws = tmp / "ws"
        ws.mkdir()
        for i in range(n):
            for name, argv in BASELINES.items():
                wall, cpu = _wall(argv)
                base[name].append(wall)
                base_cpu[name].append(cpu)
            wall, cpu, tools = anyio.run(_start_once, ws, tmp)
            walls.append(wall)
            cpus.append(cpu)
            print(f"  {label} start {i + 1}: {wall:.2f} s wall, server CPU {cpu:.2f} s", flush=True)
    out = {
        "load_average_1m_at_start": round(load, 2),
        "runs": n,
        "tools_listed": tools,
        "spawn_to_tools_list_s": _summary(walls),
        "server_cpu_s": _summary(cpus),
        "baselines_s": {k: _summary(v) for k, v in base.items()},
        "baselines_cpu_s": {k: _summary(v) for k, v in base_cpu.items()},
    }
    sdk = "python -c 'import mcp.server.mcpserver'"
    # CPU is steadier than wall on a shared machine: the server's own work beyond its SDK's import
    out["server_cpu_over_sdk_import_cpu"] = round(out["server_cpu_s"]["least"] / out["baselines_cpu_s"][sdk]["least"], 2)
    return out


def with_busy_cores(k: int):
    """``k`` CPU-bound processes (busy loops) for the duration of a ``with`` block."""

    class Busy:
        def __enter__(self) -> list[subprocess.Popen]:
            self.procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(k)]
            time.sleep(1.0)  # they are running before the first measurement
            return self.procs

        def __exit__(self, *exc: Any) -> None:
            for p in self.procs:
                p.kill()
                p.wait()

    return Busy()


async def one_round(tmp: Path) -> tuple[float, float]:
    ws = tmp / "ws"
    ws.mkdir()
    shutil.copy(TRACE, ws / TRACE.name)
    (ws / "forever.py").write_text(FOREVER)
    async with Client(_params(ws, tmp, "--allow-run")) as c:
        await c.list_tools()
        t1 = time.perf_counter()
        r = await c.call_tool("analyze", {"path": TRACE.name})
        assert not r.is_error, r.content[0].text
        analyze = time.perf_counter() - t1
        server = _server_pid()
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
    return analyze, cancel


def main(argv: list[str]) -> dict[str, Any]:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.mcp_server")
    ap.add_argument("--start", type=int, default=7, help="starts measured per condition (least and median)")
    ap.add_argument("--rounds", type=int, default=3, help="analyze + cancel rounds")
    ap.add_argument("--start-only", action="store_true", help="measure the start only")
    args = ap.parse_args(argv)
    subprocess.run([sys.executable, "-m", "compileall", "-q", "app", "graph", "nodes"], cwd=REPO, check=True,
                   stdout=subprocess.DEVNULL)
    with tempfile.TemporaryDirectory() as d:  # one start not counted: the page cache holds the SDK afterwards
        (Path(d) / "ws").mkdir()
        anyio.run(_start_once, Path(d) / "ws", Path(d))
    out: dict[str, Any] = {"machine": {"cpus": os.cpu_count()}, "start": {}}
    out["start"]["as_is"] = measure_start(args.start, "as is")
    with with_busy_cores(2):
        out["start"]["two_cpu_bound_processes"] = measure_start(args.start, "2 busy")
    if not args.start_only:
        rows = []
        for i in range(args.rounds):
            with tempfile.TemporaryDirectory() as d:
                row = anyio.run(one_round, Path(d))
            rows.append(row)
            print(f"round {i + 1}: analyze {row[0]:.2f} s, cancel {row[1]:.2f} s", flush=True)
        out["rounds"] = {
            "runs": args.rounds,
            "analyze_api32_s": _summary([r[0] for r in rows]),
            "cancel_to_no_process_s": _summary([r[1] for r in rows]),
        }
    for cond, s in out["start"].items():
        b, c = s["baselines_s"], s["baselines_cpu_s"]
        sdk = "python -c 'import mcp.server.mcpserver'"
        print(
            f"{cond:>25}: spawn → tools/list least {s['spawn_to_tools_list_s']['least']:.2f} s "
            f"(median {s['spawn_to_tools_list_s']['median']:.2f}), server CPU {s['server_cpu_s']['least']:.2f} s; "
            f"SDK import {b[sdk]['least']:.2f} s wall, {c[sdk]['least']:.2f} s CPU; "
            f"python -c pass {b['python -c pass']['least']:.3f} s; load {s['load_average_1m_at_start']}"
        )
    RESULTS.write_text(json.dumps(out, indent=2) + "\n")
    print(f"written: {RESULTS.relative_to(REPO)}")
    return out


if __name__ == "__main__":
    main(sys.argv[1:])
