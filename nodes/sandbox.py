"""The workspace sandbox: every path a message names is resolved inside the workspace root.

``..``, absolute paths outside the root and symlinks that lead out are refused with a clear
message; they are never followed. Used by every node that opens a path from a message.
"""

from __future__ import annotations

import os
from pathlib import Path


class SandboxError(ValueError):
    """A path that is outside the workspace, or not a regular file where one is needed."""


def resolve_inside(root: str | os.PathLike[str], path: str | os.PathLike[str]) -> Path:
    """The real path of ``path`` (relative to ``root``) if it stays inside ``root``."""
    raw = str(path)
    if "\x00" in raw:
        raise SandboxError(f"{raw!r}: a path with a NUL byte is refused")
    base = Path(root).resolve()
    p = Path(os.path.expanduser(raw)) if raw.startswith("~") else Path(raw)
    candidate = p if p.is_absolute() else base / p
    real = candidate.resolve()
    if real != base and base not in real.parents:
        if candidate.is_symlink() or any(q.is_symlink() for q in candidate.parents if q.exists()):
            raise SandboxError(f"{raw}: a symlink that leads outside the workspace {base} is refused")
        raise SandboxError(f"{raw}: outside the workspace {base}; refused")
    return real


def regular_file_inside(root: str | os.PathLike[str], path: str | os.PathLike[str]) -> Path:
    """As ``resolve_inside``, and the path must be an existing regular file."""
    real = resolve_inside(root, path)
    if not real.exists():
        raise SandboxError(f"{path}: no such file")
    if not real.is_file():
        raise SandboxError(f"{path}: not a regular file")
    return real
