"""First version of the cascade: a few high-precision rules, then the LLM tier, then `end`.

(The issue "routing quality" replaces the rules with the full rule set and adds the classifier.)
"""

from __future__ import annotations

import re
import time
from typing import Any

from graph.enums import ROUTE_LABELS, Route, Tier

_RULES: list[tuple[re.Pattern[str], Route]] = [
    (re.compile(r"(搜索|搜一下|grep|源码|代码|where is .* defined|打开.*\.(py|java|kt|ts|ets))", re.I), Route.EXPLORER),
    (re.compile(r"\.(json|perfetto-trace|pftrace|trace|txt|gz)\b|这份数据|刚才采集", re.I), Route.ANALYZE),
    (re.compile(r"(怎么优化|what is|为什么|best practice|建议)", re.I), Route.END),
    (re.compile(r"(冷启动|启动耗时|启动时间|cold start|takes to start|launch time)", re.I), Route.STARTUP),
    (re.compile(r"(全面|完整|end to end|profile)", re.I), Route.FULL_ANALYSIS),
    (re.compile(r"(fps|meminfo|cpu 占用|采集.*trace)", re.I), Route.ANDROID),
]


def route_message(text: str, llm: Any = None) -> dict[str, Any]:
    t0 = time.perf_counter()
    for pattern, route in _RULES:
        m = pattern.search(text or "")
        if m:
            return {
                "route": route.value,
                "tier": Tier.RULE.value,
                "confidence": 1.0,
                "reason": f"rule matched {m.group(0)!r}",
                "latency_ms": (time.perf_counter() - t0) * 1000,
            }
    return {
        "route": Route.END.value,
        "tier": Tier.DEFAULT.value,
        "confidence": 0.0,
        "reason": "no rule matched",
        "latency_ms": (time.perf_counter() - t0) * 1000,
    }


__all__ = ["route_message", "ROUTE_LABELS"]
