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
    #: What a question about it says, in Chinese (both scripts) and English, lower case: a
    #: Latin word matches as a whole word ("cpu", not "cpus"), ``*`` at its end allows any ending
    #: ("scroll*": scrolling, scrolled); Chinese words match anywhere.
    words: tuple[str, ...]
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
    #: Phrases that hold one of ``words`` and belong to another lens ("total blocking time").
    unless: tuple[str, ...] = ()

    def said_in(self, low: str) -> bool:
        """Whether ``low`` (a message, lower case, single spaces) says one of ``words``.

        Plain substring tests first (the router runs this on every message: no regex unless a
        word is there), then the word boundaries of Latin words: "测一下fps" has one before fps.
        """
        for phrase in self.unless:
            low = low.replace(phrase, " ")
        for w in self.words:
            stem = w.rstrip("*")
            i = low.find(stem)
            while i >= 0:
                if not stem.isascii():
                    return True
                j = i + len(stem)
                if (i == 0 or not _WORDCHAR(low[i - 1])) and (w.endswith("*") or j == len(low) or not _WORDCHAR(low[j])):
                    return True
                i = low.find(stem, i + 1)
        return False


#: Table order is the order of precedence when a message names several: a metric (power,
#: memory, CPU, blocking) asked about during a phase (a launch, a scroll, a page load) is the
#: lens; the phase is where to look.
LENSES: dict[Lens, LensSpec] = {s.lens: s for s in (
    LensSpec(Lens.POWER,
             ("耗电", "耗電", "功耗", "电量", "電量", "电池", "電池", "能耗", "用电", "用電", "省电", "省電",
              "power", "energy", "battery", "drain", "watt*", "mah"),
             "energy (µWs) and power per category and rail over the trace and the test's section",
             "ODPM power rails or battery counters (Perfetto android.power)",
             RECIPES["power"], frozenset({"power"}), rd.power),
    LensSpec(Lens.MEMORY,
             ("内存", "內存", "記憶體", "堆内存", "堆記憶體", "泄漏", "洩漏", "泄露", "垃圾回收",
              "memory", "ram", "rss", "pss", "heap", "leak*", "oom", "lmk", "low memory", "lowmemory", "meminfo",
              "gc", "garbage collect*"),
             "peak, start, end and growth of RSS (and heap) per process; low-memory kills",
             "per-process memory counters over time (process_stats, rss_stat) or dumpsys meminfo",
             RECIPES["memory"], frozenset({"memory"}), rd.memory),
    LensSpec(Lens.CPU,
             ("处理器", "處理器", "热点", "熱點", "最耗时", "最耗時", "耗时最多", "耗時最多",
              "cpu", "cpus", "core", "cores", "hotspot*", "hot spot*", "hot-spot*",
              "where does the time go", "where did the time go", "where does the cpu time go"),
             "CPU time and share per process and thread, runnable (waiting for a CPU) time; sampled hot spots",
             "the scheduler (sched_switch / sched_waking) or CPU callstack samples",
             RECIPES["cpu"], frozenset({"cpu"}), rd.cpu),
    LensSpec(Lens.BLOCKING,
             ("阻塞", "卡住", "堵塞", "锁", "鎖", "在等什么", "在等什麼",
              "binder*", "block", "blocks", "blocked", "blocking", "lock", "locks", "locked", "contention", "mutex",
              "monitor", "io wait", "iowait", "io_wait", "wait on", "wait for", "waits on", "waits for", "waited on",
              "waited for", "waiting on", "waiting for", "uninterruptible", "d state", "d-state",
              "sched_blocked_reason"),
             "the longest blocked intervals of the main thread and what they waited on (binder, locks, IO)",
             "thread states with sched_blocked_reason, binder and lock-contention slices",
             RECIPES["blocking"], frozenset({"blocking"}), rd.blocking,
             unless=("total blocking time", "blocking time")),
    LensSpec(Lens.SCROLL,
             ("滑动", "滑動", "滚动", "滾動", "输入延迟", "輸入延遲", "触摸延迟", "觸摸延遲", "响应延迟", "響應延遲",
              "scroll*", "fling*", "input latency", "input lag", "input delay", "touch latency", "touch lag"),
             "janky scroll updates, dropped frames and input-to-frame latency while scrolling",
             "Chrome's EventLatency and frame-reporter events, or Android input events with FrameTimeline",
             RECIPES["scroll"], frozenset({"scroll", "frames"}), rd.scroll),
    LensSpec(Lens.PAGE,
             ("页面", "頁面", "网页", "網頁", "网站", "網站", "首屏", "白屏",
              "page", "pages", "website", "web vitals", "webvitals", "fcp", "lcp", "cls", "tbt", "contentful paint",
              "layout shift*", "total blocking time", "lighthouse", "page load*", "pageload*"),
             "FCP, LCP, CLS and TBT of the navigation (Lighthouse's) and what delays them",
             "a Chrome trace of the page load (DevTools Performance or Lighthouse)",
             RECIPES["page"], frozenset({"page"}), rd.page),
    LensSpec(Lens.STARTUP,
             ("启动", "啟動", "冷启", "冷啟", "热启", "熱啟", "温启", "溫啟", "开屏", "開屏",
              "launch*", "startup*", "start-up*", "start up", "cold start*", "warm start*", "hot start*", "ttid",
              "ttfd", "reportfullydrawn", "time to initial", "time to full"),
             "TTID and TTFD of the launch and the biggest part of its breakdown (a program: launch median)",
             "a system trace with ActivityManager's launch events (atrace am) and the app's main thread",
             RECIPES["startup"], frozenset({"startup"}), rd.startup),
    LensSpec(Lens.FRAMES,
             ("卡顿", "卡頓", "掉帧", "掉幀", "丢帧", "丟幀", "帧", "幀", "流畅", "流暢",
              "jank*", "frame", "frames", "fps", "stutter*", "choppy", "smooth*"),
             "janky frames (count and ratio), p90 frame time and the top causes of late frames",
             "SurfaceFlinger's FrameTimeline or the app's frame slices (Choreographer#doFrame, DrawFrame)",
             RECIPES["frames"], frozenset({"frames"}), rd.frames),
    LensSpec(Lens.OVERVIEW, (), "what the data is mostly about (today's order: startup, jank, severity)",
             "any capture", None, frozenset(), lambda a: None),
)}


def _WORDCHAR(ch: str) -> bool:
    """A Latin letter, digit or underscore: what a word boundary is between (CJK is not)."""
    return ch.isascii() and (ch.isalnum() or ch == "_")


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
