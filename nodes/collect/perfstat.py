"""``perf stat`` counters for a launched program, where perf works on this machine.

perf is often absent, or present but refused (``perf_event_paranoid``), or present with only
software counters (containers and VMs print ``<not supported>`` for cycles and instructions).
The collector asks ``perf_status`` once, says which of these it is, and goes on without perf
when it cannot help. Counters attach to the launched pid (``-p``), so they count the program,
not py-spy.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from functools import lru_cache

from nodes.collect.runner import Launched, RunResult


@dataclass(frozen=True)
class PerfStatus:
    usable: bool
    #: Hardware counters (cycles, instructions) are readable, not only software ones.
    hardware: bool
    path: str | None
    #: One line for the user: why perf is or is not used.
    reason: str


@lru_cache(maxsize=8)
def perf_status(perf_path: str | None = None) -> PerfStatus:
    """Checks ``perf stat -e instructions true`` once per process and path."""
    exe = perf_path or shutil.which("perf")
    if not exe:
        return PerfStatus(False, False, None, "perf is not installed here; no hardware counters")
    try:
        cp = subprocess.run(
            [exe, "stat", "-x", ",", "-e", "task-clock,instructions", "true"],
            capture_output=True,
            text=True,
            timeout=15,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        return PerfStatus(False, False, exe, f"perf could not run: {e}")
    out = (cp.stderr or "") + (cp.stdout or "")
    if cp.returncode != 0 or "task-clock" not in out:
        first = next((ln for ln in out.splitlines() if ln.strip()), f"exit status {cp.returncode}")
        return PerfStatus(False, False, exe, f"perf stat does not work here: {first.strip()[:200]}")
    hw = not any("instructions" in ln and "<not" in ln for ln in out.splitlines())
    if hw:
        return PerfStatus(True, True, exe, "perf stat works, with hardware counters")
    return PerfStatus(
        True, False, exe, "perf stat works with software counters only (cycles/instructions not supported here)"
    )


#: The counters asked for where only software counters work (perf's default set minus the
#: hardware ones, which would only print "<not supported>").
SOFTWARE_EVENTS = "task-clock,context-switches,cpu-migrations,page-faults"


class PerfStatAttached:
    """``perf stat -p PID -o FILE``: ends by itself when the program does."""

    def __init__(self, status: PerfStatus, pid: int, out_path: str):
        self.out_path = out_path
        argv = [status.path or "perf", "stat", "-o", out_path, "-p", str(pid)]
        if not status.hardware:
            argv[2:2] = ["-e", SOFTWARE_EVENTS]
        self.argv = argv
        self.proc = Launched(argv, capture_limit=16 * 1024)

    def finish(self, timeout_s: float = 5.0) -> RunResult:
        """Call once the program ended: perf notices that only on its next 1 s poll, which
        would stretch "seconds time elapsed" (and shrink "CPUs utilized"), so it is told now.
        SIGINT, as Ctrl-C: perf prints its counters on it; SIGTERM would lose them."""
        if self.proc.wait(0.05) == "timeout":
            self.proc.interrupt()
            self.proc.wait(timeout_s)
        return self.proc.result()
