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
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping

import psutil

from graph.enums import ErrorKind
from nodes.common import ToolFailure

#: Default bytes of output kept per stream (a quarter from the head, the rest from the tail).
DEFAULT_CAPTURE_LIMIT = 256 * 1024
#: Seconds a stopped program gets between SIGTERM and SIGKILL.
DEFAULT_GRACE_S = 1.0
#: A partial line longer than this is not scanned for a ready pattern (bounded memory).
_MAX_LINE = 64 * 1024

LineCallback = Callable[[str], None]
#: Environment variable that marks every process a launched program starts.
TOKEN_VAR = "PERFSCOUT_RUN_TOKEN"


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

    def __init__(self, root_pid: int, token: str | None = None):
        self.root_pid = root_pid
        self.token = token
        self.seen: dict[int, psutil.Process] = {}
        try:
            self.root: psutil.Process | None = psutil.Process(root_pid)
            self.seen[root_pid] = self.root
        except psutil.Error:
            self.root = None

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

    def stop(self, grace_s: float = DEFAULT_GRACE_S, popen: subprocess.Popen | None = None) -> list[int]:
        """SIGTERM the whole tree, SIGKILL what is left after ``grace_s``. Returns pids signalled."""
        victims = self.members(scan_session=True)
        signalled = [p.pid for p in victims]
        _signal_all(self.root_pid, victims, signal.SIGTERM)
        others = [p for p in victims if p.pid != self.root_pid]
        deadline = time.monotonic() + grace_s
        if popen is not None:
            try:
                popen.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                pass
        _, alive = psutil.wait_procs(others, timeout=max(0.0, deadline - time.monotonic()))
        leftover = [p for p in alive if _alive(p)] + [
            p for p in self.members(scan_session=True) if p.pid not in {a.pid for a in alive}
        ]
        if leftover or (popen is not None and popen.poll() is None):
            _signal_all(self.root_pid, leftover, signal.SIGKILL)
            if popen is not None:
                try:
                    popen.kill()
                    popen.wait(timeout=5)
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


class Launched:
    """A running program. Use as a context manager: leaving it always stops the whole tree."""

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
        self.started = time.monotonic()
        try:
            self.popen = subprocess.Popen(
                self.argv,
                cwd=cwd,
                env=run_env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                bufsize=0,
            )
        except FileNotFoundError as e:
            raise ToolFailure(ErrorKind.VALIDATION, f"{self.argv[0]}: not found ({e.strerror})") from None
        except PermissionError as e:
            raise ToolFailure(ErrorKind.VALIDATION, f"{self.argv[0]}: not executable ({e.strerror})") from None
        except OSError as e:
            raise ToolFailure(ErrorKind.VALIDATION, f"{self.argv[0]}: cannot start ({e.strerror or e})") from None
        self.pid = self.popen.pid
        self.tree = ProcessTree(self.pid, self.token)
        self._readers = [
            threading.Thread(target=_drain, args=(os.dup(self.popen.stdout.fileno()), self.stdout), daemon=True),
            threading.Thread(target=_drain, args=(os.dup(self.popen.stderr.fileno()), self.stderr), daemon=True),
        ]
        self.popen.stdout.close()
        self.popen.stderr.close()
        for t in self._readers:
            t.start()
        self._exited = threading.Event()
        self._exit_at: float | None = None
        threading.Thread(target=self._wait_exit, daemon=True).start()
        self.outcome: str | None = None
        self.ended: float | None = None
        self.ready_s: float | None = None
        self.stopped: list[int] = []

    def __enter__(self) -> "Launched":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is KeyboardInterrupt and self.outcome is None:
            self.outcome = "interrupted"
        self.stop()

    def elapsed(self) -> float:
        return (self.ended or time.monotonic()) - self.started

    def _wait_exit(self) -> None:
        self.popen.wait()
        self._exit_at = time.monotonic()
        self._exited.set()

    def wait(
        self,
        timeout_s: float,
        *,
        ready: Callable[[], float | None] | None = None,
        poll_s: float = 0.01,
    ) -> str:
        """Wait up to ``timeout_s`` from now until the program exits or becomes ready.

        ``ready()`` returns the monotonic time the program became ready, or None. Exit times
        come from a thread blocked in ``waitpid``, so a start-up measured "to exit" is not
        rounded to the polling interval. Returns "exited", "ready" or "timeout"; a timeout
        leaves the program running (the caller stops it, or interrupts it first so it can
        write its output).
        """
        deadline = time.monotonic() + max(0.0, timeout_s)
        while True:
            when = ready() if ready is not None else None
            if when is not None:
                self.ended = when
                self.ready_s = when - self.started
                self.outcome = "ready"
                return self.outcome
            now = time.monotonic()
            step = min(poll_s if ready is not None else 0.25, max(0.0, deadline - now))
            if self._exited.wait(step):
                self.ended = self._exit_at
                self.outcome = "exited"
                return self.outcome
            if time.monotonic() >= deadline:
                self.outcome = "timeout"
                return self.outcome

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
        self.stopped += [p for p in self.tree.stop(grace_s, self.popen) if p not in self.stopped]
        for t in self._readers:
            t.join(timeout=5)

    def result(self) -> RunResult:
        self.stop()
        return RunResult(
            argv=self.argv,
            pid=self.pid,
            returncode=self.popen.returncode,
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
