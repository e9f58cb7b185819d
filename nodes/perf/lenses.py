"""The lens table: for each aspect a question can ask about, its words, its key metrics, the data
it needs, how to record that data, which finding families belong to it, and the function that
reads its numbers from an analysis.

One row per :class:`graph.enums.Lens`. The router decides a message's lens from ``words``
(nodes/routing/lens.py); the reporter leads the answer with ``read(analysis)``
(nodes/perf/lens_readers.py) and lists the findings of ``families`` first. A lens whose numbers
come from a new metric family is a new reader in its row, not a special case elsewhere.
Pure and light: no numpy, no model imports at module level (offline routing loads this).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from graph.enums import Lens
from nodes.perf import lens_readers as rd
from nodes.perf.recipes import RECIPES, Recipe

if TYPE_CHECKING:
    from nodes.perf.lens_readers import Reading
    from nodes.perf.model import AnalysisResult


@dataclass(frozen=True)
class LensSpec:
    lens: Lens
    #: What a question about it says, in Chinese (both scripts) and English.
    words: str
    #: The numbers its answer leads with.
    metrics: str
    #: What the data must hold for those numbers.
    needs: str
    #: How to record that data (nodes/perf/recipes.py), or None (overview: whatever there is).
    recipe: Recipe | None
    #: Finding families (Finding.family) that answer it: listed first, the others as "also".
    families: frozenset[str]
    #: The lens's numbers from an analysis (None: the overview keeps today's headline).
    read: Callable[["AnalysisResult"], "Reading | None"]

    @property
    def pattern(self) -> re.Pattern[str]:
        """``words`` compiled; ASCII word boundaries, so "测一下FPS" has one before FPS."""
        return _compiled(self.lens)


#: Table order is the order of precedence when a message names several: a metric (power,
#: memory, CPU, blocking) asked about during a phase (a launch, a scroll, a page load) is the
#: lens; the phase is where to look.
LENSES: dict[Lens, LensSpec] = {s.lens: s for s in (
    LensSpec(Lens.POWER,
             r"耗电|耗電|功耗|电量|電量|电池|電池|能耗|用电|用電|省电|省電|\bpower\b|\benergy\b|\bbattery\b|"
             r"power\s*rails?|\bdrain\b|\bwatts?\b|\bmah\b",
             "energy (µWs) and power per category and rail over the trace and the test's section",
             "ODPM power rails or battery counters (Perfetto android.power)",
             RECIPES["power"], frozenset({"power"}), rd.power),
    LensSpec(Lens.MEMORY,
             r"内存|內存|記憶體|存储占用|\bmemory\b|\bram\b|\brss\b|\bpss\b|\bheap\b|堆内存|堆記憶體|泄漏|洩漏|泄露|"
             r"\bleaks?\b|\boom\b|\blmk\b|low\s*memory|meminfo|\bgc\b|garbage\s+collect|垃圾回收",
             "peak, start, end and growth of RSS (and heap) per process; low-memory kills",
             "per-process memory counters over time (process_stats, rss_stat) or dumpsys meminfo",
             RECIPES["memory"], frozenset({"memory"}), rd.memory),
    LensSpec(Lens.CPU,
             r"\bcpus?\b|处理器|處理器|cpu\s*(?:时间|時間|占用|佔用|使用率)|\bcores?\b|\bcpu\s+time\b|"
             r"hot\s*-?spots?|热点|熱點|最耗时|最耗時|耗时最多|耗時最多|where\s+(?:does|did)\s+the\s+time\s+go|"
             r"(?:which|what)\s+(?:function|method)s?\b.*\b(?:slow|time)",
             "CPU time and share per process and thread, runnable (waiting for a CPU) time; sampled hot spots",
             "the scheduler (sched_switch / sched_waking) or CPU callstack samples",
             RECIPES["cpu"], frozenset({"cpu"}), rd.cpu),
    LensSpec(Lens.BLOCKING,
             r"阻塞|卡住|堵塞|锁竞争|鎖競爭|锁|鎖|等锁|等鎖|binder|\bblock(?:ed|s)?\b|\bblocking(?!\s+time)|"
             r"\blocks?\b|contention|\bmutex\b|\bmonitor\b|io\s*wait|\bwait(?:ed|ing|s)?\s+(?:on|for)\b|"
             r"uninterruptible|d\s*state|sched_blocked_reason|在等什么|在等什麼",
             "the longest blocked intervals of the main thread and what they waited on (binder, locks, IO)",
             "thread states with sched_blocked_reason, binder and lock-contention slices",
             RECIPES["blocking"], frozenset({"blocking"}), rd.blocking),
    LensSpec(Lens.SCROLL,
             r"滑动|滑動|滚动|滾動|列表滑|\bscroll(?:s|ing|ed)?\b|\bfling\b|输入延迟|輸入延遲|触摸延迟|觸摸延遲|"
             r"input\s+(?:latency|lag|delay)|touch\s+(?:latency|lag)|响应延迟|響應延遲",
             "janky scroll updates, dropped frames and input-to-frame latency while scrolling",
             "Chrome's EventLatency and frame-reporter events, or Android input events with FrameTimeline",
             RECIPES["scroll"], frozenset({"scroll", "frames"}), rd.scroll),
    LensSpec(Lens.PAGE,
             r"页面|頁面|网页|網頁|网站|網站|首屏|白屏|\bpages?\b|\bwebsite\b|web\s*vitals|\bfcp\b|\blcp\b|\bcls\b|"
             r"\btbt\b|contentful\s+paint|layout\s+shift|total\s+blocking\s+time|lighthouse|page\s*load",
             "FCP, LCP, CLS and TBT of the navigation (Lighthouse's) and what delays them",
             "a Chrome trace of the page load (DevTools Performance or Lighthouse)",
             RECIPES["page"], frozenset({"page"}), rd.page),
    LensSpec(Lens.STARTUP,
             r"启动|啟動|冷启|冷啟|热启|熱啟|温启|溫啟|开屏|開屏|\blaunch(?:es|ed|ing)?\b|start\s*-?\s*up|"
             r"cold\s+start|warm\s+start|hot\s+start|\bttid\b|\bttfd\b|reportfullydrawn|time\s+to\s+(?:initial|full)",
             "TTID and TTFD of the launch and the biggest part of its breakdown (a program: launch median)",
             "a system trace with ActivityManager's launch events (atrace am) and the app's main thread",
             RECIPES["startup"], frozenset({"startup"}), rd.startup),
    LensSpec(Lens.FRAMES,
             r"卡顿|卡頓|掉帧|掉幀|丢帧|丟幀|[帧幀]|流畅|流暢|\bjank(?:y|s)?\b|\bframes?\b|\bfps\b|\bstutter|"
             r"choppy|\bsmooth",
             "janky frames (count and ratio), p90 frame time and the top causes of late frames",
             "SurfaceFlinger's FrameTimeline or the app's frame slices (Choreographer#doFrame, DrawFrame)",
             RECIPES["frames"], frozenset({"frames"}), rd.frames),
    LensSpec(Lens.OVERVIEW, "", "what the data is mostly about (today's order: startup, jank, severity)",
             "any capture", None, frozenset(), lambda a: None),
)}


_PATTERNS: dict[Lens, re.Pattern[str]] = {}


def _compiled(lens: Lens) -> re.Pattern[str]:
    if lens not in _PATTERNS:
        words = LENSES[lens].words
        _PATTERNS[lens] = re.compile(words, re.I | re.A) if words else re.compile(r"(?!x)x")
    return _PATTERNS[lens]


def spec(lens: Lens | str | None) -> LensSpec:
    """The row of ``lens`` (a value or an alias); the overview row for None or an unknown name."""
    from graph.enums import lens_named

    try:
        return LENSES[lens if isinstance(lens, Lens) else lens_named(lens)]
    except ValueError:
        return LENSES[Lens.OVERVIEW]


def in_lens(family: str | None, lens: Lens | str | None) -> bool:
    """Whether a finding of ``family`` answers ``lens`` (the overview has no own families)."""
    return family is not None and family in spec(lens).families


__all__ = ["LENSES", "LensSpec", "in_lens", "spec"]
