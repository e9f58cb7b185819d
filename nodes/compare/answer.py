"""A comparison told in a few sentences, in the user's language (the graph's answer and follow-ups).

Built from the comparison's rows only (nodes/compare/diff.py): the headline metric first — the
start-up, else the frames, else the page, else the main thread, else the top hot spot — then
what got worse and what got better, with the medians and the change. No model, no number that
the rows do not hold.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from nodes.compare.diff import Comparison, compare_sides
from nodes.compare.render import delta_text, value
from nodes.compare.sides import side_from_analyses

#: The metric a "faster or slower?" question is answered by first, most specific first.
HEADLINE_KEYS = ("startup.ttid_ms", "startup.total_ms", "page.lcp_ms", "page.fcp_ms", "frames.jank_ratio",
                 "frames.p90_ms", "main_thread.busy_ms", "duration_ms")


def _t(lang: str, hans: str, hant: str, en: str) -> str:
    return {"zh-Hans": hans, "zh-Hant": hant}.get(lang, en)


_VERDICT = {
    "worse": ("变差", "變差", "worse"),
    "better": ("变好", "變好", "better"),
    "no significant change": ("无显著变化", "無顯著變化", "no significant change"),
    "unchanged": ("没有变化", "沒有變化", "unchanged"),
    "changed": ("有变化", "有變化", "changed"),
}


def _verdict(lang: str, v: str) -> str:
    h, t, e = _VERDICT.get(v, (v, v, v))
    return _t(lang, h, t, e)


def _line(r: Any, lang: str) -> str:
    import statistics

    a = value(statistics.median(r.a), r.unit) if r.a else "–"
    b = value(statistics.median(r.b), r.unit) if r.b else "–"
    name = r.label if r.family == "hotspots" else r.key
    return f"{name}: {a} → {b} ({delta_text(r)}, {_verdict(lang, r.verdict)})"


def describe(c: Comparison, lang: str = "en", limit: int = 4) -> str:
    rows = {r.key: r for r in c.rows if r.diff and "delta" in r.diff}
    lines = []
    head = next((rows[k] for k in HEADLINE_KEYS if k in rows), None)
    if head is not None:
        lines.append(_t(lang, "最主要的：", "最主要的：", "Headline: ") + _line(head, lang))
    worse = [r for r in list(rows.values()) + c.hotspots if r.verdict == "worse" and r is not head][:limit]
    better = [r for r in list(rows.values()) + c.hotspots if r.verdict == "better" and r is not head][:limit]
    if worse:
        lines.append(_t(lang, "变差：", "變差：", "Worse: ") + "; ".join(_line(r, lang) for r in worse))
    if better:
        lines.append(_t(lang, "变好：", "變好：", "Better: ") + "; ".join(_line(r, lang) for r in better))
    if not worse and not better and (head is None or head.verdict not in ("worse", "better")):
        lines.append(_t(lang, "没有显著变化。", "沒有顯著變化。", "No significant change."))
    one = rows and all(r.diff.get("ci_low") is None for r in rows.values())
    if one:
        lines.append(_t(lang, "（每边只有一次运行：只有差值，没有置信区间。）", "（每邊只有一次執行：只有差值，沒有信賴區間。）",
                        "(one run per side: deltas without an interval.)"))
    for w in c.warnings:
        lines.append(_t(lang, f"注意：{w}", f"注意：{w}", f"Note: {w}"))
    return "\n".join(lines)


def previous_answer(analysis: Mapping[str, Any] | None, previous: Mapping[str, Any] | None, lang: str) -> str | None:
    """The answer to 「和上次比变快了吗」 from the thread's last two analyses; None without any analysis."""
    if not analysis:
        return None
    if not previous:
        return _t(lang, "这个会话目前只有一次分析，没有上一次可以比较。先分析另一份数据（或再测一次），再问我。",
                  "這個對話目前只有一次分析，沒有上一次可以比較。先分析另一份資料（或再測一次），再問我。",
                  "This thread has one analysis so far: there is no previous run to compare with. "
                  "Analyse another capture (or measure again), then ask.")
    from nodes.compare.diff import MismatchError

    try:
        c = compare_sides(side_from_analyses(str(previous.get("source") or "previous"), [dict(previous)]),
                          side_from_analyses(str(analysis.get("source") or "last"), [dict(analysis)]))
    except MismatchError as e:
        return _t(lang, f"上一次和这一次的数据类型不同，无法比较：{e}", f"上一次和這一次的資料類型不同，無法比較：{e}",
                  f"The previous and the last analysis hold different kinds of data: {e}")
    head = _t(lang, f"和上次比（{previous.get('source')} → {analysis.get('source')}）：",
              f"和上次比（{previous.get('source')} → {analysis.get('source')}）：",
              f"Against the previous run ({previous.get('source')} → {analysis.get('source')}):")
    return head + "\n" + describe(c, lang)


def comparison_answer(c: Comparison, lang: str, report: Mapping[str, str] | None = None,
                      extra: Sequence[str] = ()) -> str:
    head = _t(lang, f"对比 {c.a_label}（A）和 {c.b_label}（B）：", f"對比 {c.a_label}（A）和 {c.b_label}（B）：",
              f"{c.b_label} (B) against {c.a_label} (A):")
    out = [head, describe(c, lang), *extra]
    if report and report.get("html"):
        out.append(f"Report: {report['html']}")
    return "\n".join(out)
