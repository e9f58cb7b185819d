"""The run limit in the words a user types to raise it.

A program PerfScout runs gets ``NodeContext.run_timeout_s`` seconds, which app/settings.py reads
from ``PERFSCOUT_RUN_TIMEOUT`` (CLI, MCP server) or takes as ``Settings(run_timeout_s=…)``
(Python API). Every message about the limit — a profile cut there, a start-up that was never
ready — ends with the same hint, so no message names a knob the user cannot find. Plain strings:
the report (nodes/report/view.py) imports this without the collection toolkit.
"""

from __future__ import annotations

#: The environment variable (CLI, MCP) and the Settings field (Python API) of the run limit.
RUN_LIMIT_ENV = "PERFSCOUT_RUN_TIMEOUT"
RUN_LIMIT_FIELD = "run_timeout_s"


def raise_limit_hint(limit_s: float) -> str:
    """How to give the program more time than ``limit_s``: a concrete, larger value."""
    more = max(60, int(limit_s * 4))
    return (
        f"To run it longer, raise the limit: {RUN_LIMIT_ENV}={more} perfscout ask … "
        f"(seconds; Settings({RUN_LIMIT_FIELD}={more}) in the Python API)"
    )
