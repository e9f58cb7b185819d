"""What a code question asks for, read from the message without a model.

``nodes.routing.extract`` already finds paths, line numbers and quoted strings; this adds the
identifiers (``parse_frames``, ``LazyForEach``, ``Feed$Adapter.bind``) and the intent: read a
file, find a definition, or search text. Deterministic, so the same message always makes the
same tool calls, and a test can say exactly which.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from nodes.routing.extract import extract

_IDENT = re.compile(r"(?<![\w$/.\-])([A-Za-z_$][\w$]*(?:(?:\.|::|#|\$)[A-Za-z_$][\w$]*)*)(?![\w$/])")
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_GLOB = re.compile(r"(?<!\S)((?:[\w.\-*]+/)*[\w.\-]*\*[\w.*\-]*(?:/[\w.*\-]+)*)(?=[\s,;)，。]|$)")
_REGEX_META = re.compile(r"[\\^$*+?()\[\]{}|]")

#: Words of the question itself, never what is being looked for.
STOPWORDS = frozenset(
    """
    a an the is are was be been am do does did where what which who how why when show me my
    find search grep look up for of in on at to from into with and or not it its this that
    these those there here please can could would you your we our i let lets see tell give
    defined define definition definitions declared declaration implemented implementation
    implementations implement impl usage usages used use uses called call calls reference
    references code source sources file files function functions method methods class classes
    variable line lines open read cat view print display list all any some about around near
    whole full content contents text string strings regex pattern named name called
    ok hi hello thanks thank just also then than else only first last next
    """.split()
)

_DEFINE_WORDS = re.compile(
    r"(defined|definition|declar|implement|where\s+is|where's|定义|实现|声明|在哪|哪里|哪儿|位置)", re.I
)
_READ_WORDS = re.compile(r"(\bopen\b|\bread\b|\bshow\b|\bcat\b|\bview\b|打开|看看|查看|读一下|显示|内容|第\s*\d+\s*行)", re.I)
_REGEX_WORDS = re.compile(r"(\bregex\b|\bregexp\b|正则)", re.I)


@dataclass
class CodeQuery:
    text: str
    paths: list[str] = field(default_factory=list)
    globs: list[str] = field(default_factory=list)
    line: int | None = None
    quoted: list[str] = field(default_factory=list)
    identifiers: list[str] = field(default_factory=list)
    wants_definition: bool = False
    wants_read: bool = False
    regex: bool = False
    #: Regular expressions to search for (only when the message asks for a regex search).
    patterns: list[str] = field(default_factory=list)
    chinese: bool = False

    def as_dict(self) -> dict:
        return {
            "paths": list(self.paths),
            "globs": list(self.globs),
            "line": self.line,
            "quoted": list(self.quoted),
            "identifiers": list(self.identifiers),
            "wants_definition": self.wants_definition,
            "wants_read": self.wants_read,
            "regex": self.regex,
            "patterns": list(self.patterns),
        }


def parse_query(text: str) -> CodeQuery:
    text = text or ""
    facts = extract(text)
    q = CodeQuery(text=text, paths=list(facts.paths), line=facts.line, quoted=list(facts.quoted))
    q.globs = [g for g in _GLOB.findall(text) if g not in q.paths]
    for p in _slashed_paths(text):
        if p not in q.paths and p not in q.globs and not any(p in x for x in q.paths):
            q.paths.append(p)
    q.chinese = bool(_CJK.search(text))
    q.wants_definition = bool(_DEFINE_WORDS.search(text))
    q.wants_read = bool(_READ_WORDS.search(text)) and bool(q.paths)
    q.regex = bool(_REGEX_WORDS.search(text))
    if q.regex:
        q.patterns = list(q.quoted) or [t for t in text.split() if _REGEX_META.search(t)][:2]
    q.identifiers = identifiers(text, exclude=q.paths + q.globs + q.patterns)
    return q


_TOKEN_SPLIT = re.compile(r"[\s\u3000-\u303f\u3400-\u9fff\uff00-\uffef\"'`“”「」『』，。]+")


def _slashed_paths(text: str) -> list[str]:
    """Paths without a known extension (``/etc/passwd``, ``../secret``, ``~/x``, ``src/ui/``).

    ``nodes.routing.extract`` keeps only names with a file extension; a directory or an extension-less
    file named in a code question is still a path to open, and to check against the sandbox.
    """
    out = []
    for tok in _TOKEN_SPLIT.split(text):
        tok = tok.strip("()[]<>,;:!?.") if not tok.startswith(("..", "./")) else tok.rstrip("()[]<>,;:!?")
        if not tok or "://" in tok or "*" in tok:
            continue
        if "/" in tok or tok.startswith("~") or tok in ("..", "."):
            if tok not in out and "\x00" not in tok:
                out.append(tok)
    return out


def identifiers(text: str, exclude: list[str] = ()) -> list[str]:  # type: ignore[assignment]
    """Code-like names in ``text``, the most code-like first.

    Quoted names come first, then names shaped like code (``snake_case``, ``camelCase``,
    ``Dotted.names``, ``$``), then other words that are not part of the question.
    """
    stripped = text
    for p in sorted(exclude, key=len, reverse=True):
        stripped = stripped.replace(p, " ")
    stripped = re.sub(r"第\s*\d+\s*行|\bline\s+\d+|:\d+\b", " ", stripped, flags=re.I)
    quoted = {q.strip() for q in extract(text).quoted}
    scored: list[tuple[int, int, str]] = []
    seen: set[str] = set()
    for i, m in enumerate(_IDENT.finditer(stripped)):
        word = m.group(1).rstrip(".")
        if word in seen or word.lower() in STOPWORDS or len(word) < 2:
            continue
        seen.add(word)
        score = 0
        if word in quoted:
            score += 10
        if _code_shaped(word):
            score += 5
        elif len(word) < 3:
            continue
        scored.append((-score, i, word))
    return [w for _, _, w in sorted(scored)]


def _code_shaped(word: str) -> bool:
    return (
        "_" in word
        or "$" in word
        or "." in word
        or "::" in word
        or "#" in word
        or bool(re.search(r"[a-z][A-Z]", word))
        or bool(re.match(r"[A-Z][a-z]+[A-Z]", word))
        or bool(re.search(r"\d", word))
    )


def split_qualified(name: str) -> tuple[list[str], str]:
    """(qualifiers, last name) of ``a.b.C$D.m`` / ``ns::C::m`` / ``C#m`` / ``file.py:func``."""
    name = re.sub(r"\(.*\)?$", "", name.strip())
    parts = [p for p in re.split(r"::|[.#$:/\\]", name) if p]
    if not parts:
        return [], name
    return parts[:-1], parts[-1]
