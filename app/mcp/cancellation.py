"""Turns in worker threads: progress forwarded, a cancelled call stops as Ctrl-C does.

A client's ``notifications/cancelled`` (the user presses Esc in the agent) or the server
shutting down cancels the call's task; the turn's worker thread runs under a
``nodes.framework.context.CancelRequest``, which is then set, so the node stops at its next safe
point (``Launched.wait`` in nodes/collect/runner.py, every progress report) with a
KeyboardInterrupt and the usual clean-up stops the whole process tree. The thread is left before
that node's checkpoint — incomplete, unlocked, resumable with ``continue``.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Any, Callable

import anyio

from app.mcp.progress import TICK_S, Progress

log = logging.getLogger("perfscout.mcp")

#: Seconds a cancelled turn gets to stop its process tree before the server stops waiting.
STOP_WAIT_S = 30.0


async def drive(ctx: Any, run: Callable[[Callable[[Any], None]], Any]) -> Any:
    """Run one turn in a worker thread — ``run(on_event)`` calls the API (``ask``, ``resume``,
    ``continue_run`` with ``on_event``) and returns its AskResult — forwarding its progress.

    Cancellation asks the turn to stop as Ctrl-C would and waits, shielded, until its process
    tree is gone (at most :data:`STOP_WAIT_S`)."""
    from app.cancel import CancelRequest, cancellable

    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
    request = CancelRequest()

    def put(item: tuple[str, Any]) -> None:
        try:
            loop.call_soon_threadsafe(queue.put_nowait, item)
        except RuntimeError:  # the event loop is gone (server shut down)
            pass

    def work() -> None:
        try:
            with cancellable(request):
                value = run(lambda ev: put(("event", ev)))
        except BaseException as e:  # handed to the caller
            put(("error", e))
        else:
            put(("done", value))

    worker = threading.Thread(target=work, name="perfscout-mcp-turn", daemon=True)
    worker.start()
    progress = Progress(ctx)
    try:
        while True:
            try:
                tag, value = await asyncio.wait_for(queue.get(), timeout=TICK_S)
            except asyncio.TimeoutError:
                await progress.tick()
                continue
            if tag == "event":
                if value.kind != "result":
                    await progress.event(value)
            elif tag == "error":
                raise value
            else:
                return value
    except BaseException:
        if worker.is_alive():
            request.cancel()
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(worker.join, STOP_WAIT_S)
            if worker.is_alive():
                log.warning("a cancelled turn did not stop within %.0f s; it goes on in the background", STOP_WAIT_S)
        raise


async def in_thread(fn: Callable[[], Any]) -> Any:
    """A blocking call (analysis, search, rendering) in a worker thread; a cancelled call waits
    for it (these calls run no program and end on their own)."""
    return await anyio.to_thread.run_sync(fn)
