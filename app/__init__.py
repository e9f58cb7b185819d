"""The shell around the graph: settings, model factory, checkpoints, decision log, CLI and API.

    >>> from app import PerfScout
    >>> result = PerfScout().ask("解读一下 traces/launch.json")

The API's names are loaded on first use (PEP 562): ``perfscout analyze FILE`` imports
``app.cli`` and the analyzer only, not LangGraph (about 2 s of CPU at every start; see the
end-to-end figures in docs/analyzer.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from app.api import AskResult, PerfScout, RequestError, StreamEvent, ThreadBusy, ask

__all__ = ["AskResult", "PerfScout", "RequestError", "StreamEvent", "ThreadBusy", "ask"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from app import api

        return getattr(api, name)
    raise AttributeError(f"module 'app' has no attribute {name!r}")
