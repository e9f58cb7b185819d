"""Rule 8 of the routing contract, "On a thread" (docs/ROUTING.md).

The message alone cannot know it; the orchestrator (and ``perfscout route --thread``) can: a
turn that continues a thread holding an analysis and asks only about another aspect of that
data — 「那内存呢？」, "and the CPU?", "what about power during the test?", 「最慢的一帧是哪一帧」 —
naming no new file, program or package and asking nothing to be collected, is ``analyze`` on
the thread's data. A request to collect or measure on a device ("采集一下内存", "dump meminfo of
com.demo.shop", 「现在手机上的内存」) stays where rules 1–7 put it. Checked after rules 1 and 2
(source code words; a named data file) and before 3–7. Pure: no I/O, no model.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from graph.enums import Lens, Route, Tier
from nodes.routing.scope import split_scope

#: Asking for something to be collected, measured or run now, or on the device.
_COLLECT = re.compile(
    r"采集|採集|抓(?:一下|个|個|取)?|录制|錄製|录一|錄一|测一下|測一下|测量|測量|量一下|跑一下|重新|再测|再測|"
    r"再跑|重跑|跑一次|再来一次|再來一次|\bagain\b|"
    r"现在|現在|当前|當前|实时|實時|手机上|手機上|设备上|設備上|真机|真機|"
    r"\b(?:dump|collect|capture|record|measure|re-?run|benchmark)\b|"
    r"\bon\s+(?:the|my)\s+(?:device|phone)\b|\bright\s+now\b|\bcurrently\b|\blive\b",
    re.I,
)
#: Advice or a definition asks about the world, not about this data (rule 4 keeps them).
_ADVICE = re.compile(
    r"怎么优化|怎麼優化|如何优化|如何優化|怎样|怎樣|最佳实践|最佳實踐|建议|建議|什么是|什麼是|是什么意思|是什麼意思|"
    r"\bhow\s+(?:do|can|should|to)\b|\bbest\s+practices?\b|\bwhat\s+(?:is|are)\s+(?!the\b|my\b|its\b)|\bmean\b",
    re.I,
)
#: Routes rule 8 may replace: rules 1 and 2 (explorer; analyze with a file) are checked before it.
_REPLACEABLE = frozenset({Route.ANDROID.value, Route.END.value, Route.ANALYZE.value})


def applies(info: Mapping[str, Any], text: str, *, has_analysis: bool, names_data: bool,
            names_target: bool, followup: bool) -> bool:
    """Whether rule 8 makes this message ``analyze`` on the thread's last analysis.

    ``names_data``: it names a file or two sides (rule 2 decides); ``names_target``: a program
    or package; ``followup``: it asks one of the recognised questions about a result
    (nodes/report/followup.py). A lens other than the overview is "another aspect".
    """
    if not has_analysis or names_data or names_target:
        return False
    if info.get("route") == Route.EXPLORER.value and info.get("tier") == Tier.RULE.value:
        return False  # rule 1: source code words win
    if info.get("route") not in _REPLACEABLE and info.get("tier") not in (Tier.CLASSIFIER.value, Tier.DEFAULT.value):
        return False
    asked = split_scope(text or "").asked
    if _COLLECT.search(asked) or _ADVICE.search(asked):
        return False
    return followup or (info.get("lens") or Lens.OVERVIEW.value) != Lens.OVERVIEW.value


def reason(info: Mapping[str, Any], source: str | None) -> str:
    lens = info.get("lens") or Lens.OVERVIEW.value
    what = f"the {lens} lens" if lens != Lens.OVERVIEW.value else "a question"
    on = f" ({source})" if source else ""
    before = str(info.get("reason") or "")
    return (f"{before}; " if before else "") + (
        f"rule 8 (on a thread): {what} on the thread's last analysis{on}, no new file, program or collection")


__all__ = ["applies", "reason"]
