"""The workspace sandbox: every path a message names is resolved inside the workspace root.

``..``, absolute paths outside the root, ``~`` that expands outside it, NUL bytes and symlinks
that lead out are refused with a clear one-line message; they are never followed. Used by every
node that opens a path from a message, and by the code tools before they hand a path to ``rg``.

Resolution checks the *real* path (every symlink resolved), so a symlinked directory in the
middle of a path is caught as well as a symlinked file. Opening re-checks what was actually
opened (``/proc/self/fd``), so a symlink swapped in between the check and the open is caught too.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

#: Longest path string accepted; longer ones are refused before touching the file system.
MAX_PATH_CHARS = 4096


class SandboxError(ValueError):
    """A path that is outside the workspace, or not a regular file where one is needed."""


class PathRefused(SandboxError):
    """The path leads outside the workspace (``..``, absolute, ``~``, symlink) or is malformed."""


class PathNotFound(SandboxError):
    """The path is inside the workspace but names nothing, or not the kind of file needed."""


def workspace_root(root: str | os.PathLike[str]) -> Path:
    """The real path of the workspace root, which must be an existing directory."""
    raw = os.fspath(root)
    if "\x00" in raw:
        raise PathRefused(f"{raw!r}: a workspace path with a NUL byte is refused")
    try:
        base = Path(os.path.expanduser(raw or ".")).resolve()
    except (OSError, RuntimeError) as e:
        raise PathRefused(f"{raw}: the workspace cannot be resolved ({e})") from None
    if not base.is_dir():
        raise PathNotFound(f"{raw}: the workspace is not an existing directory")
    return base


def is_inside(base: Path, real: Path) -> bool:
    return real == base or base in real.parents


def resolve_inside(root: str | os.PathLike[str], path: str | os.PathLike[str]) -> Path:
    """The real path of ``path`` (relative to ``root``) if it stays inside ``root``."""
    raw = os.fspath(path)
    if "\x00" in raw:
        raise PathRefused(f"{raw!r}: a path with a NUL byte is refused")
    if len(raw) > MAX_PATH_CHARS:
        raise PathRefused(f"{raw[:60]}…: a path longer than {MAX_PATH_CHARS} characters is refused")
    base = workspace_root(root)
    p = Path(os.path.expanduser(raw)) if raw.startswith("~") else Path(raw)
    candidate = p if p.is_absolute() else base / p
    try:
        real = candidate.resolve()
    except RuntimeError:
        raise PathRefused(f"{raw}: a symlink loop is refused") from None
    except OSError as e:
        raise PathRefused(f"{raw}: cannot be resolved ({e.strerror or e})") from None
    if not is_inside(base, real):
        if _has_symlink(candidate):
            raise PathRefused(f"{raw}: a symlink that leads outside the workspace {base} is refused")
        raise PathRefused(f"{raw}: outside the workspace {base}; refused. {allow_hint(real)}")
    return real


def allow_hint(real: Path) -> str:
    """How to let PerfScout read a file outside the workspace: make its folder the workspace."""
    folder = real if real.is_dir() else real.parent
    return (f"To allow it, choose a workspace that contains it: perfscout … --workspace {folder} "
            f"(Python API: PerfScout(workspace={str(folder)!r}))")


def _has_symlink(candidate: Path) -> bool:
    try:
        return candidate.is_symlink() or any(q.is_symlink() for q in candidate.parents if q.exists())
    except OSError:
        return False


def regular_file_inside(root: str | os.PathLike[str], path: str | os.PathLike[str]) -> Path:
    """As ``resolve_inside``, and the path must be an existing regular file."""
    real = resolve_inside(root, path)
    if not real.exists():
        raise PathNotFound(f"{path}: no such file")
    if not real.is_file():
        raise PathNotFound(f"{path}: not a regular file")
    return real


def relative_name(root: str | os.PathLike[str], real: Path) -> str:
    """``real`` as a workspace-relative POSIX path ("." for the root itself)."""
    rel = real.relative_to(workspace_root(root)).as_posix()
    return rel or "."


def read_bytes_inside(root: str | os.PathLike[str], path: str | os.PathLike[str], limit: int) -> tuple[bytes, int]:
    """Up to ``limit`` bytes of a regular file inside ``root``, and the file's full size.

    The file is opened without following a final symlink, and the descriptor's real path is
    checked again, so a path swapped for a symlink after ``resolve_inside`` is still refused.
    """
    base = workspace_root(root)
    real = regular_file_inside(base, path)
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(real, flags)
    except OSError as e:
        raise PathRefused(f"{path}: cannot be opened ({e.strerror or e})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise PathNotFound(f"{path}: not a regular file")
        proc = Path(f"/proc/self/fd/{fd}")
        if proc.exists():
            opened = Path(os.readlink(proc))
            if not is_inside(base, opened):
                raise PathRefused(f"{path}: changed to lead outside the workspace {base}; refused")
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(max(0, limit))
        return data, st.st_size
    finally:
        os.close(fd)
