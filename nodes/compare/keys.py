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
from typing import Any, Literal, Sequence

Direction = Literal["lower", "higher"] | None


class KeyError_(ValueError):
    """A key that names no metric PerfScout knows (bad usage)."""


@dataclass(frozen=True)
class MetricInfo:
    family: str
    direction: Direction
    unit: str  # "ms", "%", "ratio", "fps", "kB", "MB", "" (a count)
    label: str


#: What a field means: which way is better, its unit, its label.
Spec = tuple[Direction, str, str]

#: Start-up fields, per launch (issue 16: startup.runs[]); the key's value is the median over runs.
STARTUP_FIELDS = {"total_ms": "startup (total)", "ttid_ms": "time to initial display", "ttfd_ms": "time to full display"}
STARTUP_KINDS = ("cold", "warm", "hot")

FRAME_FIELDS: dict[str, Spec] = {
    "jank_ratio": ("lower", "ratio", "janky frames"), "jank_count": ("lower", "", "janky frames (count)"),
    "fps": ("higher", "fps", "frames per second"),
    "p50_ms": ("lower", "ms", "frame time p50"), "p90_ms": ("lower", "ms", "frame time p90"),
    "p99_ms": ("lower", "ms", "frame time p99"), "max_ms": ("lower", "ms", "slowest frame"),
    "count": (None, "", "frames"),
}

MAIN_THREAD_FIELDS: dict[str, Spec] = {
    "busy_ms": ("lower", "ms", "main thread busy"),
    "running_ms": ("lower", "ms", "main thread running"),
    "runnable_ms": ("lower", "ms", "main thread runnable"),
    #: Sleeping is waiting for work, not a cost: neither better nor worse.
    "sleeping_ms": (None, "ms", "main thread sleeping"),
    "uninterruptible_ms": ("lower", "ms", "main thread uninterruptible"),
    "io_wait_ms": ("lower", "ms", "main thread IO wait"),
}

PAGE_FIELDS: dict[str, Spec] = {
    "fcp_ms": ("lower", "ms", "first contentful paint"), "lcp_ms": ("lower", "ms", "largest contentful paint"),
    "cls": ("lower", "", "cumulative layout shift"), "tbt_ms": ("lower", "ms", "total blocking time"),
    "tti_ms": ("lower", "ms", "time to interactive"),
}

#: Per hot spot: hotspots."<name>".<field>, labelled "<name> <field>".
HOTSPOT_FIELDS: dict[str, Spec] = {
    "self_ms": ("lower", "ms", "self_ms"), "self_pct": ("lower", "%", "self_pct"),
    "total_ms": ("lower", "ms", "total_ms"), "total_pct": ("lower", "%", "total_pct"), "count": (None, "", "count"),
}

ART_PARTS = ("jit", "class_init", "verify_class")
ART_FIELDS = {"count": "", "total_ms": "ms"}

#: Memory numbers: meminfo's rows (``total_pss``, ``java_heap_pss`` …, kB) and the peak RSS of
#: a psutil series (``rss_max_mb``).
MEMORY_FIELD = re.compile(r"^(?:[a-z0-9_]+_(?:pss|rss|swap_pss)|[a-z0-9_]+_heap_(?:size|alloc|free)|rss_max_mb)$")

#: Per process in the memory lens (``memory.processes[]``): memory."<process>".<field>, and one
#: series of it: memory."<process>"."<counter>".<start|peak|end|growth> (its own unit).
PROCESS_MEMORY_FIELDS: dict[str, Spec] = {
    "rss_max_mb": ("lower", "MB", "peak RSS"), "gc_count": ("lower", "", "GC count"), "gc_ms": ("lower", "ms", "GC time"),
    "gc_pause_ms": ("lower", "ms", "GC pauses (threads stopped)"),
    "gc_wait_ms": ("lower", "ms", "main thread waiting for GC"),
}
SERIES_FIELDS = ("start", "peak", "end", "growth")

#: The CPU lens per process: cpu."<process>".<field> (``cpu.processes[]``).
CPU_FIELDS: dict[str, Spec] = {
    "running_ms": ("lower", "ms", "CPU time (running)"), "runnable_ms": ("lower", "ms", "runnable (waiting for a CPU)"),
    "share_of_window": ("lower", "ratio", "share of the window"), "share_of_cpus": ("lower", "ratio", "share of all CPUs"),
}

#: The power lens per window: power."<window>".<field> and power."<window>".categories."<CATEGORY>"
#: (µWs), the window being ``trace`` or a section (``measureBlock``).
POWER_FIELDS: dict[str, Spec] = {
    "energy_uws": ("lower", "µWs", "energy"), "power_uw": ("lower", "µW", "average power"),
    "battery_diff_mah": ("lower", "mAh", "battery discharge"),
}

#: The blocking lens, the app's main thread: blocking.<field>.
BLOCKING_FIELDS: dict[str, Spec] = {
    "binder_ms": ("lower", "ms", "main thread in binder calls"), "binder_calls": ("lower", "", "main thread binder calls"),
    "lock_ms": ("lower", "ms", "main thread waiting on locks"), "lock_waits": ("lower", "", "main thread lock waits"),
    "d_ms": ("lower", "ms", "main thread uninterruptible sleep"), "io_wait_ms": ("lower", "ms", "main thread IO wait"),
}

#: The scroll lens (Chrome): scroll.<field>.
SCROLL_FIELDS: dict[str, Spec] = {
    "janky_ratio": ("lower", "ratio", "janky scroll frames (Chrome's v3)"),
    "janky_frames": ("lower", "", "janky scroll frames"), "v4_janky_frames": ("lower", "", "janky scroll frames (Chrome's v4)"),
    "latency_p50_ms": ("lower", "ms", "input-to-frame latency p50"),
    "latency_p90_ms": ("lower", "ms", "input-to-frame latency p90"),
    "latency_p99_ms": ("lower", "ms", "input-to-frame latency p99"),
    "latency_max_ms": ("lower", "ms", "slowest scroll update"),
    "dropped_frames": ("lower", "", "dropped frames"), "update_count": (None, "", "scroll updates"),
}

TOP_LEVEL = {"duration_ms": (None, "ms", "capture length")}

FAMILIES = ("startup", "frames", "main_thread", "page", "memory", "art", "hotspots", "stats", "cpu", "power",
            "blocking", "scroll", "duration_ms")

#: Families keyed ``<family>.<field>``.
_BY_FIELD: dict[str, dict[str, Spec]] = {
    "frames": FRAME_FIELDS, "main_thread": MAIN_THREAD_FIELDS, "page": PAGE_FIELDS, "blocking": BLOCKING_FIELDS,
    "scroll": SCROLL_FIELDS,
}
#: Families keyed ``<family>."<name>".<field>`` (a process, a window, a function), labelled
#: "<name> <label>".
_BY_NAME: dict[str, dict[str, Spec]] = {
    "memory": PROCESS_MEMORY_FIELDS, "cpu": CPU_FIELDS, "power": POWER_FIELDS, "hotspots": HOTSPOT_FIELDS,
}


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


def _listed(fields: Sequence[str] | dict[str, Any]) -> str:
    return "|".join(fields)


#: What the keys of a family look like, said when one of its keys is unknown.
_USAGE = {
    "startup": f"startup keys are startup.<{_listed(STARTUP_FIELDS)}> or startup.<{_listed(STARTUP_KINDS)}>.<field>",
    "frames": f'frames keys are frames.<{_listed(FRAME_FIELDS)}> or frames.jank_types."<FrameTimeline jank type>"',
    "main_thread": f"main_thread keys are main_thread.<{_listed(MAIN_THREAD_FIELDS)}>",
    "page": f"page keys are page.<{_listed(PAGE_FIELDS)}>",
    "memory": 'memory keys are meminfo rows (memory.total_pss, memory.java_heap_pss …), memory.rss_max_mb, '
              f'memory."<process>".<{_listed(PROCESS_MEMORY_FIELDS)}> or '
              f'memory."<process>"."<counter>".<{_listed(SERIES_FIELDS)}>',
    "cpu": f'cpu keys are cpu."<process>".<{_listed(CPU_FIELDS)}>',
    "power": f'power keys are power."<window>".<{_listed(POWER_FIELDS)}> or power."<window>".categories."<CPU|DISPLAY|GPU|…>"',
    "scroll": f"scroll keys are scroll.<{_listed(SCROLL_FIELDS)}>",
    "blocking": f"blocking keys are blocking.<{_listed(BLOCKING_FIELDS)}>",
    "art": f"art keys are art.<{_listed(ART_PARTS)}>.<count|total_ms>",
    "hotspots": f'hot-spot keys are hotspots."<name>".<{_listed(HOTSPOT_FIELDS)}>',
    "stats": 'stats keys are stats."<name>"',
}


def _known(segs: Sequence[str]) -> MetricInfo | None:
    """What the key means, or None when the catalogue has no such key."""
    fam, n = segs[0], len(segs)
    if n == 2 and segs[1] in _BY_FIELD.get(fam, ()):
        return MetricInfo(fam, *_BY_FIELD[fam][segs[1]])
    if n == 3 and segs[2] in _BY_NAME.get(fam, ()):
        direction, unit, label = _BY_NAME[fam][segs[2]]
        return MetricInfo(fam, direction, unit, f"{segs[1]} {label}")
    if fam == "startup":
        if n == 2 and segs[1] in STARTUP_FIELDS:
            return MetricInfo("startup", "lower", "ms", STARTUP_FIELDS[segs[1]])
        if n == 3 and segs[1] in STARTUP_KINDS and segs[2] in STARTUP_FIELDS:
            return MetricInfo("startup", "lower", "ms", f"{segs[1]} {STARTUP_FIELDS[segs[2]]}")
    elif fam == "frames" and n == 3 and segs[1] == "jank_types":
        return MetricInfo("frames", "lower", "", f"frames marked {segs[2]}")
    elif fam == "memory":
        if n == 2 and MEMORY_FIELD.match(segs[1]):
            return MetricInfo("memory", "lower", "MB" if segs[1].endswith("_mb") else "kB", segs[1].replace("_", " "))
        if n == 4 and segs[3] in SERIES_FIELDS:
            return MetricInfo("memory", None if segs[3] == "start" else "lower", "", f"{segs[1]} {segs[2]} {segs[3]}")
    elif fam == "power" and n == 4 and segs[2] == "categories":
        return MetricInfo("power", "lower", "µWs", f"{segs[1]} {segs[3]} energy")
    elif fam == "art" and n == 3 and segs[1] in ART_PARTS and segs[2] in ART_FIELDS:
        return MetricInfo("art", "lower", ART_FIELDS[segs[2]], f"ART {segs[1]} {segs[2]}")
    elif fam == "stats" and n == 2:
        return MetricInfo("stats", None, "", segs[1])
    elif fam in TOP_LEVEL and n == 1:
        return MetricInfo(fam, *TOP_LEVEL[fam])
    return None


def info(segs: Sequence[str]) -> MetricInfo:
    """What the key means; KeyError_ naming it when it is not a metric PerfScout knows."""
    found = _known(segs)
    if found is not None:
        return found
    usage = _USAGE.get(segs[0], f"a key starts with one of {', '.join(FAMILIES)}")
    raise KeyError_(f"unknown metric {format_key(segs)!r}: {usage}")
