"""The guard (nodes/collect/guard.py): nothing a run started outlives a SIGKILLed PerfScout.

A "driver" here is a small PerfScout stand-in: a fresh interpreter that launches a program
through the real runner and then gets SIGKILL, so no ``finally`` and no ``atexit`` of it runs.
What stops the program's tree then can only be the guard. The rest checks that the guard
changes nothing else: exit codes, signals, timeouts, Ctrl-C, the pid py-spy attaches to.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import psutil
import pytest

from nodes.collect import runner
from nodes.collect.runner import Launched, run_bounded
from tests.helpers.processes import alive

REPO = Path(__file__).resolve().parents[1]
GUARD = REPO / "nodes" / "collect" / "guard.py"
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the guard needs Linux's prctl")
#: The guarded path exists on Linux only; the direct one everywhere.
GUARD_PARAMS = [pytest.param(True, marks=linux_only), False]

#: A child, a grandchild that left the session (setsid), an orphan of a double fork, and a
#: setsid'd double-forked daemon; their pids go to argv[1], then the program hangs.
FAMILY = textwrap.dedent(
    """
    import os, subprocess, sys, time
    pids = [subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"]).pid]
    r, w = os.pipe()
    if os.fork() == 0:                      # leaves the session
        os.setsid()
        os.write(w, f"{os.getpid()}\\n".encode())
        time.sleep(120)
        os._exit(0)
    if os.fork() == 0:                      # double fork: its parent is gone at once
        if os.fork() == 0:
            os.write(w, f"{os.getpid()}\\n".encode())
            time.sleep(120)
            os._exit(0)
        os._exit(0)
    if os.fork() == 0:                      # a daemon: setsid and double fork
        os.setsid()
        if os.fork() == 0:
            os.write(w, f"{os.getpid()}\\n".encode())
            time.sleep(120)
            os._exit(0)
        os._exit(0)
    os.close(w)
    got = b""
    while got.count(b"\\n") < 3:
        got += os.read(r, 100)
    pids += [int(x) for x in got.split()]
    with open(sys.argv[1], "w") as f:
        f.write(" ".join(map(str, pids)))
    time.sleep(120)
    """
)

#: A PerfScout stand-in: launches argv[2:] through the runner (argv[1]: "guarded" or "direct"),
#: prints what it started, and waits to be killed.
DRIVER = textwrap.dedent(
    f"""
    import json, sys, time
    sys.path.insert(0, {str(REPO)!r})
    from nodes.collect import runner
    runner.GUARDED = sys.argv[1] == "guarded"
    prog = runner.Launched(sys.argv[2:])
    guard = prog.guard_pid
    print(json.dumps({{"pid": prog.pid, "token": prog.token, "guard": guard}}), flush=True)
    time.sleep(120)
    """
)


def _wait_for_pids(path: Path, timeout: float = 30.0) -> list[int]:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if path.exists() and path.read_text().strip():
            return [int(x) for x in path.read_text().split()]
        time.sleep(0.05)
    raise AssertionError(f"{path} never written")


def _survivors(pids: list[int], timeout: float = 5.0) -> list[int]:
    end = time.monotonic() + timeout
    while time.monotonic() < end and any(alive(p) for p in pids):
        time.sleep(0.05)
    return [p for p in pids if alive(p)]


def _kill_leftovers(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def _start_driver(tmp_path: Path, mode: str, *argv: str) -> tuple[subprocess.Popen, dict]:
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    proc = subprocess.Popen([sys.executable, str(driver), mode, *argv], stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    assert line, "the driver printed nothing"
    return proc, json.loads(line)


@linux_only
def test_kill_9_of_perfscout_leaves_no_process_of_the_run(tmp_path):
    """Program, child, setsid'd grandchild, double-forked orphan, setsid'd daemon, and a process
    outside the tree that carries the run token: all gone within seconds of SIGKILL."""
    (tmp_path / "family.py").write_text(FAMILY)
    pids_file = tmp_path / "pids"
    proc, info = _start_driver(tmp_path, "guarded", sys.executable, str(tmp_path / "family.py"), str(pids_file))
    pids = _wait_for_pids(pids_file)
    stray = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(120)"], env={**os.environ, runner.TOKEN_VAR: info["token"]}
    )
    everyone = [info["pid"], info["guard"], *pids, stray.pid]
    try:
        assert all(alive(p) for p in everyone)
        assert psutil.Process(info["pid"]).ppid() == info["guard"]
        proc.kill()
        proc.wait(10)
        assert _survivors(everyone) == []
    finally:
        _kill_leftovers(everyone)
        stray.wait(10)


@linux_only
def test_without_the_guard_the_same_kill_leaves_the_tree_running(tmp_path):
    """The direct start (kept for systems without prctl) is what the guard fixes: this is the
    failure the test above would show without it."""
    (tmp_path / "family.py").write_text(FAMILY)
    pids_file = tmp_path / "pids"
    proc, info = _start_driver(tmp_path, "direct", sys.executable, str(tmp_path / "family.py"), str(pids_file))
    pids = _wait_for_pids(pids_file)
    try:
        proc.kill()
        proc.wait(10)
        time.sleep(0.5)
        assert [p for p in [info["pid"], *pids] if alive(p)] != []
    finally:
        _kill_leftovers([info["pid"], *pids])


@linux_only
def test_a_program_launched_from_a_thread_that_ends_keeps_running():
    """PR_SET_PDEATHSIG fires when the forking *thread* ends: guards are forked by one
    long-lived thread, so a node's worker thread ending does not kill its program."""
    box: list[Launched] = []
    t = threading.Thread(target=lambda: box.append(Launched([sys.executable, "-c", "import time; time.sleep(60)"])))
    t.start()
    t.join()
    prog = box[0]
    try:
        assert prog.wait(1.0) == "timeout"
        assert alive(prog.pid)
    finally:
        prog.stop()
    assert not alive(prog.pid)
    assert prog.result().outcome == "timeout"


@linux_only
def test_the_pid_is_the_program_not_the_guard(tmp_path):
    """py-spy and perf attach by pid: it must be the program, whose parent is the guard."""
    argv = [sys.executable, "-c", "import time; time.sleep(60)"]
    with Launched(argv) as prog:
        p = psutil.Process(prog.pid)
        assert p.cmdline() == argv
        guard = p.parent()
        assert str(GUARD) in guard.cmdline()
        assert runner.TOKEN_VAR in p.environ()
        assert runner.TOKEN_VAR not in guard.environ()  # the runner's token scan never hits it
        assert os.getsid(prog.pid) == prog.pid  # still a session of its own
    assert not alive(prog.pid) and not alive(guard.pid)


@pytest.mark.parametrize("guarded", GUARD_PARAMS, ids=["guarded", "direct"])
@pytest.mark.parametrize(
    "code, returncode",
    [
        ("pass", 0),
        ("import sys; sys.exit(3)", 3),
        ("import os, signal; os.kill(os.getpid(), signal.SIGTERM)", -signal.SIGTERM),
        ("import os, signal; os.kill(os.getpid(), signal.SIGKILL)", -signal.SIGKILL),
    ],
)
def test_exit_codes_are_the_programs_own(monkeypatch, guarded, code, returncode):
    monkeypatch.setattr(runner, "GUARDED", guarded)
    res = run_bounded([sys.executable, "-c", code + "\nprint('out')"], timeout_s=60)
    assert (res.outcome, res.returncode) == ("exited", returncode)
    assert res.stopped_pids == []
    assert (res.stdout.text() == "out\n") == (returncode == 0)


@pytest.mark.parametrize("guarded", GUARD_PARAMS, ids=["guarded", "direct"])
def test_a_timeout_stops_a_program_that_ignores_sigterm(monkeypatch, guarded):
    monkeypatch.setattr(runner, "GUARDED", guarded)
    code = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('up', flush=True); time.sleep(60)"
    lines: list[str] = []
    with Launched([sys.executable, "-c", code], on_stdout_line=lines.append) as prog:
        while not lines and prog.wait(0.05) == "timeout":
            pass
        assert prog.wait(0.3) == "timeout"
    res = prog.result()
    assert (res.outcome, res.returncode) == ("timeout", -signal.SIGKILL)
    assert res.pid in res.stopped_pids and not alive(res.pid)


@linux_only
def test_ctrl_c_of_perfscout_stops_the_tree_and_the_guard(tmp_path):
    (tmp_path / "family.py").write_text(FAMILY)
    pids_file = tmp_path / "pids"
    driver = tmp_path / "ctrl_c.py"
    driver.write_text(
        textwrap.dedent(
            f"""
            import sys
            sys.path.insert(0, {str(REPO)!r})
            from nodes.collect.runner import Launched
            try:
                with Launched([sys.executable, {str(tmp_path / "family.py")!r}, {str(pids_file)!r}]) as prog:
                    print(prog.guard_pid, flush=True)
                    prog.wait(120)
            except KeyboardInterrupt:
                print(prog.outcome, flush=True)
                sys.exit(130)
            """
        )
    )
    proc = subprocess.Popen([sys.executable, str(driver)], stdout=subprocess.PIPE, text=True)
    try:
        guard = int(proc.stdout.readline())
        pids = _wait_for_pids(pids_file)
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130 and out.strip() == "interrupted"
    assert _survivors(pids + [guard]) == []


@linux_only
def test_a_killed_guard_takes_its_program_with_it():
    """The program's own death signal: a guard killed by SIGKILL cannot sweep, the kernel does."""
    with Launched([sys.executable, "-c", "import time; time.sleep(60)"]) as prog:
        os.kill(prog.guard_pid, signal.SIGKILL)
        assert prog.wait(30) == "exited"
        assert not alive(prog.pid)
    assert prog.result().returncode is None  # the status died with the guard


@linux_only
def test_a_guard_whose_parent_is_already_gone_starts_nothing(tmp_path):
    """The race PR_SET_PDEATHSIG leaves open: PerfScout died before the guard set it."""
    marker = tmp_path / "ran"
    r, w = os.pipe()
    life_r, life_w = os.pipe()
    argv = [sys.executable, "-I", "-S", str(GUARD), "tok", "1", str(w), str(life_r), "--", "touch", str(marker)]
    cp = subprocess.run(argv, pass_fds=(w, life_r), timeout=60, capture_output=True)
    for fd in (w, life_r, life_w):
        os.close(fd)
    os.close(r)
    assert cp.returncode == 1 and not marker.exists()


@linux_only
def test_guard_usage_error_is_one_line():
    cp = subprocess.run([sys.executable, "-I", "-S", str(GUARD), "tok"], capture_output=True, text=True, timeout=60)
    assert cp.returncode == 2
    assert cp.stderr.strip().splitlines() == [cp.stderr.strip()] and cp.stderr.startswith("usage:")


def _custom_events(node_fn, state: dict) -> list[dict]:
    """The "custom" stream events a node emits inside a real one-node LangGraph run."""
    from typing import TypedDict

    from langgraph.graph import END, START, StateGraph

    class S(TypedDict, total=False):
        done: bool

    g = StateGraph(S)
    g.add_node("n", lambda s: (node_fn(), {"done": True})[1])
    g.add_edge(START, "n")
    g.add_edge("n", END)
    return [ev for ev in g.compile().stream(state, stream_mode="custom")]


def test_a_timed_startup_run_reports_its_deadline_for_each_launch(tmp_path):
    from nodes.collect.launches import measure_startup
    from nodes.collect.options import CollectOptions
    from nodes.collect.target import parse_target

    (tmp_path / "quick.py").write_text("print('hi')\n")
    opts = CollectOptions(timeout_s=42.0, startup_runs=2, importtime=False)
    target = parse_target("quick.py", tmp_path)
    (tmp_path / "run").mkdir()
    events = _custom_events(lambda: measure_startup(target, tmp_path / "run", opts), {})
    deadlines = [e for e in events if e.get("deadline_s") is not None]
    assert [(e["progress"], e["deadline_s"]) for e in deadlines] == [("startup", 42.0), ("startup", 42.0)]
    assert "launch 1 of 2" in deadlines[0]["message"] and "quick.py" in deadlines[0]["message"]


def test_a_profiled_run_reports_its_deadline(tmp_path):
    from nodes.collect.options import CollectOptions
    from nodes.collect.profile import collect_profile
    from nodes.collect.target import parse_target

    (tmp_path / "tool").write_text("#!/bin/sh\necho hi\n")
    (tmp_path / "tool").chmod(0o755)
    opts = CollectOptions(timeout_s=17.0, use_perf=False)
    target = parse_target("./tool", tmp_path)
    (tmp_path / "run").mkdir()
    events = _custom_events(lambda: collect_profile(target, tmp_path / "run", opts), {})
    assert [(e["progress"], e["deadline_s"]) for e in events if "deadline_s" in e] == [("collect", 17.0)]


def test_the_status_protocol_is_written_and_read_in_guard_py():
    """guard.py defines the status lines and their parser (the runner only calls it), and the
    run token's variable once."""
    from nodes.collect import guard

    st = guard.parse_status(guard.status_started(4242, 12.5))
    assert (st.kind, st.pid, st.at) == ("pid", 4242, 12.5)
    st = guard.parse_status(guard.status_failed(2, "No such file\nor directory"))
    assert (st.kind, st.code, st.message) == ("err", 2, "No such file or directory")
    st = guard.parse_status(guard.status_exit(-9, 99.25))
    assert (st.kind, st.code, st.at) == ("exit", -9, 99.25)
    assert guard.parse_status(guard.status_swept([3, 4, 5])).pids == (3, 4, 5)
    for junk in ("", "pid x 1.0", "exit 1", "hello world"):
        assert guard.parse_status(junk) is None
    assert runner.TOKEN_VAR is guard.TOKEN_VAR
    source = (REPO / "nodes" / "collect" / "runner.py").read_text()
    assert "TOKEN_VAR =" not in source and "words[" not in source and 'split(" ", 2)' not in source
