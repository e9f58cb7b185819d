"""The one error type the perf-data readers raise on bad input."""

from __future__ import annotations


class PerfDataError(ValueError):
    """Input that cannot be read as performance data.

    The message is one line that names the file and the problem; the CLI prints it as is and
    exits non-zero. Parsers raise this and nothing else for bad input (property tests hold
    them to it).
    """

    def __init__(self, path: str | None, problem: str):
        self.path = path
        self.problem = problem
        super().__init__(f"{path}: {problem}" if path else problem)
