"""The exit codes of every ``perfscout`` command, in one place (README "Command line").

0 done (or a capability skipped with its reason) · 1 the turn failed or was refused, a budget
failed (``check``), decisions differ (``replay``), a thread is busy · 2 bad usage or bad input
(one line: what and where), an unknown thread, a file an ``ask`` names that cannot be read
(:func:`for_turn`) · 3 the graph asked a question and stdin is not
a terminal to answer it · 130 interrupted (Ctrl-C).
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any, Mapping

from graph.enums import Node


class ExitCode(IntEnum):
    OK = 0
    FAILED = 1
    USAGE = 2
    NEEDS_INPUT = 3
    INTERRUPTED = 130


#: The stages that read the data a message named (the analyze route): their validation failure
#: is the user's input — a missing file, a directory, a file no reader understands — not a run
#: that went wrong.
_INPUT_STAGES = frozenset({Node.DATA_LOCATOR, Node.ANALYZER})


def _node(name: Any) -> Node | None:
    """The node a stored error names (an earlier version's name too: graph/enums.py RENAMED_NODES)."""
    try:
        return Node(name)
    except ValueError:
        return None


def for_turn(status: str, route: str | None = None, error: Mapping[str, Any] | None = None) -> ExitCode:
    """The exit code of a graph turn (``ask``, ``resume``, ``analyze --thread``) from its outcome:
    the same contract as the commands that run no graph, so ``ask "解读一下 missing.json"`` exits 2
    like ``analyze missing.json``. A refused run (permission) and every other failure are 1."""
    if status == "needs_input":
        return ExitCode.NEEDS_INPUT
    if status != "failed":
        return ExitCode.OK
    err = error or {}
    if route == "analyze" and err.get("kind") == "validation" and _node(err.get("tool")) in _INPUT_STAGES:
        return ExitCode.USAGE
    return ExitCode.FAILED
