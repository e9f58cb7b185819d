"""One writer per thread, crashed turns that say so, and thread ids and stored text that are safe
(issue 14, items 3, 5 and part of 7) — with real ``perfscout`` processes, on both stores.

- Four ``perfscout ask … --thread same`` at once: before the thread lock all four exited 0 and
  the thread kept three of the four turns (the checkpoint history forked, the last writer won).
  Now the turns run one at a time (every message is in the thread, the history is one chain),
  or, past ``PERFSCOUT_THREAD_WAIT``, a turn exits 1 with "thread same is busy" and adds nothing.
- A turn SIGKILLed while it holds the thread leaves it free at once (the lock dies with the
  process): the next turn, told not to wait at all, runs.
- A turn SIGKILLed mid-collection reads ``incomplete`` before ``collector`` (it used to read
  ``done`` with no answer) and ``perfscout resume T`` continues it — only with ``--allow-run``
  again (without it nothing runs). Ctrl-C: exit 130, the line says how to continue, the thread
  reads ``incomplete`` before the node it stopped.

The model is tests/fault_server.py (``slow-<s>-<answer>`` keeps a turn inside its fallback call,
holding the thread, for as long as a test needs). PostgreSQL comes from tests/postgres_server.py.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import postgres_server
from app.api import PerfScout
from app.errors import RequestError, ThreadBusy
from app.settings import Settings
from app.threads import FileThreadLocks, PostgresThreadLocks
from fault_server import FaultServer
from tests.helpers.env import scrubbed_environ

ROOT = Path(__file__).resolve().parent.parent
PERFSCOUT = Path(sys.executable).with_name("perfscout")

pytestmark = pytest.mark.skipif(not PERFSCOUT.exists(), reason="the perfscout console script is not installed")


@pytest.fixture(scope="module")
def model():
    with FaultServer() as s:
        yield s


@pytest.fixture(params=["sqlite", "postgres"])
def store(request, tmp_path) -> str:
    """The checkpoint target: a SQLite file, or a fresh PostgreSQL database."""
    if request.param == "sqlite":
        return str(tmp_path / "home" / "checkpoints.sqlite")
    return postgres_server.require().create_database("threads")


def _env(tmp_path: Path, store: str, **extra: str) -> dict[str, str]:
    return scrubbed_environ(PERFSCOUT_HOME=str(tmp_path / "home"), PERFSCOUT_CHECKPOINT_URL=store,
                            PYTHONPATH=str(ROOT), **extra)


def _model_env(model: FaultServer, mode: str) -> dict[str, str]:
    return {"OPENAI_BASE_URL": model.url(mode), "OPENAI_API_KEY": "x", "PERFSCOUT_LLM_TIMEOUT": "120"}


def _start(env: dict[str, str], *args: str | bytes, cwd: Path | None = None) -> subprocess.Popen:
    return subprocess.Popen([str(PERFSCOUT), *args], env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _run(env: dict[str, str], *args: str | bytes, cwd: Path | None = None, timeout: float = 180):
    p = subprocess.run([str(PERFSCOUT), *args], env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=timeout)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def _one_line(stderr: str) -> str:
    assert "Traceback" not in stderr and "unexpected error" not in stderr, stderr
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    return lines[0]


def _thread(store: str, tmp_path: Path, tid: str) -> tuple[list[str], list[tuple[str, str | None]]]:
    """The thread's human messages, and (checkpoint id, parent id) of every checkpoint."""
    settings = Settings(state_dir=tmp_path / "home", checkpoint_url=store, offline=True)
    with PerfScout(settings, llm=None) as ps:
        values = ps.graph.get_state(ps.config(tid)).values or {}
        humans = [str(m.content) for m in values.get("messages") or [] if m.type == "human"]
        chain = [
            (t.config["configurable"]["checkpoint_id"],
             (t.parent_config or {}).get("configurable", {}).get("checkpoint_id"))
            for t in ps.checkpointer.list(ps.config(tid))
        ]
    return humans, chain


def _assert_one_chain(chain: list[tuple[str, str | None]]) -> None:
    """A forked history has two checkpoints with the same parent; one writer at a time never does."""
    parents = [p for _, p in chain]
    assert len(parents) == len(set(parents)), "the thread's checkpoint history forked"


def _wait_for(cond, what: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


# ----------------------------------------------------------------------------------------------
# Item 3: one writer per thread
# ----------------------------------------------------------------------------------------------


def test_four_concurrent_turns_on_one_thread_all_land_one_after_another(tmp_path, store, model):
    env = _env(tmp_path, store, PERFSCOUT_THREAD_WAIT="300", **_model_env(model, "slow-1-ok"))
    texts = [f"what is jank? (turn {i})" for i in range(4)]
    procs = [_start(env, "ask", t, "--thread", "same", cwd=tmp_path) for t in texts]
    outs = [p.communicate(timeout=300) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err.decode()
        assert b"ok" in out
    humans, chain = _thread(store, tmp_path, "same")
    assert sorted(humans) == sorted(texts), "a turn was lost"
    _assert_one_chain(chain)


def test_a_second_turn_waits_then_says_busy_and_a_killed_holder_frees_the_thread_at_once(tmp_path, store, model):
    holder_mode = f"slow-90-held-{os.getpid()}-{len(model.requests())}"
    holder = _start(_env(tmp_path, store, **_model_env(model, holder_mode)),
                    "ask", "what is jank? (holder)", "--thread", "same", cwd=tmp_path)
    try:
        # The holder is inside its model call, so it holds the thread.
        _wait_for(lambda: model.requests(holder_mode) or holder.poll() is not None, "the holder's model call")
        assert holder.poll() is None, holder.communicate()[1].decode()

        late_env = _env(tmp_path, store, PERFSCOUT_THREAD_WAIT="1", **_model_env(model, "label-late"))
        late = [_start(late_env, "ask", f"what is jank? (late {i})", "--thread", "same", cwd=tmp_path)
                for i in range(3)]
        for p in late:
            out, err = p.communicate(timeout=180)
            assert p.returncode == 1, (out, err)
            assert "thread same is busy" in _one_line(err.decode())
            assert out == b""  # nothing of the turn ran
        assert model.requests("label-late") == []

        code, out, err = _run(_env(tmp_path, store), "threads", "show", "same", "--json", cwd=tmp_path)
        assert code == 0 and json.loads(out)["status"] == "running", (out, err)

        holder.send_signal(signal.SIGKILL)
        holder.wait(30)
        # Not a moment's wait allowed: the lock must already be free.
        code, out, err = _run(_env(tmp_path, store, PERFSCOUT_THREAD_WAIT="0", **_model_env(model, "label-after")),
                              "ask", "what is jank? (after)", "--thread", "same", cwd=tmp_path)
        assert code == 0, err
        assert "after" in out
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()
    humans, chain = _thread(store, tmp_path, "same")
    assert humans == ["what is jank? (holder)", "what is jank? (after)"]
    _assert_one_chain(chain)


def _locks(store: str):
    return PostgresThreadLocks(store) if store.startswith("postgresql://") else FileThreadLocks(store + ".locks")


def test_the_lock_excludes_turns_of_one_process_and_bounds_the_wait(store):
    """Two Python threads of one process (the API shared by an MCP server) exclude each other as
    two processes do; the wait is bounded; ``held`` sees the holder."""
    locks = _locks(store)
    entered, release = threading.Event(), threading.Event()

    def hold() -> None:
        with locks.hold("t1", 0):
            entered.set()
            release.wait(30)

    t = threading.Thread(target=hold)
    t.start()
    try:
        assert entered.wait(30)
        assert locks.held(["t1", "t2"]) == {"t1"}
        start = time.monotonic()
        with pytest.raises(ThreadBusy, match="thread t1 is busy"):
            with locks.hold("t1", 0.3):
                pass
        assert time.monotonic() - start >= 0.3  # it did wait, not fail at once
        with locks.hold("t2", 0):  # another thread is not blocked
            pass
    finally:
        release.set()
        t.join(30)
    with locks.hold("t1", 0):
        pass
    assert locks.held(["t1"]) == set()


def test_deleting_a_thread_while_a_turn_holds_it_is_busy(tmp_path):
    settings = Settings(state_dir=tmp_path / "home", offline=True, thread_wait_s=0.2)
    with PerfScout(settings, llm=None, workspace=tmp_path) as ps:
        tid = ps.ask("你好").thread_id
        with ps.locks.hold(tid, 0):
            with pytest.raises(ThreadBusy):
                ps.delete_thread(tid)
            assert ps.thread(tid).status == "running"
        assert ps.delete_thread(tid) is True


# ----------------------------------------------------------------------------------------------
# Item 5: a crashed turn is visible and resumable
# ----------------------------------------------------------------------------------------------

PROGRAM = '''
import os, time
here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "runs.log"), "a") as f:
    f.write(f"{os.getpid()}\\n")
if not os.path.exists(os.path.join(here, "marker")):
    open(os.path.join(here, "marker"), "w").close()
    time.sleep(120)  # the first run is long: PerfScout is stopped meanwhile
t = time.time()
while time.time() - t < 0.4:
    sum(i * i for i in range(1000))
'''


def _runs(work: Path) -> int:
    log = work / "runs.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


def _start_collection(env: dict[str, str], work: Path, tid: str) -> subprocess.Popen:
    (work / "marker").unlink(missing_ok=True)
    p = _start(env, "ask", "帮我全面分析一下 prog.py 的性能", "--target", "prog.py", "--allow-run", "--thread", tid,
               cwd=work)
    _wait_for(lambda: (work / "marker").exists() or p.poll() is not None, "the program to start")
    assert p.poll() is None, p.communicate()[1].decode()
    return p


def test_a_turn_killed_mid_collection_reads_incomplete_and_resumes_only_with_allow_run(tmp_path):
    """Status and resume do not depend on the store (the lock tests above run on both); this
    runs on SQLite, whose file can be copied: the same killed turn is continued twice, without
    and with --allow-run."""
    (tmp_path / "prog.py").write_text(PROGRAM)
    db = tmp_path / "home" / "checkpoints.sqlite"
    env = _env(tmp_path, str(db), PERFSCOUT_RUN_TIMEOUT="60")

    p = _start_collection(env, tmp_path, "crash")
    p.send_signal(signal.SIGKILL)
    p.wait(30)
    code, out, _ = _run(env, "threads", "show", "crash", "--json", cwd=tmp_path)
    shown = json.loads(out)
    assert shown["status"] == "incomplete" and shown["stopped_before"] == "collector", shown
    assert shown["answer"] is None
    code, text, _ = _run(env, "threads", "show", "crash", cwd=tmp_path)
    assert "status   incomplete" in text and "stopped  before collector" in text
    assert "perfscout resume crash" in text
    _, listing, _ = _run(env, "threads", "list", cwd=tmp_path)
    assert "incomplete before collector" in listing
    copy = tmp_path / "copy.sqlite"
    copy.write_bytes(db.read_bytes())

    # An answer is not what it waits for; and without --allow-run nothing runs.
    code, _, err = _run(env, "resume", "crash", "prog.py", cwd=tmp_path)
    assert code == 2 and "no pending question" in _one_line(err)
    before = _runs(tmp_path)
    code, out, err = _run(env, "resume", "crash", cwd=tmp_path)
    assert code == 1, (out, err)
    assert "--allow-run" in out + err
    assert _runs(tmp_path) == before, "a resume without --allow-run ran the program"
    # refused before the stage ran: the turn is still incomplete, not failed
    code, listing, _ = _run(env, "threads", "show", "crash", cwd=tmp_path)
    assert "incomplete" in listing and "before collector" in listing

    # The same killed turn, continued with --allow-run: it ends like an uninterrupted one.
    env2 = _env(tmp_path, str(copy), PERFSCOUT_RUN_TIMEOUT="60")
    code, out, err = _run(env2, "resume", "crash", "--allow-run", "--json", cwd=tmp_path)
    assert code == 0, err
    done = json.loads(out)
    assert done["status"] == "done" and done["route"] == "full_analysis"
    assert done["route_history"] == ["orchestrator:full_analysis", "collector", "analyzer", "attributor", "reporter"]
    assert Path(done["report_paths"]["json"]).is_file() and "prog.py" in done["answer"]
    assert _runs(tmp_path) == before + 1
    code, _, err = _run(env2, "resume", "crash", cwd=tmp_path)
    assert code == 2 and "nothing to continue" in _one_line(err)


def test_ctrl_c_mid_collection_exits_130_and_the_turn_reads_incomplete(tmp_path):
    """Ctrl-C stops the running node at its next safe point (app/cancel.py): the thread reads
    ``incomplete`` before that node and continues from there (tests/test_stop_and_limit.py
    checks the process tree and the time)."""
    (tmp_path / "prog.py").write_text(PROGRAM)
    env = _env(tmp_path, str(tmp_path / "home" / "checkpoints.sqlite"), PERFSCOUT_RUN_TIMEOUT="5")
    p = _start_collection(env, tmp_path, "ctrlc")
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=120)
    assert p.returncode == 130
    assert "perfscout resume ctrlc" in _one_line(err.decode())
    _, out, _ = _run(env, "threads", "show", "ctrlc", "--json", cwd=tmp_path)
    shown = json.loads(out)
    assert shown["status"] == "incomplete" and "collector" in (shown["stopped_before"], shown["stopped_after"])
    code, out, err = _run(env, "resume", "ctrlc", "--allow-run", "--json", cwd=tmp_path)
    assert code == 0, err
    assert json.loads(out)["status"] == "done"


def test_a_resume_does_not_inherit_the_permission_of_the_call_that_asked(tmp_path, monkeypatch):
    """``ask(allow_run=True)`` asks which program; ``resume`` without allow_run must not run it."""
    monkeypatch.delenv("PERFSCOUT_ALLOWLIST", raising=False)
    (tmp_path / "prog.py").write_text(PROGRAM)
    settings = Settings(state_dir=tmp_path / "home", offline=True)
    with PerfScout(settings, llm=None, workspace=tmp_path) as ps:
        r = ps.ask("帮我全面分析一下性能", allow_run=True)
        assert r.status == "needs_input" and r.question["field"] == "target", r
        done = ps.resume(r.thread_id, "prog.py")
        assert done.status == "failed" and "--allow-run" in (done.answer or "") + (done.diagnosis or "")
    assert _runs(tmp_path) == 0


# ----------------------------------------------------------------------------------------------
# Item 7: thread ids and stored text
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("argv", [
    [b"ask", b"hi", b"--thread", b"a\xffb"],
    [b"resume", b"a\xffb", b"x"],
    [b"resume", b"a\xffb"],
    [b"threads", b"show", b"a\xffb"],
    [b"threads", b"delete", b"a\xffb", b"--yes"],
    [b"ask", b"hi", b"--thread", b"\x1b[2J"],
])
def test_a_thread_id_that_is_not_text_is_a_one_line_usage_error(tmp_path, argv):
    code, out, err = _run(_env(tmp_path, str(tmp_path / "home" / "checkpoints.sqlite")), *argv, cwd=tmp_path)
    assert code == 2, (out, err)
    assert "thread id" in _one_line(err)
    assert "\x1b" not in err


def test_continuing_an_unknown_thread_is_a_request_error(tmp_path):
    with PerfScout(Settings(state_dir=tmp_path / "home", offline=True), llm=None) as ps:
        with pytest.raises(RequestError, match="no thread 'nope'"):
            ps.continue_run("nope")
    code, _, err = _run(_env(tmp_path, str(tmp_path / "home" / "checkpoints.sqlite")), "resume", "nope", cwd=tmp_path)
    assert code == 2 and "no thread 'nope'" in _one_line(err)


def test_threads_list_and_show_escape_stored_terminal_sequences(tmp_path):
    env = _env(tmp_path, str(tmp_path / "home" / "checkpoints.sqlite"))
    nasty = "hi \x1b[2J\x1b]0;owned\x07 \u202eevil \x9b31m there"
    code, _, err = _run(env, "ask", nasty, "--thread", "esc", cwd=tmp_path)
    assert code == 0, err
    for args in (("threads", "list"), ("threads", "show", "esc")):
        code, out, _ = _run(env, *args, cwd=tmp_path)
        assert code == 0
        assert not any(c in out for c in "\x1b\x07\u202e\x9b"), out
        assert "\\x1b[2J" in out and "\\x07" in out and "\\u202e" in out and "\\x9b" in out
