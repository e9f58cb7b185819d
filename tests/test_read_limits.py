"""Reader bounds are passed, never installed for the process (issue 26, item 8): each PerfScout
hands its own ``Settings.read_limits()`` to the graph in the runtime context, the stage runner
reads every node's data within them (nodes/framework/stage.py), and direct reads take
``limits=``. Two PerfScout objects with different settings in one process keep their own."""

from __future__ import annotations

import json
import threading
from dataclasses import replace
from pathlib import Path

import pytest

from app.api import PerfScout
from app.settings import Settings
from graph.enums import Node
from nodes.framework.context import NodeContext
from nodes.framework.stage import run_stage
from nodes.perf import formats, limits
from nodes.perf.analysis import analyze_file
from nodes.perf.limits import ReadLimits

ROOT = Path(__file__).resolve().parents[1]
#: Over one 1 MiB block of the Trace Event reader, which checks the event cap once per block.
EVENTS = 40_000


def _trace(path: Path) -> Path:
    events = [
        {"name": f"work{i % 7}", "ph": "X", "ts": i * 100, "dur": 80, "pid": 1, "tid": 1}
        for i in range(EVENTS)
    ]
    path.write_text(json.dumps({"traceEvents": events}))
    return path


@pytest.fixture
def settings(perfscout_home) -> Settings:
    return Settings.from_env(offline=True)


def _analysis(ps: PerfScout, text: str) -> dict:
    r = ps.ask(text)
    assert r.status == "done", (r.status, r.diagnosis)
    return ps.graph.get_state(ps.config(r.thread_id)).values["analysis"]


def test_two_perfscouts_with_different_limits_keep_their_own(settings, tmp_path):
    trace = _trace(tmp_path / "trace.json")
    small = replace(settings, max_events=1000)
    with PerfScout(small, workspace=tmp_path) as capped, PerfScout(settings, workspace=tmp_path) as full:
        first = _analysis(capped, f"解读一下 {trace}")
        second = _analysis(full, f"解读一下 {trace}")  # built after the capped one: no overwrite
        third = _analysis(capped, f"解读一下 {trace}")
    assert first["partial"] and third["partial"]
    assert any("PERFSCOUT_MAX_EVENTS" in w for w in first["warnings"])
    assert not second["partial"]
    assert limits.current() == limits.DEFAULT  # nothing was left installed in this process


def test_the_stage_runner_reads_within_the_invocations_limits():
    seen: dict[str, ReadLimits] = {}

    def body(state, ctx):
        seen[ctx.runs_dir] = limits.current()
        return {}

    a = NodeContext(runs_dir="a", read_limits=ReadLimits(max_events=10))
    b = NodeContext(runs_dir="b", read_limits=ReadLimits(max_events=20))
    stage = run_stage(Node.ANALYZER, body, NodeContext())
    barrier = threading.Barrier(2)

    def run(ctx: NodeContext) -> None:
        barrier.wait()
        stage({}, type("Runtime", (), {"context": ctx})())

    threads = [threading.Thread(target=run, args=(c,)) for c in (a, b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == {"a": a.read_limits, "b": b.read_limits}
    assert limits.current() == limits.DEFAULT


def test_direct_reads_take_limits_and_leave_none_behind(tmp_path):
    trace = _trace(tmp_path / "trace.json")
    assert analyze_file(str(trace), limits=ReadLimits(max_events=1000)).partial
    assert not analyze_file(str(trace)).partial
    assert formats.load(str(trace), limits=ReadLimits(max_events=1000)).partial
    assert not formats.load(str(trace)).partial


def test_settings_reach_the_context():
    s = replace(Settings(), max_events=123, max_inflated_bytes=4567)
    assert s.node_context().read_limits == ReadLimits(max_events=123, max_inflated_bytes=4567,
                                                      max_whole_file_bytes=s.max_whole_file_bytes)


def test_nothing_installs_limits_for_the_process():
    """The process-wide installer is gone; a second one would bring back the overwrite."""
    offenders = [
        str(p.relative_to(ROOT))
        for d in ("app", "graph", "nodes")
        for p in sorted((ROOT / d).rglob("*.py"))
        if "install_read_limits" in p.read_text() or "limits.configure(" in p.read_text()
    ]
    assert offenders == []
    assert not hasattr(limits, "configure")


def test_a_report_of_a_trace_reads_within_the_limits_it_is_given(tmp_path):
    from app.report_cmd import run_report
    from nodes.perf.errors import PerfDataError

    speedscope = ROOT / "tests" / "data" / "perf" / "pyspy-slowapp.speedscope.json"
    with pytest.raises(PerfDataError, match="too large for this reader"):
        run_report(str(speedscope), runs_dir=str(tmp_path / "runs"), limits=ReadLimits(max_whole_file_bytes=1000))
    assert run_report(str(speedscope), runs_dir=str(tmp_path / "runs"))["markdown"]
