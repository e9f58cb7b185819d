"""Text search and file globbing inside the workspace, through ripgrep.

Results carry the workspace-relative file, the line, the line's text and a few lines of
context. Every path rg prints is checked against the sandbox again before it is returned, so
even a bug in how rg is called cannot put a file outside the workspace into an answer.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from nodes.code.rg import base_args, find_rg, run_json, run_lines
from nodes.code.sandbox import PathNotFound, PathRefused, is_inside, resolve_inside, workspace_root

#: Default and hard caps on the number of matches one search returns.
DEFAULT_MATCHES = 30
MAX_MATCHES = 200
#: Matches per file, so one generated file cannot fill the whole answer.
MAX_PER_FILE = 20
#: Context lines on each side of a match (hard cap).
MAX_CONTEXT = 5
#: Upper bound on files a glob lists.
MAX_GLOB_FILES = 200


@dataclass
class SearchResult:
    matches: list[dict[str, Any]] = field(default_factory=list)
    truncated: bool = False


def search(
    root: str | os.PathLike[str],
    pattern: str,
    *,
    fixed: bool = True,
    paths: Sequence[str] = (),
    globs: Sequence[str] = (),
    context: int = 2,
    max_matches: int = DEFAULT_MATCHES,
    word: bool = False,
    ignore_case: bool | None = None,
    rg: str | None = None,
) -> SearchResult:
    """Lines matching ``pattern`` (a fixed string unless ``fixed`` is False).

    ``ignore_case=None`` is rg's smart case: case-insensitive unless the pattern has a capital.
    """
    if not pattern or "\x00" in pattern or "\n" in pattern:
        raise ValueError(f"{pattern!r}: an empty or multi-line search pattern is refused")
    base = workspace_root(root)
    targets = _targets(base, paths)
    context = max(0, min(int(context), MAX_CONTEXT))
    max_matches = max(1, min(int(max_matches), MAX_MATCHES))
    cmd = base_args(find_rg(rg)) + [
        "--json",
        "--sort=path",
        f"--max-count={MAX_PER_FILE}",
        f"--context={context}",
    ]
    cmd.append("--fixed-strings" if fixed else "--no-fixed-strings")
    if word:
        cmd.append("--word-regexp")
    if ignore_case is None:
        cmd.append("--smart-case")
    elif ignore_case:
        cmd.append("--ignore-case")
    for g in globs:
        cmd += ["--glob", _safe_glob(g)]
    cmd += ["--regexp", pattern, "--"] + targets
    files, truncated = run_json(cmd, base, max_matches=max_matches, per_file=MAX_PER_FILE)
    out: list[dict[str, Any]] = []
    for f in files:
        rel = _checked(base, f.path)
        if rel is None:
            continue
        by_line = {x.line: x.text for x in f.lines}
        for x in f.lines:
            if not x.is_match:
                continue
            ctx = [
                {"line": n, "text": by_line[n]}
                for n in range(x.line - context, x.line + context + 1)
                if n != x.line and n in by_line
            ]
            out.append({"file": rel, "line": x.line, "text": x.text, "context": ctx})
    return SearchResult(out, truncated)


def glob_files(
    root: str | os.PathLike[str],
    pattern: str,
    *,
    paths: Sequence[str] = (),
    max_files: int = MAX_GLOB_FILES,
    rg: str | None = None,
) -> SearchResult:
    """Workspace-relative files whose path matches the glob ``pattern`` (.gitignore honoured).

    A pattern without a slash matches a file name at any depth (``*.ets``, ``collector.py``).
    """
    base = workspace_root(root)
    targets = _targets(base, paths)
    cmd = base_args(find_rg(rg)) + ["--files", "--sort=path", "--glob-case-insensitive"]
    cmd += ["--glob", _safe_glob(pattern), "--"] + targets
    lines, truncated = run_lines(cmd, base, max_lines=max(1, min(max_files, MAX_GLOB_FILES)))
    files = [rel for rel in (_checked(base, p) for p in lines) if rel is not None]
    return SearchResult([{"file": f} for f in files], truncated)


def _safe_glob(g: str) -> str:
    """A glob for rg's ``--glob``; globs only filter what rg walks, but ``..`` is refused anyway."""
    g = str(g).strip()
    if not g or "\x00" in g or ".." in Path(g.lstrip("!")).parts or g.lstrip("!").startswith(("/", "~")):
        raise PathRefused(f"{g!r}: a glob must be a relative pattern inside the workspace")
    return g


def _targets(base: Path, paths: Sequence[str]) -> list[str]:
    """The search roots as workspace-relative paths, each checked by the sandbox."""
    out = []
    for p in paths or ["."]:
        real = resolve_inside(base, p)
        if not real.exists():
            raise PathNotFound(f"{p}: no such file or directory in the workspace")
        rel = real.relative_to(base).as_posix()
        out.append(rel or ".")
    return out


def _checked(base: Path, printed: str) -> str | None:
    """A path rg printed, as workspace-relative POSIX, or None if it does not resolve inside."""
    p = Path(printed)
    real = (p if p.is_absolute() else base / p).resolve()
    if not is_inside(base, real):
        return None
    return real.relative_to(base).as_posix()
