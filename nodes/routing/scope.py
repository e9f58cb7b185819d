"""What the user asks for, apart from what they negate or set aside (docs/ROUTING.md, before rule 1).

The contract: "A cue the user negates or sets aside — 不用搜代码, 别测启动了, don't run anything,
skip the full pipeline, 上次那份 trace 不算 — is not a request and makes no rule fire; the clause
the user does ask for decides." ``split_scope`` finds those set-aside spans so the rules read only
the asked-for text, the classifier gets the set-aside cue kinds as separate features, and the
startup override cannot be triggered by a launch word the user declined.

How a span is bounded, by kind of negator:

- **before the verb** (不用 / 不要 / 别 / 先别 / 无需 / 唔使 / don't / no need to / without /
  instead of / rather than / skip / ignore / never mind / not): from the negator to the end of its
  clause, or to the first word that starts a new request inside it (只 / 就 / 直接 / 帮我 / 而是 …,
  and / but / just / only / instead …). In Chinese the object often comes first ("代码就不用翻了",
  "启动先别测"): the part of the clause before the negator belongs to the span when it holds no
  request word of its own ("帮我测一下启动不用出报告" keeps "帮我测一下启动").
- **after what it dismisses** (不算 / 作废 / 不要了 / 免了 / 算了 / 放一边 / is not needed /
  doesn't count): from the start of the clause to the negator, and only when the negator ends
  the clause ("这个 FPS 不算高" is a statement, not a dismissal).
- A-not-A questions (要不要 / 用不用 / 是不是) are questions, not negations.

Clauses end at sentence and clause punctuation and before a contrast (but / 但是 / 而是 / 不过).
The patterns are linear: every repeat is bounded or starts at a fixed word.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from nodes.routing.normalize import routing_view


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.I)


#: Clause boundaries: punctuation, a dash, and the zero-width point before a contrast word.
_CLAUSE_BREAK = _rx(
    r"[,，。;；!！?？\n、:：]|\.(?=\s|$)|——|\s[-–—]\s|(?=\bbut\b)|(?=\bhowever\b)|(?=但是|而是|不过|不過|可是|反而)"
)

#: Negators that take what follows them (their scope runs right, to the clause end).
_PRE_CJK = (
    r"先别|先別|别再|別再|不用再|不要再|(?<![特区區分识識级級类類告个個差鉴鑒辨性])(?:别|別)(?![的人处處名致针針])|"
    r"不用|不要|不必|不需要|无需|無需|毋须|毋須|甭|唔使|唔好|不想|先不|暂时不|暫時不|暂不|暫不|不再|不是|"
    r"不(?=测|測|跑|搜|找|看|分析|采|採|抓|量|出|做|查|翻|打开|打開|录|錄|管|动|動)"
)
_PRE_EN = (
    r"\b(?:(?:don'?t|do\s+not|dont|not|no)(?!\s+(?:know|understand|see|get|think|care|like|have|sure|really|much|many|"
    r"very|too|so|that|enough|working|work|responding|idea|matter|clue|only|longer)\b)|doesn'?t\s+need|no\s+need\s+(?:to|for)|"
    r"needn'?t|without|instead\s+of|rather\s+than|skip(?:ping)?|never\s+mind|forget(?:\s+about)?|ignore|ignoring|"
    r"hold\s+off(?:\s+on)?|leave\s+out)\b"
)
_PRE = _rx(rf"(?P<cjk>{_PRE_CJK})|(?P<en>{_PRE_EN})")
#: Negators that dismiss what comes before them, when they end the clause.
_POST_WORDS = (
    r"(?:不算|不作数|不作數|作废|作廢|不要了|不用了|不需要了|不管了|先不管|免了|就算了|算了|放一边|放一邊|"
    r"先放着|先放著|不看了|不测了|不測了|不跑了|没用了|沒用了|过时了|過時了|不准|不準|"
    r"\b(?:is|are|was|were)\s+(?:not\s+(?:needed|necessary|relevant)|unnecessary|irrelevant|outdated|stale|"
    r"useless|obsolete|wrong|invalid)|\b(?:doesn'?t|does\s+not|don'?t)\s+count|\bcan\s+wait|\bnot\s+needed)"
)
_POST = _rx(_POST_WORDS + r"(?=[\s了啦吧哈呢喇啊.]*$)")
_ANY_NEGATOR = _rx(rf"{_PRE_CJK}|{_PRE_EN}|{_POST_WORDS}")
#: Inside a negated clause, a word that starts what the user does want.
_RESTART = _rx(
    r"只|就|直接|帮我|幫我|幫手|帮忙|幫忙|给我|給我|请|請|麻烦|麻煩|改成|换成|換成|先帮|先幫|我要|我想|我只|"
    r"你帮|你幫|然后|然後|再帮|再幫|再给|再給|重新|"
    r"\s(?:and|but|just|only|then|instead|so|please|focus|i\s+(?:just\s+|only\s+)?(?:want|need))\b"
)
#: A word that makes the start of a clause a request of its own (then it is not a topic of the negator).
_REQUEST = _rx(
    r"帮|幫|请|請|麻烦|麻煩|给我|給我|能不能|可以|我要|我想|测|測|量|跑|搜|找|看|分析|采|採|抓|打开|打開|查|录|錄|"
    r"\b(?:please|can\s+you|could\s+you|i\s+want|i\s+need|measure|check|run|profile|collect|capture|record|"
    r"search|find|open|show|grep|analy[sz]e|dump|give|get|tell|list|read)\b"
)
_A_NOT_A = re.compile(r"(.)不\1")


@dataclass(frozen=True)
class Scope:
    """A message split into what is asked for and what is set aside."""

    #: The message with every set-aside span blanked out (see ``GAP``).
    asked: str
    #: The set-aside spans, in order (negator included).
    set_aside: tuple[str, ...]


#: What a set-aside span becomes in ``asked``: wider than any window a rule joins two cues across
#: (``rules._near`` uses at most 40 characters), so a verb before the span and an object after it
#: do not make a request together.
GAP = " ;" + " " * 44 + "; "


def _clauses(text: str) -> list[tuple[int, int]]:
    out, pos = [], 0
    for m in _CLAUSE_BREAK.finditer(text):
        if m.start() > pos:
            out.append((pos, m.start()))
        pos = max(pos, m.end())
    if pos < len(text):
        out.append((pos, len(text)))
    return out


def _spans_in(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Set-aside (start, end) spans inside the clause text[start:end]."""
    clause = text[start:end]
    post = _POST.search(clause)
    if post:
        return [(start, start + post.end())]
    spans: list[tuple[int, int]] = []
    pos = 0
    while pos < len(clause):
        m = _PRE.search(clause, pos)
        if not m:
            break
        if m.group("cjk") and _A_NOT_A.match(clause, max(0, m.start() - 1)) and m.start() > 0:
            pos = m.end()
            continue
        left = m.start()
        if m.group("cjk") and not spans and not _REQUEST.search(clause, 0, m.start()):
            left = 0  # the object said first: "代码就不用翻了", "启动先别测"
        r = _RESTART.search(clause, m.end() + 1)
        right = r.start() if r else len(clause)
        spans.append((start + left, start + right))
        pos = max(right, m.end())
    return spans


@lru_cache(maxsize=256)
def split_scope(text: str) -> Scope:
    """The asked-for text and the set-aside spans of ``text``'s routing view.

    Cached: the rules, the classifier and the startup override each ask for the same message.
    """
    text = routing_view(text)
    if not _ANY_NEGATOR.search(text):
        return Scope(text, ())
    spans = [s for a, b in _clauses(text) for s in _spans_in(text, a, b)]
    if not spans:
        return Scope(text, ())
    parts, pos = [], 0
    for a, b in spans:
        parts.append(text[pos:a])
        parts.append(GAP)
        pos = b
    parts.append(text[pos:])
    return Scope("".join(parts), tuple(text[a:b] for a, b in spans))


__all__ = ["Scope", "split_scope", "GAP"]
