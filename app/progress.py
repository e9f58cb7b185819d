"""Terminal progress for a running turn: which node runs, a collection countdown, parsing progress.

Drawn with ``rich`` on stderr from the same ``StreamEvent``s the API's ``stream()`` yields, so
the CLI shows exactly what the graph reports. It is only built when stderr is a terminal and
the output is not ``--json``: pipes and scripts get no escape codes. The live display stops
whenever the graph asks a question, so the prompt is never drawn over.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, Progress, ProgressColumn, SpinnerColumn, Task, TextColumn
from rich.text import Text

from app.api import StreamEvent


def _size(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"


class DetailColumn(ProgressColumn):
    """A countdown when the node announced a deadline, else done/total, else time spent."""

    def render(self, task: Task) -> Text:
        deadline = task.fields.get("deadline")
        if deadline is not None:
            left = max(0.0, deadline - time.monotonic())
            return Text(f"{left:4.0f} s left", style="yellow")
        if task.total:
            unit = task.fields.get("unit") or ""
            if unit == "bytes":
                return Text(f"{_size(task.completed)} / {_size(task.total)}")
            return Text(f"{task.completed:.0f} / {task.total:.0f} {unit}".rstrip())
        return Text(f"{task.elapsed or 0:4.1f} s", style="dim")


class ProgressView:
    """An ``on_event`` callback for ``PerfScout.ask``/``resume``; call ``close()`` when done."""

    def __init__(self, console: Console | None = None):
        self.console = console or Console(stderr=True)
        self._progress: Progress | None = None
        self._task: Any = None
        self._started: float = 0.0

    def _ensure(self) -> Progress:
        if self._progress is None:
            self._progress = Progress(
                SpinnerColumn(),
                TextColumn("{task.description}"),
                BarColumn(bar_width=24),
                DetailColumn(),
                console=self.console,
                transient=True,
            )
            self._progress.start()
            self._task = self._progress.add_task("starting", total=None)
        return self._progress

    def __call__(self, ev: StreamEvent) -> None:
        if ev.kind == "node_start":
            p = self._ensure()
            self._started = time.monotonic()
            p.reset(self._task, total=None, description=f"{ev.node}", deadline=None, unit="")
        elif ev.kind == "progress":
            self._on_progress(ev.data)
        elif ev.kind == "node_end":
            took = time.monotonic() - self._started if self._started else 0.0
            self.console.print(Text(f"✓ {ev.node}", style="green") + Text(f"  {took:.1f} s", style="dim"))
        elif ev.kind in ("interrupt", "result"):
            self.close()

    def _on_progress(self, data: dict[str, Any]) -> None:
        p = self._ensure()
        stage = data.get("progress") or "working"
        message = data.get("message") or ""
        label = f"{stage}: {message}" if message else stage
        if data.get("deadline_s") is not None:
            p.update(self._task, description=label, deadline=time.monotonic() + float(data["deadline_s"]))
            return
        fields: dict[str, Any] = {"description": label, "unit": data.get("unit") or "", "deadline": None}
        if data.get("total"):
            fields["total"] = float(data["total"])
        if data.get("done") is not None:
            fields["completed"] = float(data["done"])
        p.update(self._task, **fields)

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
            self._task = None


def progress_view(as_json: bool) -> ProgressView | None:
    """A view when stderr is a terminal and the output is for people; None (quiet) otherwise."""
    if as_json or not sys.stderr.isatty():
        return None
    return ProgressView()
