"""Turns what the user named ("examples/slow_app.py", "python app.py --size 1e6") into an argv.

The text is split like a shell would split it (``shlex``) but never given to a shell. Script
paths resolve inside the workspace (the same sandbox the explorer uses), so a message cannot
make PerfScout run a file outside the project by naming ``../../x.py``. A bare ``.py`` script
runs under the interpreter PerfScout itself runs on, which is the one whose packages the user
installed alongside it.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from graph.enums import ErrorKind
from nodes.framework.errors import ToolFailure
from nodes.code.sandbox import SandboxError, resolve_inside

_PYTHON_NAME = re.compile(r"^(python|pypy)(\d+(\.\d+)*)?$")


@dataclass(frozen=True)
class Target:
    """A program ready to launch."""

    #: What the user gave.
    text: str
    argv: tuple[str, ...]
    #: py-spy and ``-X importtime`` apply.
    is_python: bool
    #: The Python script, resolved, when there is one.
    script: str | None
    cwd: str

    @property
    def display(self) -> str:
        return shlex.join(self.argv)

    def with_python_flags(self, *flags: str) -> list[str]:
        """The argv with interpreter flags (``-X importtime``) right after the interpreter."""
        return [self.argv[0], *flags, *self.argv[1:]]


def is_python_program(name: str) -> bool:
    return bool(_PYTHON_NAME.match(os.path.basename(name)))


def split_command(text: str) -> list[str]:
    try:
        argv = shlex.split(text or "")
    except ValueError as e:
        raise ToolFailure(ErrorKind.VALIDATION, f"cannot read the command {text!r}: {e}") from None
    if not argv:
        raise ToolFailure(ErrorKind.VALIDATION, "the target is empty: give a script path or a command line")
    return argv


def parse_target(text: str, workspace: str | os.PathLike[str], *, confirmed_outside: bool = False) -> Target:
    """The launchable target, or ``ToolFailure(VALIDATION)`` saying what is wrong with it.

    Scripts resolve inside the workspace, unless ``confirmed_outside``: the user confirmed this
    exact command, whose confirmation named the paths outside it (docs/permission.md).
    """
    root = str(Path(workspace or ".").resolve())
    argv = split_command(text)
    first = argv[0]
    existing = _existing_anywhere if confirmed_outside else _existing_inside
    if first.endswith(".py"):
        script = existing(root, first)
        return Target(text, (sys.executable, str(script), *argv[1:]), True, str(script), root)
    program = _program(root, first, existing)
    if is_python_program(program):
        script = next((a for a in argv[1:] if a.endswith(".py") and not a.startswith("-")), None)
        resolved = None
        if script is not None:
            resolved = str(existing(root, script))
            argv = [resolved if a == script else a for a in argv]
        return Target(text, (program, *argv[1:]), True, resolved, root)
    return Target(text, (program, *argv[1:]), False, None, root)


def _existing_inside(root: str, path: str) -> Path:
    try:
        real = resolve_inside(root, path)
    except SandboxError as e:
        raise ToolFailure(ErrorKind.VALIDATION, str(e)) from None
    return _regular(real, path, root)


def _existing_anywhere(root: str, path: str) -> Path:
    p = Path(os.path.expanduser(path))
    return _regular((p if p.is_absolute() else Path(root) / p).resolve(), path, root)


def _regular(real: Path, path: str, root: str) -> Path:
    if not real.exists():
        raise ToolFailure(ErrorKind.VALIDATION, f"{path}: no such file (looked in {root})")
    if not real.is_file():
        raise ToolFailure(ErrorKind.VALIDATION, f"{path}: not a regular file")
    return real


def _program(root: str, name: str, existing=_existing_inside) -> str:
    """An executable: a bare name from PATH, an absolute path, or a path inside the workspace."""
    if "/" not in name:
        found = shutil.which(name)
        if found is None:
            raise ToolFailure(ErrorKind.VALIDATION, f"{name}: command not found on PATH")
        return found
    real = Path(name) if os.path.isabs(name) else existing(root, name)
    if not real.exists():
        raise ToolFailure(ErrorKind.VALIDATION, f"{name}: no such file")
    if real.is_dir():
        raise ToolFailure(ErrorKind.VALIDATION, f"{name}: is a directory, not a program")
    if not os.access(real, os.X_OK):
        raise ToolFailure(
            ErrorKind.VALIDATION,
            f"{name}: not executable (no execute permission; chmod +x it or name its interpreter)",
        )
    return str(real)
