"""The parts of app/mcp/ alone, without a server or a graph: the permission rules, paths in the
workspace, progress, cancellation of a turn's worker thread, confirmation's form, result shapes.
tests/test_mcp_server.py checks them all together over stdio."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp", reason="the mcp SDK is a dependency of `perfscout mcp`")
from mcp.server.mcpserver.exceptions import ToolError  # noqa: E402

from app.mcp import cancellation, confirmation, permission, results, tools  # noqa: E402
from app.mcp.errors import one_line  # noqa: E402
from app.mcp.options import ServerOptions  # noqa: E402
from app.mcp.progress import Progress  # noqa: E402
from app.mcp.workspace import Workspace, check_thread  # noqa: E402

SERVERS = {
    "nothing": dict(),
    "allow-run": dict(allow_run=True),
    "allowlist": dict(allowlist=("examples/slow_app.py",)),
}


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    root = tmp_path / "ws"
    (root / "examples").mkdir(parents=True)
    (root / "examples" / "slow_app.py").write_text("print(1)\n")
    (tmp_path / "outside.py").write_text("print(2)\n")
    (root / "out").symlink_to(tmp_path / "outside.py")
    return Workspace.open(ServerOptions(workspace=root, allow_run=True))


@pytest.mark.parametrize("server", SERVERS)
@pytest.mark.parametrize("call_says_yes", [False, True])
def test_running_needs_both_keys(tmp_path, server, call_says_yes):
    opts = ServerOptions(workspace=tmp_path, **SERVERS[server])
    if server == "nothing" and call_says_yes:
        with pytest.raises(ToolError, match="allow_run=true refused: .*without --allow-run or --allow"):
            permission.may_run(opts, call_says_yes)
        return
    assert permission.may_run(opts, call_says_yes) is (call_says_yes and server != "nothing")
    # the graph's own allow_run flag is the call's yes on an --allow-run server only: an
    # allowlist runs through the settings, never through that flag
    assert permission.graph_allow(opts, call_says_yes) is (call_says_yes and server == "allow-run")


def test_the_agent_s_program_lies_inside_the_workspace(ws):
    assert permission.check_target(ws, None) is None
    assert permission.check_target(ws, "examples/slow_app.py 5000") == "examples/slow_app.py 5000"
    assert permission.check_target(ws, "python examples/slow_app.py 5000") == "python examples/slow_app.py 5000"
    refusals = {
        "/usr/bin/yes": "outside the workspace",
        "../outside.py": "outside the workspace",
        "out": "out",
        "sh -c 'yes'": "target: sh: no such file in the workspace",
        "python -c 'print(1)'": "target: -c: no such file in the workspace",
        "'unclosed": "cannot split",
        "": "target: empty",
    }
    for target, why in refusals.items():
        with pytest.raises(ToolError) as e:
            permission.check_target(ws, target)
        assert why in str(e.value) and "\n" not in str(e.value), (target, str(e.value))


def test_a_resumed_call_never_inherits_an_earlier_yes(tmp_path):
    opts = ServerOptions(workspace=tmp_path, allow_run=True)

    def with_allow(thread: str, *, allow_run: bool = False) -> None: ...

    def without(thread: str) -> None: ...

    earlier = SimpleNamespace(
        graph=SimpleNamespace(get_state=lambda cfg: SimpleNamespace(values={"allow_run": True})), config=lambda t: {}
    )
    assert permission.fresh_permission(earlier, with_allow, "t", False, opts) == {"allow_run": False}
    assert permission.fresh_permission(earlier, with_allow, "t", True, opts) == {"allow_run": True}
    assert permission.fresh_permission(earlier, without, "t", True, opts) == {}
    with pytest.raises(ToolError, match="say allow_run=true again"):
        permission.fresh_permission(earlier, without, "t", False, opts)


def test_thread_ids_are_no_paths():
    assert check_thread("cancel-me") == "cancel-me"
    for bad in ("", "  ", "../x", "a/b", "a\\b", "x\x00", "t" * 201):
        with pytest.raises(ToolError, match="not a thread id"):
            check_thread(bad)


class Recorder:
    def __init__(self, fail: bool = False):
        self.sent: list[tuple[float, float | None, str]] = []
        self.fail = fail

    async def report_progress(self, p: float, total: float | None, message: str) -> None:
        if self.fail:
            raise ConnectionError("the client went away")
        self.sent.append((p, total, message))


def ev(kind: str, node: str | None = None, **data: Any) -> SimpleNamespace:
    return SimpleNamespace(kind=kind, node=node, data=data)


def test_progress_always_increases_and_counts_down_a_collection():
    rec = Recorder()

    async def main() -> None:
        p = Progress(rec)
        await p.event(ev("node_start", "collector"))
        await p.event(ev("progress", progress="collect", message="forever.py", deadline_s=0.3))
        await p.tick()
        await anyio.sleep(0.35)
        await p.tick()  # past the limit: said once, then the countdown stops
        await p.tick()
        await p.event(ev("progress", progress="parse", done=5, total=10, unit="MB"))
        await p.event(ev("node_end", "collector"))
        await Progress(Recorder(fail=True)).send("nobody listens")  # must not raise

    anyio.run(main)
    values = [s[0] for s in rec.sent]
    assert values == sorted(values) and len(set(values)) == len(values)
    messages = [s[2] for s in rec.sent]
    assert messages[0] == "collector: running"
    assert messages[1] == "collect: forever.py — at most 0 s" and rec.sent[1][1] > rec.sent[1][0]
    assert messages[2].endswith("s left") and rec.sent[2][1] == rec.sent[1][1]
    assert messages[3].endswith("at its time limit, stopping")
    assert messages[4:] == ["parse — 5 / 10 MB", "collector: done"]


def test_drive_forwards_progress_and_returns_the_turn_s_result():
    rec = Recorder()

    def run(emit):
        emit(ev("node_start", "analyzer"))
        emit(ev("result"))  # the API's last event: not progress
        return "the result"

    assert anyio.run(cancellation.drive, rec, run) == "the result"
    assert [s[2] for s in rec.sent] == ["analyzer: running"]


def test_respond_runs_the_work_in_a_worker_thread_between_its_progress_lines():
    rec = Recorder()
    seen: list[tuple[str, list[str]]] = []

    def work() -> dict[str, Any]:
        seen.append((threading.current_thread().name, [s[2] for s in rec.sent]))
        return {"tool": "t", "rows": ["x" * 100] * 1_000}

    r = anyio.run(lambda: tools.respond(work, rec, before="t: reading", after="t: done"))
    assert seen[0][0] != threading.main_thread().name and seen[0][1] == ["t: reading"]
    assert [s[2] for s in rec.sent] == ["t: reading", "t: done"]
    # the bounded result (app/mcp/bound.py), the same JSON as its text
    assert r.structured_content["truncated"] and len(r.content[0].text) <= 20_000


def test_a_tool_is_named_as_its_function_and_described_by_its_docstring():
    added: dict[str, dict[str, Any]] = {}
    server = SimpleNamespace(add_tool=lambda fn, **kw: added.setdefault(kw["name"], kw))

    @tools.tool(server, tools.READ_ONLY)
    async def continue_() -> None:
        """Go on
        where it stopped."""

    assert added["continue"]["description"] == "Go on where it stopped."
    assert added["continue"]["annotations"] is tools.READ_ONLY


def test_a_cancelled_call_stops_its_turn_as_ctrl_c_does():
    """The turn's thread sees the cancellation at its next safe point as a KeyboardInterrupt
    (its clean-up runs), and the cancelled call returns only once that thread has ended."""
    from nodes.framework.context import check_cancelled

    seen: dict[str, Any] = {}
    started = threading.Event()

    def run(emit):
        started.set()
        try:
            while True:  # a collection waiting on its program: a safe point every 10 ms
                check_cancelled()
                time.sleep(0.01)
        except KeyboardInterrupt as e:
            time.sleep(0.2)  # the process tree is being stopped
            seen["interrupted"] = type(e).__name__
            seen["cleaned_at"] = time.monotonic()
            raise

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(cancellation.drive, Recorder(), run)
            await anyio.to_thread.run_sync(started.wait, 10)
            tg.cancel_scope.cancel()
        seen["returned_at"] = time.monotonic()

    anyio.run(main)
    assert seen["interrupted"] == "TurnCancelled"
    assert seen["returned_at"] >= seen["cleaned_at"]  # waited for the clean-up


def test_the_confirmation_form_names_the_command_and_the_paths_outside():
    msg = confirmation.confirm_message({"argv": ["python", "-u", "a b.py"], "outside_workspace": ["/etc/x"]}, "/ws")
    assert "    python -u 'a b.py'" in msg and "in the workspace /ws." in msg
    assert "outside the workspace: /etc/x" in msg and msg.endswith("Run it?")
    ctx = lambda version, elicit: SimpleNamespace(  # noqa: E731
        protocol_version=version, client_capabilities=SimpleNamespace(elicitation=object() if elicit else None)
    )
    assert confirmation.in_result(ctx("2026-07-28", True)) and not confirmation.in_result(ctx("2025-11-25", True))
    assert confirmation.can_elicit(ctx("2025-11-25", True)) and not confirmation.can_elicit(ctx("2025-11-25", False))
    assert not confirmation.can_elicit(SimpleNamespace(client_capabilities=None))


def test_a_forged_request_state_is_refused(ws):
    ctx = SimpleNamespace(request_state="{not json", input_responses={})
    with pytest.raises(ToolError, match="request_state: not one this server wrote"):
        anyio.run(confirmation.confirmed_round, ws, "ask", ctx)
    assert anyio.run(confirmation.confirmed_round, ws, "ask", SimpleNamespace(request_state=None)) is None


def test_a_section_the_data_cannot_give_says_so():
    out = results.sections({"startup": {"median_ms": 5.0}, "hotspots": [{"name": "f", "thread": "t1"}]}, "all")
    assert out["startup"] == {"median_ms": 5.0}
    assert set(out["frames"]) == set(out["hotspots"]) == set(out["web"]) == {"missing"}  # per-thread rows are no hot spots
    assert set(results.sections({}, "frames")) == {"frames"}


def test_errors_are_one_line():
    assert one_line("a\n  b\tc") == "a b c"
    assert len(one_line("x" * 900)) == 500 and one_line("x" * 900).endswith("…")
