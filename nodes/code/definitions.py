"""Definition lookup by language-aware patterns: Python, Java/Kotlin, TypeScript/ArkTS, C/C++.

Two passes, for speed and precision: rg finds every line where the name occurs as a word in a
file of a known language, then a per-language pattern keeps the lines that *declare* it (a
``def``, a ``class``, a ``fun``, a method signature, a ``struct`` …) and drops calls and uses.
A pattern cannot parse, so a few odd declarations are missed; none of the patterns needs a
compiler or a language server, which keeps the tool usable on any checkout.

Each definition carries the enclosing types found by indentation (``Feed`` → ``Adapter`` for a
nested class), so a qualified name from a profile (``com.demo.Feed$Adapter.bind``) can be
matched against it.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from nodes.code.rg import MAX_FILE_BYTES, base_args, find_rg, run_json
from nodes.code.search import _checked, _targets
from nodes.code.sandbox import workspace_root

#: File extensions of each language the lookup understands.
LANGUAGES: dict[str, tuple[str, ...]] = {
    "python": ("py", "pyi"),
    "java": ("java",),
    "kotlin": ("kt", "kts"),
    "ts": ("ts", "tsx", "ets", "js", "jsx", "mjs", "cjs"),
    "c": ("c", "h", "cc", "cpp", "cxx", "hpp", "hh", "hxx", "m", "mm"),
}
_EXT_LANG = {ext: lang for lang, exts in LANGUAGES.items() for ext in exts}

#: Most candidate lines rg may return before the language patterns run.
MAX_CANDIDATE_LINES = 2000
#: Most definitions one lookup returns.
MAX_DEFINITIONS = 50

_NOT_A_DECL = re.compile(r"^\s*(return|new|throw|else|case|if|for|while|switch|catch|do|sizeof|await|yield|delete|goto|print)\b")


def _name(n: str) -> str:
    return f"(?P<n>{re.escape(n)})"


def _patterns(lang: str, n: str) -> list[tuple[str, re.Pattern[str]]]:
    """(kind, pattern) pairs that declare ``n`` in ``lang``, most specific first."""
    N = _name(n)
    if lang == "python":
        return [
            ("function", re.compile(rf"^\s*(?:async\s+)?def\s+{N}\s*[(\[]")),
            ("class", re.compile(rf"^\s*class\s+{N}\b\s*[(:\[]")),
            ("variable", re.compile(rf"^{N}\s*(?::[^=]+)?=(?!=)")),
        ]
    if lang == "kotlin":
        return [
            ("function", re.compile(rf"\bfun\s+(?:<[^>]*>\s*)?(?:[\w.<>?, ]+\.)?`?{N}`?\s*[(<]")),
            ("class", re.compile(rf"\b(?:class|interface|object|typealias)\s+{N}\b")),
        ]
    if lang == "java":
        return [
            ("class", re.compile(rf"\b(?:class|interface|enum|record|@interface)\s+{N}\b")),
            (
                "function*",
                re.compile(
                    rf"^\s*(?:@[\w.]+(?:\([^)]*\))?\s+)*"
                    rf"(?:(?:public|protected|private|static|final|abstract|synchronized|native|default|strictfp)\s+)*"
                    rf"(?:<[^>]*>\s+)?(?:[\w$.]+(?:<[^;=()]*>)?(?:\[\])*\s+)?{N}\s*\([^;=]*$"
                ),
            ),
        ]
    if lang == "ts":
        return [
            ("function", re.compile(rf"\bfunction\s*\*?\s*{N}\s*[(<]")),
            ("class", re.compile(rf"\b(?:class|interface|struct|enum|type|namespace)\s+{N}\b")),
            (
                "function",
                re.compile(rf"\b(?:const|let|var)\s+{N}\s*(?::[^=]+)?=\s*(?:async\s+)?(?:function\b|\([^)]*\)\s*(?::[^=]+)?=>|[\w$]+\s*=>)"),
            ),
            (
                "method*",
                re.compile(
                    rf"^\s*(?:@\w+(?:\([^)]*\))?\s+)*"
                    rf"(?:(?:public|private|protected|static|async|override|readonly|abstract|get|set|declare|export|default)\s+)*"
                    rf"\*?{N}\s*(?:<[^>]*>)?\s*\([^;]*?\)?\s*(?::\s*[^={{;]+)?\s*\{{\s*$"
                ),
            ),
        ]
    if lang == "c":
        return [
            ("macro", re.compile(rf"^\s*#\s*define\s+{N}\b")),
            ("class", re.compile(rf"\b(?:class|struct|union|enum(?:\s+class)?|namespace)\s+{N}\b\s*(?:[:{{]|final\b|$)")),
            ("type", re.compile(rf"\btypedef\b.*\b{N}\s*;")),
            ("type", re.compile(rf"\busing\s+{N}\s*=")),
            (
                "function*",
                re.compile(rf"^\s*(?:[\w:<>,*&~\[\]]+[\s*&]+)*(?:[\w:<>]+::)?~?{N}\s*\([^;]*$"),
            ),
        ]
    return []


@dataclass
class Definition:
    file: str
    line: int
    text: str
    kind: str
    language: str
    #: Enclosing classes/structs, outermost first (found by indentation).
    owners: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "line": self.line,
            "text": self.text,
            "kind": self.kind,
            "language": self.language,
            "owners": list(self.owners),
        }


def find_definitions(
    root: str | os.PathLike[str],
    name: str,
    *,
    paths: Sequence[str] = (),
    languages: Sequence[str] = (),
    max_results: int = MAX_DEFINITIONS,
    rg: str | None = None,
) -> tuple[list[Definition], bool]:
    """Declarations of ``name`` (a bare identifier) in the workspace, and whether it was cut.

    ``languages`` limits the lookup (default: every known language).
    """
    if not re.fullmatch(r"[A-Za-z_$][\w$]*", name or ""):
        raise ValueError(f"{name!r}: a definition lookup takes one identifier")
    base = workspace_root(root)
    targets = _targets(base, paths)
    langs = [lang for lang in (languages or LANGUAGES) if lang in LANGUAGES]
    cmd = base_args(find_rg(rg)) + [
        "--json",
        "--sort=path",
        "--fixed-strings",
        "--word-regexp",
        "--case-sensitive",
        "--max-count=200",
    ]
    for lang in langs:
        for ext in LANGUAGES[lang]:
            cmd += ["--glob", f"*.{ext}"]
    cmd += ["--regexp", name, "--"] + targets
    files, truncated = run_json(cmd, base, max_matches=MAX_CANDIDATE_LINES)
    out: list[Definition] = []
    cache: dict[str, list[str] | None] = {}
    for f in files:
        rel = _checked(base, f.path)
        if rel is None:
            continue
        lang = _EXT_LANG.get(Path(rel).suffix.lstrip(".").lower())
        if lang is None:
            continue
        pats = _patterns(lang, name)
        for x in f.lines:
            if not x.is_match:
                continue
            kind = _classify(lang, x.text, name, pats, rel)
            if kind is None:
                continue
            if rel not in cache:
                cache[rel] = _lines_of(base / rel)
            owners = enclosing_types(cache[rel] or [], x.line, lang)
            out.append(Definition(rel, x.line, x.text.strip(), kind, lang, owners))
            if len(out) >= max_results:
                return out, True
    return out, truncated


def _classify(lang: str, text: str, name: str, pats: list[tuple[str, re.Pattern[str]]], rel: str) -> str | None:
    """The kind of declaration ``text`` is, or None for a call or a use.

    Kinds ending in ``*`` come from signature-shaped patterns (no keyword such as ``def`` or
    ``fun`` introduces them), so they get extra checks against calls that look alike.
    """
    for kind, pat in pats:
        m = pat.search(text)
        if not m:
            continue
        if kind.endswith("*"):
            kind = kind[:-1]
            if _NOT_A_DECL.match(text) or "=>" in text:
                continue
            before = text[: m.start("n")].rstrip()
            if before.endswith((".", "->", "=", ",", "(", "!", "&&", "||")):
                continue
            if lang == "ts" and rel.endswith(".ets") and name[:1].isupper():
                # ArkUI components (Column() {, LazyForEach(…) {) are calls, not declarations.
                continue
        return kind
    return None


def _lines_of(path: Path) -> list[str] | None:
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return None
        return path.read_text("utf-8", errors="replace").splitlines()
    except OSError:
        return None


_TYPE_DECL = {
    "python": re.compile(r"^(\s*)class\s+([A-Za-z_]\w*)"),
    "java": re.compile(r"^(\s*)(?:[\w@]+\s+)*(?:class|interface|enum|record)\s+([A-Za-z_$][\w$]*)"),
    "kotlin": re.compile(r"^(\s*)(?:[\w@]+\s+)*(?:class|interface|object)\s+([A-Za-z_]\w*)"),
    "ts": re.compile(r"^(\s*)(?:[\w@]+(?:\([^)]*\))?\s+)*(?:class|struct|interface|namespace)\s+([A-Za-z_$][\w$]*)"),
    "c": re.compile(r"^(\s*)(?:template\s*<[^>]*>\s*)?(?:class|struct|namespace)\s+([A-Za-z_]\w*)\s*(?:[:{]|final\b|$)"),
}


def enclosing_types(lines: list[str], line: int, lang: str) -> list[str]:
    """Names of the classes around ``line`` (1-based), outermost first, judged by indentation.

    C++ out-of-class definitions (``void Feed::bind()``) carry their owner in the name itself.
    """
    if not lines or line < 1 or line > len(lines):
        return []
    pat = _TYPE_DECL.get(lang)
    target = lines[line - 1]
    owners: list[str] = []
    if lang == "c":
        m = re.search(r"((?:[A-Za-z_]\w*::)+)~?[A-Za-z_]\w*\s*\(", target)
        if m:
            owners = [p for p in m.group(1).split("::") if p]
    if pat is None:
        return owners
    indent = len(target) - len(target.lstrip())
    found: list[str] = []
    for i in range(line - 2, -1, -1):
        text = lines[i]
        if not text.strip():
            continue
        ind = len(text) - len(text.lstrip())
        if ind >= indent:
            continue
        m = pat.match(text)
        if m:
            found.append(m.group(2))
        if ind == 0:
            break
        indent = ind
    return list(reversed(found)) + owners
