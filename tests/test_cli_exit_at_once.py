"""`perfscout analyze FILE` ends its process as soon as the answer is printed (app/cli.py
``_exit_at_once``): the same stdout, stderr and exit code as a normal exit, every ``atexit``
callback run, a live thread waited for, and never under a test runner invoking the Typer app."""

from __future__ import annotations

import contextlib
import gc
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from typer.testing import CliRunner

from app import cli
from app.analyze_cmd import run
from tests.helpers.env import scrubbed_environ

ROOT = Path(__file__).resolve().parent.parent
TRACE = str(ROOT / "tests/data/perfetto/api32_startup_warm.perfetto-trace")

#: main() as the console script runs it, with an atexit callback and, optionally, a thread that
#: only ends once the main thread has (as a normal exit lets it: it waits for such threads).
_SCRIPT = """
import atexit, sys, threading
marker, thread, *argv = sys.argv[1:]
atexit.register(lambda: open(marker, "a").write("atexit\\n"))
if thread == "1":
    def late():
        threading.main_thread().join()
        open(marker, "a").write("thread\\n")
    threading.Thread(target=late).start()
from app.cli import main
sys.argv = ["perfscout", *argv]
main()
"""


def _main(tmp_path: Path, *argv: str, thread: bool = False) -> tuple[subprocess.CompletedProcess, list[str]]:
    marker = tmp_path / "marker"
    p = subprocess.run([sys.executable, "-c", _SCRIPT, str(marker), "1" if thread else "0", *argv],
                       env=scrubbed_environ(PERFSCOUT_HOME=str(tmp_path / "home")), cwd=ROOT,
                       stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)
    return p, marker.read_text().splitlines() if marker.exists() else []


def _in_process(*args, **kw) -> str:
    out = io.StringIO()
    assert run([TRACE], *args, out=out, **kw) == 0
    return out.getvalue()


def test_json_answer_and_atexit_as_a_normal_exit(tmp_path):
    p, marks = _main(tmp_path, "analyze", "--json", TRACE)
    assert p.returncode == 0, p.stderr
    assert p.stdout == _in_process(True)  # the whole document, flushed before the exit
    assert json.loads(p.stdout)["format"] == "perfetto"
    assert p.stderr == ""
    assert marks == ["atexit"]


def test_summary_and_the_alias_exit_the_same_way(tmp_path):
    p, marks = _main(tmp_path, "analyze", TRACE)
    assert p.returncode == 0, p.stderr
    assert p.stdout == _in_process(False)
    assert marks == ["atexit"]
    p, marks = _main(tmp_path, "inspect", "--json", TRACE)
    assert p.returncode == 0 and p.stdout == _in_process(True)
    assert marks == ["atexit", "atexit"]


def test_bad_input_keeps_its_line_and_exit_code(tmp_path):
    junk = tmp_path / "junk.perfetto-trace"
    junk.write_bytes(b"\x0a\x05hello")
    p, marks = _main(tmp_path, "analyze", "--json", str(junk))
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.startswith("perfscout: ") and len(p.stderr.splitlines()) == 1
    assert marks == ["atexit"]


def test_a_live_thread_is_waited_for(tmp_path):
    p, marks = _main(tmp_path, "analyze", "--json", TRACE, thread=True)
    assert p.returncode == 0 and p.stdout == _in_process(True)
    assert sorted(marks) == ["atexit", "thread"]  # the normal exit ran: it joined the thread first


def test_under_a_test_runner_the_command_returns_with_the_gc_back_on():
    assert gc.isenabled()
    res = CliRunner().invoke(cli.app, ["analyze", "--json", TRACE])
    assert res.exit_code == 0
    assert json.loads(res.stdout) == json.loads(_in_process(True))
    assert gc.isenabled()


def test_main_with_its_output_captured_in_process_exits_normally(monkeypatch):
    """A caller that runs main() in its own process and captures stdout (a timing harness)
    gets the answer and a SystemExit, as before; the process goes on."""
    monkeypatch.setattr(sys, "argv", ["perfscout", "analyze", "--json", TRACE])
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as e:
        cli.main()
    assert e.value.code == 0
    assert out.getvalue() == _in_process(True)
    assert gc.isenabled()
