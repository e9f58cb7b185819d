"""The ``end`` route: general questions, advice, vague requests, and follow-ups on the last result.

Three answers, best first:

1. a follow-up on this thread's last analysis ("the slowest frame?") is answered from its
   numbers (``nodes.report.followup``): facts the thread measured beat anything a model would say;
2. with a model, a short answer to the question asked, in the user's language, kept to
   performance topics — with a real token budget, not the router's five tokens;
3. without a model (or when it fails), a deterministic answer that says what PerfScout can do
   for *this* topic, with requests the user can type as they are, and how to add a model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from graph.enums import Node
from nodes.report import followup
from nodes.framework.common import last_user_text, say, stamp
from nodes.framework.context import NodeContext
from nodes.framework.stage import node_context
from nodes.report.language import Lang, detect_language
from nodes.framework.model_call import call_model, spend, time_left_s

#: Enough for a short paragraph and an example; the router's budget (5) is for one label.
FALLBACK_MAX_TOKENS = 400
#: What of a model answer is shown: 400 tokens are ~1 600 characters of English (fewer of CJK);
#: a server that ignores max_tokens (a 1 MB answer) is cut here, not printed in full.
FALLBACK_MAX_CHARS = 4000
#: Earlier messages of the thread a model sees (bounded: a long thread must not grow the prompt).
HISTORY_MESSAGES = 6
HISTORY_CHARS = 600

_LANG_NAMES = {"zh-Hans": "Simplified Chinese", "zh-Hant": "Traditional Chinese", "en": "English"}

SYSTEM_PROMPT = """You are PerfScout, a software performance assistant.
Answer the user's question in at most 150 words, in {language}.
Stay on performance: start-up time, frame rate and jank, CPU, memory, traces and profiling.
For anything else, say in one sentence that you only help with performance.
Never invent measurements. When measuring would help, end with ONE request the user can type
to PerfScout, in {language}.
PerfScout can: profile a local program end to end (CPU hot spots tied to source lines, report);
measure start-up time (local program or Android app); collect FPS, jank, CPU, memory or a
trace on an Android device over adb; read existing Perfetto, Chrome/Trace-Event JSON,
speedscope, pstats, atrace and gfxinfo files; search source code.
{analysis}"""


@dataclass(frozen=True)
class Topic:
    name: str
    pattern: re.Pattern[str]
    #: Per language: (what it is / what PerfScout does, [ready-to-type requests]).
    text: Mapping[Lang, tuple[str, tuple[str, ...]]]


TOPICS: tuple[Topic, ...] = (
    Topic(
        "startup",
        re.compile(r"启动|啟動|冷启|冷啟|热启|熱啟|start-?up|launch|cold start|warm start", re.I),
        {
            "zh-Hans": (
                "关于启动：PerfScout 会多次启动目标（本机程序，或 Android 上的 am start -W），"
                "报告耗时中位数、首次（最冷）一次和波动，并指出启动阶段最慢的部分（Python 程序还有逐模块的导入耗时）。",
                ("测一下 examples/slow_app.py 的启动时间", "测一下 com.demo.shop 的冷启动耗时", "解读一下 launch.perfetto-trace"),
            ),
            "zh-Hant": (
                "關於啟動：PerfScout 會多次啟動目標（本機程式，或 Android 上的 am start -W），"
                "報告耗時中位數、首次（最冷）一次和波動，並指出啟動階段最慢的部分（Python 程式還有逐模組的匯入耗時）。",
                ("測一下 examples/slow_app.py 的啟動時間", "測一下 com.demo.shop 的冷啟動耗時", "解讀一下 launch.perfetto-trace"),
            ),
            "en": (
                "About start-up: PerfScout launches the target several times (a local program, or `am start -W` "
                "on Android), reports the median, the first (coldest) launch and the spread, and shows the "
                "slowest phases (per-module import times for Python programs).",
                (
                    "measure how long examples/slow_app.py takes to start",
                    "measure cold start of com.demo.shop",
                    "what does launch.perfetto-trace say?",
                ),
            ),
        },
    ),
    Topic(
        "frames",
        re.compile(r"[帧幀]|fps|jank|卡顿|卡頓|掉[帧幀]|流畅|流暢|滑动|滑動|scroll|frame|vsync", re.I),
        {
            "zh-Hans": (
                "关于帧率和卡顿：一帧超过显示预算（60 Hz 时约 16.7 ms）就是卡顿帧。PerfScout 可以在 Android 设备上"
                "采集 FPS 和卡顿（gfxinfo、frame timeline），或解读已有的 trace，给出卡顿率、P90/P99 和最慢的几帧里在跑什么。",
                ("测一下 com.demo.shop 的 FPS", "解读一下 gfxinfo.txt", "采集一下 trace"),
            ),
            "zh-Hant": (
                "關於幀率和卡頓：一幀超過顯示預算（60 Hz 時約 16.7 ms）就是卡頓幀。PerfScout 可以在 Android 裝置上"
                "採集 FPS 和卡頓（gfxinfo、frame timeline），或解讀已有的 trace，給出卡頓率、P90/P99 和最慢的幾幀裡在跑什麼。",
                ("測一下 com.demo.shop 的 FPS", "解讀一下 gfxinfo.txt", "採集一下 trace"),
            ),
            "en": (
                "About frame rate and jank: a frame that misses its display budget (about 16.7 ms at 60 Hz) is "
                "janky. PerfScout collects FPS and jank on an Android device (gfxinfo, frame timeline) or reads an "
                "existing trace, and reports the jank ratio, P90/P99 and what ran in the slowest frames.",
                ("measure FPS of com.demo.shop", "what does gfxinfo.txt say?", "capture a trace on the device"),
            ),
        },
    ),
    Topic(
        "memory",
        re.compile(r"内存|記憶體|內存|memory|meminfo|\brss\b|\bpss\b|oom|leak|泄漏|洩漏", re.I),
        {
            "zh-Hans": (
                "关于内存：PerfScout 可以读取 Android 应用的 meminfo（PSS、Java/Native 堆），"
                "或在分析本机程序时记录进程树的 RSS 曲线，看内存是否持续上涨。",
                ("dump 一下 com.demo.shop 的 meminfo", "看看手机上的内存占用", "帮我全面分析一下 examples/slow_app.py"),
            ),
            "zh-Hant": (
                "關於記憶體：PerfScout 可以讀取 Android 應用的 meminfo（PSS、Java/Native 堆積），"
                "或在分析本機程式時記錄行程樹的 RSS 曲線，看記憶體是否持續上漲。",
                ("dump 一下 com.demo.shop 的 meminfo", "看看手機上的記憶體佔用", "幫我全面分析一下 examples/slow_app.py"),
            ),
            "en": (
                "About memory: PerfScout reads an Android app's meminfo (PSS, Java/native heaps), or records "
                "the RSS curve of a local program's process tree while profiling it, to see whether it keeps growing.",
                ("dump meminfo of com.demo.shop", "show memory usage on the phone", "profile examples/slow_app.py end to end"),
            ),
        },
    ),
    Topic(
        "cpu",
        re.compile(r"cpu|占用|佔用|耗时|耗時|热点|熱點|hot ?spot|slow|慢|函数|函數|profil", re.I),
        {
            "zh-Hans": (
                "关于 CPU 和耗时：PerfScout 可以对本机程序做采样分析（py-spy），列出最耗时的函数并定位到源码行，"
                "也可以读取 Android 设备上的 CPU 占用，或解读已有的 profile。",
                ("帮我全面分析一下 examples/slow_app.py", "看看手机上的 CPU 占用", "解读一下 profile.speedscope.json"),
            ),
            "zh-Hant": (
                "關於 CPU 和耗時：PerfScout 可以對本機程式做取樣分析（py-spy），列出最耗時的函式並定位到原始碼行，"
                "也可以讀取 Android 裝置上的 CPU 佔用，或解讀已有的 profile。",
                ("幫我全面分析一下 examples/slow_app.py", "看看手機上的 CPU 佔用", "解讀一下 profile.speedscope.json"),
            ),
            "en": (
                "About CPU time: PerfScout samples a local program (py-spy), lists the functions that take the "
                "most time and ties them to source lines; it can also read CPU usage on an Android device or an "
                "existing profile.",
                (
                    "profile examples/slow_app.py end to end",
                    "check CPU usage on the device",
                    "what does profile.speedscope.json say?",
                ),
            ),
        },
    ),
    Topic(
        "traces",
        re.compile(r"trace|perfetto|systrace|atrace|火焰图|火焰圖|flame", re.I),
        {
            "zh-Hans": (
                "关于 trace：PerfScout 能读 Perfetto（.perfetto-trace / .pftrace）、Chrome/Trace Event JSON、"
                "speedscope、pstats、atrace 和 gfxinfo，给出热点、长任务、线程和帧的统计，并写出带图表的报告。",
                ("解读一下 trace.json", "分析一下 launch.perfetto-trace", "采集一下 trace"),
            ),
            "zh-Hant": (
                "關於 trace：PerfScout 能讀 Perfetto（.perfetto-trace / .pftrace）、Chrome/Trace Event JSON、"
                "speedscope、pstats、atrace 和 gfxinfo，給出熱點、長任務、線程和幀的統計，並寫出帶圖表的報告。",
                ("解讀一下 trace.json", "分析一下 launch.perfetto-trace", "採集一下 trace"),
            ),
            "en": (
                "About traces: PerfScout reads Perfetto (.perfetto-trace / .pftrace), Chrome/Trace Event JSON, "
                "speedscope, pstats, atrace and gfxinfo, and reports hot spots, long tasks, threads and frames "
                "with charts.",
                ("what does trace.json say?", "analyse launch.perfetto-trace", "capture a trace on the device"),
            ),
        },
    ),
)

GENERAL = Topic(
    "general",
    re.compile(r"$^"),
    {
        "zh-Hans": (
            "我是 PerfScout，可以帮你：全面分析一个程序（采样、热点定位到源码、报告）、测量启动耗时、"
            "在 Android 设备上采集 FPS/卡顿/CPU/内存/trace、解读已有的性能数据、搜索代码。"
            "告诉我要分析的对象（程序、包名或数据文件），例如：",
            ("帮我全面分析一下 examples/slow_app.py", "解读一下 trace.json", "测一下 com.demo.shop 的启动时间"),
        ),
        "zh-Hant": (
            "我是 PerfScout，可以幫你：全面分析一個程式（取樣、熱點定位到原始碼、報告）、測量啟動耗時、"
            "在 Android 裝置上採集 FPS/卡頓/CPU/記憶體/trace、解讀已有的效能資料、搜尋程式碼。"
            "告訴我要分析的對象（程式、套件名或資料檔），例如：",
            ("幫我全面分析一下 examples/slow_app.py", "解讀一下 trace.json", "測一下 com.demo.shop 的啟動時間"),
        ),
        "en": (
            "I am PerfScout. I can profile a program end to end (sampling, hot spots tied to source lines, a "
            "report), measure start-up time, collect FPS/jank/CPU/memory/traces on an Android device, read "
            "existing performance data, and search code. Tell me what to look at (a program, a package or a "
            "data file), for example:",
            (
                "profile examples/slow_app.py end to end",
                "what does trace.json say?",
                "measure how long com.demo.shop takes to start",
            ),
        ),
    },
)

_TRY = {"zh-Hans": "可以直接这样问：", "zh-Hant": "可以直接這樣問：", "en": "You can type, for example:"}
_MODEL_HINT = {
    "zh-Hans": "开放性问题（原理、优化建议）需要一个模型：设置 OPENAI_API_KEY，或用 OPENAI_BASE_URL 指向本地的 "
    "OpenAI 兼容服务（Ollama、vLLM、llama.cpp），可用 PERFSCOUT_MODEL 指定模型名。",
    "zh-Hant": "開放性問題（原理、優化建議）需要一個模型：設定 OPENAI_API_KEY，或用 OPENAI_BASE_URL 指向本機的 "
    "OpenAI 相容服務（Ollama、vLLM、llama.cpp），可用 PERFSCOUT_MODEL 指定模型名稱。",
    "en": "Open questions (why, how to optimise) need a model: set OPENAI_API_KEY, or point OPENAI_BASE_URL at a "
    "local OpenAI-compatible server (Ollama, vLLM, llama.cpp); PERFSCOUT_MODEL names the model.",
}
_MODEL_FAILED = {
    "zh-Hans": "（模型这次没有回答：{err}；以上是离线答复。）",
    "zh-Hant": "（模型這次沒有回答：{err}；以上是離線答覆。）",
    "en": "(The model did not answer this time: {err}; this is the offline answer.)",
}
_CUT = {
    "zh-Hans": "（模型的回答有 {n} 个字符，只显示前 {cap} 个。）",
    "zh-Hant": "（模型的回答有 {n} 個字元，只顯示前 {cap} 個。）",
    "en": "(The model's answer had {n} characters; the first {cap} are shown.)",
}
_LAST_ANALYSIS = {
    "zh-Hans": "本会话已分析过 {src}，可以接着问：「最慢的一帧是哪一帧」「最耗时的函数是什么」「有什么问题」。",
    "zh-Hant": "本對話已分析過 {src}，可以接著問：「最慢的一幀是哪一幀」「最耗時的函式是什麼」「有什麼問題」。",
    "en": "This thread already analysed {src}; you can ask: \"show me the slowest frame\", "
    "\"what took the most time?\", \"what did you find?\".",
}


def topic_of(text: str) -> Topic:
    """The first topic ``text`` mentions (start-up before frames: "启动卡顿" is about launch)."""
    for t in TOPICS:
        if t.pattern.search(text or ""):
            return t
    return GENERAL


def offline_answer(text: str, state: Mapping[str, Any] | None = None) -> str:
    """What PerfScout can do for this question, with requests to type, in the user's language."""
    lang = detect_language(text)
    topic = topic_of(text)
    intro, examples = topic.text[lang]
    lines = [intro]
    if topic is not GENERAL:
        lines.append(_TRY[lang])
    lines.extend(f"  · {e}" for e in examples)
    analysis = (state or {}).get("analysis")
    if analysis:
        lines.append(_LAST_ANALYSIS[lang].format(src=analysis.get("source") or "?"))
    lines.append(_MODEL_HINT[lang])
    return "\n".join(lines)


def model_messages(text: str, state: Mapping[str, Any]) -> list[BaseMessage]:
    """System prompt, a bounded tail of the conversation, and the question."""
    lang = detect_language(text)
    context = followup.brief(state.get("analysis"))
    system = SYSTEM_PROMPT.format(
        language=_LANG_NAMES[lang],
        analysis=f"This thread's last analysis (use these numbers, no others):\n{context}" if context else "",
    )
    history: list[BaseMessage] = []
    earlier = list(state.get("messages") or [])[:-1]
    for m in earlier[-HISTORY_MESSAGES:]:
        if isinstance(m, BaseMessage) and m.type in ("human", "ai") and isinstance(m.content, str):
            cls = HumanMessage if m.type == "human" else AIMessage
            history.append(cls(content=m.content[:HISTORY_CHARS]))
    return [SystemMessage(content=system.strip()), *history, HumanMessage(content=text)]


def make(default: NodeContext) -> Callable[..., dict]:
    def fallback(state: dict, runtime: Any = None) -> dict:
        ctx = node_context(runtime, default)
        text = last_user_text(state)
        update = stamp(state, Node.FALLBACK.value)
        answer = followup.answer(text, state.get("analysis"), state.get("previous_analysis"))
        if answer is None and ctx.llm is not None:
            # One call with a wall-clock deadline (body included) within the turn's model
            # budget; the reply capped and escaped (nodes/framework/model_call.py).
            reply = call_model(ctx.llm, model_messages(text, state), deadline_s=time_left_s(ctx, state),
                               max_chars=FALLBACK_MAX_CHARS, name="fallback", max_tokens=FALLBACK_MAX_TOKENS)
            update.update(spend(state, reply.elapsed_s))
            if reply.error is None and (reply.text or "").strip():
                answer = reply.text.strip()  # type: ignore[union-attr]
                if reply.truncated:
                    answer += "\n" + _CUT[detect_language(text)].format(n=reply.raw_chars, cap=FALLBACK_MAX_CHARS)
            else:  # any provider error, a timeout, an empty reply: the offline answer still helps
                note = _MODEL_FAILED[detect_language(text)].format(err=reply.error or "empty reply")
                answer = f"{offline_answer(text, state)}\n{note}"
        if answer is None:
            answer = offline_answer(text, state)
        update.update(say(Node.FALLBACK.value, answer))
        return update

    return fallback
