"""What nodes get from the shell around the graph: the model (if any) and run settings.

Built once by ``graph.builder.build_graph`` from its arguments; nodes read it, never globals or
the environment, so a test can build a graph with exactly the context it needs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class NodeContext:
    #: A LangChain chat model, or None when no model is configured (the offline default).
    llm: Any = None
    #: Where run folders (profiles, reports) go: <runs_dir>/<thread>/<time>/.
    runs_dir: str = ".perfscout/runs"
    #: Wall-clock limit for a program PerfScout runs, in seconds.
    run_timeout_s: float = 30.0
    #: How many launches the startup measurement makes.
    startup_runs: int = 5
    #: Commands (argv[0] basenames or script paths) the user allowed in settings.
    allowlist: tuple[str, ...] = field(default_factory=tuple)
    #: Where adb is looked up (None: PATH).
    adb_path: str | None = None
    #: Extra options nodes may read (kept small and documented where read).
    extra: dict[str, Any] = field(default_factory=dict)


def thread_id() -> str | None:
    """The graph thread this node runs in, or None outside a graph run (a direct call in a test)."""
    import sys

    if "langgraph.config" not in sys.modules:  # no graph has run in this process
        return None
    from langgraph.config import get_config

    try:
        tid = ((get_config() or {}).get("configurable") or {}).get("thread_id")
    except RuntimeError:  # not inside a graph run
        return None
    return str(tid) if tid is not None else None


# --- progress hook -------------------------------------------------------------------------
# Long work (a collection with a time limit, parsing a large file) tells the shell how far it
# is through LangGraph's "custom" stream: the CLI draws it, the API's stream() yields it, Studio
# shows it. Any code running inside a node may call these (no context object to thread through
# parsers); outside a graph run, or when nobody streams "custom", they do nothing.


def report_progress(
    stage: str,
    *,
    done: float | None = None,
    total: float | None = None,
    unit: str = "",
    message: str = "",
) -> None:
    """How far ``stage`` is: e.g. ``report_progress("parse", done=bytes_read, total=size, unit="bytes")``.

    Call it at most every few percent (each call is one stream event).
    """
    _emit({"progress": stage, "done": done, "total": total, "unit": unit, "message": message})


def report_deadline(stage: str, seconds: float, message: str = "") -> None:
    """``stage`` may take up to ``seconds`` from now (the CLI shows a countdown): a collection's limit."""
    _emit({"progress": stage, "deadline_s": float(seconds), "message": message})


def _emit(event: dict[str, Any]) -> None:
    import sys

    if "langgraph.config" not in sys.modules:  # no graph runs here: nobody streams, and a
        return  # parser used alone (perfscout analyze) must not pay for importing LangGraph
    from langgraph.config import get_stream_writer

    try:
        writer = get_stream_writer()
    except RuntimeError:  # not inside a graph run
        return
    writer(event)
