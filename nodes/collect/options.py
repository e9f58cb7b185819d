"""The knobs of a collection: the collection toolkit's view of the ``NodeContext``.

The context (nodes/framework/context.py) is where they are set, typed, per invocation; this maps them
onto the names the collection code uses and fills in the toolkit's own defaults.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from nodes.collect.runner import DEFAULT_CAPTURE_LIMIT
from nodes.collect.sampler import DEFAULT_INTERVAL_S
from nodes.framework.context import CollectKnobs


@dataclass(frozen=True)
class CollectOptions(CollectKnobs):
    """The context's CollectKnobs, and the knobs the context leaves to the toolkit's defaults."""

    timeout_s: float = 30.0
    startup_runs: int = 5
    sample_interval_s: float = DEFAULT_INTERVAL_S
    capture_limit: int = DEFAULT_CAPTURE_LIMIT

    @classmethod
    def from_context(cls, ctx: Any) -> "CollectOptions":
        return cls(
            timeout_s=float(ctx.run_timeout_s or 30.0),
            startup_runs=max(1, int(ctx.startup_runs or 5)),
            pyspy_path=ctx.pyspy_path or None,
            pyspy_rate=int(ctx.pyspy_rate),
            pyspy_native=bool(ctx.pyspy_native),
            pyspy_idle=bool(ctx.pyspy_idle),
            sample_interval_s=DEFAULT_INTERVAL_S if ctx.sample_interval_s is None else float(ctx.sample_interval_s),
            capture_limit=DEFAULT_CAPTURE_LIMIT if ctx.capture_limit is None else int(ctx.capture_limit),
            use_perf=bool(ctx.use_perf),
            perf_path=ctx.perf_path or None,
            ready_regex=ctx.ready_regex or None,
            ready_port=int(ctx.ready_port) if ctx.ready_port not in (None, "") else None,
            ready_host=str(ctx.ready_host),
            importtime=bool(ctx.importtime),
        )
