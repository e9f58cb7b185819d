"""Permission names a program: which exact argv a run stage may start, decided by code.

What the user allowed is *their program*, not whatever command line a message (or a coding
agent) puts in quotes. So the permission a command has follows from **who named it** and
**its shape**, never from what the message says about it (docs/permission.md):

* ``USER`` — ``--target``, the API's ``target=``, the answer to "which program?": the user's
  own choice; ``--allow-run`` (or an exact allowlist entry) lets it run.
* ``WORKSPACE`` — a script or executable *inside the workspace* that the message names as the
  thing to profile, started by its interpreter with the arguments the message gives. Same rule
  as ``USER``. Anything else in that position (an interpreter with flags, an argument that
  points outside the workspace) is a proposal instead.
* ``PROPOSAL`` — any other command line found in the message. It runs only after the user
  confirms that exact argv; ``--allow-run`` alone never confirms it. Some shapes are refused
  even when confirmed (:func:`proposal_refusal`): inline code for an interpreter, deletions,
  raw-device tools, changing user. The checks look through wrappers (``env``, ``timeout``,
  ``xargs``, ``busybox`` …) and at the program's base name, so ``/bin/rm`` is ``rm``.

The allowlist matches a program exactly — its resolved path, or the workspace script an
interpreter runs — never a word anywhere in the argv.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from graph.enums import Confirmation, TargetOrigin
from graph.payloads import RunRequest

#: Interpreters whose first argument may be the workspace script they run.
_SCRIPT_INTERPRETERS = re.compile(r"^(python|pypy)(\d+(\.\d+)*)?$|^(sh|bash|dash|zsh|ksh)$")
#: Interpreter → the flags that make it run code given on the command line (or on stdin).
_INLINE_FLAGS: tuple[tuple[re.Pattern[str], frozenset[str]], ...] = (
    (re.compile(r"^(python|pypy)(\d+(\.\d+)*)?$"), frozenset({"-c", "-"})),
    (re.compile(r"^(sh|bash|dash|zsh|ksh|mksh|ash|fish|csh|tcsh)$"), frozenset({"-c", "-s", "-"})),
    (re.compile(r"^(node|nodejs|deno|bun)$"), frozenset({"-e", "--eval", "-p", "--print", "eval"})),
    (re.compile(r"^(perl|ruby)(\d+(\.\d+)*)?$"), frozenset({"-e", "-E"})),
    (re.compile(r"^php(\d+(\.\d+)*)?$"), frozenset({"-r"})),
    (re.compile(r"^(osascript|lua|luajit|tclsh|wish|Rscript)$"), frozenset({"-e"})),
)
#: Programs that evaluate their arguments as code whatever the flags.
_ALWAYS_INLINE = frozenset({"eval", "source", ".", "awk", "gawk", "mawk", "nawk", "expect"})
#: Programs whose job is to delete or destroy data.
_DELETERS = frozenset({"rm", "rmdir", "unlink", "shred", "srm", "wipe", "trash", "trash-put", "truncate"})
#: Tools that write to disks and partitions directly.
_RAW_DEVICE = frozenset(
    {"dd", "fdisk", "sfdisk", "cfdisk", "gdisk", "sgdisk", "parted", "wipefs", "blkdiscard", "hdparm",
     "mkswap", "losetup", "cryptsetup", "debugfs", "badblocks", "mke2fs", "tune2fs", "flashrom", "nvme"}
)
#: Programs that run their arguments as another user.
_OTHER_USER = frozenset({"sudo", "su", "doas", "pkexec", "runuser", "chroot"})
#: Device files a program may name without touching a disk.
_HARMLESS_DEVICES = frozenset(
    {"/dev/null", "/dev/zero", "/dev/random", "/dev/urandom", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/tty"}
)
#: Wrappers that run another program: name → how many leading words/flags to step over.
_WRAPPERS = frozenset(
    {"env", "timeout", "nice", "ionice", "nohup", "xargs", "stdbuf", "setsid", "time", "chrt", "taskset",
     "command", "exec", "busybox", "toybox", "unbuffer", "strace", "ltrace", "catchsegv", "flock", "watch",
     "parallel", "script", "faketime", "firejail", "proot", "systemd-run", "uv", "uvx", "pipx", "npx"}
)
_ENV_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def split(text: str) -> list[str] | None:
    """The command line as an argv (shell quoting, never a shell), or None when unreadable."""
    try:
        argv = shlex.split(text or "")
    except ValueError:
        return None
    return argv or None


def _base(word: str) -> str:
    return os.path.basename(word)


def _inner_programs(argv: Sequence[str]) -> list[list[str]]:
    """The argv and every argv a wrapper in it might run.

    A wrapper's options are not parsed (``timeout -s KILL 5 rm`` has an option with a value,
    ``env -S "rm -rf d"`` a whole command in one word): every suffix after a wrapper counts as
    a program it could run, and a word with spaces is split as a command line too. That can
    refuse a harmless proposal (the user can still pass it with --target), never miss one.
    """
    out: list[list[str]] = []
    todo: list[list[str]] = [list(argv)]
    while todo and len(out) < 256:  # bounded: a hostile argv cannot make this loop long
        cur = todo.pop()
        if not cur:
            continue
        out.append(cur)
        if _base(cur[0]) in _WRAPPERS:
            for i in range(1, min(len(cur), 64)):
                todo.append(cur[i:])
                if any(ch.isspace() for ch in cur[i]):
                    inner = split(cur[i])
                    if inner:
                        todo.append(inner)
    return out


def proposal_refusal(argv: Sequence[str]) -> str | None:
    """Why a command proposed in a message is never run, even when confirmed; None if it may be."""
    for inner in _inner_programs(argv):
        name = _base(inner[0])
        args = inner[1:]
        if name in _OTHER_USER:
            return f"`{name}` runs a command as another user"
        if name in _ALWAYS_INLINE:
            return f"`{name}` runs code written on the command line"
        for pattern, flags in _INLINE_FLAGS:
            if pattern.match(name) and any(_is_flag(a, flags) for a in args):
                return f"`{name}` with an inline-code flag runs code written on the command line"
        if name in _DELETERS:
            return f"`{name}` deletes data"
        if name == "find" and any(a in ("-delete", "-exec", "-execdir", "-ok", "-okdir") for a in args):
            return "`find` with -delete/-exec deletes or runs other programs"
        if name == "git" and args[:1] == ["clean"]:
            return "`git clean` deletes files"
        if name in _RAW_DEVICE or name.startswith("mkfs"):
            return f"`{name}` writes to disks or partitions directly"
        for a in args:
            dev = a.split("=", 1)[-1]
            if dev.startswith("/dev/") and dev not in _HARMLESS_DEVICES and not dev.startswith("/dev/fd/"):
                return f"it names the device {dev}"
    return None


def _is_flag(arg: str, flags: frozenset[str]) -> bool:
    if arg in flags:
        return True
    # Combined short flags: python -Sc, bash -xc, perl -we.
    if arg.startswith("-") and not arg.startswith("--") and len(arg) > 2:
        return any(f"-{ch}" in flags for ch in arg[1:])
    return False


def _inside(root: Path, word: str) -> Path | None:
    """The resolved path of ``word`` when it lies inside ``root``, else None (no I/O beyond stat)."""
    try:
        p = Path(os.path.expanduser(word))
        real = (p if p.is_absolute() else root / p).resolve()
    except (OSError, RuntimeError, ValueError):
        return None
    try:
        real.relative_to(root)
    except ValueError:
        return None
    return real


def _pathlike(word: str) -> bool:
    return "/" in word or word.startswith("~") or word in (".", "..")


def outside_workspace(argv: Sequence[str], root: str | os.PathLike[str]) -> list[str]:
    """Arguments (after the program) that name a path outside the workspace (``--out=/etc/x`` too)."""
    rootp = Path(root).resolve()
    found: list[str] = []
    for a in argv[1:]:
        value = a.split("=", 1)[1] if a.startswith("-") and "=" in a else a
        if value and _pathlike(value) and _inside(rootp, value) is None and value not in _HARMLESS_DEVICES:
            found.append(a)
    return found


def workspace_shape(argv: Sequence[str], root: str | os.PathLike[str], *, must_exist: bool = True) -> bool:
    """True when argv starts a script or executable inside the workspace, directly or as
    ``python|sh SCRIPT args…`` (no interpreter flags), with no argument pointing outside it.

    ``must_exist=False`` accepts a workspace path that is not there (yet): the stage then says
    "no such file" instead of asking to confirm a command that cannot run."""
    rootp = Path(root).resolve()
    first = argv[0]
    name = _base(first)
    if _SCRIPT_INTERPRETERS.match(name) and "/" not in first:
        if len(argv) < 2 or argv[1].startswith("-"):
            return False
        script = _inside(rootp, argv[1])
    else:
        if not _pathlike(first) and not first.endswith((".py", ".sh")):
            return False  # a bare program name is found on PATH, not in the workspace
        script = _inside(rootp, first)
        if script is not None and _is_interpreter_file(script):
            return False  # .venv/bin/python is an interpreter, not the user's program
    if script is None or (script.exists() or must_exist) and not script.is_file():
        return False
    return not outside_workspace(argv, rootp)


def _is_interpreter_file(path: Path) -> bool:
    names = {path.name}
    try:
        names.add(path.resolve().name)
    except OSError:
        pass
    return any(
        _SCRIPT_INTERPRETERS.match(n) or any(p.match(n) for p, _ in _INLINE_FLAGS) or n in _WRAPPERS | _OTHER_USER
        for n in names
    )


def build_request(
    target: str,
    origin: TargetOrigin | str | None,
    workspace: str | os.PathLike[str],
    previous: Mapping[str, object] | None = None,
) -> RunRequest | None:
    """The run request for ``target``: argv, origin (a WORKSPACE claim is checked), refusal,
    outside arguments and — when ``previous`` is the same argv — its confirmation.

    None when the target cannot be read as a command line (the stage reports that itself).
    """
    argv = split(target)
    if argv is None:
        return None
    root = Path(workspace or ".").resolve()
    kind = TargetOrigin(origin) if origin else TargetOrigin.USER
    if kind is TargetOrigin.WORKSPACE and not workspace_shape(argv, root, must_exist=False):
        kind = TargetOrigin.PROPOSAL
    confirmation = Confirmation.NONE.value
    if previous and list(previous.get("argv") or []) == argv and previous.get("origin") == kind.value:
        confirmation = str(previous.get("confirmation") or Confirmation.NONE.value)
    return RunRequest(
        argv=argv,
        display=shlex.join(argv),
        origin=kind.value,
        refusal=proposal_refusal(argv) if kind is TargetOrigin.PROPOSAL else None,
        outside_workspace=outside_workspace(argv, root),
        confirmation=confirmation,
    )


def program_identity(argv: Sequence[str], workspace: str | os.PathLike[str]) -> str | None:
    """The file that *is* the program: the script an interpreter runs, else the executable.

    None for an interpreter that runs no script (``python -c …``): it is never allowlisted.
    """
    if not argv:
        return None
    root = Path(workspace or ".").resolve()
    name = _base(argv[0])
    if _SCRIPT_INTERPRETERS.match(name) or any(p.match(name) for p, _ in _INLINE_FLAGS):
        if len(argv) < 2 or argv[1].startswith("-"):
            return None
        return _real(root, argv[1])
    if argv[0].endswith((".py", ".sh")) or "/" in argv[0]:
        return _real(root, argv[0])
    found = shutil.which(argv[0])
    return str(Path(found).resolve()) if found else None


def _real(root: Path, word: str) -> str | None:
    try:
        p = Path(os.path.expanduser(word))
        return str((p if p.is_absolute() else root / p).resolve())
    except (OSError, RuntimeError, ValueError):
        return None


def _entry_identity(entry: str, root: Path) -> str | None:
    if "/" in entry or entry.endswith((".py", ".sh")):
        return _real(root, entry)
    found = shutil.which(entry)
    return str(Path(found).resolve()) if found else None


def is_allowlisted(argv: Sequence[str] | None, allowlist: Iterable[str], workspace: str | os.PathLike[str]) -> bool:
    """True when an allowlist entry names exactly this program (see :func:`program_identity`)."""
    entries = [e.strip() for e in allowlist or () if e and e.strip()]
    if not argv or not entries:
        return False
    root = Path(workspace or ".").resolve()
    ident = program_identity(argv, root)
    if ident is None:
        return False
    return any(_entry_identity(e, root) == ident for e in entries)


def _is_command(argv: Sequence[str], root: Path) -> bool:
    """Whether words in a message look like a command line at all: the first is a path, a
    script, or a program on PATH (「启动为什么慢」 in quotes is prose, not a proposal)."""
    first = argv[0]
    if _pathlike(first) or first.endswith((".py", ".sh")):
        return True
    return shutil.which(first) is not None


def target_from_message(
    *,
    quoted: Sequence[str],
    programs: Sequence[str],
    after_run: Sequence[str],
    data_paths: Sequence[str],
    workspace: str | os.PathLike[str],
) -> tuple[str, TargetOrigin] | None:
    """What the message names to run, and who that makes its author (never USER).

    In order: a quoted command that starts a workspace script (``"python app.py --n 3"``); a
    script path in the text (inside the workspace: WORKSPACE, with no arguments; elsewhere a
    PROPOSAL); any other quoted command line; a command after "run"/"运行". Quoted data-file
    names are data, not commands. Found in the raw text, before injection stripping, so an
    injected command is still seen — and can only ever be a proposal.
    """
    root = Path(workspace or ".").resolve()
    candidates = [q for q in quoted if q not in data_paths]
    parsed = [(q, split(q)) for q in candidates]
    parsed = [(q, a) for q, a in parsed if a and _is_command(a, root)]
    for q, argv in parsed:
        if workspace_shape(argv, root):
            return q, TargetOrigin.WORKSPACE
    if programs:
        p = programs[0]
        for q, argv in parsed:  # the script inside a quoted command line: the whole line counts
            if p in argv:
                return q, TargetOrigin.PROPOSAL
        inside = _inside(root, p)
        return p, (TargetOrigin.WORKSPACE if inside is not None else TargetOrigin.PROPOSAL)
    if parsed:
        return parsed[0][0], TargetOrigin.PROPOSAL
    for cmd in after_run:
        argv = split(cmd)
        if argv and _is_command(argv, root) and not data_paths:
            return cmd, TargetOrigin.PROPOSAL
    return None
