"""Web-vitals rules: a page whose FCP, LCP, CLS or TBT is outside the "good" range.

Thresholds are the published ones: web.dev's Core Web Vitals bands for FCP, LCP and CLS
(web.dev/articles/fcp, /lcp, /cls: good ≤ the first value, poor > the second) and Lighthouse's
scoring curve for TBT (mobile: good ≤ 200 ms, poor > 600 ms; developer.chrome.com
/docs/lighthouse/performance/lighthouse-total-blocking-time). "Needs improvement" is medium,
"poor" is high. Each rule carries a suggestion from a fixed table and the page explaining it.
"""

from __future__ import annotations

from nodes.perf.findings.common import finding
from nodes.perf.metrics.common import _fms
from nodes.perf.model import Finding, PageVitals
from nodes.perf.units import counted

FCP_GOOD_MS, FCP_POOR_MS = 1800.0, 3000.0
LCP_GOOD_MS, LCP_POOR_MS = 2500.0, 4000.0
CLS_GOOD, CLS_POOR = 0.1, 0.25
TBT_GOOD_MS, TBT_POOR_MS = 200.0, 600.0
#: The family these findings belong to (the page lens, nodes/perf/lenses.py).
FAMILY = "page"

#: metric → (what to do, where it is explained)
SUGGESTIONS = {
    "fcp_ms": ("Cut render-blocking CSS and scripts (inline the critical CSS, defer the rest) and the server's response time.",
               "https://web.dev/articles/fcp#how_to_improve_fcp"),
    "lcp_ms": ("Make the LCP resource discoverable early (no lazy-load, fetchpriority=high, preload) and shrink it.",
               "https://web.dev/articles/optimize-lcp"),
    "cls": ("Reserve space for images, ads and late content (width/height or aspect-ratio); insert nothing above what is shown.",
            "https://web.dev/articles/optimize-cls"),
    "tbt_ms": ("Split long main-thread tasks (yield with scheduler.yield or setTimeout), defer non-critical JavaScript.",
               "https://web.dev/articles/optimize-long-tasks"),
}


def _band(value: float, good: float, poor: float) -> str | None:
    if value <= good:
        return None
    return "high" if value > poor else "medium"


def _where(p: PageVitals) -> str:
    return f" ({p.url})" if p.url else ""


def _one(p: PageVitals, key: str, label: str, value: float | None, good: float, poor: float, shown: str,
         source: str | None, extra: str = "") -> list[Finding]:
    if value is None:
        return []
    sev = _band(value, good, poor)
    if sev is None:
        return []
    what = "poor" if sev == "high" else "needs improvement"
    tip, link = SUGGESTIONS[key]
    return [finding(f"{label} {shown}: {what}", sev,
                    f"{label} {shown}{_where(p)}; good is at most {good:g}{'' if key == 'cls' else ' ms'}, "
                    f"poor above {poor:g}{'' if key == 'cls' else ' ms'} (Lighthouse's observed value).{extra}",
                    source, metric={key: value}, suggestion=tip, link=link, family=FAMILY,
                    start_ms=p.start_ms, end_ms=p.start_ms + value if key != "cls" else None)]


def slow_fcp(p: PageVitals | None, source: str | None) -> list[Finding]:
    return [] if p is None else _one(p, "fcp_ms", "First Contentful Paint", p.fcp_ms, FCP_GOOD_MS, FCP_POOR_MS,
                                     _fms(p.fcp_ms), source)


def slow_lcp(p: PageVitals | None, source: str | None) -> list[Finding]:
    if p is None:
        return []
    el = f" The LCP element: {p.lcp_node or p.lcp_type}." if (p.lcp_node or p.lcp_type) else ""
    return _one(p, "lcp_ms", "Largest Contentful Paint", p.lcp_ms, LCP_GOOD_MS, LCP_POOR_MS, _fms(p.lcp_ms),
                source, el)


def layout_shifts(p: PageVitals | None, source: str | None) -> list[Finding]:
    if p is None or p.cls is None:
        return []
    return _one(p, "cls", "Cumulative Layout Shift", p.cls, CLS_GOOD, CLS_POOR, f"{p.cls:.3f}", source,
                f" {counted(p.layout_shifts, 'shift')} counted.")


def blocking_time(p: PageVitals | None, source: str | None) -> list[Finding]:
    if p is None:
        return []
    return _one(p, "tbt_ms", "Total Blocking Time", p.tbt_ms, TBT_GOOD_MS, TBT_POOR_MS, _fms(p.tbt_ms), source,
                f" {counted(p.blocking_tasks, 'main-thread task')} over 50 ms between FCP and TTI ({_fms(p.tti_ms)}).")
