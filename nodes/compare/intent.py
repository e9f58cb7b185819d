"""Which messages ask for a comparison, and what their two sides are — deterministic, no model.

Two kinds (docs/ROUTING.md: comparing captures is ``analyze``):

* **two named sides** — 「对比一下 before.pftrace 和 after.pftrace」, "compare run_a/ with run_b/":
  a comparison cue and at least two data files or folders the message names, in the order
  written (the first is "before", A);
* **two programs' launch times** — 「比较一下 v1.py 和 v2.py 的启动耗时」, "which starts faster,
  old.py or new.py": two program paths, a comparison cue and a launch cue (the ``startup`` route);
* **the thread's previous analysis** — 「和上次比变快了吗」, "is it better than the previous run?":
  a cue that points at the run before, answered from the thread's last two analyses.

Folders are data here only when the message is a comparison: a bare ``run_a/`` elsewhere is just
a word. A folder (or a bare name) counts when it exists inside the workspace.
"""

from __future__ import annotations

import os
import re

from nodes.routing.extract import extract
from nodes.code.sandbox import SandboxError, resolve_inside

COMPARE_CUE = re.compile(
    r"对比|比较|比較|對比|比一比|比对|比對|相比|\bcompare[sd]?\b|\bcomparison\b|\bvs\.?(?=\s)|\bversus\b|\bdiff(?:erence)?\s+between\b",
    re.I,
)
PREVIOUS_CUE = re.compile(
    r"(和|跟|与|與|同|比)(上次|上一次|之前|前一次|上回|上一回)|比上次|较上次|較上次|上次(相比|比)|"
    r"(than|to|with|against|from)\s+(the\s+)?(previous|last|earlier|prior)\s+(run|one|analysis|capture|trace|time|build)|"
    r"(since|vs\.?|versus)\s+(the\s+)?(previous|last)\s+(run|one|analysis|capture|trace|time|build)|"
    r"\b(did|has|have)\s+(it|things|this|that)\s+(get|got|gotten|become|been)?\s*(faster|slower|better|worse)\b",
    re.I,
)
# a folder written with a trailing slash, or a bare name (checked on disk)
_FOLDER = re.compile(r"(?<![\w./~-])((?:\.{1,2}/|/|~/)?[\w.-]+(?:/[\w.-]+)*/)(?![\w-])")
_WORD = re.compile(r"(?<![\w./~-])((?:\.{1,2}/)?[\w.-]+(?:/[\w.-]+)*)(?![\w/-])")


#: "which starts faster, old.py or new.py" / 「v1.py 和 v2.py 哪个启动快」: a race of two programs
RACE_CUE = re.compile(COMPARE_CUE.pattern + r"|\b(faster|slower|quicker)\b|更快|更慢|哪个快|哪個快|哪个更快|哪個更快|快还是慢|快還是慢", re.I)
LAUNCH_CUE = re.compile(r"\bstart(s|ed|ing|up|-up)?\b|\blaunch(es|ed|ing)?\b|启动|啟動|冷启动|冷啟動", re.I)


def programs_to_race(text: str) -> list[str]:
    """The two (or more) programs whose launch times the message compares; empty otherwise."""
    text = text or ""
    programs = extract(text).programs
    if len(programs) >= 2 and RACE_CUE.search(text) and LAUNCH_CUE.search(text):
        return programs
    return []


def asks_previous(text: str) -> bool:
    """A follow-up comparing with the thread's earlier analysis."""
    return bool(PREVIOUS_CUE.search(text or ""))


def _exists_inside(workspace: str, path: str, want_dir: bool) -> bool:
    try:
        real = resolve_inside(workspace or ".", path)
    except SandboxError:
        return False
    return real.is_dir() if want_dir else real.exists()


def sides_in(text: str, workspace: str = ".") -> list[str]:
    """The data files and folders a comparison message names, in the order written (at most 2
    needed; all returned). Empty when the message has no comparison cue."""
    text = text or ""
    if not COMPARE_CUE.search(text):
        return []
    found: list[tuple[int, str]] = []
    facts = extract(text)
    for p in facts.data_paths:
        i = text.find(p)
        found.append((i if i >= 0 else len(text), p))
    taken = {p for _, p in found}
    for m in _FOLDER.finditer(text):
        p = m.group(1)
        if p not in taken and _exists_inside(workspace, p, want_dir=True):
            found.append((m.start(1), p))
            taken.add(p)
    if len(found) < 2:
        for m in _WORD.finditer(text):
            p = m.group(1)
            if p in taken or len(p) < 2 or not re.search(r"[\w]", p):
                continue
            if _exists_inside(workspace, p, want_dir=True) and os.path.basename(p) not in (".", ".."):
                found.append((m.start(1), p))
                taken.add(p)
    found.sort()
    return [p for _, p in found]
