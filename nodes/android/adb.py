"""The adb client: one place that runs adb, always with a timeout, and types its failures.

Why a wrapper rather than ``subprocess`` at each call site: the retry policy must tell a
device that vanished mid-collection (worth one more try) from a command the device refused
(not worth it) and from a call that hung (a timeout). adb reports all three as exit code 1 with
a line on stderr, so the line is read here, once.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
from dataclasses import dataclass
from typing import Sequence

from graph.enums import ErrorKind
from nodes.framework.errors import ToolFailure
from nodes.android.names import shell_line

#: How long an ordinary adb call (getprop, dumpsys, pull) may take before it is a timeout.
DEFAULT_TIMEOUT_S = 20.0

#: What adb prints when the device went away between two calls (stderr, exit code 1).
_GONE = re.compile(
    r"device '[^']*' not found|device offline|device not found|no devices/emulators found|"
    r"device unauthorized|device still (?:connecting|authorizing)|error: closed|protocol fault|"
    r"connection reset|failed to get feature set|broken pipe",
    re.I,
)

INSTALL_HINT = (
    "adb (Android Debug Bridge) is not installed or not on PATH: install the Debian/Ubuntu "
    "package `adb` (sudo apt install adb) or Google's Android SDK platform-tools, then check "
    "`adb version` (or name one with --adb PATH / PERFSCOUT_ADB)"
)


class AdbMissing(Exception):
    """No adb binary here: a typed skip, not an error."""


@dataclass(frozen=True)
class AdbResult:
    argv: tuple[str, ...]
    rc: int
    stdout: str
    stderr: str

    @property
    def command(self) -> str:
        return display(self.argv)


def display(argv: Sequence[str]) -> str:
    """The command as a person would type it (the remote line stays one quoted argument)."""
    parts = [os.path.basename(argv[0]) if argv else "adb"]
    for a in argv[1:]:
        parts.append(a if re.fullmatch(r"[\w@%+=:,./-]+", a) else "'" + a.replace("'", "'\\''") + "'")
    return " ".join(parts)


class Adb:
    """adb for one device (``serial``) or for the host (``serial=None``: ``adb devices``)."""

    def __init__(self, binary: str, serial: str | None = None, timeout_s: float = DEFAULT_TIMEOUT_S):
        self.binary = binary
        self.serial = serial
        self.timeout_s = timeout_s

    @classmethod
    def locate(cls, adb_path: str | None = None, timeout_s: float = DEFAULT_TIMEOUT_S) -> "Adb":
        """The adb to use: the configured path, else the first on PATH. Raises AdbMissing."""
        if adb_path:
            if os.path.isfile(adb_path) and os.access(adb_path, os.X_OK):
                return cls(adb_path, timeout_s=timeout_s)
            raise AdbMissing(f"the adb named by --adb / PERFSCOUT_ADB ({adb_path!r}) is not an executable file; "
                             + INSTALL_HINT.split(": ", 1)[1])
        found = shutil.which("adb")
        if not found:
            raise AdbMissing(INSTALL_HINT)
        return cls(found, timeout_s=timeout_s)

    def for_device(self, serial: str) -> "Adb":
        return Adb(self.binary, serial, self.timeout_s)

    # --- running ---------------------------------------------------------------------------
    def argv(self, args: Sequence[str]) -> list[str]:
        base = [self.binary]
        if self.serial:
            base += ["-s", self.serial]
        return base + [str(a) for a in args]

    def run(
        self,
        args: Sequence[str],
        *,
        timeout_s: float | None = None,
        stdin: bytes | None = None,
    ) -> AdbResult:
        """Run adb once. Raises ToolFailure(TIMEOUT) on a hang, (RETRYABLE) on a lost device."""
        argv = self.argv(args)
        limit = self.timeout_s if timeout_s is None else timeout_s
        try:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except FileNotFoundError as e:
            raise AdbMissing(INSTALL_HINT) from e
        except PermissionError as e:
            raise AdbMissing(f"{self.binary} cannot be executed ({e.strerror}); " + INSTALL_HINT) from e
        try:
            out, err = proc.communicate(input=stdin, timeout=limit)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            raise ToolFailure(
                ErrorKind.TIMEOUT, f"`{display(argv)}` did not finish within {limit:g} s (adb timeout)"
            ) from None
        res = AdbResult(tuple(argv), proc.returncode, _text(out), _text(err))
        if res.rc != 0 and self.serial and _GONE.search(res.stderr or res.stdout):
            raise ToolFailure(
                ErrorKind.RETRYABLE,
                f"device {self.serial} disconnected during `{res.command}`: {_first_line(res.stderr or res.stdout)}",
            )
        return res

    def shell(
        self,
        args: Sequence[str],
        *,
        timeout_s: float | None = None,
        stdin: bytes | None = None,
        check: bool = True,
    ) -> AdbResult:
        """Run one command on the device; its arguments are quoted for the device's shell."""
        res = self.run(["shell", shell_line(args)], timeout_s=timeout_s, stdin=stdin)
        if check and res.rc != 0:
            raise ToolFailure(
                ErrorKind.VALIDATION,
                f"`{res.command}` failed with exit code {res.rc}: "
                f"{_first_line(res.stderr or res.stdout) or 'no output'}",
            )
        return res

    def pull(self, remote: str, local: str, *, timeout_s: float | None = None) -> AdbResult:
        res = self.run(["pull", remote, local], timeout_s=timeout_s)
        if res.rc != 0 or not os.path.isfile(local):
            raise ToolFailure(
                ErrorKind.VALIDATION,
                f"`{res.command}` did not bring the file back: {_first_line(res.stderr or res.stdout) or 'no output'}",
            )
        return res


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    try:
        proc.communicate(timeout=5)
    except subprocess.TimeoutExpired:
        pass


def _text(b: bytes | None) -> str:
    return (b or b"").decode("utf-8", "replace").replace("\r\n", "\n")


def _first_line(s: str) -> str:
    for line in (s or "").splitlines():
        line = line.strip()
        if line and not line.startswith("* daemon"):
            return line[:300]
    return ""
