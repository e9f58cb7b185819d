"""Tying one hot spot to a place in the user's source: ``found``, ``system`` or ``not_found``.

Deterministic first, in this order, and the reason says which step decided:

1. a file the profile names in the runtime, the standard library or ``site-packages`` →
   ``system``; so does a name with a framework prefix (``java.``, ``android.``, ``v8::`` …);
2. a file the profile names that maps into the workspace (as is, relative, or an absolute path
   from another checkout matched by its longest path suffix) with a line → ``found`` there;
3. otherwise a definition search for the name's last part, ranked by how well each candidate
   fits the qualifiers (``com.demo.Feed$Adapter.bind`` → in ``Feed``/``Adapter``, under
   ``com/demo``) and the file hint; one best candidate → ``found``;
4. several equally good candidates: a configured model may pick one, and its pick must be one
   of them; without a model the first in path order is taken and the tie is reported;
5. nothing found: a section name the framework emits, or a method of a framework class with
   no override in the workspace → ``system``; else ``not_found``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any


from graph.enums import AttributionStatus
from nodes.code.definitions import Definition, find_definitions
from nodes.code.files import excerpt, read_lines
from nodes.code.query import split_qualified
from nodes.code.search import glob_files
from nodes.code.system import framework_slice_reason, system_reason
from nodes.code.sandbox import PathNotFound, PathRefused, SandboxError, is_inside, workspace_root

#: Lines shown on each side of an attributed line.
EXCERPT_AROUND = 3
#: Model calls one attribution run may make to rank ambiguous candidates.
MAX_MODEL_CALLS = 5
MAX_RANK_TOKENS = 20

_SOURCE_EXT = r"py|pyi|java|kt|kts|ts|tsx|ets|js|jsx|mjs|c|cc|cpp|cxx|h|hh|hpp|m|mm|go|rs|swift"
_WITH_LOCATION = re.compile(r"^(?P<name>.*?)\s+\((?P<file>[^()]+?):(?P<line>\d+)\)$")
_PSTATS = re.compile(r"^(?P<file>[^():]+\.(?:" + _SOURCE_EXT + r")):(?P<line>\d+)\((?P<name>[^()]+)\)$")
_FILE_FUNC = re.compile(r"^(?P<file>[\w./\\\-]+\.(?:" + _SOURCE_EXT + r")):(?P<name>[A-Za-z_$<][\w$.<>]*)$")
_SYNTHETIC = re.compile(r"^(?:\d+|lambda.*|Companion|ExternalSynthetic.*|access\$.*|\$.*)$")
_IDENT = re.compile(r"[A-Za-z_$][\w$]*")


@dataclass
class HotspotRef:
    """A hot spot's name taken apart: what to search for and what a candidate should match."""

    raw: str
    name: str
    file: str | None
    line: int | None
    qualifiers: list[str] = field(default_factory=list)
    bare: str = ""


def parse_hotspot(name: str, file: str | None = None, line: int | None = None) -> HotspotRef:
    """Split ``name`` (and any location written into it) into qualifiers and a bare name."""
    raw = (name or "").strip()
    n = raw
    for pat in (_WITH_LOCATION, _PSTATS):
        m = pat.match(n)
        if m:
            n = m.group("name").strip()
            file = file or m.group("file")
            line = line or int(m.group("line"))
            break
    m = _FILE_FUNC.match(n)
    if m:
        n = m.group("name")
        file = file or m.group("file")
    n = re.sub(r"\(.*$", "", n).strip()  # a signature or descriptor: bind(Landroid/view/View;)V
    n = re.sub(r"^L(?=[\w/$]+;?\.)", "", n).replace(";", "").replace("/", ".") if "/" in n and not file else n
    qualifiers, bare = split_qualified(n) if n else ([], "")
    parts = qualifiers + [bare]
    while len(parts) > 1 and _SYNTHETIC.match(parts[-1]):
        parts.pop()  # Kotlin/Java synthetic suffixes: bind$lambda$0, Feed$1
    qualifiers, bare = parts[:-1], parts[-1]
    return HotspotRef(raw=raw, name=n, file=file, line=line, qualifiers=qualifiers, bare=bare)


class Attributor:
    """Resolves hot spots against one workspace; caches file maps and definition lookups."""

    def __init__(self, root: str | os.PathLike[str], *, llm: Any = None, rg: str | None = None):
        self.root = workspace_root(root)
        self.llm = llm
        self.rg = rg
        self.model_calls = 0
        self._defs: dict[str, list[Definition]] = {}
        self._files: dict[str, tuple[str | None, str]] = {}
        self._lines: dict[str, int] = {}

    # --- the one entry point -------------------------------------------------------------
    def attribute(self, hotspot: dict[str, Any]) -> dict[str, Any]:
        ref = parse_hotspot(str(hotspot.get("name") or ""), hotspot.get("file"), _int(hotspot.get("line")))
        out: dict[str, Any] = {
            "name": ref.raw,
            "status": AttributionStatus.NOT_FOUND.value,
            "file": None,
            "line": None,
            "excerpt": [],
            "reason": "",
        }
        why = system_reason(ref.name or ref.raw, ref.file)
        if why:
            return out | {"status": AttributionStatus.SYSTEM.value, "reason": why, "file": ref.file, "line": ref.line}
        mapped, how = (None, "")
        if ref.file:
            mapped, how = self.map_file(ref.file)
            if mapped and ref.line and ref.line <= self._line_count(mapped):
                return self._found(out, mapped, ref.line, f"profile location {how}")
        cands = self._candidates(ref, within=mapped)
        if cands:
            best, reason = self._choose(ref, cands)
            note = f"; the profile's file {ref.file} {how}" if ref.file and not mapped else ""
            res = self._found(out, best.file, best.line, reason + note)
            if len(cands) > 1:
                res["candidates"] = [f"{c.file}:{c.line}" for c in cands[:10]]
            return res
        why = framework_slice_reason(ref.bare or ref.raw, ref.qualifiers)
        if why and not mapped:
            return out | {"status": AttributionStatus.SYSTEM.value, "reason": why}
        if ref.file and not mapped:
            return out | {"reason": f"{ref.file} {how}, and no definition of {ref.bare or ref.raw!r} in the workspace"}
        if not _IDENT.fullmatch(ref.bare or ""):
            return out | {"reason": f"{ref.raw!r} is not a name a definition search can look for"}
        return out | {"reason": f"no definition of {ref.bare!r} in the workspace {self.root}"}

    # --- step 2: the profile's own location -----------------------------------------------
    def map_file(self, file: str) -> tuple[str | None, str]:
        """(workspace-relative path or None, how it was mapped or why not)."""
        if file in self._files:
            return self._files[file]
        res = self._map_file(file)
        self._files[file] = res
        return res

    def _map_file(self, file: str) -> tuple[str | None, str]:
        path = re.sub(r"^[a-z][\w+.-]*://[^/]*", "", file.strip())  # URLs: keep the path part
        path = path.split("?")[0].split("#")[0]
        if not path or "\x00" in path:
            return None, "is not a file path"
        p = Path(path)
        if p.is_absolute():
            try:
                real = p.resolve()
            except (OSError, RuntimeError):
                real = p
            if is_inside(self.root, real) and real.is_file():
                return real.relative_to(self.root).as_posix(), "in the workspace"
        else:
            try:
                real = self.root.joinpath(p).resolve()
                if is_inside(self.root, real) and real.is_file():
                    return real.relative_to(self.root).as_posix(), "in the workspace"
            except (OSError, RuntimeError):
                pass
        return self._by_suffix(PurePosixPath(path.replace("\\", "/")))

    def _by_suffix(self, p: PurePosixPath) -> tuple[str | None, str]:
        """An absolute path from another machine or checkout, matched by its trailing parts."""
        if not p.name or p.name in (".", ".."):
            return None, "is not a file path"
        try:
            files = [m["file"] for m in glob_files(self.root, p.name, max_files=50, rg=self.rg).matches]
        except (SandboxError, ValueError):
            files = []
        files = [f for f in files if PurePosixPath(f).name == p.name]
        if not files:
            return None, "is not in the workspace"
        parts = p.parts

        def common(f: str) -> int:
            fp = PurePosixPath(f).parts
            n = 0
            while n < min(len(fp), len(parts)) and fp[-1 - n] == parts[-1 - n]:
                n += 1
            return n

        scored = sorted(files, key=lambda f: (-common(f), len(f), f))
        best = scored[0]
        if len(scored) > 1 and common(scored[1]) == common(best):
            return best, f"mapped by path suffix to {best} (one of {len(scored)} files named {p.name})"
        return best, f"mapped by path suffix to {best}"

    def _line_count(self, rel: str) -> int:
        if rel not in self._lines:
            try:
                self._lines[rel] = read_lines(self.root, rel, 1, 1)["total_lines"]
            except SandboxError:
                self._lines[rel] = 0
        return self._lines[rel]

    # --- step 3 and 4: definition search and ranking ---------------------------------------
    def _candidates(self, ref: HotspotRef, within: str | None) -> list[Definition]:
        if not _IDENT.fullmatch(ref.bare or ""):
            return []
        if ref.bare not in self._defs:
            try:
                self._defs[ref.bare] = find_definitions(self.root, ref.bare, rg=self.rg)[0]
            except (SandboxError, ValueError):
                self._defs[ref.bare] = []
        defs = self._defs[ref.bare]
        if within:
            inside = [d for d in defs if d.file == within]
            if inside:
                return inside
        return list(defs)

    def _choose(self, ref: HotspotRef, cands: list[Definition]) -> tuple[Definition, str]:
        scored = sorted(cands, key=lambda d: (-score(ref, d), d.file, d.line))
        best = scored[0]
        top = [d for d in scored if score(ref, d) == score(ref, best)]
        if len(top) == 1:
            n = len(cands)
            return best, "definition search" + (f": best of {n} candidates by qualifiers" if n > 1 else "")
        pick = self._model_pick(ref, top)
        if pick is not None:
            return pick, f"definition search: {len(top)} equally good candidates, the model picked this one"
        return best, f"definition search: {len(top)} equally good candidates, took the first in path order"

    def _model_pick(self, ref: HotspotRef, top: list[Definition]) -> Definition | None:
        """The model's choice among ``top``; None without a model, past the cap, or off-list."""
        if self.llm is None or self.model_calls >= MAX_MODEL_CALLS:
            return None
        listing = "\n".join(
            f"{i}: {d.file}:{d.line} {'.'.join(d.owners + [d.text])[:160]}" for i, d in enumerate(top[:10])
        )
        prompt = (
            f"A profiler reported a hot spot named {ref.raw!r}"
            + (f" in file {ref.file}" if ref.file else "")
            + f". Which candidate definition is it?\n{listing}\nReply with the number only."
        )
        self.model_calls += 1
        try:
            from langchain_core.messages import HumanMessage, SystemMessage  # only when a model is called
            reply = self.llm.invoke(
                [SystemMessage("You rank candidate source locations. Reply with one number from the list."), HumanMessage(prompt)],
                max_tokens=MAX_RANK_TOKENS,
            )
        except Exception:  # noqa: BLE001 - a model failure leaves the deterministic pick
            return None
        m = re.search(r"-?\d+", str(getattr(reply, "content", reply)))
        if not m:
            return None
        i = int(m.group(0))
        return top[i] if 0 <= i < min(len(top), 10) else None

    # --- the result ---------------------------------------------------------------------
    def _found(self, out: dict[str, Any], rel: str, line: int, reason: str) -> dict[str, Any]:
        try:
            ex = excerpt(self.root, rel, line, EXCERPT_AROUND)
        except (PathRefused, PathNotFound):
            ex = []
        return out | {"status": AttributionStatus.FOUND.value, "file": rel, "line": line, "excerpt": ex, "reason": reason}


def score(ref: HotspotRef, d: Definition) -> int:
    """How well a definition fits the hot spot's qualifiers and file hint (higher is better)."""
    s = 0
    owners = set(d.owners)
    classes = [q for q in ref.qualifiers if q[:1].isupper()]
    packages = [q for q in ref.qualifiers if q[:1].islower()]
    for q in classes:
        if q in owners:
            s += 3
    if classes and d.owners and d.owners[-1] == classes[-1]:
        s += 2
    path = PurePosixPath(d.file)
    if classes and path.stem == classes[0]:
        s += 2
    if len(packages) >= 2 and "/".join(packages) in d.file:
        s += 2
    if ref.file and PurePosixPath(ref.file.replace("\\", "/")).name == path.name:
        s += 4
    if d.kind in ("function", "method"):
        s += 1
    if not classes and d.owners:
        s -= 1  # a bare name from a profile is a function more often than a method
    return s


def _int(v: Any) -> int | None:
    try:
        i = int(v)
    except (TypeError, ValueError):
        return None
    return i if i > 0 else None
