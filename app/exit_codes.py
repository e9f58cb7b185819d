"""The exit codes of every ``perfscout`` command, in one place (README "Command line").

0 done (or a capability skipped with its reason) · 1 the turn failed or was refused, a budget
failed (``check``), decisions differ (``replay``), a thread is busy · 2 bad usage or bad input
(one line: what and where), an unknown thread · 3 the graph asked a question and stdin is not
a terminal to answer it · 130 interrupted (Ctrl-C).
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    FAILED = 1
    USAGE = 2
    NEEDS_INPUT = 3
    INTERRUPTED = 130
