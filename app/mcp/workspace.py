"""What every tool shares: the workspace (every path resolved inside it), the server's options
and the engine. Paths go through nodes/code/sandbox.py — ``..``, absolute paths elsewhere and
symlinks that lead out are refused in one line."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.mcp.engine import Engine
from app.mcp.errors import fail
from app.mcp.options import ServerOptions


@dataclass
class Workspace:
    """The served workspace; ``opts.workspace`` is its resolved root (see :meth:`open`)."""

    opts: ServerOptions
    engine: Engine

    @classmethod
    def open(cls, opts: ServerOptions) -> "Workspace":
        """The workspace of ``opts``, its root resolved; ValueError when it is no directory."""
        from nodes.code.sandbox import SandboxError, workspace_root

        try:
            root = workspace_root(opts.workspace)
        except SandboxError as e:
            raise ValueError(str(e)) from None
        opts = ServerOptions(workspace=root, allow_run=opts.allow_run, allowlist=tuple(opts.allowlist), offline=opts.offline)
        return cls(opts=opts, engine=Engine(opts))

    @property
    def root(self) -> Path:
        return self.opts.workspace

    def inside(self, path: str) -> Path:
        """``path`` (relative to the workspace, or absolute inside it) resolved; a tool error
        when it leads out."""
        from nodes.code.sandbox import SandboxError, resolve_inside

        try:
            return resolve_inside(self.root, path)
        except SandboxError as e:
            raise fail(str(e)) from None

    def file(self, path: str) -> Path:
        """An existing file inside the workspace."""
        real = self.inside(path)
        if not real.is_file():
            raise fail(f"{path}: no such file in the workspace {self.root}")
        return real

    def own_output(self, target: str) -> Path | None:
        """``target`` when it is one of the server's own outputs (under its runs folder, which
        may lie outside the workspace: PERFSCOUT_HOME); None otherwise (then :meth:`inside`
        applies)."""
        from nodes.code.sandbox import SandboxError, resolve_inside

        runs = Path(self.settings().runs_dir)
        if not Path(target).is_absolute() or not runs.is_dir():
            return None
        try:
            return resolve_inside(runs, target)
        except SandboxError:
            return None

    def readable(self, path: str) -> Path:
        """A file the server may read: one of its own outputs, or one inside the workspace."""
        return self.own_output(path) or self.inside(path)

    def names_path(self, spec: str) -> bool:
        """Whether ``spec`` names a path (a separator, a leading ``.`` or ``~``, or a name that
        exists at the workspace's root) rather than a thread id."""
        return "/" in spec or "\\" in spec or spec.startswith((".", "~")) or (self.root / spec).exists()

    def settings(self, may_run: bool = False) -> Any:
        return self.engine.settings(may_run)


def check_thread(thread: str) -> str:
    """A thread id as the checkpoint store and the runs folder take it (no path separators)."""
    if not isinstance(thread, str) or not thread.strip() or len(thread) > 200 or any(c in thread for c in "/\\\x00"):
        raise fail(f"thread: not a thread id: {thread!r}")
    return thread


def known(ps: Any, thread: str) -> Any:
    """The current result of ``thread``; a tool error when the store has no such thread."""
    snap = ps.graph.get_state(ps.config(thread))
    if not snap.values:
        raise fail(f"no thread {thread!r} in the checkpoint store")
    return ps.result(thread)
