"""The collector and startup nodes on real programs: permission, questions, typed failures,
py-spy missing or refused, and real profiles of the examples."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

from graph.enums import ErrorKind, Node
from graph.policy import choose_next_after_stage, stage_view
from graph.enums import NextStep
from nodes import collector, startup
from nodes.collect.options import CollectOptions
from nodes.collect.profile import collect_profile
from nodes.collect.rundir import open_run_dir
from nodes.collect.target import parse_target
from nodes.framework.context import NodeContext
from tests.helpers.processes import alive

REPO = Path(__file__).resolve().parents[1]
PYSPY = Path(sys.executable).parent / "py-spy"
needs_pyspy = pytest.mark.skipif(not PYSPY.exists(), reason="py-spy is not installed next to the interpreter")
needs_setpriv = pytest.mark.skipif(
    shutil.which("setpriv") is None or os.geteuid() != 0, reason="simulating a ptrace refusal needs root and setpriv"
)


def ctx(tmp_path: Path, **extra) -> NodeContext:
    timeout = extra.pop("timeout", 30.0)
    runs = extra.pop("runs", 5)
    return NodeContext(runs_dir=str(tmp_path / "runs"), run_timeout_s=timeout, startup_runs=runs, **extra)


def state(tmp_path: Path, target: str | None, **kw) -> dict:
    s = {"workspace": str(kw.pop("workspace", tmp_path)), "allow_run": True, "target": target}
    s.update(kw)
    return s


def test_the_context_s_collection_knobs_reach_the_options_as_they_are():
    """CollectKnobs (nodes/framework/context.py) is declared once: neither NodeContext nor
    CollectOptions restates a knob, and every knob the context sets is the collection's."""
    import dataclasses

    from nodes.framework.context import CollectKnobs

    knobs = {f.name for f in dataclasses.fields(CollectKnobs)}
    assert knobs and not knobs & (set(vars(NodeContext)["__annotations__"]) | set(vars(CollectOptions)["__annotations__"]))
    given = dict(pyspy_path="/opt/py-spy", pyspy_rate=250, pyspy_native=True, pyspy_idle=False, use_perf=False,
                 perf_path="/opt/perf", ready_regex="listening", ready_port=8080, ready_host="::1", importtime=False)
    assert set(given) == knobs
    opts = CollectOptions.from_context(NodeContext(**given))
    assert {k: getattr(opts, k) for k in knobs} == given


def write(tmp_path: Path, name: str, code: str) -> Path:
    p = tmp_path / name
    p.write_text(textwrap.dedent(code))
    return p


def _no_survivors(pids: list[int], timeout: float = 5.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end and any(alive(p) for p in pids):
        time.sleep(0.05)
    return not any(alive(p) for p in pids)


def _speedscope_frames(path: str) -> list[dict]:
    with open(path) as f:
        return json.load(f)["shared"]["frames"]


def _function_lines(path: Path, name: str) -> range:
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return range(node.lineno, node.end_lineno + 1)
    raise AssertionError(f"{name} not in {path}")


# --------------------------------------------------------------------------------------
# Permission and questions: nothing runs.
# --------------------------------------------------------------------------------------

MARKER_PROGRAM = """
import pathlib, sys
pathlib.Path(sys.argv[1]).write_text("ran")
"""


@pytest.mark.parametrize("make", [collector.make, startup.make])
def test_no_permission_runs_nothing_and_is_a_permission_error(tmp_path, make):
    write(tmp_path, "marker.py", MARKER_PROGRAM)
    st = state(tmp_path, f"marker.py {tmp_path / 'ran.txt'}", allow_run=False)
    out = make(ctx(tmp_path))(st)
    assert out["last_error"]["kind"] == ErrorKind.PERMISSION.value
    assert "--allow-run" in out["last_error"]["message"]
    assert not (tmp_path / "ran.txt").exists()
    assert not (tmp_path / "runs").exists()


def test_allowlisted_program_runs_without_allow_run(tmp_path):
    write(tmp_path, "marker.py", MARKER_PROGRAM)
    st = state(tmp_path, f"marker.py {tmp_path / 'ran.txt'}", allow_run=False)
    c = NodeContext(runs_dir=str(tmp_path / "runs"), allowlist=("marker.py",), startup_runs=1)
    out = startup.make(c)(st)
    assert (tmp_path / "ran.txt").read_text() == "ran"
    assert out["allow_run"] is True
    assert (out.get("last_error") or {}).get("kind") != ErrorKind.PERMISSION.value
    assert choose_next_after_stage(stage_view({**st, **out}, Node.STARTUP)).step is not NextStep.REJECT


@pytest.mark.parametrize("make, node", [(collector.make, Node.COLLECTOR), (startup.make, Node.STARTUP)])
def test_no_target_asks_the_user_and_drops_an_earlier_collection(tmp_path, make, node):
    st = state(tmp_path, None, collected={"kind": "profile", "paths": {"profile": "/old/run.json"}})
    out = make(ctx(tmp_path))(st)
    assert out["missing"] == ["target"]
    assert out["question"]["field"] == "target" and out["question"]["for_node"] == node.value
    assert out["collected"] is None
    decision = choose_next_after_stage(stage_view({**st, **out}, node))
    assert decision.step is NextStep.ASK_USER


# --------------------------------------------------------------------------------------
# Bad targets: a validation error that says what is wrong.
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "target, words",
    [
        ("nope.py", "no such file"),
        ("./data.bin", "not executable"),
        ("no-such-command-xyz --flag", "command not found"),
        ("../outside.py", "outside the workspace"),
        ("python 'unclosed", "cannot read the command"),
    ],
)
def test_bad_targets_are_validation_errors(tmp_path, target, words):
    (tmp_path / "data.bin").write_bytes(b"\x00\x01")
    out = collector.make(ctx(tmp_path))(state(tmp_path, target))
    assert out["last_error"]["kind"] == ErrorKind.VALIDATION.value
    assert words in out["last_error"]["message"]
    decision = choose_next_after_stage(stage_view({**state(tmp_path, target), **out}, Node.COLLECTOR))
    assert decision.step is NextStep.FAIL


def test_nonzero_exit_reports_its_stderr_tail_and_records_the_run(tmp_path):
    write(tmp_path, "crash.py", "import sys\nprint('config file missing: app.toml', file=sys.stderr)\nsys.exit(4)\n")
    out = collector.make(ctx(tmp_path))(state(tmp_path, "crash.py"))
    err = out["last_error"]
    assert err["kind"] == ErrorKind.VALIDATION.value
    assert "exited with status 4" in err["message"] and "config file missing: app.toml" in err["message"]
    record = json.loads((Path(out["run_dir"]) / "run.json").read_text())
    assert record["exit_code"] == 4 and record["outcome"] == "exited"


HANGING_FORKER = """
import os, subprocess, sys, time
kids = [subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"]) for _ in range(2)]
if os.fork() == 0:
    os.setsid()
    time.sleep(120)
    os._exit(0)
open(sys.argv[1], "w").write(" ".join(str(p) for p in [os.getpid()] + [k.pid for k in kids]))
while True:
    time.sleep(0.05)
"""


@needs_pyspy
def test_a_program_that_outlives_the_limit_is_profiled_for_the_limit_and_no_process_survives(tmp_path):
    write(tmp_path, "hang.py", HANGING_FORKER)
    pids_file = tmp_path / "pids"
    out = collector.make(ctx(tmp_path, timeout=3.0))(state(tmp_path, f"hang.py {pids_file}"))
    assert out.get("last_error") is None, out.get("last_error")
    summary = out["collected"]["summary"]
    assert summary["stopped_at_limit_s"] == 3.0 and summary["pyspy_samples"] > 0
    assert "profile" in out["collected"]["paths"] and "series" in out["collected"]["paths"]
    note = next(n for n in summary["notes"] if "run limit" in n)
    assert "3 s run limit" in note and "PERFSCOUT_RUN_TIMEOUT=" in note
    pids = [int(x) for x in pids_file.read_text().split()]
    record = json.loads((Path(out["run_dir"]) / "run.json").read_text())
    assert record["outcome"] == "timeout"
    assert set(pids) <= set(record["stopped_pids"])
    assert _no_survivors(pids)
    # py-spy is not left behind either
    assert not [p for p in psutil.process_iter(["name", "cmdline"]) if str(tmp_path) in " ".join(p.info["cmdline"] or [])]


def test_py_spy_missing_skips_with_a_clear_message_and_records_the_run(tmp_path):
    write(tmp_path, "marker.py", MARKER_PROGRAM)
    c = ctx(tmp_path, pyspy_path=str(tmp_path / "no" / "py-spy"))
    out = collector.make(c)(state(tmp_path, f"marker.py {tmp_path / 'ran.txt'}"))
    assert out["skipped"]["node"] == Node.COLLECTOR.value
    assert "py-spy was not found" in out["skipped"]["reason"] and "pip install py-spy" in out["skipped"]["reason"]
    record = json.loads((Path(out["run_dir"]) / "run.json").read_text())
    assert record["error"]["kind"] == ErrorKind.UNAVAILABLE.value
    assert not (tmp_path / "ran.txt").exists()


@needs_pyspy
@needs_setpriv
def test_py_spy_refused_ptrace_is_retryable_and_leaves_nothing_running(tmp_path):
    """py-spy run as an unprivileged user cannot ptrace a root-owned program: a real refusal."""
    wrapper = write(
        tmp_path,
        "py-spy-nobody",
        f"""#!/bin/sh
        exec setpriv --reuid=65534 --regid=65534 --clear-groups {PYSPY} "$@"
        """,
    )
    wrapper.write_text(wrapper.read_text().lstrip())
    wrapper.chmod(0o755)
    write(tmp_path, "hang.py", HANGING_FORKER)
    pids_file = tmp_path / "pids"
    c = ctx(tmp_path, pyspy_path=str(wrapper), timeout=30.0)
    st = state(tmp_path, f"hang.py {pids_file}")
    out = collector.make(c)(st)
    err = out["last_error"]
    assert err["kind"] == ErrorKind.RETRYABLE.value
    assert "py-spy could not attach" in err["message"] and "ptrace" in err["message"]
    assert choose_next_after_stage(stage_view({**st, **out}, Node.COLLECTOR)).step is NextStep.RETRY
    record = json.loads((Path(out["run_dir"]) / "run.json").read_text())
    assert record["outcome"] == "profiler failed"
    assert _no_survivors([int(x) for x in pids_file.read_text().split()])


@needs_pyspy
def test_py_spy_that_looked_before_python_was_up_attaches_again(tmp_path):
    """A launcher that reaches Python only after a while (pyenv's bash shim, a wrapper script;
    on a loaded machine even a plain fork + exec): the real py-spy finds no Python in the
    process ("No python processes found", after its own ~2.5 s wait). The process had no Python
    loaded when py-spy looked — no refusal — so it attaches again and the attempt succeeds,
    however long the launcher took."""
    shim = tmp_path / "bin" / "python3"
    shim.parent.mkdir()
    shim.write_text(f'#!/bin/sh\nsleep 4\nexec "{sys.executable}" "$@"\n')
    shim.chmod(0o755)
    write(tmp_path, "tiny.py", "import time\nt = time.time()\nwhile time.time() - t < 3.0:\n    sum(range(1000))\n")
    out = collector.make(ctx(tmp_path))(state(tmp_path, "bin/python3 tiny.py"))
    assert out.get("last_error") is None, out.get("last_error")
    assert out["attempts"][Node.COLLECTOR.value] == 1
    record = json.loads((Path(out["run_dir"]) / "run.json").read_text())
    assert record["tools"]["py-spy"]["ok"] and record["tools"]["py-spy"]["samples"] > 0
    assert any("attached again" in n for n in record["notes"]), record["notes"]


def test_python_loaded_tells_a_launcher_from_the_interpreter():
    from nodes.collect.pyspy import ATTACH_GRACE_S, looked_too_early, python_loaded

    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        assert python_loaded(os.getpid()) is True
        assert python_loaded(sleeper.pid) is False
    finally:
        sleeper.kill()
        sleeper.wait()
    assert python_loaded(sleeper.pid) is None  # gone: /proc cannot tell
    late = ATTACH_GRACE_S + 10
    assert looked_too_early(False, late) and not looked_too_early(True, late)
    assert not looked_too_early(None, late) and looked_too_early(True, 0.1)


def test_a_refusal_is_not_mistaken_for_python_not_being_up_yet():
    from nodes.collect.pyspy import interpreter_not_up

    assert interpreter_not_up("No python processes found in process 21416 or any of its subprocesses")
    assert not interpreter_not_up("Permission Denied: Try running again with elevated permissions")
    assert not interpreter_not_up("Failed to find python version from target process")


# --------------------------------------------------------------------------------------
# Real profiles.
# --------------------------------------------------------------------------------------


@needs_pyspy
def test_profile_of_slow_app_samples_the_planted_quadratic_line(tmp_path):
    t = parse_target("examples/slow_app.py 16000", REPO)
    run_dir = open_run_dir(None, str(tmp_path / "runs"), None, "profile")
    got = collect_profile(t, run_dir, CollectOptions(timeout_s=60))
    files = got["files"]
    assert got["summary"]["exit_code"] == 0 and got["summary"]["pyspy_samples"] > 0
    frames = _speedscope_frames(files["profile"])
    planted = _function_lines(REPO / "examples/slow_app.py", "unique_customers")
    hits = [f for f in frames if f["name"] == "unique_customers"]
    assert hits and all(f["file"] == str(REPO / "examples/slow_app.py") for f in hits)
    assert any(f["line"] in planted for f in hits)
    series = json.loads(Path(files["series"]).read_text())
    assert series["perfscout"] == "psutil-series" and series["pid"] == got["summary"]["pid"]
    cpu = series["series"]["cpu_percent"]["points"]
    assert len(cpu) >= 2 and max(v for _, v in cpu) > 0
    assert series["threads"] and series["threads"][0]["tid"] == series["pid"]
    assert set(got["paths"]) <= {"profile", "series", "perf_stat"}


@needs_pyspy
def test_profile_of_sleepy_worker_puts_the_waiting_on_the_sleep_line(tmp_path):
    """py-spy runs with --idle, so a sleep in the hot path is where the samples land."""
    t = parse_target("examples/sleepy_worker.py 40", REPO)
    got = collect_profile(t, open_run_dir(None, str(tmp_path / "runs"), None, "profile"), CollectOptions())
    doc = json.loads(Path(got["files"]["profile"]).read_text())
    frames = doc["shared"]["frames"]
    leaves: dict[tuple[str, int], int] = {}
    for prof in doc["profiles"]:
        for stack in prof["samples"]:
            leaf = frames[stack[-1]]
            leaves[(leaf["name"], leaf["line"])] = leaves.get((leaf["name"], leaf["line"]), 0) + 1
    (name, line), _ = max(leaves.items(), key=lambda kv: kv[1])
    source = (REPO / "examples/sleepy_worker.py").read_text().splitlines()
    assert name == "throttle" and "time.sleep" in source[line - 1]


def test_program_exiting_at_once_is_recorded_without_error(tmp_path):
    write(tmp_path, "quick.sh", "#!/bin/sh\nexit 0\n").chmod(0o755)
    t = parse_target("./quick.sh", tmp_path)
    run_dir = open_run_dir(None, str(tmp_path / "runs"), None, "profile")
    got = collect_profile(t, run_dir, CollectOptions())
    assert got["summary"]["exit_code"] == 0 and got["summary"]["python"] is False
    assert Path(got["files"]["series"]).exists()
    assert json.loads((run_dir / "run.json").read_text())["outcome"] == "exited"


@needs_pyspy
def test_collector_node_hands_analysable_paths_over(tmp_path):
    out = collector.make(ctx(tmp_path))(state(tmp_path, "examples/slow_app.py 8000", workspace=REPO))
    assert out["last_error"] is None
    c = out["collected"]
    assert c["kind"] == "profile" and "profile" in c["paths"] and "series" in c["paths"]
    assert choose_next_after_stage(stage_view({**state(tmp_path, "x"), **out}, Node.COLLECTOR)).step is NextStep.CONTINUE


# --------------------------------------------------------------------------------------
# Start-up.
# --------------------------------------------------------------------------------------


def test_startup_of_slow_start_times_each_launch_and_keeps_the_import_log(tmp_path):
    out = startup.make(ctx(tmp_path, runs=3))(state(tmp_path, "examples/slow_start.py", workspace=REPO))
    run_dir = Path(out["run_dir"])
    doc = json.loads((run_dir / "startup-runs.json").read_text())
    assert doc["perfscout"] == "startup-runs"
    assert [r["kind"] for r in doc["runs"]] == ["cold", "warm", "warm"]
    assert all(r["exit_code"] == 0 and r["total_ms"] > 0 for r in doc["runs"])
    s = json.loads((run_dir / "run.json").read_text())["summary"]
    assert s["first_ms"] == pytest.approx(doc["runs"][0]["total_ms"], abs=0.01) and s["runs"] == 3
    assert s["min_ms"] <= s["median_ms"] <= s["max_ms"] and s["spread_ms"] == pytest.approx(s["max_ms"] - s["min_ms"], abs=0.02)
    hint, *log = (run_dir / "importtime.log").read_text().splitlines()
    assert json.loads(hint.removeprefix("# search path: ")) == [str(REPO / "examples")]
    assert any(line.rstrip().endswith("| tax_tables") for line in log)
    assert all(line.startswith("import time:") for line in log)


def test_startup_ready_by_output_line(tmp_path):
    write(
        tmp_path,
        "server.py",
        """
        import time
        time.sleep(0.3)
        print("listening on :8080", flush=True)
        time.sleep(120)
        """,
    )
    c = ctx(tmp_path, runs=2, ready_regex=r"listening on", importtime=False)
    out = startup.make(c)(state(tmp_path, "server.py"))
    record = json.loads((Path(out["run_dir"]) / "run.json").read_text())
    assert [r["outcome"] for r in record["runs"]] == ["ready", "ready"]
    # each launch was stopped once ready: the server is not left running
    assert all(r["stopped_pids"] for r in record["runs"])
    assert _no_survivors([p for r in record["runs"] for p in r["stopped_pids"]])


def test_startup_ready_by_port(tmp_path):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    write(
        tmp_path,
        "listen.py",
        f"""
        import socket, time
        time.sleep(0.2)
        srv = socket.socket(); srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        srv.bind(("127.0.0.1", {port})); srv.listen()
        time.sleep(120)
        """,
    )
    c = ctx(tmp_path, runs=2, ready_port=port, importtime=False)
    out = startup.make(c)(state(tmp_path, "listen.py"))
    record = json.loads((Path(out["run_dir"]) / "run.json").read_text())
    assert [r["outcome"] for r in record["runs"]] == ["ready", "ready"]
    assert record["ready_by"] == f"port 127.0.0.1:{port} accepting"


def test_startup_exit_before_ready_and_bad_regex_are_validation_errors(tmp_path):
    write(tmp_path, "quick.py", "print('bye')\n")
    out = startup.make(ctx(tmp_path, runs=2, ready_regex="never printed"))(state(tmp_path, "quick.py"))
    assert out["last_error"]["kind"] == ErrorKind.VALIDATION.value
    assert "before it was ready" in out["last_error"]["message"]
    out = startup.make(ctx(tmp_path, runs=2, ready_regex="(unclosed"))(state(tmp_path, "quick.py"))
    assert out["last_error"]["kind"] == ErrorKind.VALIDATION.value and "not a regex" in out["last_error"]["message"]


def test_startup_hang_is_a_timeout(tmp_path):
    write(tmp_path, "hang.py", "import time\ntime.sleep(120)\n")
    out = startup.make(ctx(tmp_path, runs=3, timeout=1.0))(state(tmp_path, "hang.py"))
    assert out["last_error"]["kind"] == ErrorKind.TIMEOUT.value
    record = json.loads((Path(out["run_dir"]) / "run.json").read_text())
    assert len(record["runs"]) == 1 and record["runs"][0]["outcome"] == "timeout"
    assert _no_survivors(record["runs"][0]["stopped_pids"])


def test_android_package_without_local_target_never_runs_a_local_program(tmp_path, monkeypatch):
    # A PATH without adb: a real adb here would start a server on port 5037 that outlives the test.
    empty = tmp_path / "no-adb"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    st = state(tmp_path, None, package="com.demo.shop", allow_run=False)
    out = startup.make(ctx(tmp_path))(st)
    assert not (tmp_path / "runs").exists()
    assert out["skipped"]["node"] == Node.STARTUP.value and "adb" in out["skipped"]["reason"]


def test_a_package_name_given_as_the_target_is_measured_as_android(tmp_path):
    out = startup.make(ctx(tmp_path))(state(tmp_path, "com.demo.shop", allow_run=False))
    assert out["package"] == "com.demo.shop" and out["target"] is None
    assert not (tmp_path / "runs").exists()


def test_retry_in_the_same_turn_never_overwrites_the_first_run(tmp_path):
    write(tmp_path, "crash.py", "import sys\nsys.exit(2)\n")
    run_dir = tmp_path / "turn"
    first = collector.make(ctx(tmp_path))(state(tmp_path, "crash.py", run_dir=str(run_dir)))
    second = collector.make(ctx(tmp_path))(state(tmp_path, "crash.py", run_dir=str(run_dir)))
    assert first["run_dir"] == str(run_dir)
    assert second["run_dir"] != first["run_dir"] and second["run_dir"].startswith(str(run_dir))
    assert (run_dir / "run.json").exists() and (Path(second["run_dir"]) / "run.json").exists()


def test_unwritable_runs_folder_is_a_one_line_error_not_a_traceback(tmp_path):
    write(tmp_path, "ok.py", "print('hi')\n")
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where the runs folder should be")
    c = NodeContext(runs_dir=str(blocker / "runs"), startup_runs=1)
    out = startup.make(c)(state(tmp_path, "ok.py"))
    assert out["last_error"]["kind"] == ErrorKind.UNAVAILABLE.value
    assert "could not write the run folder" in out["last_error"]["message"]


def test_full_analysis_of_an_android_package_points_to_a_device_trace(tmp_path):
    st = state(tmp_path, None, package="com.demo.shop", allow_run=False)
    out = collector.make(ctx(tmp_path))(st)
    assert out["skipped"]["node"] == Node.COLLECTOR.value and "trace" in out["skipped"]["reason"]
    assert choose_next_after_stage(stage_view({**st, **out}, Node.COLLECTOR)).step is NextStep.SKIP
    assert not (tmp_path / "runs").exists()
