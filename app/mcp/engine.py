"""The PerfScout instances the tools call, built on first use (the graph and LangGraph are
imported then, never while the server starts: tests/test_mcp_start.py)."""

from __future__ import annotations

import os
import threading
from typing import Any

from app.mcp.options import ServerOptions


class Engine:
    """Two PerfScouts on one checkpoint store: one that may run what the server allows, one that
    runs nothing (its allowlist is empty) for calls without allow_run=true."""

    def __init__(self, opts: ServerOptions):
        self.opts = opts
        self._lock = threading.Lock()
        self._ps: dict[bool, Any] = {}

    def settings(self, may_run: bool) -> Any:
        """The settings of a call: state under ``<workspace>/.perfscout`` unless PERFSCOUT_HOME
        says otherwise; the server's allowlist only when ``may_run``."""
        from app.settings import Settings

        overrides: dict[str, Any] = {"offline": self.opts.offline or None}
        if not os.environ.get("PERFSCOUT_HOME"):
            overrides["state_dir"] = self.opts.workspace / ".perfscout"
        overrides["allowlist"] = tuple(self.opts.allowlist) if may_run else ()
        return Settings.from_env(**overrides)

    def ps(self, may_run: bool) -> Any:
        """The PerfScout for a call; ``may_run`` only when the server and the call both say yes
        (app/mcp/permission.py decides)."""
        from app.api import PerfScout

        with self._lock:
            if may_run not in self._ps:
                self._ps[may_run] = PerfScout(self.settings(may_run), workspace=self.opts.workspace)
            return self._ps[may_run]

    def close(self) -> None:
        with self._lock:
            for ps in self._ps.values():
                ps.close()
            self._ps.clear()
