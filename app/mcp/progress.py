"""A turn's StreamEvents as MCP progress notifications.

``progress`` is the seconds since the call began (so it always increases, as the spec
requires); ``total`` is set while a collection counts down to its limit, so a client can draw
how far it is; ``message`` says which node runs and what it does."""

from __future__ import annotations

import logging
import time
from typing import Any

log = logging.getLogger("perfscout.mcp")

#: Seconds between countdown notifications while a collection runs.
TICK_S = 1.0


class Progress:
    """Progress of one call, sent through ``ctx.report_progress`` (an SDK Context, or anything
    with that coroutine: tests pass a recorder)."""

    def __init__(self, ctx: Any):
        self.ctx = ctx
        self.t0 = time.monotonic()
        self.last = -1.0
        self.node: str | None = None
        self.deadline: tuple[float, float, str] | None = None  # (ends at, total, label)

    async def send(self, message: str, total: float | None = None) -> None:
        p = round(time.monotonic() - self.t0, 3)
        if p <= self.last:
            p = self.last + 0.001
        self.last = p
        try:
            await self.ctx.report_progress(p, total, message)
        except Exception as e:  # a client that went away must not fail the turn
            log.debug("progress not sent: %s", e)

    async def event(self, ev: Any) -> None:
        """One StreamEvent of app/api.py (node_start, node_end, interrupt, progress)."""
        if ev.kind == "node_start":
            self.node, self.deadline = ev.node, None
            await self.send(f"{ev.node}: running")
        elif ev.kind == "node_end":
            self.deadline = None
            await self.send(f"{ev.node}: done")
        elif ev.kind == "interrupt":
            self.deadline = None
            await self.send(f"{ev.node}: asks a question")
        elif ev.kind == "progress":
            d = ev.data or {}
            stage = d.get("progress") or self.node or "working"
            label = f"{stage}: {d.get('message')}" if d.get("message") else str(stage)
            if d.get("deadline_s") is not None:
                secs = float(d["deadline_s"])
                total = round(time.monotonic() - self.t0 + secs, 3)
                self.deadline = (time.monotonic() + secs, total, label)
                await self.send(f"{label} — at most {secs:.0f} s", total)
            elif d.get("total"):
                unit = d.get("unit") or ""
                await self.send(f"{label} — {d.get('done') or 0:.0f} / {float(d['total']):.0f} {unit}".rstrip())
            else:
                await self.send(label)

    async def tick(self) -> None:
        """Called every :data:`TICK_S` while nothing else happens: the collection's countdown."""
        if self.deadline is None:
            return
        ends, total, label = self.deadline
        left = ends - time.monotonic()
        if left <= 0:
            self.deadline = None
            await self.send(f"{label} — at its time limit, stopping")
            return
        await self.send(f"{label} — {left:.0f} s left", total)
