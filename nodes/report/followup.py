"""Answers follow-up questions about a thread's last analysis, from its numbers, without a model.

"Now show me the slowest frame" / 「最慢的一帧是哪一帧」 names no data: it asks about what this
thread already analysed. Re-running the pipeline would be slow and a model could invent
numbers, so a small set of recognised questions is answered straight from ``state.analysis``
(a ``nodes.perf.model.AnalysisResult`` as JSON). ``answer`` returns None when the question is
not one of them or the analysis holds nothing for it, so the caller can go on as usual.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Mapping

from nodes.compare.intent import PREVIOUS_CUE
from nodes.perf.model import DEFAULT_BUDGET_MS
from nodes.perf.units import SEVERITY_ORDER, ms
from nodes.report.language import Lang, detect_language

Analysis = Mapping[str, Any]

_INTENTS: list[tuple[str, re.Pattern[str]]] = [
    # first: 「和上次比启动变快了吗」 asks about the change, not about the startup itself
    ("compare_previous", PREVIOUS_CUE),
    (
        "slowest_frame",
        re.compile(
            r"最[慢卡长久]的?(那)?一?[帧幀]|哪一?[帧幀]最[慢卡长長久]|[最]?[慢卡]的[帧幀]|"
            r"(slowest|worst|longest|jankiest)\s+frames?",
            re.I,
        ),
    ),
    (
        "hotspot",
        re.compile(
            r"最耗时|最費時|最耗時|热点|熱點|(哪个|哪個)(函数|函數|方法).*(慢|耗时|耗時)|"
            r"hot\s*-?spots?|slowest\s+(function|method|call)|top\s+(function|hotspot)|"
            r"what\s+took\s+(the\s+)?most\s+time|where\s+(is|was)\s+(the\s+)?time\s+spent",
            re.I,
        ),
    ),
    (
        "long_task",
        re.compile(r"最长的?任务|最長的?任務|长任务|長任務|long(est)?\s+tasks?", re.I),
    ),
    (
        "startup",
        re.compile(
            r"启动(耗时|时间|多久|多长)|啟動(耗時|時間|多久|多長)|"
            r"(startup|start-up|launch)\s+(time|took|duration)|how\s+long\s+(did\s+)?(it|the\s+app)\s+take\s+to\s+(start|launch)",
            re.I,
        ),
    ),
    (
        "frames",
        re.compile(r"掉[帧幀]|卡顿率|卡頓率|帧率|幀率|多少[帧幀]|\bfps\b|jank|frame\s+rate|dropped\s+frames", re.I),
    ),
    (
        "thread",
        re.compile(r"(哪个|哪個)线程|(哪个|哪個)線程|最忙|主线程|主線程|busiest\s+thread|main\s+thread|which\s+thread", re.I),
    ),
    (
        "findings",
        re.compile(
            r"(有|发现|發現)(了)?(什么|什麼|哪些)问题|(有|发现|發現)(了)?(什么|什麼|哪些)問題|结论|結論|总结一下|總結一下|"
            r"what\s+did\s+you\s+find|summar(y|ise|ize)|(the\s+)?main\s+(problem|issue)s?|findings",
            re.I,
        ),
    ),
]


#: "What is jank?" asks what a word means, not what this thread measured.
_DEFINITION = re.compile(
    r"what\s+(is|are)\s+(?!the\b|my\b|its\b)|what\s+does\s+.+\s+mean|什么是|什麼是|是什么意思|是什麼意思|什么叫|什麼叫",
    re.I,
)


def intent(text: str) -> str | None:
    """Which recognised follow-up question ``text`` asks, or None."""
    if _DEFINITION.search(text or ""):
        return None
    for name, pattern in _INTENTS:
        if pattern.search(text or ""):
            return name
    return None


def answer(text: str, analysis: Analysis | None, previous: Analysis | None = None,
           from_thread: bool = True) -> str | None:
    """The answer from ``analysis``, in the user's language; None when there is none to give.
    ``previous``: the thread's analysis before it, for "is it better than the previous run?".
    ``from_thread``: the analysis is the thread's last one (said after the answer), not this turn's."""
    if not analysis:
        return None
    name = intent(text)
    if name is None:
        return None
    lang = detect_language(text)
    if name == "compare_previous":
        from nodes.compare.answer import previous_answer

        return previous_answer(analysis, previous, lang)
    body = _ANSWERERS[name](analysis, lang)
    if body is None:
        return None
    if not from_thread:
        return body
    source = analysis.get("source") or "?"
    head = {
        "zh-Hans": f"（来自本会话上一次的分析：{source}）",
        "zh-Hant": f"（來自本對話上一次的分析：{source}）",
        "en": f"(from this thread's last analysis: {source})",
    }[lang]
    return f"{body}\n{head}"


def answerable(text: str, analysis: Analysis | None) -> bool:
    if intent(text) == "compare_previous":
        return bool(analysis)  # answered from the last two analyses (or: there is no previous one)
    return answer(text, analysis) is not None


def _t(lang: Lang, hans: str, hant: str, en: str) -> str:
    return {"zh-Hans": hans, "zh-Hant": hant, "en": en}[lang]


def _ms(v: Any) -> str:
    return ms(float(v))


def _slowest_frame(a: Analysis, lang: Lang) -> str | None:
    frames = a.get("frames") or {}
    worst = list(frames.get("worst") or [])
    if worst:
        w = max(worst, key=lambda f: float(f.get("dur_ms") or 0))
        ran = ", ".join((w.get("ran") or [])[:3])
        jank = _jank_note(w.get("jank_type"), lang)
        budget = frames.get("budget_ms")
        over = _t(lang, f"（预算 {_ms(budget)}）", f"（預算 {_ms(budget)}）", f" (budget {_ms(budget)})") if budget else ""
        lines = [
            _t(
                lang,
                f"最慢的一帧：{_ms(w['start_ms'])} 处开始，持续 {_ms(w['dur_ms'])}{over}{jank}。",
                f"最慢的一幀：{_ms(w['start_ms'])} 處開始，持續 {_ms(w['dur_ms'])}{over}{jank}。",
                f"Slowest frame: starts at {_ms(w['start_ms'])}, lasts {_ms(w['dur_ms'])}{over}{jank}.",
            )
        ]
        if ran:
            lines.append(_t(lang, f"这一帧里运行最久的是：{ran}", f"這一幀裡執行最久的是：{ran}", f"What ran longest in it: {ran}"))
        return "\n".join(lines)
    if frames.get("max_ms") is not None:
        return _t(
            lang,
            f"最慢的一帧持续 {_ms(frames['max_ms'])}（共 {frames.get('count', '?')} 帧；数据里没有逐帧时间）。",
            f"最慢的一幀持續 {_ms(frames['max_ms'])}（共 {frames.get('count', '?')} 幀；資料裡沒有逐幀時間）。",
            f"The slowest frame took {_ms(frames['max_ms'])} (of {frames.get('count', '?')} frames; "
            "the data has no per-frame times).",
        )
    return None


def _jank_note(jank_type: str | None, lang: Lang) -> str:
    """FrameTimeline's verdict on the frame. Its "None" means *no jank* (the frame was long but
    presented on time, e.g. buffered), "Unspecified" means it gave none: neither is a jank type
    to print in brackets (nodes/perf/parsers/perfetto_frames.py ``jank_label``)."""
    if not jank_type or jank_type == "Unspecified":
        return ""
    if jank_type == "None":
        return _t(lang, "（FrameTimeline 判定为不卡顿）", "（FrameTimeline 判定為不卡頓）", " (FrameTimeline: not janky)")
    return f" [{jank_type}]"


def _hotspot(a: Analysis, lang: Lang) -> str | None:
    hs = list(a.get("hotspots") or [])[:3]
    if not hs:
        return None
    rows = []
    for i, h in enumerate(hs, 1):
        where = f" ({h['file']}:{h.get('line') or '?'})" if h.get("file") else ""
        rows.append(f"{i}. {h['name']}{where}: self {_ms(h['self_ms'])} ({float(h.get('self_pct') or 0):.1f} %)")
    return _t(lang, "最耗时的：", "最耗時的：", "Where the time went:") + "\n" + "\n".join(rows)


def _long_task(a: Analysis, lang: Lang) -> str | None:
    tasks = list(a.get("long_tasks") or [])
    if not tasks:
        return None
    t = max(tasks, key=lambda x: float(x.get("dur_ms") or 0))
    return _t(
        lang,
        f"最长的任务：{t['name']}，在 {t['thread']} 上 {_ms(t['start_ms'])} 开始，持续 {_ms(t['dur_ms'])}（共 {len(tasks)} 个长任务）。",
        f"最長的任務：{t['name']}，在 {t['thread']} 上 {_ms(t['start_ms'])} 開始，持續 {_ms(t['dur_ms'])}（共 {len(tasks)} 個長任務）。",
        f"Longest task: {t['name']} on {t['thread']}, starts at {_ms(t['start_ms'])}, lasts {_ms(t['dur_ms'])} "
        f"({len(tasks)} long tasks in all).",
    )


def _startup(a: Analysis, lang: Lang) -> str | None:
    s = a.get("startup") or {}
    if s.get("median_ms") is None:
        return None
    n = len(s.get("runs") or [])
    first = f"; first {_ms(s['first_ms'])}" if s.get("first_ms") is not None else ""
    spread = f", spread {_ms(s['spread_ms'])}" if s.get("spread_ms") is not None else ""
    return _t(
        lang,
        f"启动耗时中位数 {_ms(s['median_ms'])}（{n} 次，{s.get('kind', 'unknown')}{first}{spread}）。",
        f"啟動耗時中位數 {_ms(s['median_ms'])}（{n} 次，{s.get('kind', 'unknown')}{first}{spread}）。",
        f"Startup median {_ms(s['median_ms'])} ({n} runs, {s.get('kind', 'unknown')}{first}{spread}).",
    )


def _frames(a: Analysis, lang: Lang) -> str | None:
    f = a.get("frames") or {}
    if not f.get("count"):
        return None
    fps = f"{float(f['fps']):.1f}" if f.get("fps") is not None else "?"
    ratio = f"{100 * float(f['jank_ratio']):.1f} %" if f.get("jank_ratio") is not None else "?"
    p90 = _ms(f["p90_ms"]) if f.get("p90_ms") is not None else "?"
    return _t(
        lang,
        f"{f['count']} 帧，FPS {fps}，卡顿帧 {f.get('jank_count', 0)}（{ratio}），P90 {p90}，预算 {_ms(f.get('budget_ms', DEFAULT_BUDGET_MS))}。",
        f"{f['count']} 幀，FPS {fps}，卡頓幀 {f.get('jank_count', 0)}（{ratio}），P90 {p90}，預算 {_ms(f.get('budget_ms', DEFAULT_BUDGET_MS))}。",
        f"{f['count']} frames, FPS {fps}, janky {f.get('jank_count', 0)} ({ratio}), P90 {p90}, "
        f"budget {_ms(f.get('budget_ms', DEFAULT_BUDGET_MS))}.",
    )


def _thread(a: Analysis, lang: Lang) -> str | None:
    threads = list(a.get("threads") or [])
    if not threads:
        return None
    top = sorted(threads, key=lambda t: float(t.get("busy_ms") or 0), reverse=True)[:3]
    rows = [
        f"{i}. {t['name']}{' (main)' if t.get('is_main') else ''}: busy {_ms(t['busy_ms'])}"
        for i, t in enumerate(top, 1)
    ]
    return _t(lang, "最忙的线程：", "最忙的線程：", "Busiest threads:") + "\n" + "\n".join(rows)


def _findings(a: Analysis, lang: Lang) -> str | None:
    fs = list(a.get("findings") or [])
    if not fs:
        return None
    order = SEVERITY_ORDER
    fs.sort(key=lambda f: order.get(f.get("severity"), 4))
    rows = [f"- [{f.get('severity')}] {f.get('title')}: {f.get('detail')}" for f in fs[:3]]
    return _t(lang, "主要发现：", "主要發現：", "Main findings:") + "\n" + "\n".join(rows)


_ANSWERERS: dict[str, Callable[[Analysis, Lang], str | None]] = {
    "slowest_frame": _slowest_frame,
    "hotspot": _hotspot,
    "long_task": _long_task,
    "startup": _startup,
    "frames": _frames,
    "thread": _thread,
    "findings": _findings,
}


def brief(analysis: Analysis | None, limit: int = 1200) -> str:
    """A compact, bounded summary of an analysis: the context a model gets for a follow-up."""
    if not analysis:
        return ""
    parts = [f"source={analysis.get('source')} format={analysis.get('format')} duration_ms={analysis.get('duration_ms')}"]
    for fn in (_frames, _startup, _hotspot, _long_task, _findings):
        text = fn(analysis, "en")
        if text:
            parts.append(text)
    return "\n".join(parts)[:limit]
