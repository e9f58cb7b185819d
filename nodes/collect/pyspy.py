"""Records a running Python program's stacks with py-spy, as a speedscope profile.

py-spy attaches to the program PerfScout launched (``--pid``) instead of launching it: py-spy
``record -- cmd`` reports exit status 0 whatever the program returned, and the collector must
tell a crash from a clean exit. Attaching costs nothing measurable: py-spy's own launcher also
spawns first and attaches after, with the same retries (checked here: a 0.2 s function at the
very start of a script is sampled in full).
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from nodes.collect.runner import BoundedCapture, Launched

_WROTE = re.compile(r"Samples:\s*(\d+)\s+Errors:\s*(\d+)")
#: py-spy's failure lines: "Error: …", or "Permission Denied: …" when ptrace is refused.
_ERROR = re.compile(r"^((?:Error:|Permission Denied).*)$", re.M | re.I)
#: Seconds py-spy gets to write its file after the program ended.
FLUSH_TIMEOUT_S = 15.0


def find_pyspy(setting: str | None = None) -> str | None:
    """The py-spy binary: the configured path, else next to this interpreter, else on PATH.

    A configured path is used as is, never replaced by another copy: if a user points it
    somewhere, a silent fallback would hide their mistake.
    """
    if setting:
        p = Path(setting)
        return str(p) if p.is_file() and os.access(p, os.X_OK) else None
    beside = Path(sys.executable).parent / "py-spy"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("py-spy")


@dataclass
class PySpyOutcome:
    ok: bool
    path: str
    samples: int = 0
    errors: int = 0
    returncode: int | None = None
    #: py-spy's own error line, when it failed.
    message: str = ""
    log: str = ""


class PySpyRecorder:
    """py-spy ``record`` attached to ``pid``, writing speedscope JSON to ``out_path``."""

    def __init__(
        self,
        exe: str,
        pid: int,
        out_path: str,
        *,
        rate: int = 100,
        native: bool = False,
        idle: bool = True,
        subprocesses: bool = True,
    ):
        self.out_path = out_path
        self.argv = [exe, "record", "--format", "speedscope", "--output", out_path, "--pid", str(pid)]
        self.argv += ["--rate", str(int(rate)), "--full-filenames"]
        if subprocesses:
            self.argv.append("--subprocesses")
        if native:
            self.argv.append("--native")
        if idle:
            self.argv.append("--idle")
        self.proc = Launched(self.argv, capture_limit=64 * 1024)

    def running(self) -> bool:
        return self.proc.running()

    def finish(self, timeout_s: float = FLUSH_TIMEOUT_S) -> PySpyOutcome:
        """Wait for py-spy to notice the program ended and write its file (stopped if it hangs)."""
        if self.proc.wait(timeout_s) == "timeout":
            # py-spy writes what it has on Ctrl-C; SIGTERM would lose the profile.
            self.proc.interrupt()
            self.proc.wait(5.0)
        res = self.proc.result()
        return outcome_of(self.out_path, res.returncode, res.stdout, res.stderr)

    def abort(self) -> None:
        self.proc.stop()


def outcome_of(path: str, returncode: int | None, out: BoundedCapture, err: BoundedCapture) -> PySpyOutcome:
    log = (out.text() + "\n" + err.text()).strip()
    m = _WROTE.search(log)
    exists = os.path.isfile(path) and os.path.getsize(path) > 0
    if returncode == 0 and exists:
        return PySpyOutcome(
            True, path, int(m.group(1)) if m else 0, int(m.group(2)) if m else 0, returncode, "", log[-4000:]
        )
    em = _ERROR.search(log)
    message = em.group(1).removeprefix("Error:").strip() if em else (log.splitlines() or [f"exit status {returncode}"])[-1]
    return PySpyOutcome(False, path, 0, 0, returncode, message[:500], log[-4000:])


#: How often a py-spy that looked before the program's interpreter was up is started again,
#: how long to wait first, and the time after the launch within which such a failure is always
#: taken as "too early". A program is launched by fork + exec, often through a launcher that
#: reaches Python only later (pyenv's bash shim, a wrapper script); py-spy that looks before
#: Python is loaded gives up ("No python processes found in process N", after waiting ~2.5 s
#: with --subprocesses). The same words also mean a refusal (py-spy with --subprocesses cannot
#: read a process it may not ptrace), which must stay an attach failure. The two are told apart
#: by whether the process had Python loaded when that py-spy started looking (``python_loaded``),
#: not by the clock: on a loaded machine a launcher can take seconds to reach Python
#: (tests/test_collect_nodes.py, tests/test_stage_runner.py).
ATTACH_RESTARTS = 5
ATTACH_RESTART_DELAY_S = 0.2
ATTACH_GRACE_S = 1.5


def interpreter_not_up(message: str) -> bool:
    """Whether py-spy's error says it found no Python (yet, or because it was refused)."""
    return "no python processes found" in message.lower()


def python_loaded(pid: int) -> bool | None:
    """Whether process ``pid`` has a Python interpreter loaded: its executable or a library
    whose path names python (``/proc/PID/maps``). ``None`` where that cannot be read (not Linux,
    the process is gone): then only the clock can tell."""
    try:
        with open(f"/proc/{pid}/maps", "rb") as maps:
            return any(b"python" in line.lower() for line in maps if b"/" in line)
    except OSError:
        return None


def looked_too_early(loaded_at_start: bool | None, since_launch_s: float) -> bool:
    """Whether a py-spy that found no Python looked before the program's interpreter was up:
    the process had no Python loaded when it started, or it started just after the launch."""
    return loaded_at_start is False or since_launch_s < ATTACH_GRACE_S


def attach_hint(message: str) -> str:
    """What a user can do about a py-spy failure, judged from its message."""
    low = message.lower()
    if "permission denied" in low or "operation not permitted" in low or "os error 1)" in low:
        return (
            "the kernel refused ptrace: run PerfScout as the program's user with "
            "kernel.yama.ptrace_scope=0, or as root / with CAP_SYS_PTRACE (in Docker: --cap-add SYS_PTRACE)"
        )
    if "python version" in low or "python interpreter" in low:
        return "py-spy found no Python interpreter in the process (is it a Python program?)"
    return "see pyspy.log in the run folder"

