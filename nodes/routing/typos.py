"""Common misspellings of the cue words, mended before the classifier reads a message.

Users type "chek the fps", "mesure startup", "anaylze the preformance", "帧律", "内纯". Character
n-grams forgive part of that; mending the word forgives all of it. Two mechanisms:

- **English cue words** (``CUES``, five letters or more): a word one edit away from a cue
  (Damerau–Levenshtein: one letter dropped, added, changed, or two neighbours swapped) becomes the
  cue — unless it is itself an English word ("smart" is not "start", "track" is not "trace",
  "measures" is not a typo). That exception list, ``data/cue_lookalikes.json``, is derived from the
  English word list of pyspellchecker (MIT; a dev dependency, never needed at run time) by
  ``python -m nodes.routing.typos --rebuild``, plus ``TECH_WORDS`` the dictionary lacks.
  Cues shorter than five letters are not mended: "cold", "code", "open" have dozens of real
  neighbours ("could", "node", "oven").
- **Chinese input-method slips** (``CJK_TYPOS``): a short table of homophones typed for the cue
  word (帧律 → 帧率, 内纯 → 内存, 启东 → 启动).

Only the classifier reads the mended text; the rules keep to the words as written, where their
precision was measured.
"""

from __future__ import annotations

import json
import re
import sys
from functools import lru_cache
from importlib import resources

CUES = (
    "measure", "measurement", "check", "launch", "launched", "start", "startup", "search", "analyze",
    "analyse", "analysis", "performance", "profile", "profiling", "memory", "battery", "frame", "frames",
    "trace", "capture", "record", "collect", "definition", "defined", "define", "implementation",
    "implemented", "source", "report", "pipeline", "complete", "whole", "optimize", "compare", "function",
    "where", "device", "devices", "usage", "benchmark", "explain",
)
#: Real words near a cue that the dictionary lacks (tool and tech vocabulary).
TECH_WORDS = (
    "stat", "stats", "statsd", "tracer", "traced", "tracee", "utrace", "perfs", "devops", "sourced", "chart", "charts",
    "profiler", "profilers", "cprofile", "reports", "frametime", "checker", "checkers", "analyzer", "searcher",
)
CJK_TYPOS = {
    "帧律": "帧率", "侦率": "帧率", "桢率": "帧率", "真率": "帧率", "掉桢": "掉帧", "掉侦": "掉帧",
    "内纯": "内存", "内从": "内存", "內純": "內存", "启东": "启动", "起动": "启动", "啓動": "啟動",
    "源马": "源码", "原码": "源码", "代吗": "代码", "代玛": "代码", "分细": "分析", "分西": "分析",
    "性嫩": "性能", "姓能": "性能", "卡屯": "卡顿", "卡吨": "卡顿", "采级": "采集", "彩集": "采集", "搜素": "搜索",
}
_LETTERS = "abcdefghijklmnopqrstuvwxyz"
#: A word in lower case or capitalised (an identifier in camelCase or CAPS is a name, not a typo).
_WORD = re.compile(r"(?<![A-Za-z0-9_'.-])[A-Za-z]?[a-z]{3,}(?![A-Za-z0-9_'-])")
_CJK = re.compile("|".join(map(re.escape, CJK_TYPOS)))


def edits1(word: str) -> set[str]:
    """Every string one Damerau–Levenshtein edit from ``word`` (lower-case letters)."""
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    out: set[str] = set()
    for a, b in splits:
        if b:
            out.add(a + b[1:])
            out.update(a + c + b[1:] for c in _LETTERS)
        if len(b) > 1:
            out.add(a + b[1] + b[0] + b[2:])
        out.update(a + c + b for c in _LETTERS)
    out.discard(word)
    return out


def _lookalikes_path():
    return resources.files("nodes.routing") / "data" / "cue_lookalikes.json"


@lru_cache(maxsize=1)
def _corrections() -> dict[str, str]:
    """misspelling -> cue, for every one-edit neighbour of a cue that is not a real word."""
    real = set(json.loads(_lookalikes_path().read_text(encoding="utf-8"))["words"]) | set(TECH_WORDS) | set(CUES)
    table: dict[str, str] = {}
    for cue in CUES:
        for variant in edits1(cue):
            if variant not in real and len(variant) >= 4:
                table.setdefault(variant, cue)  # the first cue wins a tie: CUES is ordered by use
    return table


def fix_typos(text: str) -> str:
    """``text`` with misspelled cue words mended (the same object when there is nothing to mend)."""
    table = _corrections()
    out = _WORD.sub(lambda m: table.get(m.group(0).lower(), m.group(0)), text)
    if _CJK.search(out):
        out = _CJK.sub(lambda m: CJK_TYPOS[m.group(0)], out)
    return text if out == text else out


def rebuild() -> list[str]:
    """The real English words one edit from a cue (needs pyspellchecker, a dev dependency)."""
    from spellchecker import SpellChecker

    words = SpellChecker(language="en", distance=1).word_frequency.dictionary
    return sorted({v for cue in CUES for v in edits1(cue) if v in words})


if __name__ == "__main__":
    if sys.argv[1:] != ["--rebuild"]:
        sys.exit("usage: python -m nodes.routing.typos --rebuild")
    words = rebuild()
    path = _lookalikes_path()
    with open(str(path), "w", encoding="utf-8") as fh:
        json.dump({"source": "pyspellchecker 0.9.1 English word list (MIT), words one edit from nodes/routing/typos.py CUES",
                   "words": words}, fh, ensure_ascii=False, indent=0)
        fh.write("\n")
    print(f"{len(words)} words -> {path}")
