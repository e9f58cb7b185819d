"""SIGKILL at every node boundary, inside nodes, mid-write of the report, and mid-collection.

Each scenario forks a child that runs one turn of the real graph (real orchestrator, router,
policies, edges and reporter; a collector that fails retryably once, so a retry counter is at
stake) on a real checkpoint store with ``durability="sync"``, and kills itself with SIGKILL at
a chosen point. A second child resumes the thread (``invoke(None, cfg)``). The resumed turn
must end exactly where an uninterrupted run of the same turn ends: same route history, same
step count, same attempts (a crash refunds no retry), the same collected data, and no report
file half-written. Forked children (not fresh interpreters) keep each scenario under a second.

The checkpoint store is SQLite and, when a PostgreSQL server can be started here, PostgreSQL.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import signal
import time
from pathlib import Path

import psutil
import pytest

import postgres_server

ROOT = Path(__file__).resolve().parents[1]
TEXT = "帮我全面分析一下 app.py 的性能"
#: The uninterrupted turn: orchestrator, collector (fails retryably), collector (succeeds),
#: analyzer, attributor, reporter.
EXECUTIONS = 6


# ----------------------------------------------------------------------------------------------
# The child: one turn, killed at a chosen point.
# ----------------------------------------------------------------------------------------------


def _open_saver(store: str):
    from contextlib import ExitStack

    from app.checkpoint import open_checkpointer

    stack = ExitStack()
    return stack, stack.enter_context(open_checkpointer(store))


def _child(store: str, thread: str, work: str, mode: str, kill: str) -> None:
    """Run (``mode='run'``) or resume (``'resume'``) the turn; ``kill`` = ``before:N``,
    ``inside:N`` (after node N's work, before its update is returned) or ``write`` (inside the
    reporter's atomic write, after the temp file is written, before the rename)."""
    from langchain_core.messages import HumanMessage

    from graph.builder import build_graph
    from graph.enums import ErrorKind, Node
    from interfaces_util import sample_analysis
    from nodes import orchestrator, reporter
    from nodes.framework.common import ToolFailure, failure, stamp
    from nodes.framework.stage import attempt
    from nodes.framework.context import NodeContext

    log = Path(work) / "executions.log"
    ctx = NodeContext(runs_dir=str(Path(work) / "runs"))

    def executions() -> int:
        return len(log.read_text().splitlines()) if log.exists() else 0

    def wrap(name: str, fn):
        def node(state, config=None):
            n = executions() + 1
            if mode == "run" and kill == f"before:{n}":
                os.kill(os.getpid(), signal.SIGKILL)
            with open(log, "a") as f:
                f.write(f"{name}\n")
                f.flush()
                os.fsync(f.fileno())
            out = fn(state, config) if name == "reporter" else fn(state)
            if mode == "run" and kill == f"inside:{n}":
                os.kill(os.getpid(), signal.SIGKILL)
            return out

        return node

    def collector(state):
        upd = stamp(state, "collector")
        upd["attempts"] = attempt(state, "collector")
        if upd["attempts"]["collector"] == 1:
            upd.update(failure("collector", ToolFailure(ErrorKind.RETRYABLE, "py-spy could not attach")))
            return upd
        data = Path(work) / "profile.json"
        data.write_text(json.dumps({"traceEvents": [{"name": "x", "ph": "X", "ts": 0, "dur": 5, "pid": 1, "tid": 1}]}))
        upd.update({"collected": {"kind": "profile", "paths": {"profile": str(data)}, "source": "python app.py"},
                    "last_error": None})
        return upd

    def analyzer(state):
        upd = stamp(state, "analyzer")
        upd["attempts"] = attempt(state, "analyzer")
        upd["analysis"] = sample_analysis(source=state["collected"]["paths"]["profile"])
        return upd

    def attributor(state):
        upd = stamp(state, "attributor")
        upd["attribution"] = []
        return upd

    if mode == "run" and kill == "write":
        real_replace = os.replace

        def replace_then_die(src, dst, *a, **k):
            if str(dst).endswith((".md", ".html")):
                os.kill(os.getpid(), signal.SIGKILL)
            return real_replace(src, dst, *a, **k)

        os.replace = replace_then_die

    nodes = {
        Node.ORCHESTRATOR: wrap("orchestrator", orchestrator.make(ctx)),
        Node.COLLECTOR: wrap("collector", collector),
        Node.ANALYZER: wrap("analyzer", analyzer),
        Node.ATTRIBUTOR: wrap("attributor", attributor),
        Node.REPORTER: wrap("reporter", reporter.make(ctx)),
    }
    stack, saver = _open_saver(store)
    with stack:
        g = build_graph(checkpointer=saver, context=ctx, nodes=nodes)
        cfg = {"configurable": {"thread_id": thread}}
        if mode == "run":
            out = g.invoke({"messages": [HumanMessage(TEXT)], "allow_run": True, "workspace": work,
                            "run_dir": str(Path(work) / "run")}, cfg, durability="sync")
        else:
            out = g.invoke(None, cfg, durability="sync")
        keep = {k: out.get(k) for k in ("steps", "route_history", "attempts", "collected", "report", "answer",
                                        "_route")}
        (Path(work) / f"result-{mode}.json").write_text(json.dumps(keep, default=str))


def _fork(*args) -> int:
    p = mp.get_context("fork").Process(target=_child, args=args)
    p.start()
    p.join(120)
    if p.is_alive():
        p.kill()
        raise AssertionError("the child hung")
    return p.exitcode


# ----------------------------------------------------------------------------------------------
# Stores
# ----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def store(request, tmp_path_factory):
    if request.param == "sqlite":
        yield lambda name: str(tmp_path_factory.mktemp("cp") / f"{name}.sqlite")
        return
    url = postgres_server.require().create_database("crash")
    yield lambda name: url


@pytest.fixture(scope="module")
def reference(store, tmp_path_factory):
    work = tmp_path_factory.mktemp("reference")
    assert _fork(store("reference"), "reference", str(work), "run", "none") == 0
    ref = json.loads((work / "result-run.json").read_text())
    assert ref["route_history"] == ["orchestrator:full_analysis", "collector", "collector", "analyzer",
                                    "attributor", "reporter"], ref
    assert ref["attempts"]["collector"] == 2
    return ref, (work / "executions.log").read_text().splitlines()


def _no_partial_files(run_root: Path, report: dict) -> None:
    strays = [p for p in run_root.rglob("*") if p.is_file() and p.name.endswith(".tmp")]
    finals = {k: Path(v) for k, v in (report or {}).items() if k != "dir" and isinstance(v, str) and Path(v).is_file()}
    assert {"markdown", "html", "json"} <= set(finals), report
    json.loads(finals["json"].read_text())  # complete JSON
    assert finals["html"].read_text().rstrip().endswith("</html>")
    assert finals["markdown"].read_text().strip()
    # A report file at its final name is never partial; a temp file of the write that was killed
    # is left only by the kill inside the write (it is never at a final name).
    return strays


SCENARIOS = [f"before:{n}" for n in range(1, EXECUTIONS + 1)] + [f"inside:{n}" for n in range(1, EXECUTIONS + 1)]


@pytest.mark.parametrize("kill", SCENARIOS + ["write"])
def test_sigkill_then_resume_ends_like_an_uninterrupted_turn(store, reference, tmp_path, kill):
    ref, ref_execs = reference
    db = store(f"k{kill.replace(':', '')}")
    thread = f"t-{kill.replace(':', '-')}-{os.getpid()}"
    code = _fork(db, thread, str(tmp_path), "run", kill)
    assert code == -signal.SIGKILL, f"the child was meant to be killed at {kill} (exit {code})"
    assert not (tmp_path / "result-run.json").exists()
    killed_at = len((tmp_path / "executions.log").read_text().splitlines()) if (tmp_path / "executions.log").exists() else 0

    assert _fork(db, thread, str(tmp_path), "resume", "none") == 0
    out = json.loads((tmp_path / "result-resume.json").read_text())
    assert out["route_history"] == ref["route_history"]
    assert out["steps"] == ref["steps"]
    assert out["attempts"] == ref["attempts"], "a crash refunded (or double-counted) an attempt"
    assert out["_route"] == "full_analysis"
    assert set(out["collected"]["paths"]) == {"profile"} and Path(out["collected"]["paths"]["profile"]).is_file()

    execs = (tmp_path / "executions.log").read_text().splitlines()
    if kill.startswith("before:"):
        # Killed between checkpoints: every node ran exactly once, as in the reference.
        assert execs == ref_execs
    elif kill.startswith("inside:"):
        # Killed inside node N: its work was never checkpointed, so node N (and only it) ran again.
        n = int(kill.split(":")[1])
        assert killed_at == n
        assert execs == ref_execs[:n] + ref_execs[n - 1:]
    strays = _no_partial_files(tmp_path / "run", out["report"])
    if kill != "write":
        assert strays == [], strays


def test_a_crash_inside_the_report_write_leaves_no_file_at_a_final_name(store, tmp_path):
    db = store("write-only")
    thread = f"w-{os.getpid()}"
    assert _fork(db, thread, str(tmp_path), "run", "write") == -signal.SIGKILL
    report_files = [p for p in (tmp_path / "run").rglob("*") if p.is_file() and p.suffix in (".md", ".html")]
    assert report_files == [], "a report file reached its final name before the write completed"


# ----------------------------------------------------------------------------------------------
# Mid-collection: the real collector on a real program, killed while the program runs.
# ----------------------------------------------------------------------------------------------

PROGRAM = '''
import os, subprocess, sys, time
marker = os.path.join(os.path.dirname(os.path.abspath(__file__)), "marker")
if not os.path.exists(marker):
    open(marker, "w").close()
    # The first run starts a helper of its own and runs long: the graph process dies meanwhile.
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", "perfscout-crash-helper"])
    time.sleep(120)
t = time.time()
while time.time() - t < 0.4:
    sum(i * i for i in range(1000))
'''


def _collect_child(store: str, thread: str, work: str, mode: str) -> None:
    """The real orchestrator, collector and reporter; the analysis is a fixed stand-in (the
    subject here is the collection, not the analyzer)."""
    from langchain_core.messages import HumanMessage

    from graph.builder import build_graph
    from graph.enums import Node
    from interfaces_util import sample_analysis
    from nodes.framework.common import stamp
    from nodes.framework.stage import attempt
    from nodes.framework.context import NodeContext

    def analyzer(state):
        upd = stamp(state, "analyzer")
        upd["attempts"] = attempt(state, "analyzer")
        upd["analysis"] = sample_analysis(source=next(iter(state["collected"]["paths"].values())))
        return upd

    def attributor(state):
        upd = stamp(state, "attributor")
        upd["attribution"] = []
        return upd

    ctx = NodeContext(runs_dir=str(Path(work) / "runs"), run_timeout_s=60)
    stack, saver = _open_saver(store)
    with stack:
        g = build_graph(checkpointer=saver, context=ctx,
                        nodes={Node.ANALYZER: analyzer, Node.ATTRIBUTOR: attributor})
        cfg = {"configurable": {"thread_id": thread}}
        if mode == "run":
            g.invoke({"messages": [HumanMessage("帮我全面分析一下 prog.py 的性能")], "allow_run": True,
                      "workspace": work, "run_dir": str(Path(work) / "run")}, cfg, durability="sync")
        else:
            out = g.invoke(None, cfg, durability="sync")
            keep = {k: out.get(k) for k in ("steps", "route_history", "attempts", "collected", "report")}
            (Path(work) / "resumed.json").write_text(json.dumps(keep, default=str))


def _processes_mentioning(needle: str) -> list[psutil.Process]:
    found = []
    for p in psutil.process_iter(["cmdline"]):
        try:
            if any(needle in part for part in (p.info["cmdline"] or [])):
                found.append(p)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return found


def _kill_mid_collection(db: str, thread: str, work: Path) -> list[tuple[int, str]]:
    """Start the turn, SIGKILL it while the program runs; the processes that outlived it (killed
    here afterwards, so no test leaks them)."""
    (work / "prog.py").write_text(PROGRAM)
    p = mp.get_context("fork").Process(target=_collect_child, args=(db, thread, str(work), "run"))
    p.start()
    deadline = time.time() + 60
    while time.time() < deadline and not (work / "marker").exists():
        assert p.is_alive(), "the collection ended before it was killed"
        time.sleep(0.05)
    assert (work / "marker").exists(), "the program never started"
    time.sleep(0.5)  # the program and its helper are running under the collector
    os.kill(p.pid, signal.SIGKILL)
    p.join(10)
    assert p.exitcode == -signal.SIGKILL
    time.sleep(1.0)  # room for any safety net of the collector's to act
    survivors = _processes_mentioning(str(work / "prog.py")) + _processes_mentioning("perfscout-crash-helper")
    orphans = []
    for s in survivors:
        try:
            orphans.append((s.pid, " ".join(s.cmdline())[:120]))
            s.kill()
        except psutil.NoSuchProcess:
            pass
    return orphans


def test_sigkill_mid_collection_resumes_with_the_collection_intact(store, tmp_path):
    db = store("collect")
    thread = f"c-{os.getpid()}"
    _kill_mid_collection(db, thread, tmp_path)
    # Resume: the collector runs again (its killed attempt was never checkpointed).
    q = mp.get_context("fork").Process(target=_collect_child, args=(db, thread, str(tmp_path), "resume"))
    q.start()
    q.join(180)
    assert q.exitcode == 0
    r = json.loads((tmp_path / "resumed.json").read_text())
    assert r["route_history"] == ["orchestrator:full_analysis", "collector", "analyzer", "attributor", "reporter"]
    assert r["steps"] == 5 and r["attempts"]["collector"] == 1
    paths = r["collected"]["paths"]
    assert paths and all(Path(v).is_file() for v in paths.values()), r["collected"]
    assert [p for p in (tmp_path / "run").rglob("*.tmp")] == []
    assert Path(r["report"]["json"]).is_file()


def test_no_process_outlives_a_killed_collection(tmp_path):
    """Found by this test: the program and its helper outlived a SIGKILLed PerfScout; fixed by the
    collector's owner (programs run under a subreaper guard with PR_SET_PDEATHSIG, d8931ca)."""
    orphans = _kill_mid_collection(str(tmp_path / "cp.sqlite"), f"o-{os.getpid()}", tmp_path)
    assert orphans == [], f"processes outlived the killed collection: {orphans}"
