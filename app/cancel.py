"""Stopping a running turn: one mechanism for Ctrl-C (CLI), ``PerfScout.cancel`` (API) and a
cancelled MCP call.

Why a mechanism at all: LangGraph runs a node in a pool thread, and a signal only reaches the
main thread. A ``KeyboardInterrupt`` raised there leaves the node running — LangGraph's executor
waits for it on the way out — so a profiled program ran on to its time limit after Ctrl-C.

So every shell stops a turn the same way: the turn runs under a
``nodes.framework.context.CancelRequest`` (LangGraph copies the context into its node threads);
stopping sets it; the node raises ``TurnCancelled`` (a ``KeyboardInterrupt``) at its next safe
point — ``Launched.wait`` in nodes/collect/runner.py checks every 0.1 s, every progress report
checks — and the clean-up that follows Ctrl-C stops the program's whole process tree. The turn
ends before that node's checkpoint: ``incomplete``, resumable.

* ``RunningTurns`` (one per ``PerfScout``) knows each turn that runs and its request;
  ``PerfScout.cancel`` sets them. A turn started under a request of its caller's — the MCP
  server's ``drive`` (app/mcp/cancellation.py) runs each call under one — uses that request, so the
  server's cancellation and ``PerfScout.cancel`` stop the same turn.
* ``sigint_cancels`` (the CLI) turns the first Ctrl-C during a turn into that cancellation. A
  Ctrl-C with no turn running, or a second one, is the usual ``KeyboardInterrupt``.
"""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from typing import Callable, Iterator

from nodes.framework.context import CancelRequest, cancellable, current_cancel_request

__all__ = ["CancelRequest", "RunningTurns", "cancellable", "sigint_cancels"]


class RunningTurns:
    """The turns running right now, by thread id, each with the request that stops it."""

    def __init__(self) -> None:
        # Re-entrant: ``cancel`` runs in a signal handler, which may interrupt this very thread
        # while it holds the lock in ``running``.
        self._lock = threading.RLock()
        self._turns: dict[str, list[CancelRequest]] = {}

    @contextmanager
    def running(self, thread_id: str) -> Iterator[CancelRequest]:
        """Run the block as the turn of ``thread_id``: ``cancel`` stops it at its next safe point."""
        request = current_cancel_request()
        if request is not None:  # the caller's (the MCP server's): one request, one turn
            with self._registered(thread_id, request):
                yield request
            return
        request = CancelRequest()
        with self._registered(thread_id, request), cancellable(request):
            yield request

    @contextmanager
    def _registered(self, thread_id: str, request: CancelRequest) -> Iterator[None]:
        with self._lock:
            self._turns.setdefault(thread_id, []).append(request)
        try:
            yield
        finally:
            with self._lock:
                left = [r for r in self._turns.get(thread_id, []) if r is not request]
                if left:
                    self._turns[thread_id] = left
                else:
                    self._turns.pop(thread_id, None)

    def cancel(self, thread_id: str | None = None) -> list[str]:
        """Ask the turn of ``thread_id`` (None: every running turn) to stop. Returns the threads
        newly asked; a turn already asked is not counted again."""
        asked: list[str] = []
        with self._lock:
            for tid, requests in list(self._turns.items()):
                if thread_id is not None and tid != thread_id:
                    continue
                for r in requests:
                    if not r.requested.is_set():
                        r.cancel()
                        if tid not in asked:
                            asked.append(tid)
        return asked

    def active(self) -> list[str]:
        with self._lock:
            return list(self._turns)


@contextmanager
def sigint_cancels(turns: RunningTurns, on_cancel: Callable[[list[str]], None] | None = None) -> Iterator[None]:
    """While the block runs, the first SIGINT during a turn cancels that turn (``on_cancel`` is
    told which); the turn then raises ``TurnCancelled`` out of the block within a fraction of a
    second. SIGINT with no turn running, or when the turn was already asked, raises
    ``KeyboardInterrupt`` as Python's own handler does. Only in the main thread (the only one
    signals reach); elsewhere the block runs unchanged."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: object) -> None:
        asked = turns.cancel()
        if not asked:
            raise KeyboardInterrupt
        if on_cancel is not None:
            on_cancel(asked)

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
