"""How a tool reports that it failed or cannot run here — plain exceptions, no framework.

Toolkits (nodes/collect, nodes/code, nodes/android, nodes/perf …) raise these; the stage runner
(nodes/framework/stage.py) turns them into the typed ``last_error`` / ``skipped`` the policies read. So a
toolkit stays testable without LangGraph, and no toolkit builds a state update.
"""

from __future__ import annotations

from typing import Any

from graph.enums import ErrorKind


class ToolFailure(Exception):
    """A tool call that failed in a way the retry policy must know about (``kind``).

    ``partial``: what the stage did establish before it failed and the policy must still see
    (the run request a refusal is about), kept beside the error.
    """

    def __init__(self, kind: ErrorKind, message: str, partial: dict[str, Any] | None = None):
        self.kind = ErrorKind(kind)
        self.message = message
        self.partial: dict[str, Any] = dict(partial or {})
        super().__init__(message)


class StageSkipped(Exception):
    """A capability that cannot run here (no device, no py-spy …): a typed skip, not a failure."""

    def __init__(self, reason: str, partial: dict[str, Any] | None = None):
        self.reason = reason
        self.partial: dict[str, Any] = dict(partial or {})
        super().__init__(reason)


class NeedsAnswer(Exception):
    """The stage needs a field the user can supply (which device, which app …): a question."""

    def __init__(self, field: str, prompt: str, choices: list[str] | None = None, partial: dict[str, Any] | None = None):
        self.field = field
        self.prompt = prompt
        self.choices = list(choices or [])
        self.partial: dict[str, Any] = dict(partial or {})
        super().__init__(prompt)
