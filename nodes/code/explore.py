"""One exploration: the tool calls a code question makes, their bounded results, and the answer.

The same four tools serve the deterministic plan and a model's choices, and every call goes
through :class:`Exploration`, which enforces the call cap, the output cap and the sandbox. The
answer text is composed here from the recorded results only, so nothing a model remembers can
reach the user as if it were found in their code.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from nodes.code.definitions import find_definitions
from nodes.code.files import read_lines
from nodes.code.query import CodeQuery, split_qualified
from nodes.code.search import glob_files, search
from nodes.code.sandbox import PathNotFound, PathRefused, resolve_inside, workspace_root

#: Most tool calls one exploration makes, whoever chooses them.
MAX_CALLS = 8
#: Most characters of source text (matches, context, read lines) one exploration keeps.
MAX_OUTPUT_CHARS = 60_000
#: Matches and definitions spelled out in the answer (the rest stay in ``exploration``).
ANSWER_MATCHES = 10
ANSWER_DEFINITIONS = 10

TOOLS = ("search", "definitions", "glob", "read")


class Exploration:
    """The accumulating result of one turn's code tools, bounded in calls and size."""

    def __init__(self, root: str | os.PathLike[str], query: CodeQuery, rg: str | None = None):
        self.root = workspace_root(root)
        self.query = query
        self.rg = rg
        self.matches: list[dict[str, Any]] = []
        self.reads: list[dict[str, Any]] = []
        self.definitions: list[dict[str, Any]] = []
        self.globs: list[dict[str, Any]] = []
        self.notes: list[str] = []
        self.calls: list[dict[str, Any]] = []
        self.truncated = False
        self._chars = 0

    # --- bookkeeping -------------------------------------------------------------------
    @property
    def calls_left(self) -> int:
        return MAX_CALLS - len(self.calls)

    def _budget(self, texts: list[str]) -> bool:
        """Charge ``texts`` to the output budget; False (and truncated) when it is spent."""
        n = sum(len(t) for t in texts)
        if self._chars + n > MAX_OUTPUT_CHARS:
            self.truncated = True
            return False
        self._chars += n
        return True

    def found_anything(self) -> bool:
        return bool(self.matches or self.definitions or any(r["lines"] for r in self.reads) or any(g["files"] for g in self.globs))

    # --- the tools ---------------------------------------------------------------------
    def call(self, tool: str, args: dict[str, Any]) -> str:
        """Run one tool; a one-line observation of what it returned (for a model to read).

        Refusals and bad arguments become notes, not exceptions: the caller decides whether
        they are the user's fault (the node checks the message's own paths up front).
        """
        if tool not in TOOLS:
            return f"unknown tool {tool!r}; tools are {', '.join(TOOLS)}"
        if self.calls_left <= 0:
            self.truncated = True
            return "call limit reached"
        self.calls.append({"tool": tool, "args": dict(args)})
        try:
            return getattr(self, f"_{tool}")(**_known_args(tool, args))
        except (PathRefused, PathNotFound, ValueError) as e:
            msg = str(e)
            self.notes.append(msg)
            return f"error: {msg}"

    def _search(self, pattern: str, regex: bool = False, paths: list[str] | None = None, glob: str | None = None) -> str:
        res = search(
            self.root,
            str(pattern),
            fixed=not regex,
            paths=list(paths or []),
            globs=[glob] if glob else [],
            rg=self.rg,
        )
        kept = 0
        for m in res.matches:
            if not self._budget([m["text"]] + [c["text"] for c in m["context"]]):
                break
            m["pattern"] = pattern
            self.matches.append(m)
            kept += 1
        self.truncated = self.truncated or res.truncated
        where = f" in {', '.join(paths)}" if paths else ""
        return f"search {pattern!r}{where}: {kept} matches" + (" (more not shown)" if res.truncated else "") + _sample(
            [f"{m['file']}:{m['line']}: {m['text'].strip()}" for m in res.matches[:8]]
        )

    def _definitions(self, name: str, paths: list[str] | None = None) -> str:
        bare = split_qualified(str(name))[1]
        defs, cut = find_definitions(self.root, bare, paths=list(paths or []), rg=self.rg)
        for d in defs:
            if not self._budget([d.text]):
                break
            self.definitions.append(d.as_dict() | {"name": bare})
        self.truncated = self.truncated or cut
        return f"definitions of {bare}: {len(defs)}" + _sample([f"{d.file}:{d.line}: {d.text}" for d in defs[:8]])

    def _glob(self, pattern: str, paths: list[str] | None = None) -> str:
        res = glob_files(self.root, str(pattern), paths=list(paths or []), rg=self.rg)
        files = [m["file"] for m in res.matches]
        self._budget(files)
        self.globs.append({"pattern": pattern, "files": files, "truncated": res.truncated})
        self.truncated = self.truncated or res.truncated
        return f"glob {pattern!r}: {len(files)} files" + _sample(files[:15])

    def _read(self, path: str, start: int | None = None, end: int | None = None) -> str:
        real = resolve_inside(self.root, str(path))
        if real.is_dir():
            return self._glob("*", paths=[str(path)])
        try:
            r = read_lines(self.root, str(path), _int(start), _int(end))
        except PathNotFound as e:
            self.notes.append(str(e))
            hint = self._similar(str(path))
            return f"error: {e}" + (f"; similar: {', '.join(hint)}" if hint else "")
        if not self._budget([x["text"] for x in r["lines"]]):
            r["lines"] = r["lines"][:20]
        r["focus"] = _int(start) if start is not None and end is None else None
        self.reads.append(r)
        return f"read {r['file']} lines {r['start']}-{r['end']} of {r['total_lines']}" + (f" ({r['note']})" if r["note"] else "")

    def _similar(self, path: str) -> list[str]:
        """Files with the same name elsewhere in the workspace, for a path that does not exist."""
        name = Path(path).name
        if not name or self.calls_left <= 0:
            return []
        self.calls.append({"tool": "glob", "args": {"pattern": name}})
        try:
            res = glob_files(self.root, name, max_files=10, rg=self.rg)
        except (PathRefused, PathNotFound, ValueError):
            return []
        files = [m["file"] for m in res.matches]
        self.globs.append({"pattern": name, "files": files, "truncated": res.truncated, "for_missing": path})
        return files

    # --- the result --------------------------------------------------------------------
    def as_state(self) -> dict[str, Any]:
        return {
            "query": self.query.text,
            "terms": self.query.as_dict(),
            "workspace": str(self.root),
            "matches": self.matches,
            "reads": self.reads,
            "definitions": self.definitions,
            "globs": self.globs,
            "notes": self.notes,
            "calls": self.calls,
            "truncated": self.truncated,
        }


def _known_args(tool: str, args: dict[str, Any]) -> dict[str, Any]:
    allowed = {
        "search": ("pattern", "regex", "paths", "glob"),
        "definitions": ("name", "paths"),
        "glob": ("pattern", "paths"),
        "read": ("path", "start", "end"),
    }[tool]
    out = {k: v for k, v in (args or {}).items() if k in allowed and v is not None}
    if "paths" in out and isinstance(out["paths"], str):
        out["paths"] = [out["paths"]]
    required = {"search": "pattern", "definitions": "name", "glob": "pattern", "read": "path"}[tool]
    if not out.get(required):
        raise ValueError(f"{tool} needs {required!r}")
    return out


def _int(v: Any) -> int | None:
    if v is None:
        return None
    try:
        return int(v)
    except (TypeError, ValueError):
        raise ValueError(f"{v!r} is not a line number") from None


def _sample(items: list[str]) -> str:
    return ("\n  " + "\n  ".join(items)) if items else ""


# --------------------------------------------------------------------------------------
# The deterministic plan
# --------------------------------------------------------------------------------------


def deterministic_plan(q: CodeQuery) -> list[tuple[str, dict[str, Any]]]:
    """The tool calls a message asks for, judged from its paths, names and wording alone."""
    calls: list[tuple[str, dict[str, Any]]] = []
    looking_for = bool(q.identifiers or q.patterns or q.quoted)
    scope: list[str] = []
    for p in q.paths[:3]:
        if q.wants_read or not looking_for:
            calls.append(("read", {"path": p, "start": q.line}))
        else:
            scope.append(p)
    glob = q.globs[0] if q.globs else None
    if q.patterns:
        for pat in q.patterns[:2]:
            calls.append(("search", {"pattern": pat, "regex": True, "paths": scope, "glob": glob}))
    elif q.identifiers and not (q.wants_read and q.paths):
        first = q.identifiers[0]
        calls.append(("definitions", {"name": first, "paths": scope}))
        calls.append(("search", {"pattern": first, "paths": scope, "glob": glob}))
        if len(q.identifiers) > 1 and not q.quoted:
            second = q.identifiers[1]
            if q.wants_definition:
                calls.append(("definitions", {"name": second, "paths": scope}))
            calls.append(("search", {"pattern": second, "paths": scope, "glob": glob}))
    elif q.quoted and not (q.wants_read and q.paths):
        calls.append(("search", {"pattern": q.quoted[0], "paths": scope, "glob": glob}))
    elif glob:
        calls.append(("glob", {"pattern": glob}))
    return calls


def run_plan(ex: Exploration, plan: list[tuple[str, dict[str, Any]]]) -> None:
    for tool, args in plan:
        if tool == "definitions" and not _is_identifier(split_qualified(args["name"])[1]):
            continue
        ex.call(tool, args)


def _is_identifier(name: str) -> bool:
    return bool(re.fullmatch(r"[A-Za-z_$][\w$]*", name))


# --------------------------------------------------------------------------------------
# The answer
# --------------------------------------------------------------------------------------


def _grouped(items: list[dict[str, Any]], key: str) -> dict[str, list[dict[str, Any]]]:
    """``items`` by their ``key``, in the order each value first appears."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for item in items:
        groups.setdefault(item[key], []).append(item)
    return groups


def compose_answer(ex: Exploration) -> str:
    """The user-facing answer, built only from what the tools returned."""
    zh = ex.query.chinese
    out: list[str] = []
    for r in ex.reads:
        head = (
            f"{r['file']} 第 {r['start']}–{r['end']} 行（共 {r['total_lines']} 行）："
            if zh
            else f"{r['file']} lines {r['start']}–{r['end']} (of {r['total_lines']}):"
        )
        if not r["lines"]:
            head = f"{r['file']}: {r['note']}"
        elif r["note"]:
            head += f" [{r['note']}]"
        out.append(head)
        focus = r.get("focus")
        for x in r["lines"]:
            mark = "→" if focus == x["line"] else " "
            out.append(f"{mark}{x['line']:>5} | {x['text']}")
        out.append("")
    for name, defs in _grouped(ex.definitions, "name").items():
        out.append(f"{name} 的定义（{len(defs)} 处）：" if zh else f"Definitions of {name} ({len(defs)}):")
        for d in defs[:ANSWER_DEFINITIONS]:
            owner = f" [in {'.'.join(d['owners'])}]" if d["owners"] else ""
            out.append(f"  {d['file']}:{d['line']}{owner}  {d['text']}")
        out.append("")
    for pat, ms in _grouped(ex.matches, "pattern").items():
        files = len({m["file"] for m in ms})
        out.append(
            f"“{pat}” 的匹配：{len(ms)} 处，{files} 个文件" + ("（结果已截断）" if ex.truncated else "") + "："
            if zh
            else f"Matches for “{pat}”: {len(ms)} in {files} files" + (" (cut at the limit)" if ex.truncated else "") + ":"
        )
        for m in ms[:ANSWER_MATCHES]:
            out.append(f"  {m['file']}:{m['line']}: {m['text'].strip()}")
        if len(ms) > ANSWER_MATCHES:
            out.append(f"  … 另有 {len(ms) - ANSWER_MATCHES} 处" if zh else f"  … {len(ms) - ANSWER_MATCHES} more")
        out.append("")
    for g in ex.globs:
        if g.get("for_missing"):
            if g["files"]:
                out.append(
                    f"没有 {g['for_missing']}；同名文件：" if zh else f"No {g['for_missing']}; files with that name:"
                )
                out.extend(f"  {f}" for f in g["files"])
                out.append("")
            continue
        out.append(f"{g['pattern']}：{len(g['files'])} 个文件" if zh else f"Files matching {g['pattern']}: {len(g['files'])}")
        out.extend(f"  {f}" for f in g["files"][:30])
        out.append("")
    searched = _searched_for(ex)
    if not ex.found_anything():
        if searched:
            out.append(
                f"在工作区 {ex.root} 中没有找到 {searched} 的定义或匹配。"
                if zh
                else f"Nothing found for {searched} in the workspace {ex.root}."
            )
        elif not ex.calls:
            out.append(
                "没有从消息里识别出要找的标识符、文件或字符串；请给出名称（如 parse_frames）或文件路径。"
                if zh
                else "I could not tell what to look for: name an identifier (e.g. parse_frames), a quoted string or a file path."
            )
    elif searched and not ex.definitions and ex.query.wants_definition:
        out.append(f"（没有找到 {searched} 的定义，以上为文本匹配）" if zh else f"(No definition of {searched} found; the above are text matches.)")
    for n in ex.notes:
        if not any(n in line for line in out):
            out.append(("注意：" if zh else "Note: ") + n)
    return "\n".join(out).strip()


def _searched_for(ex: Exploration) -> str:
    names = []
    for c in ex.calls:
        v = c["args"].get("name") or (c["args"].get("pattern") if c["tool"] == "search" else None)
        if v and v not in names:
            names.append(str(v))
    return ", ".join(names)
