"""Which file names are performance data: the one table the router, the extractor and the
analyzer's registry (nodes/perf/formats.py) share.

Two kinds of extension. *Trace-only* ones are never anything but captured data, so a named file
with one is data whether it exists or not. *Shared* ones (``.json``, ``.txt``, ``.trace``, …)
are data only when the content says so: the extractor sniffs an existing file with the
analyzer's own registry (``package.json`` is not a trace; ``trace.json`` with traceEvents is).
A name with a shared extension that does not exist yet is taken as data (the analyzer then says
"no such file"), which is what "解读一下 traces/launch.json" means.
"""

from __future__ import annotations

#: Extensions only performance captures and profiles use (longest first).
TRACE_ONLY: tuple[str, ...] = (
    ".speedscope.json", ".perfetto-trace", ".cpuprofile", ".systrace", ".pftrace", ".gfxtrace",
    ".utrace", ".ctrace", ".atrace", ".pstats", ".hprof", ".prof", ".perf", ".pb",
)
#: Extensions data shares with other files: data when the content says so.
SHARED: tuple[str, ...] = (".json.gz", ".trace", ".json", ".html", ".txt", ".log", ".csv", ".gz", ".data")
#: Every extension a data file may have.
DATA_EXTENSIONS: tuple[str, ...] = TRACE_ONLY + SHARED
#: Extensions of programs PerfScout can run.
PROGRAM_EXTENSIONS: tuple[str, ...] = (".py", ".sh")


def extension_pattern(extensions: tuple[str, ...] = DATA_EXTENSIONS) -> str:
    """The extensions as a regex alternation without the leading dots, longest first."""
    import re

    return "|".join(re.escape(e[1:]) for e in sorted(extensions, key=len, reverse=True))


def is_trace_only(name: str) -> bool:
    return name.lower().endswith(TRACE_ONLY)


def has_data_extension(name: str) -> bool:
    return name.lower().endswith(DATA_EXTENSIONS)
