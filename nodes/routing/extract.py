"""Deterministic extraction of the facts a message carries: paths, programs, packages, lines.

No model: what the user typed is what PerfScout acts on. The orchestrator stores what it finds
in the state, where the policies and the nodes read it.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

from nodes.perf.filetypes import DATA_EXTENSIONS, PROGRAM_EXTENSIONS, extension_pattern, is_trace_only

_QUOTED = re.compile(r"[\"'`“”「」『』]([^\"'`“”「」『』]{1,400})[\"'`“”「」『』]")
_PATHLIKE = re.compile(r"(?<![\w./-])((?:\.{1,2}/|/|~/)?[\w.-]+(?:/[\w.-]+)*\.[A-Za-z][\w.-]*)(?![\w/-])")
# Android package names: at least two dots, lower-case-first segments (Android's grammar).
_PACKAGE = re.compile(r"(?<![\w./-])([a-zA-Z][a-zA-Z0-9_]*(?:\.[a-zA-Z][a-zA-Z0-9_]*){1,})(?![\w/-])")
# "run X", "运行 X", "执行 X" — the words up to the end of the clause. Whether X is a command at
# all (a path or a program on PATH) is for the caller to decide.
_AFTER_RUN = re.compile(
    r"(?:(?<![\w-])(?:run|execute|launch)\s+|(?:运行|執行|执行|跑一下|跑)\s*)([^\s,，。;；!！?？\n][^,，。;；!！?？\n]{0,300})",
    re.I,
)
_CLAUSE_END = re.compile(r"\s+(?:and|then|with|under|to|for|using)\s+|\s*(?:然后|并且|并|再|看看|分析)", re.I)
_LINE = re.compile(r"(?:第\s*(\d+)\s*行|line\s+(\d+)|:(\d+)\b|L(\d+)\b)", re.I)
#: Source extensions the explorer reads; data extensions come from nodes/perf/filetypes.py.
_SOURCE_EXT = r"py|java|kt|kts|ts|tsx|ets|js|jsx|c|cc|cpp|h|hpp|m|mm|go|rs|swift|md|sh|toml|yaml|yml|xml|gradle"
_FILE_EXT_HINT = re.compile(rf"\.(?:{extension_pattern()}|{_SOURCE_EXT})$", re.I)


@dataclass
class Facts:
    paths: list[str] = field(default_factory=list)
    data_paths: list[str] = field(default_factory=list)
    programs: list[str] = field(default_factory=list)
    packages: list[str] = field(default_factory=list)
    quoted: list[str] = field(default_factory=list)
    #: Text after "run"/"运行"/"执行" up to the end of its clause (a possible command line).
    after_run: list[str] = field(default_factory=list)
    line: int | None = None


def _is_data(path: str, workspace: str | None) -> bool:
    """A trace-only extension is data; a shared one (.json, .txt …) is data when the file's
    content is a format the analyzer reads, or when it is not there to look at."""
    if is_trace_only(path):
        return True
    if not path.lower().endswith(DATA_EXTENSIONS):
        return False
    if workspace is None:
        return True
    import os

    full = os.path.join(workspace, os.path.expanduser(path))
    if not os.path.isfile(full):
        return True
    from nodes.perf.errors import PerfDataError
    from nodes.perf.formats import detect

    try:
        detect(full)
    except (PerfDataError, OSError):
        return False
    return True


def extract(text: str, workspace: str | None = None) -> Facts:
    """The facts of ``text``. With ``workspace``, a named file with a shared extension counts as
    data only when its content is (``package.json`` is not a trace)."""
    f = Facts()
    text = text or ""
    f.quoted = [q.strip() for q in _QUOTED.findall(text) if q.strip()]
    for m in _PATHLIKE.finditer(text):
        p = m.group(1).rstrip(".,;:)")
        if not _FILE_EXT_HINT.search(p):
            continue
        if p not in f.paths:
            f.paths.append(p)
    for p in f.paths:
        low = p.lower()
        if low.endswith(PROGRAM_EXTENSIONS):
            f.programs.append(p)
        elif _is_data(p, workspace):
            f.data_paths.append(p)
    for m in _PACKAGE.finditer(text):
        p = m.group(1)
        if p in f.paths or _FILE_EXT_HINT.search(p) or "/" in p:
            continue
        if p.count(".") >= 2 or p.startswith(("com.", "org.", "net.", "io.", "cn.", "me.")):
            if p not in f.packages:
                f.packages.append(p)
    for m in _AFTER_RUN.finditer(text):
        cmd = _CLAUSE_END.split(m.group(1), maxsplit=1)[0].strip().strip("\"'`“”「」『』")
        if cmd and cmd not in f.after_run:
            f.after_run.append(cmd)
    m = _LINE.search(text)
    if m:
        f.line = int(next(g for g in m.groups() if g))
    return f


def command_argv(command: str) -> list[str]:
    """A command line as an argv list (never a shell string). Raises ValueError on bad quoting."""
    argv = shlex.split(command)
    if not argv:
        raise ValueError("empty command")
    return argv
