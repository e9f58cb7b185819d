"""The knobs of a collection, read once from the ``NodeContext``.

The timeout and the number of launches are first-class context fields; the rest are optional
``ctx.extra`` keys (documented in docs/collector.md) so a test or a user can point py-spy or
perf at another binary, change the sampling rate, or give a "ready" condition, without the
context growing a field per tool.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from nodes.collect.runner import DEFAULT_CAPTURE_LIMIT
from nodes.collect.sampler import DEFAULT_INTERVAL_S


@dataclass(frozen=True)
class CollectOptions:
    timeout_s: float = 30.0
    startup_runs: int = 5
    #: py-spy binary; None → next to the interpreter, then PATH.
    pyspy_path: str | None = None
    pyspy_rate: int = 100
    pyspy_native: bool = False
    #: Sample waiting threads too: a sleep in a hot path is where the time went.
    pyspy_idle: bool = True
    sample_interval_s: float = DEFAULT_INTERVAL_S
    capture_limit: int = DEFAULT_CAPTURE_LIMIT
    use_perf: bool = True
    perf_path: str | None = None
    #: Start-up is "ready" when a line of output matches this regex …
    ready_regex: str | None = None
    #: … or when this TCP port (on ready_host) accepts a connection. Else: when it exits.
    ready_port: int | None = None
    ready_host: str = "127.0.0.1"
    #: Also run a Python target once under ``-X importtime``.
    importtime: bool = True

    @classmethod
    def from_context(cls, ctx: Any) -> "CollectOptions":
        extra: Mapping[str, Any] = getattr(ctx, "extra", None) or {}
        port = extra.get("ready_port")
        return cls(
            timeout_s=float(getattr(ctx, "run_timeout_s", 30.0) or 30.0),
            startup_runs=max(1, int(getattr(ctx, "startup_runs", 5) or 5)),
            pyspy_path=extra.get("pyspy_path") or None,
            pyspy_rate=int(extra.get("pyspy_rate", 100)),
            pyspy_native=bool(extra.get("pyspy_native", False)),
            pyspy_idle=bool(extra.get("pyspy_idle", True)),
            sample_interval_s=float(extra.get("sample_interval_s", DEFAULT_INTERVAL_S)),
            capture_limit=int(extra.get("capture_limit", DEFAULT_CAPTURE_LIMIT)),
            use_perf=bool(extra.get("use_perf", True)),
            perf_path=extra.get("perf_path") or None,
            ready_regex=extra.get("ready_regex") or None,
            ready_port=int(port) if port not in (None, "") else None,
            ready_host=str(extra.get("ready_host", "127.0.0.1")),
            importtime=bool(extra.get("importtime", True)),
        )
