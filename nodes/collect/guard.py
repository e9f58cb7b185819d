"""The parent of every program PerfScout runs, so that nothing it started outlives PerfScout.

A program runs in a session of its own (so Ctrl-C in PerfScout's terminal does not reach it by
accident), and the runner stops that session at the limit, on Ctrl-C and after the program
exits. None of that happens when PerfScout itself dies by SIGKILL (the OOM killer, ``kill -9``,
a crashed container shell): the session would run on. So the runner does not start the program
itself; it starts this small process, which starts the program and stays its parent:

* ``PR_SET_CHILD_SUBREAPER``: every orphan of the program's tree (a double fork, a ``setsid``
  daemon) is re-parented to this guard instead of init, so all of them stay its descendants.
* ``PR_SET_PDEATHSIG`` (SIGTERM): the kernel signals the guard when PerfScout dies. The guard
  also reads a "lifeline" pipe whose only writer is PerfScout: end of file means PerfScout
  closed it (the run is over) or died. Either way the guard kills every descendant, every
  process still in the program's session and every process carrying the run token, and exits.
  ``getppid()`` is re-checked after the prctl, for a PerfScout that died before it was set.
* The program itself gets ``PR_SET_PDEATHSIG`` (SIGKILL) on the guard, for a guard killed by
  SIGKILL too.

The guard forks and execs the program (it does not exec it in its own place): a process that
is replaced by the program cannot stay behind to kill the program's orphans. It reports the
program's pid on a status pipe, so py-spy and ``perf stat`` attach to the real program, and the
program's exit status and the CLOCK_MONOTONIC times of its ``execve`` and its exit, so start-up
timings exclude the guard's own start.

It uses the standard library only and runs as ``python -I -S guard.py`` (about 20 ms to start),
outside the program's session, with no run token in its own environment, so the runner's
session and token scans never take it for part of the program.

Status lines (one per event, ASCII): ``pid <pid> <t_start>``, ``err <errno> <message>`` (the
program could not be started), ``exit <returncode> <t_exit>`` (returncode as
``subprocess.Popen`` gives it: negative for a signal), ``swept <pid> ...`` (what the final
sweep killed). The guard writes them with the ``status_*`` functions below and the runner
(nodes/collect/runner.py) reads them with ``parse_status``: the protocol lives in this file only.
"""

from __future__ import annotations

import ctypes
import errno
import os
import select
import signal
import sys
import time

TOKEN_VAR = "PERFSCOUT_RUN_TOKEN"
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
#: Seconds the final sweep keeps looking for processes that keep forking.
SWEEP_S = 5.0
#: Seconds between checks that PerfScout is still the parent (a net under the two signals).
CHECK_S = 1.0
USAGE = "usage: guard.py TOKEN PARENT_PID STATUS_FD LIFELINE_FD -- PROGRAM [ARG...]"

_libc = None


# --- the status protocol -------------------------------------------------------------------


def status_started(pid: int, t_start: float) -> str:
    return f"pid {pid} {t_start!r}"


def status_failed(code: int, message: str) -> str:
    return f"err {code} {message}".replace("\n", " ")


def status_exit(returncode: int, t_exit: float) -> str:
    return f"exit {returncode} {t_exit!r}"


def status_swept(pids: list[int]) -> str:
    return "swept " + " ".join(map(str, pids))


class Status:
    """One status line, parsed. ``kind``: "pid" (``pid``, ``at``), "err" (``code`` an errno,
    ``message``), "exit" (``code`` the returncode, ``at``) or "swept" (``pids``)."""

    __slots__ = ("kind", "pid", "at", "code", "message", "pids")

    def __init__(self, kind: str, *, pid: int = 0, at: float = 0.0, code: int = 0, message: str = "",
                 pids: tuple[int, ...] = ()):
        self.kind, self.pid, self.at, self.code, self.message, self.pids = kind, pid, at, code, message, pids


def parse_status(line: str) -> Status | None:
    """A status line as the ``status_*`` functions wrote it; None for anything else."""
    words = line.split(" ", 2)
    try:
        if words[0] == "pid" and len(words) == 3:
            return Status("pid", pid=int(words[1]), at=float(words[2]))
        if words[0] == "err" and len(words) >= 2:
            return Status("err", code=int(words[1]), message=words[2] if len(words) > 2 else "")
        if words[0] == "exit" and len(words) == 3:
            return Status("exit", code=int(words[1]), at=float(words[2]))
        if words[0] == "swept":
            return Status("swept", pids=tuple(int(w) for w in line.split()[1:]))
    except ValueError:
        return None
    return None


# --- the guard -------------------------------------------------------------------------------


def _prctl(option: int, value: int) -> None:
    global _libc
    if _libc is None:  # loaded on first use: the runner imports this module for the protocol
        _libc = ctypes.CDLL(None, use_errno=True)
    if _libc.prctl(option, value, 0, 0, 0) != 0:
        e = ctypes.get_errno()
        raise OSError(e, f"prctl({option}): {os.strerror(e)}")


def _stat(pid: int) -> tuple[int, int, int, str] | None:
    """(ppid, session, start time, state) of ``pid`` from /proc, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: split after its last ')'.
    fields = raw[raw.rfind(b")") + 2 :].split()
    try:
        return int(fields[1]), int(fields[3]), int(fields[19]), fields[0].decode()
    except (IndexError, ValueError):
        return None


def _has_token(pid: int, needle: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return needle in f.read()
    except OSError:
        return False


def run_members(me: int, sid: int, needle: bytes) -> dict[int, int]:
    """Live processes of the run: descendants of ``me``, session ``sid``, or carrying the token.

    Maps pid to its start time, so a signal is never sent to a pid the kernel gave to someone
    else meanwhile."""
    stats: dict[int, tuple[int, int, int, str]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != me:
            st = _stat(int(name))
            if st is not None and st[3] not in ("Z", "X"):
                stats[int(name)] = st
    children: dict[int, list[int]] = {}
    for pid, st in stats.items():
        children.setdefault(st[0], []).append(pid)
    found: set[int] = set()
    todo = list(children.get(me, ()))
    while todo:
        pid = todo.pop()
        if pid not in found:
            found.add(pid)
            todo.extend(children.get(pid, ()))
    for pid, st in stats.items():
        if pid not in found and (st[1] == sid or _has_token(pid, needle)):
            found.add(pid)
    return {pid: stats[pid][2] for pid in found}


def _kill(pid: int, start: int) -> bool:
    """SIGKILL ``pid`` if it is still the process that started at ``start``."""
    try:
        fd = os.pidfd_open(pid)
    except OSError:
        return False
    try:
        st = _stat(pid)
        if st is None or st[2] != start:
            return False
        signal.pidfd_send_signal(fd, signal.SIGKILL)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def _reap(program: int) -> int | None:
    """Collect every exited child (orphans land here); the program's wait status if it was one."""
    status = None
    while True:
        try:
            pid, st = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return status
        if pid == 0:
            return status
        if pid == program:
            status = st


def sweep(me: int, sid: int, token: str, program: int) -> tuple[list[int], int | None]:
    """Kill the whole run, again and again until nothing of it is left (a process may fork
    between a scan and its kill; its child then re-parents here and the next scan finds it)."""
    needle = f"{TOKEN_VAR}={token}".encode()
    killed: list[int] = []
    status = None
    deadline = time.monotonic() + SWEEP_S
    while True:
        members = run_members(me, sid, needle)
        for pid, start in members.items():
            if _kill(pid, start) and pid not in killed:
                killed.append(pid)
        st = _reap(program)
        status = st if st is not None else status
        if not members or time.monotonic() > deadline:
            return killed, status
        time.sleep(0.01)


def _spawn(argv: list[str], env: dict[str, str], me: int) -> tuple[int, float]:
    """fork + exec the program in a session of its own: its pid and the monotonic time of its
    ``execve`` (a start-up is timed from there, not from the guard's own fork); OSError if it
    could not be executed."""
    # Searched here, before the clock starts: trying each PATH entry in the child (as
    # os.execvpe does) cost ~2 ms of the measured start-up with 11 entries.
    found = [] if os.path.dirname(argv[0]) else [
        p
        for p in (os.path.join(d or os.curdir, argv[0]) for d in env.get("PATH", os.defpath).split(os.pathsep))
        if os.path.isfile(p) and os.access(p, os.X_OK)
    ]
    err_r, err_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(err_r)
            os.setsid()
            _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
            if os.getppid() != me:
                os._exit(127)
            for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGCHLD, signal.SIGPIPE, signal.SIGXFSZ):
                signal.signal(sig, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_SETMASK, [])
            os.write(err_w, f"{time.monotonic()!r}\n".encode())
            for path in found[:1]:
                try:
                    os.execve(path, argv, env)
                except OSError:
                    pass  # execvpe below tries every entry again and reports the right error
            os.execvpe(argv[0], argv, env)
        except OSError as e:
            os.write(err_w, f"{e.errno or 0} {e.strerror or e}".encode())
        finally:
            os._exit(127)
    t_fork = time.monotonic()
    os.close(err_w)
    with os.fdopen(err_r, "rb") as f:
        report = f.read().decode("utf-8", "replace")
    when, _, failed = report.partition("\n")
    if failed:
        os.waitpid(pid, 0)
        code, _, message = failed.partition(" ")
        raise OSError(int(code) if code.isdigit() else errno.EIO, message)
    try:
        return pid, float(when)
    except ValueError:  # the child died before it got there (it never does, short of a kill)
        return pid, t_fork


def main(args: list[str]) -> int:
    if len(args) < 6 or args[4] != "--":
        print(USAGE, file=sys.stderr)
        return 2
    token, parent, status_fd, lifeline = args[0], int(args[1]), int(args[2]), int(args[3])
    argv = args[5:]
    me = os.getpid()
    for fd in (status_fd, lifeline):
        os.set_inheritable(fd, False)

    def say(line: str) -> None:
        try:
            os.write(status_fd, (line + "\n").encode())
        except OSError:
            pass  # PerfScout is gone: the sweep still runs

    stop = []
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda *_: stop.append(True))
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    # Subreaper before the first fork, so no descendant can ever be re-parented past us.
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:
        return 1  # PerfScout died before the prctl: start nothing
    env = dict(os.environ)
    env[TOKEN_VAR] = token
    try:
        program, t_start = _spawn(argv, env, me)
    except OSError as e:
        say(status_failed(e.errno or errno.EIO, str(e.strerror or e)))
        return 0
    say(status_started(program, t_start))
    # The program holds the output pipes now; the guard keeps none of them open.
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)

    exited = False
    while not stop:
        try:
            ready, _, _ = select.select([wake_r, lifeline], [], [], CHECK_S)
        except InterruptedError:
            ready = []
        if wake_r in ready:
            try:
                os.read(wake_r, 4096)
            except BlockingIOError:
                pass
        st = _reap(program)
        if st is not None and not exited:
            exited = True
            say(status_exit(os.waitstatus_to_exitcode(st), time.monotonic()))
        if lifeline in ready:
            try:
                if not os.read(lifeline, 4096):
                    break  # closed by the runner (the run is over) or by PerfScout's death
            except OSError:
                break
        if os.getppid() != parent:
            break
    killed, st = sweep(me, program, token, program)
    if st is not None and not exited:
        say(status_exit(os.waitstatus_to_exitcode(st), time.monotonic()))
    if killed:
        say(status_swept(killed))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
