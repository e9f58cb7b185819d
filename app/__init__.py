"""The shell around the graph: settings, model factory, checkpoints, decision log, CLI and API.

    >>> from app import PerfScout
    >>> result = PerfScout().ask("解读一下 traces/launch.json")
"""

from app.api import AskResult, PerfScout, RequestError, StreamEvent, ThreadBusy, ask

__all__ = ["AskResult", "PerfScout", "RequestError", "StreamEvent", "ThreadBusy", "ask"]
