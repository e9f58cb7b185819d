"""Metric keys: the dotted names budgets and comparisons use, and what each one means.

A key names a number of the analysis as its JSON spells it: ``frames.jank_ratio``,
``startup.ttid_ms``, ``startup.cold.ttid_ms`` (one kind of launch), ``main_thread.runnable_ms``,
``page.lcp_ms``, ``memory.total_pss``, ``hotspots."<name>".self_pct``; the lens keys
``cpu."<process>".running_ms``, ``power."<window>".energy_uws``, ``memory."<process>".rss_max_mb``,
``blocking.binder_ms`` (a process by its name, ``name (pid)`` where two share a name). A segment holding dots
(hot-spot names do: ``json.decoder.JSONDecoder.raw_decode``) is written in double quotes.

The catalogue below is closed on purpose: a key outside it is a typo (``frames.jank_ratoi``),
reported as bad usage (exit 2), never silently "missing". A key inside it that the data lacks
*is* missing — a trace with no frames has no ``frames.fps``.

Direction says which way is better: ``lower`` (durations, jank), ``higher`` (fps), or
``None`` for a count that is neither (the number of frames drawn).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, Sequence

Direction = Literal["lower", "higher"] | None


class KeyError_(ValueError):
    """A key that names no metric PerfScout knows (bad usage)."""


@dataclass(frozen=True)
class MetricInfo:
    family: str
    direction: Direction
    unit: str  # "ms", "%", "ratio", "fps", "kB", "MB", "" (a count)
    label: str


#: Start-up fields, per launch (issue 16: startup.runs[]); the key's value is the median over runs.
STARTUP_FIELDS = {"total_ms": "startup (total)", "ttid_ms": "time to initial display", "ttfd_ms": "time to full display"}
STARTUP_KINDS = ("cold", "warm", "hot")

FRAME_FIELDS: dict[str, tuple[Direction, str, str]] = {
    "jank_ratio": ("lower", "ratio", "janky frames"),
    "jank_count": ("lower", "", "janky frames (count)"),
    "fps": ("higher", "fps", "frames per second"),
    "p50_ms": ("lower", "ms", "frame time p50"),
    "p90_ms": ("lower", "ms", "frame time p90"),
    "p99_ms": ("lower", "ms", "frame time p99"),
    "max_ms": ("lower", "ms", "slowest frame"),
    "count": (None, "", "frames"),
}

MAIN_THREAD_FIELDS: dict[str, str] = {
    "busy_ms": "main thread busy",
    "running_ms": "main thread running",
    "runnable_ms": "main thread runnable",
    "sleeping_ms": "main thread sleeping",
    "uninterruptible_ms": "main thread uninterruptible",
    "io_wait_ms": "main thread IO wait",
}
#: Sleeping is waiting for work, not a cost: neither better nor worse.
_NEUTRAL_MAIN = {"sleeping_ms"}

PAGE_FIELDS: dict[str, tuple[str, str]] = {
    "fcp_ms": ("ms", "first contentful paint"),
    "lcp_ms": ("ms", "largest contentful paint"),
    "cls": ("", "cumulative layout shift"),
    "tbt_ms": ("ms", "total blocking time"),
    "tti_ms": ("ms", "time to interactive"),
}

HOTSPOT_FIELDS: dict[str, tuple[Direction, str]] = {
    "self_ms": ("lower", "ms"),
    "self_pct": ("lower", "%"),
    "total_ms": ("lower", "ms"),
    "total_pct": ("lower", "%"),
    "count": (None, ""),
}

ART_PARTS = ("jit", "class_init", "verify_class")
ART_FIELDS = {"count": "", "total_ms": "ms"}

#: Memory numbers: meminfo's rows (``total_pss``, ``java_heap_pss`` …, kB) and the peak RSS of
#: a psutil series (``rss_max_mb``).
MEMORY_FIELD = re.compile(r"^(?:[a-z0-9_]+_(?:pss|rss|swap_pss)|[a-z0-9_]+_heap_(?:size|alloc|free)|rss_max_mb)$")

#: Per process in the memory lens (``memory.processes[]``): memory."<process>".<field>, and one
#: series of it: memory."<process>"."<counter>".<start|peak|end|growth> (its own unit).
PROCESS_MEMORY_FIELDS: dict[str, tuple[str, str]] = {
    "rss_max_mb": ("MB", "peak RSS"), "gc_count": ("", "GC count"), "gc_ms": ("ms", "GC time"),
    "gc_pause_ms": ("ms", "GC pauses (threads stopped)"), "gc_wait_ms": ("ms", "main thread waiting for GC"),
}
SERIES_FIELDS = ("start", "peak", "end", "growth")

#: The CPU lens per process: cpu."<process>".<field> (``cpu.processes[]``).
CPU_FIELDS: dict[str, tuple[str, str]] = {
    "running_ms": ("ms", "CPU time (running)"),
    "runnable_ms": ("ms", "runnable (waiting for a CPU)"),
    "share_of_window": ("ratio", "share of the window"),
    "share_of_cpus": ("ratio", "share of all CPUs"),
}

#: The power lens per window: power."<window>".<field> and power."<window>".categories."<CATEGORY>"
#: (µWs), the window being ``trace`` or a section (``measureBlock``).
POWER_FIELDS: dict[str, tuple[str, str]] = {
    "energy_uws": ("µWs", "energy"), "power_uw": ("µW", "average power"),
    "battery_diff_mah": ("mAh", "battery discharge"),
}

#: The blocking lens, the app's main thread: blocking.<field>.
BLOCKING_FIELDS: dict[str, tuple[str, str]] = {
    "binder_ms": ("ms", "main thread in binder calls"), "binder_calls": ("", "main thread binder calls"),
    "lock_ms": ("ms", "main thread waiting on locks"), "lock_waits": ("", "main thread lock waits"),
    "d_ms": ("ms", "main thread uninterruptible sleep"), "io_wait_ms": ("ms", "main thread IO wait"),
}

#: The scroll lens (Chrome): scroll.<field>.
SCROLL_FIELDS: dict[str, tuple[Direction, str, str]] = {
    "janky_ratio": ("lower", "ratio", "janky scroll frames (Chrome's v3)"),
    "janky_frames": ("lower", "", "janky scroll frames"),
    "v4_janky_frames": ("lower", "", "janky scroll frames (Chrome's v4)"),
    "latency_p50_ms": ("lower", "ms", "input-to-frame latency p50"),
    "latency_p90_ms": ("lower", "ms", "input-to-frame latency p90"),
    "latency_p99_ms": ("lower", "ms", "input-to-frame latency p99"),
    "latency_max_ms": ("lower", "ms", "slowest scroll update"),
    "dropped_frames": ("lower", "", "dropped frames"),
    "update_count": (None, "", "scroll updates"),
}

TOP_LEVEL = {"duration_ms": (None, "ms", "capture length")}

FAMILIES = ("startup", "frames", "main_thread", "page", "memory", "art", "hotspots", "stats", "cpu", "power",
            "blocking", "scroll", "duration_ms")


# --- key text <-> segments -----------------------------------------------------------------

_SEG = re.compile(r'"((?:[^"\\]|\\.)*)"|([^."]+)')


def parse_key(text: str) -> tuple[str, ...]:
    """``hotspots."a.b".self_pct`` → ("hotspots", "a.b", "self_pct"). Raises KeyError_ on bad syntax."""
    s = text.strip()
    segs: list[str] = []
    pos = 0
    while pos < len(s):
        m = _SEG.match(s, pos)
        if not m:
            raise KeyError_(f"budget key {text!r}: cannot read it at character {pos + 1}")
        segs.append(re.sub(r"\\(.)", r"\1", m.group(1)) if m.group(1) is not None else m.group(2).strip())
        pos = m.end()
        if pos < len(s):
            if s[pos] != ".":
                raise KeyError_(f"budget key {text!r}: expected '.' at character {pos + 1}")
            pos += 1
            if pos == len(s):
                raise KeyError_(f"budget key {text!r}: ends with '.'")
    if not segs or any(x == "" for x in segs):
        raise KeyError_(f"budget key {text!r}: an empty part")
    return tuple(segs)


def format_key(segs: Sequence[str]) -> str:
    """The canonical text of a key: names with dots, quotes or spaces in double quotes."""
    out = []
    for s in segs:
        if re.fullmatch(r"[A-Za-z0-9_:\-]+", s):
            out.append(s)
        else:
            out.append('"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"')
    return ".".join(out)


#: Families whose second segment is a free name (a function, a stat), not a field.
NAMED_FAMILIES = {"hotspots", "stats", "cpu", "power", "memory"}
#: Tables of free names one level down (frames.jank_types."App Deadline Missed").
NAMED_SUBTABLES = {("frames", "jank_types")}


def info(segs: Sequence[str]) -> MetricInfo:
    """What the key means; KeyError_ naming it when it is not a metric PerfScout knows."""
    key = format_key(segs)
    fam = segs[0]
    n = len(segs)
    if fam == "startup":
        if n == 2 and segs[1] in STARTUP_FIELDS:
            return MetricInfo("startup", "lower", "ms", STARTUP_FIELDS[segs[1]])
        if n == 3 and segs[1] in STARTUP_KINDS and segs[2] in STARTUP_FIELDS:
            return MetricInfo("startup", "lower", "ms", f"{segs[1]} {STARTUP_FIELDS[segs[2]]}")
        raise KeyError_(f"unknown metric {key!r}: startup keys are startup.<{'|'.join(STARTUP_FIELDS)}> "
                        f"or startup.<{'|'.join(STARTUP_KINDS)}>.<field>")
    if fam == "frames":
        if n == 3 and segs[1] == "jank_types":
            return MetricInfo("frames", "lower", "", f"frames marked {segs[2]}")
        if n == 2 and segs[1] in FRAME_FIELDS:
            d, u, label = FRAME_FIELDS[segs[1]]
            return MetricInfo("frames", d, u, label)
        raise KeyError_(f"unknown metric {key!r}: frames keys are frames.<{'|'.join(FRAME_FIELDS)}> "
                        'or frames.jank_types."<FrameTimeline jank type>"')
    if fam == "main_thread":
        if n == 2 and segs[1] in MAIN_THREAD_FIELDS:
            return MetricInfo("main_thread", None if segs[1] in _NEUTRAL_MAIN else "lower", "ms", MAIN_THREAD_FIELDS[segs[1]])
        raise KeyError_(f"unknown metric {key!r}: main_thread keys are main_thread.<{'|'.join(MAIN_THREAD_FIELDS)}>")
    if fam == "page":
        if n == 2 and segs[1] in PAGE_FIELDS:
            u, label = PAGE_FIELDS[segs[1]]
            return MetricInfo("page", "lower", u, label)
        raise KeyError_(f"unknown metric {key!r}: page keys are page.<{'|'.join(PAGE_FIELDS)}>")
    if fam == "memory":
        if n == 2 and MEMORY_FIELD.match(segs[1]):
            return MetricInfo("memory", "lower", "MB" if segs[1].endswith("_mb") else "kB", segs[1].replace("_", " "))
        if n == 3 and segs[2] in PROCESS_MEMORY_FIELDS:
            u, label = PROCESS_MEMORY_FIELDS[segs[2]]
            return MetricInfo("memory", "lower", u, f"{segs[1]} {label}")
        if n == 4 and segs[3] in SERIES_FIELDS:
            return MetricInfo("memory", None if segs[3] == "start" else "lower", "", f"{segs[1]} {segs[2]} {segs[3]}")
        raise KeyError_(f"unknown metric {key!r}: memory keys are meminfo rows (memory.total_pss, "
                        'memory.java_heap_pss …), memory.rss_max_mb, memory."<process>".'
                        f"<{'|'.join(PROCESS_MEMORY_FIELDS)}> or "
                        f'memory."<process>"."<counter>".<{"|".join(SERIES_FIELDS)}>')
    if fam == "cpu":
        if n == 3 and segs[2] in CPU_FIELDS:
            u, label = CPU_FIELDS[segs[2]]
            return MetricInfo("cpu", "lower", u, f"{segs[1]} {label}")
        raise KeyError_(f'unknown metric {key!r}: cpu keys are cpu."<process>".<{"|".join(CPU_FIELDS)}>')
    if fam == "power":
        if n == 3 and segs[2] in POWER_FIELDS:
            u, label = POWER_FIELDS[segs[2]]
            return MetricInfo("power", "lower", u, f"{segs[1]} {label}")
        if n == 4 and segs[2] == "categories":
            return MetricInfo("power", "lower", "µWs", f"{segs[1]} {segs[3]} energy")
        raise KeyError_(f'unknown metric {key!r}: power keys are power."<window>".<{"|".join(POWER_FIELDS)}> '
                        'or power."<window>".categories."<CPU|DISPLAY|GPU|…>"')
    if fam == "scroll":
        if n == 2 and segs[1] in SCROLL_FIELDS:
            d, u, label = SCROLL_FIELDS[segs[1]]
            return MetricInfo("scroll", d, u, label)
        raise KeyError_(f"unknown metric {key!r}: scroll keys are scroll.<{'|'.join(SCROLL_FIELDS)}>")
    if fam == "blocking":
        if n == 2 and segs[1] in BLOCKING_FIELDS:
            u, label = BLOCKING_FIELDS[segs[1]]
            return MetricInfo("blocking", "lower", u, label)
        raise KeyError_(f"unknown metric {key!r}: blocking keys are blocking.<{'|'.join(BLOCKING_FIELDS)}>")
    if fam == "art":
        if n == 3 and segs[1] in ART_PARTS and segs[2] in ART_FIELDS:
            return MetricInfo("art", "lower", ART_FIELDS[segs[2]], f"ART {segs[1]} {segs[2]}")
        raise KeyError_(f"unknown metric {key!r}: art keys are art.<{'|'.join(ART_PARTS)}>.<count|total_ms>")
    if fam == "hotspots":
        if n == 3 and segs[2] in HOTSPOT_FIELDS:
            d, u = HOTSPOT_FIELDS[segs[2]]
            return MetricInfo("hotspots", d, u, f"{segs[1]} {segs[2]}")
        raise KeyError_(f'unknown metric {key!r}: hot-spot keys are hotspots."<name>".<{"|".join(HOTSPOT_FIELDS)}>')
    if fam == "stats":
        if n == 2:
            return MetricInfo("stats", None, "", segs[1])
        raise KeyError_(f'unknown metric {key!r}: stats keys are stats."<name>"')
    if fam in TOP_LEVEL and n == 1:
        d, u, label = TOP_LEVEL[fam]
        return MetricInfo(fam, d, u, label)
    raise KeyError_(f"unknown metric {key!r}: a key starts with one of {', '.join(FAMILIES)}")
