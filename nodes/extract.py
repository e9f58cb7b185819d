"""Deterministic extraction of the facts a message carries: paths, programs, packages, lines.

No model: what the user typed is what PerfScout acts on. The orchestrator stores what it finds
in the state, where the policies and the nodes read it.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

#: Extensions of performance data files (ROUTING.md rule 2).
DATA_EXTENSIONS = (
    ".json", ".json.gz", ".gz", ".perfetto-trace", ".pftrace", ".pb", ".trace", ".prof",
    ".pstats", ".speedscope.json", ".txt", ".log", ".html", ".ctrace", ".atrace",
)
#: Extensions of programs PerfScout can run.
PROGRAM_EXTENSIONS = (".py", ".sh")

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
_FILE_EXT_HINT = re.compile(r"\.(py|json|gz|txt|trace|pftrace|java|kt|ts|ets|js|c|cc|cpp|h|hpp|go|rs|md|sh|log|pb|prof|html|perfetto-trace)$", re.I)


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


def extract(text: str) -> Facts:
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
        elif low.endswith(DATA_EXTENSIONS):
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
