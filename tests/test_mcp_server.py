"""`perfscout mcp` over stdio, driven by the MCP SDK's own client (mcp.Client).

Each test starts the real server in a subprocess (``python -m app.cli mcp``) on a temporary
workspace holding copies of a real capture and the demo program, and talks to it as a coding
agent's client would: list the tools, call them, send malformed arguments, cancel a call.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Awaitable, Callable

import anyio
import psutil
import pytest

mcp = pytest.importorskip("mcp", reason="the mcp SDK is a dependency of `perfscout mcp`")
import mcp_types as types  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402
from tests.helpers.env import scrubbed_environ  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
TRACE = ROOT / "tests" / "data" / "perfetto" / "api32_startup_warm.perfetto-trace"
SLOW_APP = ROOT / "examples" / "slow_app.py"
TOOLS = {"route", "analyze", "ask", "resume", "continue", "explore", "report", "compare", "check"}

#: A program that runs until it is stopped (the collection is cancelled while it runs).
FOREVER = """\
import os
import time

def spin():
    total = 0
    for i in range(20000):
        total += i * i
    return total

while not os.path.exists("stop.flag"):  # runs until stopped, or until the flag file exists
    spin()
    time.sleep(0.01)
"""


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "project"
    (ws / "traces").mkdir(parents=True)
    shutil.copy(TRACE, ws / "traces" / TRACE.name)
    (ws / "examples").mkdir()
    shutil.copy(SLOW_APP, ws / "examples" / "slow_app.py")
    (ws / "forever.py").write_text(FOREVER)
    (tmp_path / "outside.txt").write_text("not in the workspace\n")
    (ws / "link_out").symlink_to(tmp_path / "outside.txt")
    return ws


def server_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return scrubbed_environ(PYTHONPATH=str(ROOT), PERFSCOUT_HOME=str(tmp_path / "home"), PERFSCOUT_OFFLINE="1", **extra)


def params(workspace: Path, *flags: str, env: dict[str, str]) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "app.cli", "mcp", "--workspace", str(workspace), *flags],
        env=env,
        cwd=str(ROOT),
    )


def session(p: StdioServerParameters, body: Callable[[Client], Awaitable[Any]], **client_kw: Any) -> Any:
    async def main() -> Any:
        async with Client(p, **client_kw) as client:
            return await body(client)

    return anyio.run(main)


def data(r: types.CallToolResult) -> dict[str, Any]:
    assert not r.is_error, r.content[0].text
    body = r.structured_content
    assert body == json.loads(r.content[0].text)
    assert len(r.content[0].text) <= 20_000
    return body


def error_line(r: types.CallToolResult) -> str:
    assert r.is_error, r.structured_content
    text = r.content[0].text
    assert "\n" not in text and "Traceback" not in text, text
    return text


def test_lists_every_tool_with_an_input_schema(workspace, tmp_path):
    async def body(c: Client):
        return (await c.list_tools()).tools, (await c.list_resource_templates()).resource_templates

    tools, templates = session(params(workspace, env=server_env(tmp_path)), body)
    by_name = {t.name: t for t in tools}
    assert set(by_name) == TOOLS
    for t in tools:
        assert t.input_schema["type"] == "object" and t.description
    assert by_name["analyze"].input_schema["required"] == ["path"]
    assert by_name["analyze"].input_schema["properties"]["focus"]["enum"] == [
        "overview", "startup", "frames", "scroll", "cpu", "memory", "power", "blocking", "page", "hotspots", "web", "all"]
    assert by_name["ask"].input_schema["properties"]["allow_run"]["default"] is False
    assert set(by_name["resume"].input_schema["required"]) == {"thread", "answer"}
    assert set(by_name["compare"].input_schema["required"]) == {"a", "b"}
    assert by_name["check"].input_schema["required"] == ["run"]
    assert by_name["check"].input_schema["properties"]["allow_missing"]["default"] is False
    assert [t.uri_template for t in templates] == ["perfscout://report/{thread}"]


def test_analyze_a_real_capture_and_read_its_report(workspace, tmp_path):
    from nodes.perf.analysis import analyze_paths

    expected = analyze_paths([str(TRACE)])
    progress: list[str] = []

    async def on_progress(p: float, total: float | None, message: str | None) -> None:
        progress.append(message or "")

    async def body(c: Client):
        full = await c.call_tool("analyze", {"path": f"traces/{TRACE.name}"}, progress_callback=on_progress)
        frames = await c.call_tool("analyze", {"path": f"traces/{TRACE.name}", "focus": "frames",
                                               "sections": ["noSuchSlice"]})
        rep = await c.call_tool("report", {"path_or_thread": data(full)["report_paths"]["markdown"]})
        power = await c.call_tool("analyze", {"path": f"traces/{TRACE.name}", "sections": ["measureBlock"]})
        return full, frames, rep, power

    full, frames, rep, power = session(params(workspace, env=server_env(tmp_path)), body)
    # a named section and no focus: the power answer leads, with that section (1,197,946 µWs)
    p = data(power)
    assert p["lens"] == "power" and p["lens_answer"]["lines"][0].startswith("Energy: measureBlock (1.84 s): 1.198 J")
    a = data(full)
    assert a["format"] == expected.format == "perfetto"
    assert a["source"] == f"traces/{TRACE.name}"
    from nodes.report.view import build_view

    copy = workspace / "traces" / TRACE.name
    view = build_view(
        analyze_paths([str(copy)]), collected={"kind": "file", "paths": {"data": str(copy)}, "source": str(copy)},
        route="analyze", root=str(workspace),
    )
    assert a["headline"] == view.summary_sentences()[0]  # the report's own verdict sentence
    # a slice named for its own window reaches the analyzer (perfscout analyze --section)
    assert any("section 'noSuchSlice': no slice of that name" in w for w in data(frames)["warnings"])
    assert not any("noSuchSlice" in w for w in a.get("warnings") or [])
    assert [f["title"] for f in a["findings"]] == [f.title for f in expected.findings][: len(a["findings"])]
    assert all(f["evidence"]["source"].endswith(TRACE.name) for f in a["findings"])
    assert a["frames"]["count"] == expected.frames.count
    assert a["startup"]["median_ms"] == pytest.approx(expected.startup.median_ms)
    assert a["hotspots"][0]["name"] == [h for h in expected.hotspots if h.thread is None][0].name
    assert "missing" in a["web"]  # a startup trace has no web vitals: said, not estimated
    md = Path(a["report_paths"]["markdown"])
    assert md.is_file() and str(md).startswith(str(tmp_path / "home"))
    assert any("reading" in m for m in progress)
    f = data(frames)
    assert "frames" in f and "startup" not in f and "hotspots" not in f
    full_md = md.read_text(encoding="utf-8")
    r = data(rep)
    if len(json.dumps(full_md, ensure_ascii=False)) > 20_000 or "truncated" in r:  # a prefix, and what was cut
        assert full_md.startswith(r["markdown"].removesuffix(" […]"))
        assert any(t.startswith("markdown: kept ") and f"of {len(full_md)} characters" in t for t in r["truncated"])
    else:
        assert r["markdown"] == full_md


def test_paths_outside_the_workspace_are_refused(workspace, tmp_path):
    async def body(c: Client):
        return [
            await c.call_tool("analyze", {"path": "/etc/passwd"}),
            await c.call_tool("analyze", {"path": "../outside.txt"}),
            await c.call_tool("analyze", {"path": "link_out"}),
            await c.call_tool("report", {"path_or_thread": "/etc"}),
            await c.call_tool("ask", {"message": "profile it", "target": "/usr/bin/yes"}),
        ]

    results = session(params(workspace, env=server_env(tmp_path)), body)
    lines = [error_line(r) for r in results]
    assert all("outside the workspace" in line or "symlink" in line for line in lines), lines
    assert "link_out" in lines[2]


def test_the_agent_s_answer_to_which_program_is_held_to_the_workspace(workspace, tmp_path):
    """The graph takes an answer to "which program?" as the user's own choice (run on
    --allow-run, never refused by shape): over MCP the agent answers, so it must name a program
    inside the workspace; any other command line has to be proposed in a message."""

    async def body(c: Client):
        q = await c.call_tool("ask", {"message": "帮我全面分析一下我的程序", "allow_run": True})
        tid = data(q)["thread_id"]
        return q, [
            await c.call_tool("resume", {"thread": tid, "answer": answer, "allow_run": True})
            for answer in ("/usr/bin/yes", "sh -c 'yes > /dev/null'", "python -c 'print(1)'")
        ]

    q, answers = session(params(workspace, "--allow-run", env=server_env(tmp_path)), body)
    assert data(q)["status"] == "needs_input" and data(q)["question"]["field"] == "target"
    lines = [error_line(r) for r in answers]
    assert "outside the workspace" in lines[0]
    assert all("no such file in the workspace" in line for line in lines[1:]), lines
    assert not _ran_anything(tmp_path / "home")


def test_malformed_arguments_get_one_line_errors(workspace, tmp_path):
    async def body(c: Client):
        return [
            await c.call_tool("analyze", {}),
            await c.call_tool("analyze", {"path": 3}),
            await c.call_tool("analyze", {"path": "traces/x", "focus": "everything"}),
            await c.call_tool("ask", {"message": ""}),
            await c.call_tool("ask", {"message": "hi", "allow_run": "maybe"}),
            await c.call_tool("resume", {"thread": "no-such-thread", "answer": "yes"}),
            await c.call_tool("no_such_tool", {}),
            await c.call_tool("analyze", {"path": "traces"}),
        ]

    results = session(params(workspace, env=server_env(tmp_path)), body)
    lines = [error_line(r) for r in results]
    assert "path" in lines[0] and "required" in lines[0].lower()
    assert "path" in lines[1] and "string" in lines[1]
    assert "focus" in lines[2]
    assert "message" in lines[3]
    assert "allow_run" in lines[4]
    assert "no-such-thread" in lines[5]
    assert "no_such_tool" in lines[6]
    assert "no such file" in lines[7]


def test_route_and_explore(workspace, tmp_path):
    async def body(c: Client):
        return (
            await c.call_tool("route", {"message": "where is unique_customers defined?"}),
            await c.call_tool("explore", {"query": "where is unique_customers defined?"}),
        )

    route, explore = session(params(workspace, env=server_env(tmp_path)), body)
    from nodes.routing import route_message

    r = data(route)
    assert r["route"] == route_message("where is unique_customers defined?")["route"]
    assert r["tier"] and r["reason"]
    e = data(explore)
    assert "examples/slow_app.py:" in e["answer"] and "def unique_customers" in e["answer"]


def _ran_anything(home: Path, thread: str | None = None) -> bool:
    """Whether a program was run (a collection writes run.json in its run folder)."""
    where = home / "runs" / thread if thread else home
    return where.exists() and any(where.rglob("run.json"))


def test_running_needs_the_server_flag_and_the_call_s_allow_run(workspace, tmp_path):
    message = "profile examples/slow_app.py"
    target = "examples/slow_app.py 20000"

    async def refused(c: Client):
        return (
            await c.call_tool("ask", {"message": message, "target": target, "allow_run": True}),
            await c.call_tool("ask", {"message": message, "target": target}),
        )

    env = server_env(tmp_path)
    with_flag, without_call = session(params(workspace, env=env), refused)
    assert "allow_run=true refused" in error_line(with_flag) and "--allow-run" in error_line(with_flag)
    t = data(without_call)
    assert t["status"] == "failed" and t["error_kind"] == "permission"
    assert not _ran_anything(tmp_path / "home")

    async def allowed(c: Client):
        return (
            await c.call_tool("ask", {"message": message, "target": target}),
            await c.call_tool("ask", {"message": message, "target": target, "allow_run": True}),
        )

    no_yes, yes = session(params(workspace, "--allow-run", env=env), allowed)
    n = data(no_yes)
    assert n["status"] == "failed" and n["error_kind"] == "permission"
    assert n["how_to_allow"] == "call again with allow_run=true"
    assert not _ran_anything(tmp_path / "home", n["thread_id"])
    y = data(yes)
    assert y["status"] == "done", y
    assert any(h["name"] == "unique_customers" for h in y["hotspots"])
    assert Path(y["report_paths"]["markdown"]).is_file()
    assert _ran_anything(tmp_path / "home", y["thread_id"])
    assert y["report_resource"] == f"perfscout://report/{y['thread_id']}"

    async def read(c: Client):
        return await c.read_resource(y["report_resource"])

    contents = session(params(workspace, env=env), read).contents
    assert contents[0].mime_type == "text/markdown"
    assert "unique_customers" in contents[0].text


def test_an_allowlisted_program_still_needs_the_call_s_yes(workspace, tmp_path):
    target = "examples/slow_app.py 20000"

    async def body(c: Client):
        return (
            await c.call_tool("ask", {"message": "profile examples/slow_app.py", "target": target}),
            await c.call_tool("ask", {"message": "profile examples/slow_app.py", "target": target, "allow_run": True}),
            await c.call_tool("ask", {"message": "profile forever.py", "target": "forever.py", "allow_run": True}),
        )

    no_yes, yes, other = session(params(workspace, "--allow", "examples/slow_app.py", env=server_env(tmp_path)), body)
    n = data(no_yes)
    assert n["status"] == "failed" and n["error_kind"] == "permission"
    assert not _ran_anything(tmp_path / "home", n["thread_id"])
    assert data(yes)["status"] == "done" and _ran_anything(tmp_path / "home", data(yes)["thread_id"])
    o = data(other)  # not on the list: refused, though the call said yes
    assert o["status"] == "failed" and o["error_kind"] == "permission"
    assert not _ran_anything(tmp_path / "home", o["thread_id"])


def _descendants(pid: int) -> list[psutil.Process]:
    try:
        return [p for p in psutil.Process(pid).children(recursive=True) if p.status() != psutil.STATUS_ZOMBIE]
    except psutil.Error:
        return []


def _server_pid() -> int:
    me = psutil.Process()
    for child in me.children():
        cmd = " ".join(child.cmdline())
        if "app.cli mcp" in cmd:
            return child.pid
    raise AssertionError("the server process was not found")


def test_a_cancelled_collection_stops_everything_and_the_thread_can_continue(workspace, tmp_path):
    env = server_env(tmp_path, PERFSCOUT_RUN_TIMEOUT="120")
    seen: dict[str, Any] = {}

    async def body(c: Client):
        counting = anyio.Event()

        async def on_progress(p: float, total: float | None, message: str | None) -> None:
            if message and "at most" in message:
                seen["countdown"] = (p, total, message)
                counting.set()

        server = _server_pid()
        async with anyio.create_task_group() as tg:

            async def call() -> None:
                seen["result"] = await c.call_tool(
                    "ask",
                    {"message": "profile forever.py", "target": "forever.py", "allow_run": True, "thread": "cancel-me"},
                    progress_callback=on_progress,
                )

            tg.start_soon(call)
            with anyio.fail_after(60):
                await counting.wait()
            await anyio.sleep(1.0)  # py-spy is attached and sampling
            seen["running"] = [p.pid for p in _descendants(server)]
            t0 = time.monotonic()
            tg.cancel_scope.cancel()
        left = _descendants(server)
        while left and time.monotonic() - t0 < 20:
            await anyio.sleep(0.1)
            left = _descendants(server)
        seen["stopped_s"] = time.monotonic() - t0
        seen["left"] = [(p.pid, p.cmdline()) for p in left]
        # The thread is unlocked and incomplete: continue runs the stopped node again, with the
        # call's own yes (the program now ends at once: its flag file exists).
        seen["no_yes"] = await c.call_tool("continue", {"thread": "cancel-me"})
        (workspace / "stop.flag").write_text("")
        seen["continued"] = await c.call_tool("continue", {"thread": "cancel-me", "allow_run": True})
        return None

    session(params(workspace, "--allow-run", env=env), body)
    assert "result" not in seen  # the call was cancelled, not answered
    assert len(seen["running"]) >= 2  # the program (under its guard) and py-spy were running
    assert seen["left"] == []
    assert not any(psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE for p in seen["running"])
    p, total, message = seen["countdown"]
    assert total is not None and total > p and "forever.py" in message
    r = seen["no_yes"]  # never on the cancelled call's yes: refused, or run without permission
    if r.is_error:
        assert "allow_run=true" in error_line(r)
    else:
        assert data(r)["status"] == "failed" and data(r)["error_kind"] == "permission"
    c = data(seen["continued"])
    assert c["thread_id"] == "cancel-me" and "note" not in c  # it had something left to run
    assert c["status"] == "done", c
    assert _ran_anything(tmp_path / "home", "cancel-me")


def test_stdout_carries_only_protocol_messages(workspace, tmp_path):
    """Raw JSON-RPC on the server's stdin, including garbage: every stdout line is a JSON-RPC
    message, and nothing on either stream is a traceback."""
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        "this is not json",
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "analyze", "arguments": {"path": ["x"]}}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "analyze", "arguments": {"path": "traces/" + TRACE.name, "focus": "startup"}}},
    ]
    payload = "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines)
    proc = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "mcp", "--workspace", str(workspace)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
        env=server_env(tmp_path),
    )
    out: list[dict[str, Any]] = []
    try:
        proc.stdin.write(payload)
        proc.stdin.flush()
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not any(m.get("id") == 3 for m in out):
            line = proc.stdout.readline()  # the server answers id 3; EOF ends the loop too
            if not line:
                break
            out.append(json.loads(line))  # every stdout line parses as JSON …
        rest, err = proc.communicate(timeout=60)  # closes stdin: the server ends
    finally:
        if proc.poll() is None:
            proc.kill()
    out += [json.loads(line) for line in rest.splitlines() if line.strip()]
    assert all(m.get("jsonrpc") == "2.0" for m in out)  # … and is a JSON-RPC message
    by_id = {m.get("id"): m for m in out if "id" in m}
    assert by_id[2]["result"]["isError"] is True
    assert by_id[3]["result"]["structuredContent"]["startup"]["median_ms"] > 0
    # the garbage line before them broke nothing: ids 2 and 3 were still answered
    assert "Traceback" not in err


#: A command the message *proposes* (a workspace script with an interpreter flag is not the
#: user's own program: docs/permission.md), so it needs a person's confirmation of its argv.
PROPOSAL = "profile `python -u examples/slow_app.py 20000`"
PROPOSED_ARGV = ["python", "-u", "examples/slow_app.py", "20000"]


def test_a_proposed_command_is_refused_when_nobody_can_be_asked(workspace, tmp_path):
    async def body(c: Client):
        asked = await c.call_tool("ask", {"message": PROPOSAL, "allow_run": True})
        tid = data(asked)["thread_id"]
        return asked, await c.call_tool("resume", {"thread": tid, "answer": "yes"}), await c.call_tool("continue", {"thread": tid, "allow_run": True})

    asked, agent_yes, again = session(params(workspace, "--allow-run", env=server_env(tmp_path)), body)
    a = data(asked)
    assert a["status"] == "refused" and "does not support MCP elicitation" in a["refused"]
    assert a["question"]["field"] == "confirm_run" and a["question"]["argv"] == PROPOSED_ARGV
    line = error_line(agent_yes)
    assert "an answer from the agent does not count" in line and "python -u examples/slow_app.py 20000" in line
    assert data(again)["status"] == "refused"
    assert not _ran_anything(tmp_path / "home", a["thread_id"])


def _elicitation(answer: dict[str, Any] | None, seen: list[str]):
    async def callback(ctx: Any, p: types.ElicitRequestParams) -> types.ElicitResult:
        seen.append(p.message)
        if answer is None:
            return types.ElicitResult(action="decline")
        return types.ElicitResult(action="accept", content=answer)

    return callback


@pytest.mark.parametrize(
    "mode, answer, ran",
    [
        ("auto", {"run": True}, True),  # 2026-07-28: an input_required result, answered in the retry
        ("legacy", None, False),  # 2025-11-25: elicitation/create in the middle of the call, declined
        ("legacy", {"run": False}, False),  # accepted the form but said no
    ],
)
def test_a_proposed_command_runs_only_when_the_person_confirms_it(workspace, tmp_path, mode, answer, ran):
    seen: list[str] = []

    async def body(c: Client):
        r = await c.call_tool("ask", {"message": PROPOSAL, "allow_run": True})
        return r, c.protocol_version

    r, version = session(
        params(workspace, "--allow-run", env=server_env(tmp_path)), body,
        mode=mode, elicitation_callback=_elicitation(answer, seen),
    )
    assert (version >= "2026-07-28") == (mode == "auto")
    assert len(seen) == 1 and "python -u examples/slow_app.py 20000" in seen[0]
    out = data(r)
    if ran:
        assert out["status"] == "done", {k: out.get(k) for k in ("answer", "error", "skipped", "route")}
        assert any(h["name"] == "unique_customers" for h in out["hotspots"])
        assert _ran_anything(tmp_path / "home", out["thread_id"])
    else:
        assert out["status"] == "failed" and "declined" in out["answer"]
        assert not _ran_anything(tmp_path / "home", out["thread_id"])


# --- compare and check ------------------------------------------------------------------------

CHROME116 = ROOT / "tests" / "data" / "report" / "chrome116-devtools-trace.json"
CHROME65 = ROOT / "tests" / "data" / "perf" / "chrome65-devtools-timeline.json"
GFXINFO = ROOT / "tests" / "data" / "android" / "gfxinfo-reactnativefeed-flashlight.txt"
PYSPY = ROOT / "tests" / "data" / "perf" / "pyspy-slowapp.speedscope.json"
#: Macrobenchmark's TTID 154.63 ms and TTFD 659.64 ms for api32_startup_warm (REFERENCE.md, as
#: tests/test_check.py checks them through the CLI): the first budget holds, the second fails.
STARTUP_BUDGETS = "[budgets.startup]\nttid_ms = 156.2\nttfd_ms = 650\n"


def _runs(folder: Path, n: int, seed: int, slower: float = 1.0) -> None:
    """``n`` Chrome traces of one build: forty functions on a main thread, jittered; every odd
    one ``slower`` times as long in this build (enough rows and samples to pass the size bound)."""
    import random

    folder.mkdir(parents=True)
    rng = random.Random(seed)
    for i in range(n):
        events: list[dict[str, Any]] = [{"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "main"}}]
        t = 0.0
        for k in range(40):
            d = (1000 + 100 * k) * (slower if k % 2 else 1.0) * rng.uniform(0.97, 1.03)
            events.append({"ph": "X", "name": f"function_number_{k:02d}", "pid": 1, "tid": 1, "ts": t, "dur": d})
            t += d + 10
        (folder / f"run{i:02d}.json").write_text(json.dumps({"traceEvents": events}))


@pytest.fixture
def builds(workspace: Path, tmp_path: Path) -> Path:
    shutil.copy(CHROME116, workspace / "traces" / CHROME116.name)
    shutil.copy(CHROME65, workspace / "traces" / CHROME65.name)
    shutil.copy(GFXINFO, workspace / "traces" / GFXINFO.name)
    shutil.copy(PYSPY, workspace / "traces" / PYSPY.name)
    _runs(workspace / "before", 24, seed=1)
    _runs(workspace / "after", 24, seed=2, slower=1.2)
    (workspace / "budgets.toml").write_text(STARTUP_BUDGETS)
    # the eight longest functions (hot spots), each bound 10 % above its time: the odd ones fail
    many = "".join(f"'hotspots.\"function_number_{k:02d}\".self_ms' = {(1000 + 100 * k) * 1.1 / 1000}\n" for k in range(32, 40))
    (workspace / "many.toml").write_text("[budgets]\n" + many)
    (workspace / "regression.toml").write_text('[budgets]\n"regression.max_pct" = 5\n')
    shutil.copy(CHROME65, tmp_path / "outside.json")
    (tmp_path / "outside.toml").write_text(STARTUP_BUDGETS)
    (workspace / "linked").mkdir()
    (workspace / "linked" / "t.json").symlink_to(tmp_path / "outside.json")
    return workspace


def test_compare_over_stdio_matches_the_cli_and_stays_in_the_workspace(builds, tmp_path):
    from app.compare_cmd import build

    a, b = f"traces/{CHROME116.name}", f"traces/{CHROME65.name}"

    async def body(c: Client):
        out = {
            "two": await c.call_tool("compare", {"a": a, "b": b}),
            "many": await c.call_tool("compare", {"a": "before", "b": "after"}),
            "glob": await c.call_tool("compare", {"a": "before/run0[0-4].json", "b": "after/run0[0-4].json"}),
            "analyzed": await c.call_tool("analyze", {"path": f"traces/{TRACE.name}"}),
        }
        report_dir = str(Path(data(out["analyzed"])["report_paths"]["markdown"]).parent)
        out["own"] = await c.call_tool("compare", {"a": report_dir, "b": f"traces/{TRACE.name}"})
        out["refused"] = [
            await c.call_tool("compare", {"a": "/etc/passwd", "b": b}),
            await c.call_tool("compare", {"a": "../outside.json", "b": b}),
            await c.call_tool("compare", {"a": "../*.json", "b": b}),
            await c.call_tool("compare", {"a": str(tmp_path / "*.json"), "b": b}),
            await c.call_tool("compare", {"a": "linked", "b": b}),
            await c.call_tool("compare", {"a": "linked/*.json", "b": b}),
        ]
        out["bad"] = [
            await c.call_tool("compare", {"a": f"traces/{GFXINFO.name}", "b": f"traces/{PYSPY.name}"}),  # frames vs samples
            await c.call_tool("compare", {"a": "no-such-thread", "b": b}),
            await c.call_tool("compare", {"a": "traces/*.pftrace", "b": b}),
            await c.call_tool("compare", {"a": a}),
        ]
        return out

    out = session(params(builds, env=server_env(tmp_path)), body)
    two = data(out["two"])
    cli = build(str(CHROME116), str(CHROME65), None)  # the CLI's comparison of the same files
    assert {r["key"]: r["verdict"] for r in two["rows"]} == {r.key: r.verdict for r in cli.rows}
    assert {r["label"]: r["status"] for r in two["hotspots"]} == {r.label: r.status for r in cli.hotspots}
    assert two["headline"].startswith(f"{b} vs {a}: worse: ")  # labelled as the agent named them
    assert two["summary"]["worse"] == len(cli.changes["worse"])
    verdicts = [r["verdict"] for r in two["rows"]]
    assert verdicts == sorted(verdicts, key=lambda v: {"worse": 0, "better": 1}.get(v, 2))  # worse first
    md = Path(two["report_paths"]["markdown"])
    assert md.is_file() and str(md).startswith(str(tmp_path / "home")) and md.name == "compare.md"

    many = data(out["many"])  # 24 runs a side, forty functions: over the bound, and says what was cut
    assert len(many["a"]["runs"]) == len(many["b"]["runs"]) == 24
    assert any(t.startswith("hotspots: kept ") and t.endswith(" of 20 items") for t in many["truncated"]), many["truncated"]
    assert many["hotspots"][0]["verdict"] == "worse" and many["hotspots"][0]["diff"]["significant"] is True
    assert "function_number_39" in many["headline"]
    assert len(data(out["glob"])["a"]["runs"]) == 5
    own = data(out["own"])  # the server's own report (under PERFSCOUT_HOME) against the capture
    assert all(r["verdict"] not in ("worse", "better") for r in own["rows"]), own["rows"]

    lines = [error_line(r) for r in out["refused"]]
    assert all("outside the workspace" in line or "symlink" in line or "'..'" in line for line in lines), lines
    assert "linked" in lines[4] and "linked" in lines[5], lines
    bad = [error_line(r) for r in out["bad"]]
    assert "mismatched kinds" in bad[0] and GFXINFO.name in bad[0], bad[0]
    assert "no report of a thread 'no-such-thread'" in bad[1]
    assert bad[2].endswith("traces/*.pftrace: the pattern matches nothing")
    assert "b" in bad[3] and "required" in bad[3].lower()


def test_check_over_stdio_matches_the_cli(builds, tmp_path):
    import io

    from app import check_cmd

    async def body(c: Client):
        return {
            "startup": await c.call_tool("check", {"run": f"traces/{TRACE.name}", "budgets": "budgets.toml"}),
            "missing_ok": await c.call_tool(
                "check", {"run": f"traces/{CHROME116.name}", "budgets": "budgets.toml", "allow_missing": True}
            ),
            "many": await c.call_tool("check", {"run": "after", "budgets": "many.toml"}),
            "regression": await c.call_tool(
                "check", {"run": "after", "budgets": "regression.toml", "baseline": "before"}
            ),
            "bad": [
                await c.call_tool("check", {"run": f"traces/{TRACE.name}"}),  # no budgets at the root
                await c.call_tool("check", {"run": f"traces/{TRACE.name}", "budgets": "../outside.toml"}),
                await c.call_tool("check", {"run": "after", "budgets": "regression.toml"}),
                await c.call_tool("check", {"run": "../outside.json", "budgets": "budgets.toml"}),
                await c.call_tool("check", {"run": f"traces/{TRACE.name}", "budgets": "nope.toml"}),
            ],
        }

    out = session(params(builds, env=server_env(tmp_path)), body)
    s = data(out["startup"])
    expected = io.StringIO()
    code = check_cmd.run(str(TRACE), budgets_file=str(builds / "budgets.toml"), as_json=True, stdout=expected)
    cli = json.loads(expected.getvalue())
    assert s["passed"] is False and code == 1 and cli["passed"] is False
    by = {r["key"]: r for r in s["results"]}
    assert by == {r["key"]: r for r in cli["results"]}  # the same results as `perfscout check --json`
    assert by["startup.ttid_ms"]["status"] == "pass" and abs(by["startup.ttid_ms"]["value"] - 154.63) < 1.55
    assert by["startup.ttfd_ms"]["status"] == "fail" and abs(by["startup.ttfd_ms"]["value"] - 659.64) < 6.6
    assert s["results"][0]["status"] == "fail"  # failures first
    assert s["counts"] == {"pass": 1, "fail": 1, "missing": 0} and s["summary"].startswith("1 of 2 budgets hold")
    m = data(out["missing_ok"])  # a page load has no start-up: missing, allowed
    assert m["passed"] is True and m["counts"]["missing"] == 2

    many = data(out["many"])  # 8 budgets × 24 runs: over the bound, failures first, cut said
    assert many["counts"]["pass"] + many["counts"]["fail"] == 8 * 24
    assert any(t.startswith("results: kept ") and t.endswith(" of 192 items") for t in many["truncated"]), many["truncated"]
    assert many["results"][0]["status"] == "fail" and many["passed"] is False
    assert many["counts"] == {"pass": 4 * 24, "fail": 4 * 24, "missing": 0}
    r = data(out["regression"])  # every odd function 20 % slower than the baseline: a regression
    assert r["passed"] is False and r["results"][0]["status"] == "fail" and "p = " in r["results"][0]["message"]

    lines = [error_line(x) for x in out["bad"]]
    assert "no budgets: pass budgets" in lines[0]
    assert "outside the workspace" in lines[1]
    assert "regression.max_pct needs a baseline" in lines[2]
    assert "outside the workspace" in lines[3]
    assert "nope.toml: no such file in the workspace" in lines[4]
