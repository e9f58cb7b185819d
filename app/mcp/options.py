"""What the person who started ``perfscout mcp`` allowed: fixed for the server's life."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class ServerOptions:
    """The server's flags (``--workspace``, ``--allow-run``, ``--allow``, ``--offline``)."""

    workspace: Path
    #: ``--allow-run``: any program may run (a call must still say allow_run=true).
    allow_run: bool = False
    #: ``--allow PROG`` (and PERFSCOUT_ALLOWLIST): only these may run, on a call's allow_run=true.
    allowlist: tuple[str, ...] = field(default_factory=tuple)
    offline: bool = False

    @property
    def runs_anything(self) -> bool:
        return self.allow_run or bool(self.allowlist)

    def describe(self) -> str:
        if self.allow_run:
            return "this server was started with --allow-run"
        if self.allowlist:
            return f"this server allows only {', '.join(self.allowlist)} (--allow)"
        return "this server was started without --allow-run or --allow, so it runs no program"
