"""What nodes get from the shell around the graph: the model (if any) and run settings.

One typed runtime context: LangGraph's ``context_schema`` (graph/builder.py). The shell
(app/api.py) builds it from ``Settings`` for every invocation and passes it as
``invoke(..., context=ctx)``; a node reads it through the runtime (nodes/framework/stage.py
``node_context``), never from globals or the environment. The context a graph is built with
is the default for an invocation that passes none (a test calling a node directly, Studio).
Budgets and counters are not here: they live in the checkpointed state.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Iterator

from nodes.perf.limits import ReadLimits


@dataclass(frozen=True)
class CollectKnobs:
    """The knobs of a local collection that the context sets and the collection toolkit reads as
    they are: declared once here, held by :class:`NodeContext` and by
    ``nodes.collect.options.CollectOptions`` (docs/collector.md)."""

    #: py-spy binary (None: next to the interpreter, then PATH), its rate, native frames,
    #: and whether idle (waiting) threads are sampled — a sleep in a hot path is time spent.
    pyspy_path: str | None = None
    pyspy_rate: int = 100
    pyspy_native: bool = False
    pyspy_idle: bool = True
    #: Run ``perf stat`` beside the profile where the kernel allows it; its binary.
    use_perf: bool = True
    perf_path: str | None = None
    #: Start-up is "ready" when a line of output matches this regex, or when this TCP port
    #: (on ready_host) accepts a connection; else when the program exits.
    ready_regex: str | None = None
    ready_port: int | None = None
    ready_host: str = "127.0.0.1"
    #: Also run a Python target once under ``-X importtime``.
    importtime: bool = True


@dataclass(frozen=True)
class NodeContext(CollectKnobs):
    #: A LangChain chat model, or None when no model is configured (the offline default).
    llm: Any = None
    #: Where run folders (profiles, reports) go: <runs_dir>/<thread>/<time>/.
    runs_dir: str = ".perfscout/runs"
    #: Wall-clock seconds one model call may take, body included (nodes/framework/model_call.py).
    llm_timeout_s: float = 10.0
    #: Model seconds one turn may spend when the state carries no budget (None: 2 × the above).
    llm_turn_budget_s: float | None = None
    #: Wall-clock limit for a program PerfScout runs, in seconds.
    run_timeout_s: float = 30.0
    #: How many launches the startup measurement makes.
    startup_runs: int = 5
    #: Programs the user allowed in settings, matched exactly (nodes/collect/permission.py).
    allowlist: tuple[str, ...] = field(default_factory=tuple)
    #: The reader bounds (inflate cap, whole-file cap, event cap; nodes/perf/limits.py): the
    #: stage runner reads every node's data within them (nodes/framework/stage.py).
    read_limits: ReadLimits = field(default_factory=ReadLimits)
    # --- code search ---------------------------------------------------------------------
    #: The ripgrep binary (None: the one from the ripgrep wheel, then PATH).
    rg_path: str | None = None
    # --- Android -------------------------------------------------------------------------
    # None below means "the toolkit's own default" (named beside the code that uses it).
    #: Where adb is looked up (None: PATH), and how long one adb call may take.
    adb_path: str | None = None
    adb_timeout_s: float | None = None
    #: Seconds a frame capture or trace lasts when the message names none.
    android_capture_s: float | None = None
    #: Pause between two launches on a device, so the previous one's work has settled.
    android_launch_pause_s: float | None = None
    # --- local collection (nodes/collect/options.py reads these; docs/collector.md) ----------
    # The profiler's and the readiness knobs are CollectKnobs' (above); these two are None
    # here for "the toolkit's default", which CollectOptions fills in.
    #: psutil sampling interval, seconds.
    sample_interval_s: float | None = None
    #: Bytes of a program's output kept per stream.
    capture_limit: int | None = None


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
    check_cancelled()  # a progress report is a safe point to stop at (parsers call it often)
    import sys

    if "langgraph.config" not in sys.modules:  # no graph runs here: nobody streams, and a
        return  # parser used alone (perfscout analyze) must not pay for importing LangGraph
    from langgraph.config import get_stream_writer

    try:
        writer = get_stream_writer()
    except RuntimeError:  # not inside a graph run
        return
    writer(event)


# --- cancellation hook ---------------------------------------------------------------------
# A shell cannot stop a turn with a KeyboardInterrupt in its own thread: a signal only reaches
# the main thread, and LangGraph runs nodes in its own pool threads (and waits for them). So
# every shell — the CLI's Ctrl-C, PerfScout.cancel, the MCP server's cancellation; app/cancel.py
# — sets an Event around the turn; LangGraph copies the context into the node
# threads it starts (langgraph/pregel/_executor.py, copy_context), so the nodes see the same
# Event. Long waits check it at their safe points (nodes/collect/runner.py Launched.wait, every
# progress report) and raise TurnCancelled — a KeyboardInterrupt, so everything that cleans up
# after Ctrl-C (profile.py marks the run interrupted, Launched stops the whole process tree)
# does the same here, and the turn stops before its node's checkpoint: incomplete, resumable.

class CancelRequest:
    """A request to stop one turn. Delivered once: the cleanup that follows (stopping the
    process tree, letting py-spy write its file) waits too, and must not be interrupted again."""

    def __init__(self) -> None:
        self.requested = threading.Event()
        self._delivered = False
        self._lock = threading.Lock()

    def cancel(self) -> None:
        self.requested.set()

    def take(self) -> bool:
        """True exactly once after ``cancel()``: the caller raises."""
        if not self.requested.is_set():
            return False
        with self._lock:
            if self._delivered:
                return False
            self._delivered = True
            return True


_CANCEL: ContextVar[CancelRequest | None] = ContextVar("perfscout_cancel", default=None)


class TurnCancelled(KeyboardInterrupt):
    """The shell asked the running turn to stop (as Ctrl-C would)."""


@contextmanager
def cancellable(request: CancelRequest) -> Iterator[CancelRequest]:
    """Run the block so that ``request.cancel()`` (from any thread) stops the turn at its next
    safe point."""
    token = _CANCEL.set(request)
    try:
        yield request
    finally:
        try:
            _CANCEL.reset(token)
        except ValueError:  # a generator closed from another context (its own is gone with it)
            pass


def current_cancel_request() -> CancelRequest | None:
    """The request the surrounding turn runs under, or None."""
    return _CANCEL.get()


def check_cancelled() -> None:
    """Raise TurnCancelled (once) when the surrounding turn was asked to stop; else nothing."""
    request = _CANCEL.get()
    if request is not None and request.take():
        raise TurnCancelled("the turn was cancelled")
