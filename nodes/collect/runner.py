"""Runs one program as an argv list, bounded in time and output, and stops its whole tree.

Why each part is here:

* ``start_new_session`` puts the program and everything it forks in a session (and process
  group) of its own, so Ctrl-C in PerfScout's terminal does not reach it by accident and one
  ``killpg`` reaches all of it; the session id also finds orphans that a double fork hid from
  the parent chain.
* Children seen while the program ran are remembered, so a child that called ``setsid`` and
  left the group is still stopped. A child that left the session *and* lost its parent before
  anyone looked is found by a token in its inherited environment (``PERFSCOUT_RUN_TOKEN``).
* Output is drained by reader threads (a full pipe would stall the program) but only a head and
  a tail are kept, so a program printing 100 MB costs a few hundred KB of memory.
* All of the above needs PerfScout alive. On Linux the program is therefore started by a guard
  process (``nodes/collect/guard.py``: a child subreaper with ``PR_SET_PDEATHSIG``) that stays
  its parent and kills the whole run when PerfScout dies, even by SIGKILL. The guard reports the
  program's pid (py-spy and perf attach to the program, not to the guard), its exit status and
  its start and exit times, in the status protocol guard.py defines and parses. ``PR_SET_PDEATHSIG``
  fires when the *thread* that forked the guard ends, so every guard is forked by one thread
  that lives as long as the process.
* Two starters behind one interface: ``GuardedStart`` (Linux) and ``DirectStart`` (elsewhere)
  each give ``Launched`` the program's pid, its start and exit, its output and a way to stop it;
  nothing else in this module knows which one ran.
"""

from __future__ import annotations

import errno
import os
from abc import ABC, abstractmethod
import queue
import secrets
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

import psutil

from graph.enums import ErrorKind
from nodes.collect.guard import TOKEN_VAR, Status, parse_status
from nodes.framework.context import check_cancelled
from nodes.framework.errors import ToolFailure

#: Default bytes of output kept per stream (a quarter from the head, the rest from the tail).
DEFAULT_CAPTURE_LIMIT = 256 * 1024
#: Seconds a stopped program gets between SIGTERM and SIGKILL.
DEFAULT_GRACE_S = 1.0
#: A partial line longer than this is not scanned for a ready pattern (bounded memory).
_MAX_LINE = 64 * 1024

LineCallback = Callable[[str], None]
#: Start programs under the guard (it needs Linux's prctl). Elsewhere they are started directly,
#: and a PerfScout killed by SIGKILL leaves them running.
GUARDED = sys.platform.startswith("linux")
GUARD_SCRIPT = str(Path(__file__).with_name("guard.py"))
#: Seconds the guard gets to report the program's pid (it starts in ~20 ms; a loaded machine is slow).
GUARD_START_S = 60.0
#: Seconds the guard gets for its last sweep after the runner let it go.
GUARD_EXIT_S = 10.0


class BoundedCapture:
    """Keeps the first and the last bytes of a stream and counts the rest."""

    def __init__(self, limit: int = DEFAULT_CAPTURE_LIMIT, on_line: LineCallback | None = None):
        self.head_limit = max(0, limit // 4)
        self.head = bytearray()
        self.tail: deque[bytes] = deque()
        self.tail_limit = max(0, limit - self.head_limit)
        self._tail_size = 0
        self.total = 0
        self._on_line = on_line
        self._partial = bytearray()

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        chunk = data
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk and self.tail_limit:
            self.tail.append(chunk)
            self._tail_size += len(chunk)
            while self._tail_size - len(self.tail[0]) >= self.tail_limit:
                self._tail_size -= len(self.tail.popleft())
        if self._on_line is not None:
            self._scan_lines(data)

    def _scan_lines(self, data: bytes) -> None:
        self._partial += data
        *lines, rest = bytes(self._partial).split(b"\n")
        self._partial = bytearray(rest[-_MAX_LINE:])
        for line in lines:
            self._on_line(line.decode("utf-8", "replace").rstrip("\r"))

    def close(self) -> None:
        if self._on_line is not None and self._partial:
            self._on_line(bytes(self._partial).decode("utf-8", "replace"))
            self._partial.clear()

    @property
    def truncated(self) -> bool:
        return self.total > len(self.head) + min(self._tail_size, self.tail_limit)

    def data(self) -> bytes:
        """The kept bytes; a marker line stands where bytes were dropped."""
        tail = b"".join(self.tail)
        if len(tail) > self.tail_limit:
            tail = tail[-self.tail_limit :]
        if self.total > len(self.head) + len(tail):
            dropped = self.total - len(self.head) - len(tail)
            return bytes(self.head) + f"\n[... {dropped} bytes not kept ...]\n".encode() + tail
        return bytes(self.head) + tail

    def text(self) -> str:
        return self.data().decode("utf-8", "replace")

    def tail_text(self, max_lines: int = 20, max_chars: int = 2000) -> str:
        lines = self.text().rstrip().splitlines()[-max_lines:]
        return "\n".join(lines)[-max_chars:]


def _drain(fd: int, capture: BoundedCapture) -> None:
    try:
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            capture.feed(chunk)
    except OSError:
        pass
    finally:
        capture.close()
        try:
            os.close(fd)
        except OSError:
            pass


class ProcessTree:
    """The processes a launched program made: its descendants, its session, what was seen."""

    def __init__(self, root_pid: int, token: str | None = None, adopter: int | None = None):
        self.root_pid = root_pid
        self.token = token
        self.seen: dict[int, psutil.Process] = {}
        try:
            self.root: psutil.Process | None = psutil.Process(root_pid)
            self.seen[root_pid] = self.root
        except psutil.Error:
            self.root = None
        #: The guard: a subreaper, so every orphan of the tree is one of its descendants.
        self.adopter: psutil.Process | None = None
        if adopter is not None:
            try:
                self.adopter = psutil.Process(adopter)
            except psutil.Error:
                pass

    def members(self, *, scan_session: bool = False) -> list[psutil.Process]:
        """Live processes of the tree. ``scan_session`` also looks for orphans by session id."""
        found: dict[int, psutil.Process] = {}
        if self.root is not None:
            try:
                if self.root.is_running() and self.root.status() != psutil.STATUS_ZOMBIE:
                    found[self.root.pid] = self.root
                for c in self.root.children(recursive=True):
                    found.setdefault(c.pid, c)
            except psutil.Error:
                pass
        if self.adopter is not None:
            try:
                for c in self.adopter.children(recursive=True):
                    if _alive(c):
                        found.setdefault(c.pid, c)
            except psutil.Error:
                pass
        for pid, p in list(self.seen.items()):
            if pid not in found and _alive(p):
                found[pid] = p
                try:
                    for c in p.children(recursive=True):
                        found.setdefault(c.pid, c)
                except psutil.Error:
                    pass
        if scan_session:
            for p in _same_run(self.root_pid, self.token):
                found.setdefault(p.pid, p)
        for pid, p in found.items():
            self.seen.setdefault(pid, p)
        me = os.getpid()
        return [p for pid, p in found.items() if pid != me and _alive(p)]

    def stop(self, grace_s: float = DEFAULT_GRACE_S, program: "_Started | None" = None) -> list[int]:
        """SIGTERM the whole tree, SIGKILL what is left after ``grace_s``. Returns pids signalled."""
        victims = self.members(scan_session=True)
        signalled = [p.pid for p in victims]
        _signal_all(self.root_pid, victims, signal.SIGTERM)
        others = [p for p in victims if p.pid != self.root_pid]
        deadline = time.monotonic() + grace_s
        if program is not None:
            try:
                program.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                pass
        _, alive = psutil.wait_procs(others, timeout=max(0.0, deadline - time.monotonic()))
        leftover = [p for p in alive if _alive(p)] + [
            p for p in self.members(scan_session=True) if p.pid not in {a.pid for a in alive}
        ]
        if leftover or (program is not None and program.poll() is None):
            _signal_all(self.root_pid, leftover, signal.SIGKILL)
            if program is not None:
                try:
                    program.kill()
                    program.wait(timeout=5)
                except (OSError, subprocess.TimeoutExpired):
                    pass
            psutil.wait_procs([p for p in leftover if p.pid != self.root_pid], timeout=2)
            signalled += [p.pid for p in leftover if p.pid not in signalled]
        return signalled


def _alive(p: psutil.Process) -> bool:
    try:
        return p.is_running() and p.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _same_run(sid: int, token: str | None) -> Iterable[psutil.Process]:
    """Processes in the program's session, or carrying its token in their environment."""
    me = os.getpid()
    needle = f"{TOKEN_VAR}={token}".encode() if token else None
    for pid in psutil.pids():
        if pid == me:
            continue
        try:
            hit = os.getsid(pid) == sid
        except OSError:
            continue
        if not hit and needle is not None:
            try:
                with open(f"/proc/{pid}/environ", "rb") as f:
                    hit = needle in f.read()
            except OSError:
                hit = False
        if hit:
            try:
                yield psutil.Process(pid)
            except psutil.Error:
                continue


def _signal_all(group: int, procs: Iterable[psutil.Process], sig: int) -> None:
    try:
        os.killpg(group, sig)
    except OSError:
        pass
    for p in procs:
        try:
            p.send_signal(sig)
        except psutil.Error:
            pass


@dataclass
class RunResult:
    """How one run ended. ``outcome``: exited, timeout, ready or interrupted."""

    argv: list[str]
    pid: int
    returncode: int | None
    wall_s: float
    outcome: str
    stdout: BoundedCapture
    stderr: BoundedCapture
    #: Seconds from launch to "ready", when a ready condition was given and met.
    ready_s: float | None = None
    #: Processes still running at the end (after the program's own exit, or at the limit).
    stopped_pids: list[int] = field(default_factory=list)

    def stderr_tail(self, max_lines: int = 12) -> str:
        return self.stderr.tail_text(max_lines)


class _Spawner:
    """The one thread that forks every guard, and lives as long as the process.

    The kernel sends ``PR_SET_PDEATHSIG`` when the *thread* that forked the guard exits, not the
    process: a guard forked from a short-lived worker thread (LangGraph runs nodes in pools)
    would kill its program as soon as that thread ended.
    """

    _lock = threading.Lock()
    _current: "_Spawner | None" = None

    def __init__(self) -> None:
        self.pid = os.getpid()
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        threading.Thread(target=self._loop, name="perfscout-spawner", daemon=True).start()

    @classmethod
    def get(cls) -> "_Spawner":
        with cls._lock:
            if cls._current is None or cls._current.pid != os.getpid():
                cls._current = cls()
            return cls._current

    @classmethod
    def _after_fork(cls) -> None:
        # Threads do not survive fork: a forked PerfScout (multiprocessing) makes its own.
        cls._lock = threading.Lock()
        cls._current = None

    def _loop(self) -> None:
        while True:
            fn, box, done = self._jobs.get()
            try:
                box.append((fn(), None))
            except BaseException as e:  # handed to the caller, raised there
                box.append((None, e))
            done.set()

    def call(self, fn: Callable[[], Any]) -> Any:
        box: list[tuple[Any, BaseException | None]] = []
        done = threading.Event()
        self._jobs.put((fn, box, done))
        done.wait()
        value, err = box[0]
        if err is not None:
            raise err
        return value


os.register_at_fork(after_in_child=_Spawner._after_fork)


def _cannot_start(argv0: str, code: int, message: str) -> ToolFailure:
    if code == errno.ENOENT:
        return ToolFailure(ErrorKind.VALIDATION, f"{argv0}: not found ({message})")
    if code in (errno.EACCES, errno.EPERM):
        return ToolFailure(ErrorKind.VALIDATION, f"{argv0}: not executable ({message})")
    return ToolFailure(ErrorKind.VALIDATION, f"{argv0}: cannot start ({message})")


def _read_output(proc: subprocess.Popen, stdout: BoundedCapture, stderr: BoundedCapture) -> list[threading.Thread]:
    """Reader threads draining ``proc``'s two pipes into the captures (the pipes are theirs)."""
    readers = [
        threading.Thread(target=_drain, args=(os.dup(proc.stdout.fileno()), stdout), daemon=True),
        threading.Thread(target=_drain, args=(os.dup(proc.stderr.fileno()), stderr), daemon=True),
    ]
    proc.stdout.close()
    proc.stderr.close()
    for t in readers:
        t.start()
    return readers


class _Started(ABC):
    """What both starters give ``Launched``: the program's pid, its start and exit (monotonic
    times), its exit status, the output readers, and the part of ``Popen``'s interface that
    ``ProcessTree.stop`` uses (``wait``/``poll``/``kill``)."""

    #: The guard's pid when there is one (it is not part of the program: tests, diagnostics).
    guard_pid: int | None = None

    def __init__(self) -> None:
        self.pid = 0
        self.started = time.monotonic()
        self.returncode: int | None = None
        self.exit_at: float | None = None
        self.exited = threading.Event()
        self.readers: list[threading.Thread] = []

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int | None:
        if not self.exited.wait(timeout):
            raise subprocess.TimeoutExpired(str(self.pid), timeout or 0.0)
        return self.returncode

    @abstractmethod
    def kill(self) -> None:
        """SIGKILL the program (each starter signals its own way)."""

    def release(self) -> list[int]:
        """The start is over (the tree was stopped): pids the starter swept after that."""
        return []

    def _mark_exit(self, returncode: int | None, at: float) -> None:
        self.returncode = returncode
        self.exit_at = at
        self.exited.set()


class DirectStart(_Started):
    """The program started by this process (outside Linux): a PerfScout killed by SIGKILL
    leaves it running. Its exit is seen by a thread blocked in ``waitpid``."""

    def __init__(self, argv: list[str], cwd: str | None, env: Mapping[str, str], out: BoundedCapture,
                 err: BoundedCapture):
        super().__init__()
        try:
            self._popen = subprocess.Popen(
                argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, start_new_session=True, bufsize=0,
            )
        except OSError as e:
            raise _cannot_start(argv[0], e.errno or 0, e.strerror or str(e)) from None
        self.pid = self._popen.pid
        self.readers = _read_output(self._popen, out, err)
        threading.Thread(target=self._wait_exit, daemon=True).start()

    def _wait_exit(self) -> None:
        rc = self._popen.wait()
        self._mark_exit(rc, time.monotonic())

    def kill(self) -> None:
        try:
            self._popen.kill()
        except OSError:
            pass


class GuardedStart(_Started):
    """The program started by the guard (Linux, nodes/collect/guard.py), which stays its parent.

    The guard reports on a status pipe, in the protocol guard.py defines and parses: the
    program's pid and ``execve`` time, its exit status and time, what the last sweep killed.
    Signals go to the program through psutil, which refuses a pid that now names another
    process; ``release`` closes the lifeline, and the guard sweeps and exits."""

    def __init__(self, argv: list[str], cwd: str | None, env: Mapping[str, str], token: str,
                 out: BoundedCapture, err: BoundedCapture):
        super().__init__()
        self._argv0 = argv[0]
        self._stderr = err
        self._proc: psutil.Process | None = None
        self._swept: list[int] = []
        self._start_error: tuple[int, str] | None = None
        status_r, status_w = os.pipe()
        life_r, life_w = os.pipe()
        # The token goes on the guard's command line, not in its environment: the runner's own
        # token scan must never take the guard for part of the program.
        guard_env = {k: v for k, v in env.items() if k != TOKEN_VAR}
        cmd = [sys.executable, "-I", "-S", GUARD_SCRIPT, token, str(os.getpid()), str(status_w), str(life_r)]
        cmd += ["--", *argv]

        def fork_guard() -> subprocess.Popen:
            try:
                return subprocess.Popen(
                    cmd, cwd=cwd, env=guard_env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE, start_new_session=True, pass_fds=(status_w, life_r), bufsize=0,
                )
            finally:
                os.close(status_w)
                os.close(life_r)

        try:
            self._guard = _Spawner.get().call(fork_guard)
        except OSError as e:
            os.close(status_r)
            os.close(life_w)
            raise _cannot_start(argv[0], e.errno or 0, e.strerror or str(e)) from None
        except BaseException:
            os.close(status_r)
            os.close(life_w)  # a guard that did start sees its lifeline end and sweeps
            raise
        self.guard_pid = self._guard.pid
        self._lifeline: int | None = life_w
        self.readers = _read_output(self._guard, out, err)
        self._up = threading.Event()
        self._status_reader = threading.Thread(target=self._read_status, args=(status_r,), daemon=True)
        self._status_reader.start()
        try:
            self._wait_started()
        except BaseException:
            self.release()
            for t in self.readers:
                t.join(timeout=5)
            raise

    def _wait_started(self) -> None:
        if not self._up.wait(GUARD_START_S):
            raise ToolFailure(
                ErrorKind.UNAVAILABLE,
                f"{self._argv0}: the process guard did not start within {GUARD_START_S:g} s (machine overloaded?)",
            )
        if self._start_error is not None:
            raise _cannot_start(self._argv0, *self._start_error)
        if not self.pid:
            tail = self._stderr.tail_text(3, 500) or f"exit status {self._guard.poll()}"
            raise ToolFailure(
                ErrorKind.UNAVAILABLE,
                f"{self._argv0}: the process guard ({GUARD_SCRIPT}) ended before starting it: {tail}",
            )

    def _read_status(self, fd: int) -> None:
        """The guard's reports, until it exits."""
        buf = b""
        try:
            while True:
                try:
                    chunk = os.read(fd, 4096)
                except OSError:
                    break
                if not chunk:
                    break
                buf += chunk
                *lines, buf = buf.split(b"\n")
                for line in lines:
                    status = parse_status(line.decode("ascii", "replace"))
                    if status is not None:
                        self._on_status(status)
        finally:
            os.close(fd)
            self._up.set()
            if self.pid and not self.exited.is_set():
                # The guard died before the program did (it was killed): the program got
                # SIGKILL from its own death signal; its status is lost with the guard.
                while self._proc is not None and _alive(self._proc):
                    time.sleep(0.05)
                self._mark_exit(None, time.monotonic())

    def _on_status(self, status: Status) -> None:
        if status.kind == "pid":
            try:
                self._proc = psutil.Process(status.pid)
            except psutil.Error:
                self._proc = None
            self.pid, self.started = status.pid, status.at
            self._up.set()
        elif status.kind == "err":
            self._start_error = (status.code, status.message)
            self._up.set()
        elif status.kind == "exit" and self.pid:
            self._mark_exit(status.code, status.at)
        elif status.kind == "swept":
            self._swept += list(status.pids)

    def kill(self) -> None:
        if self._proc is not None and not self.exited.is_set():
            try:
                self._proc.send_signal(signal.SIGKILL)
            except psutil.Error:
                pass

    def release(self) -> list[int]:
        """Close the lifeline: the guard sweeps what is left of the run, reports it, and exits."""
        if self._lifeline is not None:
            os.close(self._lifeline)
            self._lifeline = None
        if self._guard.returncode is None:
            try:
                self._guard.wait(timeout=GUARD_EXIT_S)
            except subprocess.TimeoutExpired:
                self._guard.kill()
                self._guard.wait()
        self._status_reader.join(timeout=5)
        return list(self._swept)


class Launched:
    """A running program. Use as a context manager: leaving it always stops the whole tree.

    Started by ``GuardedStart`` on Linux, else by ``DirectStart`` (``GUARDED``): the same
    interface, so nothing below knows which."""

    def __init__(
        self,
        argv: list[str],
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        capture_limit: int = DEFAULT_CAPTURE_LIMIT,
        on_stdout_line: LineCallback | None = None,
        on_stderr_line: LineCallback | None = None,
    ):
        if not argv or not all(isinstance(a, str) for a in argv):
            raise ToolFailure(ErrorKind.VALIDATION, f"not a command (argv list of strings): {argv!r}")
        self.argv = list(argv)
        self.stdout = BoundedCapture(capture_limit, on_stdout_line)
        self.stderr = BoundedCapture(capture_limit, on_stderr_line)
        self.token = secrets.token_hex(8)
        run_env = dict(env if env is not None else os.environ)
        run_env[TOKEN_VAR] = self.token
        self.outcome: str | None = None
        self.ended: float | None = None
        self.ready_s: float | None = None
        self.stopped: list[int] = []
        if GUARDED:
            self.proc: _Started = GuardedStart(self.argv, cwd, run_env, self.token, self.stdout, self.stderr)
        else:
            self.proc = DirectStart(self.argv, cwd, run_env, self.stdout, self.stderr)
        self.pid = self.proc.pid
        #: Monotonic time of the launch (the guard reports the program's execve).
        self.started = self.proc.started
        self.tree = ProcessTree(self.pid, self.token, adopter=self.proc.guard_pid)

    @property
    def guard_pid(self) -> int | None:
        return self.proc.guard_pid

    # -- running -------------------------------------------------------------------------------

    def __enter__(self) -> "Launched":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is KeyboardInterrupt and self.outcome is None:
            self.outcome = "interrupted"
        self.stop()

    def elapsed(self) -> float:
        return (self.ended or time.monotonic()) - self.started

    def wait(
        self,
        timeout_s: float,
        *,
        ready: Callable[[], float | None] | None = None,
        poll_s: float = 0.01,
    ) -> str:
        """Wait up to ``timeout_s`` from now until the program exits or becomes ready.

        ``ready()`` returns the monotonic time the program became ready, or None. Exit times
        come from a process blocked in ``waitpid`` (the guard, or a thread here), so a start-up
        measured "to exit" is not rounded to the polling interval. Returns "exited", "ready"
        or "timeout"; a timeout leaves the program running (the caller stops it, or interrupts
        it first so it can write its output).
        """
        deadline = time.monotonic() + max(0.0, timeout_s)
        while True:
            check_cancelled()  # a cancelled turn stops here as on Ctrl-C (nodes/framework/context.py)
            when = ready() if ready is not None else None
            if when is not None:
                self.ended = when
                self.ready_s = when - self.started
                self.outcome = "ready"
                return self.outcome
            now = time.monotonic()
            step = min(poll_s if ready is not None else 0.25, max(0.0, deadline - now))
            if self.proc.exited.wait(step):
                self.ended = self.proc.exit_at
                self.outcome = "exited"
                return self.outcome
            if time.monotonic() >= deadline:
                self.outcome = "timeout"
                return self.outcome

    def running(self) -> bool:
        return not self.proc.exited.is_set()

    @property
    def returncode(self) -> int | None:
        return self.proc.returncode

    def interrupt(self) -> None:
        """SIGINT, as Ctrl-C would send: profilers write their file on it."""
        try:
            os.killpg(self.pid, signal.SIGINT)
        except OSError:
            pass

    def stop(self, grace_s: float = DEFAULT_GRACE_S) -> None:
        """Stop whatever of the tree is still running and collect the output. Idempotent."""
        if self.ended is None:
            # The run's wall time ends now: at its exit, at the limit, or at Ctrl-C.
            self.ended = time.monotonic()
        self.stopped += [p for p in self.tree.stop(grace_s, self.proc) if p not in self.stopped]
        self.stopped += [p for p in self.proc.release() if p not in self.stopped]
        for t in self.proc.readers:
            t.join(timeout=5)

    def result(self) -> RunResult:
        self.stop()
        return RunResult(
            argv=self.argv,
            pid=self.pid,
            returncode=self.proc.returncode,
            wall_s=self.elapsed(),
            outcome=self.outcome or "exited",
            stdout=self.stdout,
            stderr=self.stderr,
            ready_s=self.ready_s,
            stopped_pids=list(self.stopped),
        )


def run_bounded(
    argv: list[str],
    timeout_s: float,
    *,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    capture_limit: int = DEFAULT_CAPTURE_LIMIT,
) -> RunResult:
    """Run ``argv`` to its end or to ``timeout_s``; the tree is always stopped afterwards."""
    with Launched(argv, cwd=cwd, env=env, capture_limit=capture_limit) as prog:
        prog.wait(timeout_s)
    return prog.result()
