"""What each lens reads from an analysis: its key numbers as one sentence, or exactly what the
data lacks, how to record it, and what this data can say about the same question.

One function per row of nodes/perf/lenses.py, each over an ``AnalysisResult``. Numbers come
only from the analysis (never estimated); a verdict word ("fast", "smooth") only when no finding
of the lens is over its named threshold (nodes/perf/findings/). A metric family added to the
result later (``cpu``, ``memory``, ``power``, ``blocking``: issue 24's JSON) is read first by
``getattr``: its reader grows a branch, the table and the reporter stay as they are.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable

from nodes.perf.units import counted, dur, ms, pct

#: Findings of these severities are "over a named threshold": they, and only they, give a verdict.
SERIOUS = ("high", "medium")


@dataclass(frozen=True)
class Reading:
    """A lens's answer from one analysis."""

    lens: str
    #: The first sentence: the lens's key numbers, or what is missing (one line, no line break).
    lead: str
    #: Exactly what the data lacks for this lens (None: nothing missing).
    missing: str | None = None
    #: nodes/perf/recipes.py key of the recipe that records what is missing.
    recipe: str | None = None
    #: What this data can say about the same question (sentences), when something is missing.
    partial: tuple[str, ...] = ()
    #: Data the capture holds that PerfScout does not read yet ("power rails").
    not_read: str | None = None
    #: The lens's numbers are inside every named threshold (no serious finding of the lens).
    fine: bool = False
    #: The numbers the sentence shows, by name (report.json and tests read them).
    numbers: dict[str, Any] = field(default_factory=dict)


# --- helpers --------------------------------------------------------------------------------
def _serious(a, families: Iterable[str]) -> list:
    fam = set(families)
    return [f for f in a.findings if f.family in fam and f.severity in SERIOUS]


def _not_read(a) -> list[str]:
    """What the Perfetto reader saw and skipped (meta "perfetto.not_read")."""
    raw = (a.meta or {}).get("perfetto.not_read") or ""
    return [x.strip() for x in raw.split(",") if x.strip()]


def _meta_int(a, key: str) -> int:
    try:
        return int((a.meta or {}).get(key) or 0)
    except ValueError:
        return 0


def _sec(v: float | None) -> str:
    """A page-load time as web.dev writes them: seconds to one decimal below 10 s."""
    if v is None:
        return "–"
    return f"{v / 1000:.1f} s" if v < 10000 else dur(v)


def _family_of_plug(a, name: str):
    """A metric family a later reader adds to the result (None while it is not there)."""
    return getattr(a, name, None)


def _get(x, key: str, default=None):
    return x.get(key, default) if isinstance(x, dict) else getattr(x, key, default)


# --- startup ----------------------------------------------------------------------------------
#: androidx.startup's AppInitializer traces each initializer as a section named by its class
#: (``Trace.beginSection(component.getSimpleName())``), inside one named "Startup".
_INITIALIZER = re.compile(r"^(?:[\w.$]+Initializer|Startup|androidx\.startup[\w.$]*)$")
#: Kernel-side and IPC slices are no section of the app's own code.
_NOT_APP_CODE = re.compile(r"^binder\b", re.I)
_FULLY_DRAWN = "reportFullyDrawn"


def startup(a) -> Reading:
    from nodes.perf.findings.startup import biggest_part_words, display_times, vitals_verdict

    st = a.startup
    run = next((r for r in (st.runs if st else []) if r.package), None)
    if run is not None:
        s = f"{run.package} {run.kind} start: {', '.join(display_times(run))}"
        if (part := biggest_part_words(run)) is not None:
            s += f"; {part}"
        s += f"; {vitals_verdict(run)}"  # "is it slow?" heard no verdict
        return Reading("startup", s + ".", fine=not _serious(a, ["startup"]),
                       numbers={"ttid_ms": run.ttid_ms, "ttfd_ms": run.ttfd_ms, "total_ms": run.total_ms})
    if st is not None and st.median_ms is not None and st.runs:
        n = len(st.runs)
        first = f"; first run {ms(st.first_ms)}" if st.first_ms is not None and n > 1 else ""
        s = f"The launch takes {ms(st.median_ms)} (median of {n} run{'s' if n != 1 else ''}{first})."
        return Reading("startup", s, fine=not _serious(a, ["startup"]), numbers={"median_ms": st.median_ms})
    if st is not None and st.imports:
        # `python -X importtime`: a Python program's start is its import tree. The analysis keeps the
        # 25 largest entries (nodes/perf/metrics/startup.py); an importtime log's duration is the whole tree.
        from nodes.perf.findings.startup import IMPORTS_MS

        total = (a.duration_ms if a.format == "importtime" and a.duration_ms
                 else sum(i.cumulative_us for i in st.imports if i.depth == 0) / 1000.0)
        heavy = sorted(st.imports, key=lambda i: -i.self_us)[:3]
        verdict = f"fast, under {ms(IMPORTS_MS)}" if total < IMPORTS_MS else "slow"
        s = (f"Imports take {ms(total)} (-X importtime: {verdict}); heaviest by own time: "
             + ", ".join(f"{i.module} {ms(i.self_us / 1000.0)}" for i in heavy) + ".")
        return Reading("startup", s, fine=total < IMPORTS_MS and not _serious(a, ["startup"]),
                       numbers={"import_ms": round(total, 3)})
    # No launch: say so, how to record one, and what the app's own sections show.
    android = a.format in ("perfetto", "atrace") or (a.meta or {}).get("android_sdk")
    if android:
        missing = ("no launch events: the trace has no ActivityManager launch (atrace category am, "
                   "launchingActivity# / MetricsLogger slices), so TTID and TTFD cannot be read")
    else:
        missing = f"no app launch: this {a.format} data holds no launch of a program or an Android app"
    return Reading("startup", f"This trace cannot tell the launch time: {missing}.", missing=missing,
                   recipe="startup", partial=tuple(_app_startup_partial(a)))


def _app_startup_partial(a) -> list[str]:
    """An app-only capture: the app's first section to reportFullyDrawn, its androidx.startup
    initializers, its first frames — as the trace has them, never a launch time."""
    out: list[str] = []
    stats = [s for s in a.slice_stats if s.scope == "app"] or list(a.slice_stats)
    own = [s for s in stats if not _NOT_APP_CODE.match(s.name)]
    if own:
        stats = own
        first = min(stats, key=lambda s: s.first_start_ms)
        drawn = next((s for s in stats if s.name == _FULLY_DRAWN), None)
        if drawn is not None:
            out.append(f"the app's first traced section ({first.name}) starts at {ms(first.first_start_ms)}; "
                       f"reportFullyDrawn at {ms(drawn.first_start_ms)}, "
                       f"{ms(drawn.first_start_ms - first.first_start_ms)} later")
        else:
            out.append(f"the app's first traced section is {first.name} at {ms(first.first_start_ms)}; "
                       "no reportFullyDrawn in the trace")
        inits = sorted((s for s in stats if _INITIALIZER.search(s.name)), key=lambda s: -s.sum_ms)[:3]
        if inits:
            out.append("androidx.startup initializers: " + ", ".join(f"{s.name} {ms(s.sum_ms)}" for s in inits))
    fr = a.frames
    if fr and fr.count and fr.starts_ms and fr.durations_ms:
        firsts = list(zip(fr.starts_ms, fr.durations_ms))[:3]
        out.append("first frames: " + ", ".join(f"at {ms(t)} ({ms(d)})" for t, d in firsts))
    return out


# --- frames and scrolling ---------------------------------------------------------------------
def _frames_sentence(fr) -> str:
    from nodes.perf.model import FRAME_CAUSE_LABELS, FrameCause

    who = f" of {fr.process}" if fr.process else ""
    ratio = pct(100.0 * fr.jank_ratio) if fr.jank_ratio is not None else "–"
    s = f"{fr.jank_count:,} of {fr.count:,} frames{who} janky ({ratio})"
    if fr.p90_ms is not None:
        s += f", p90 {ms(fr.p90_ms)}"
    causes = [FRAME_CAUSE_LABELS[FrameCause(c)] for c in list(fr.causes)[:2]] if fr.jank_count else []
    if causes:
        s += ", mostly late because of " + " and ".join(causes)
    return s


def frames(a) -> Reading:
    fr = a.frames
    if fr and fr.count:
        fine = not _serious(a, ["frames"])
        head = "The frames are smooth: " if fine and fr.jank_count == 0 else ""
        return Reading("frames", head + _frames_sentence(fr) + ".", fine=fine,
                       numbers={"count": fr.count, "jank_count": fr.jank_count, "jank_ratio": fr.jank_ratio})
    missing = "no frames: the data has no FrameTimeline and no frame slices (Choreographer#doFrame, DrawFrame)"
    partial = []
    if a.long_tasks:
        t = max(a.long_tasks, key=lambda x: x.dur_ms)
        n = a.long_tasks_seen()
        partial.append(f"{counted(n, 'long main-thread task')}, the longest {t.name} {ms(t.dur_ms)} on {t.thread}")
    return Reading("frames", f"This data cannot tell the jank: {missing}.", missing=missing, recipe="frames",
                   partial=tuple(partial))


#: Track event categories only Chrome writes: a Perfetto protobuf trace with them is Chrome's.
_CHROME_CATEGORIES = re.compile(r"(?:^|[ ,])(?:latencyInfo|input\.scrolling|cc|viz|blink|toplevel)(?=[ ,])")


def scroll(a) -> Reading:
    sc = a.scroll
    if sc is not None and sc.update_count:
        from nodes.perf.metrics.scroll import summarize_scroll

        fine = not sc.janky_frames and not _serious(a, ["frames"])
        return Reading("scroll", summarize_scroll(sc), fine=fine, numbers={
            k: getattr(sc, k) for k in ("update_count", "presented_frames", "janky_frames", "janky_ratio", "v4_frames",
                                        "v4_janky_frames", "latency_p50_ms", "latency_p90_ms", "latency_p99_ms",
                                        "dropped_frames", "partial_frames", "jank_reasons", "dominant_stage",
                                        "jank_causes")})
    chrome = (a.format in ("trace_event", "chrome-json") or "Renderer" in str(getattr(a.frames, "process", "") or "")
              or _CHROME_CATEGORIES.search((a.meta or {}).get("perfetto.track_event_categories", "")) is not None)
    # PerfScout reads Chrome's EventLatency from JSON and protobuf traces (metrics/scroll.py): none
    # here means the capture has no scroll, not that a reader is missing
    what = ("Chrome scroll updates (EventLatency) and input-to-frame latency" if chrome
            else "input events and their latency to the frame")
    fr = a.frames
    if fr and fr.count:
        missing = f"no scrolling: the data has no {what}"
        return Reading("scroll", f"This trace has no scrolling (no {what}); its frames: {_frames_sentence(fr)}.",
                       missing=missing, recipe="scroll", numbers={"count": fr.count, "jank_count": fr.jank_count})
    missing = f"no {what}, and no frames in this data"
    return Reading("scroll", f"This data cannot tell the scrolling: {missing}.", missing=missing, recipe="scroll")


# --- CPU ----------------------------------------------------------------------------------------
def _cpu_rows(a) -> tuple[list[dict], list[dict]]:
    """(processes, threads) with running_ms / runnable_ms, from the cpu family when the result has
    it (issue 24: cpu.processes[] / cpu.threads[]), else from the thread table's scheduler times."""
    plug = _family_of_plug(a, "cpu")
    if plug is not None and _get(plug, "processes"):
        procs = [{k: _get(p, k) for k in ("pid", "name", "running_ms", "runnable_ms", "share_of_window")}
                 for p in _get(plug, "processes")]
        threads = [{k: _get(t, k) for k in ("pid", "tid", "name", "process", "running_ms", "runnable_ms", "share_of_window")}
                   for t in (_get(plug, "threads") or [])]
        return procs, threads
    threads = [t for t in a.threads if t.running_ms is not None]
    if not threads:
        return [], []
    by: dict[str, dict] = {}
    for t in threads:
        name = t.process or f"pid {t.pid}"
        p = by.setdefault(name, {"name": name, "pid": t.pid, "running_ms": 0.0, "runnable_ms": 0.0})
        p["running_ms"] += t.running_ms or 0.0
        p["runnable_ms"] += t.runnable_ms or 0.0
    w = a.duration_ms or 0.0
    rows = sorted(by.values(), key=lambda p: -p["running_ms"])
    for p in rows:
        p["share_of_window"] = p["running_ms"] / w if w else None
    th = [{"name": t.name, "pid": t.pid, "tid": t.tid, "process": t.process, "running_ms": t.running_ms,
           "runnable_ms": t.runnable_ms} for t in sorted(threads, key=lambda t: -(t.running_ms or 0.0))]
    return rows, th


#: What each ``CpuStats.measure`` other than "sched" measured, as the sentence says it.
_MEASURED = {
    "cpuinfo": "dumpsys cpuinfo, % of all cores",
    "top": "top, % of one core",
    "perf_stat": "perf stat task-clock",
    "thread_time": "Chrome thread time, tdur of top-level slices",
}


def _cpu_other(a, plug) -> Reading | None:
    """The CPU answer from a source that is not the scheduler (metrics/cpu_shares.py): its own
    measure, named, never called running time when it is a share."""
    measure = _get(plug, "measure") or "sched"
    procs = list(_get(plug, "processes") or [])
    if measure == "sched" or not procs:
        return None
    fine = not _serious(a, ["cpu"])
    top = procs[:3]
    window_ms = _get(plug, "window_ms")
    total = _get(plug, "total_pct")
    numbers = {"measure": measure, "processes": [{k: _get(p, k) for k in ("pid", "name", "cpu_pct", "running_ms",
                                                                           "share_of_window", "share_of_cpus")}
                                                 for p in procs[:10]], "total_pct": total}
    if measure in ("cpuinfo", "top"):
        over = f" over the {dur(window_ms)} window" if window_ms else " in one snapshot"
        s = (f"CPU by process ({_MEASURED[measure]}{over}): "
             + ", ".join(f"{_get(p, 'name')} {pct(_get(p, 'cpu_pct'))}" for p in top))
        if total is not None:
            s += f"; {pct(total)} of all cores busy in all"
        return Reading("cpu", s + ".", fine=fine, numbers=numbers)
    if measure == "perf_stat":
        parts = []
        for p in top:
            t = f"{_get(p, 'name')} {dur(_get(p, 'running_ms'))} task-clock"
            extra = []
            if _get(p, "cpu_pct") is not None:
                extra.append(f"{_get(p, 'cpu_pct') / 100:.2f} CPUs utilized")
            if _get(p, "user_ms") is not None:
                extra.append(f"user {dur(_get(p, 'user_ms'))}")
            if _get(p, "sys_ms") is not None:
                extra.append(f"sys {dur(_get(p, 'sys_ms'))}")
            parts.append(t + (f" ({', '.join(extra)})" if extra else ""))
        s = "CPU time (perf stat): " + "; ".join(parts)
        return Reading("cpu", s + ".", fine=fine, numbers=numbers)
    if measure == "samples":
        parts = [f"{_get(p, 'name')} (pid {_get(p, 'pid')}) {dur(_get(p, 'running_ms'))}"
                 + (f" ({pct(_get(p, 'cpu_pct'))} of the samples)" if _get(p, "cpu_pct") is not None else "")
                 for p in top]
        s = "Sampled time by process: " + ", ".join(parts)
        return Reading("cpu", s + ".", fine=fine, numbers=numbers)
    parts = [f"{_get(p, 'name')} {dur(_get(p, 'running_ms'))}" for p in top]
    s = f"CPU time by process ({_MEASURED.get(measure, measure)}): " + ", ".join(parts)
    threads = list(_get(plug, "threads") or [])
    if threads:
        t = threads[0]
        s += f"; busiest thread {_get(t, 'name')}" + (f" ({_get(t, 'process')})" if _get(t, "process") else "") + f" {dur(_get(t, 'running_ms'))}"
    return Reading("cpu", s + ".", fine=fine, numbers=numbers)


def cpu(a) -> Reading:
    plug = _family_of_plug(a, "cpu")
    if plug is not None:
        other = _cpu_other(a, plug)
        if other is not None:
            return other
    procs, threads = _cpu_rows(a)
    fine = not _serious(a, ["cpu"])
    if procs:
        top = procs[:3]
        parts = [f"{p['name']} {dur(p['running_ms'])}"
                 + (f" ({pct(100 * p['share_of_window'])} of the {dur(a.duration_ms)} trace)"
                    if p.get("share_of_window") is not None and i == 0 else "")
                 for i, p in enumerate(top)]
        s = "CPU time by process: " + ", ".join(parts)
        if threads:
            t = threads[0]
            s += f"; busiest thread {t['name']}" + (f" ({t['process']})" if t.get("process") else "") + f" {dur(t['running_ms'])}"
        runnable = sum(p.get("runnable_ms") or 0.0 for p in procs)
        if runnable:
            s += f"; {dur(runnable)} runnable (waiting for a CPU) in all"
        nr = [x for x in _not_read(a) if "sample" in x.lower()]
        return Reading("cpu", s + ".", fine=fine, not_read=nr[0] if nr else None,
                       numbers={"processes": procs[:10], "threads": threads[:10]})
    sampled = [h for h in a.hotspots if h.overall and h.kind in ("sample", "call") and h.self_ms > 0]
    if sampled:
        h = sampled[0]
        where = f" ({h.file}:{h.line})" if h.file and h.line else ""
        what = "sampled" if h.kind == "sample" else "profiled"
        producer = str((a.meta or {}).get("producer") or "")
        # py-spy samples wall-clock stacks and drops idle ones unless run with --idle; the file
        # does not record which, so the sentence says it.
        if producer.startswith("py-spy"):
            s = (f"{pct(h.self_pct)} of py-spy's samples are in {h.name}{where} by itself"
                 " (on-CPU stacks unless it ran with --idle, which the file does not record)")
        else:
            s = f"{pct(h.self_pct)} of the {what} CPU time is in {h.name}{where} by itself"
        if len(sampled) > 1:
            s += "; then " + ", ".join(f"{x.name} {pct(x.self_pct)}" for x in sampled[1:3])
        return Reading("cpu", s + ".", fine=fine, numbers={"top": h.name, "self_pct": h.self_pct})
    missing = "no CPU time: the data has no scheduler events (sched_switch) and no CPU samples"
    traced = [h for h in a.hotspots if h.overall and h.kind == "slice" and h.self_ms > 0]
    if traced:
        # A tracing profile (viztracer, a Chrome trace without samples): "where does the time go"
        # is answered by its hot spots, named as wall time — a sleep or a lock wait is in it.
        h = traced[0]
        s = (f"{pct(h.self_pct)} of the traced wall time is in {h.name} by itself"
             + ("; then " + ", ".join(f"{x.name} {pct(x.self_pct)}" for x in traced[1:3]) if len(traced) > 1 else "")
             + " (wall time, not CPU time: this data has no scheduler events and no CPU samples)")
        return Reading("cpu", s + ".", fine=fine, missing=missing, recipe="cpu",
                       numbers={"top": h.name, "self_pct": h.self_pct, "measure": "wall"})
    partial = []
    busy = sorted((t for t in a.threads if t.busy_ms > 0), key=lambda t: -t.busy_ms)[:3]
    if busy:
        partial.append("traced (slice) time per thread, which is not CPU time: "
                       + ", ".join(f"{t.name} {dur(t.busy_ms)}" for t in busy))
    return Reading("cpu", f"This data cannot tell the CPU time: {missing}.", missing=missing, recipe="cpu",
                   partial=tuple(partial))


# --- memory -----------------------------------------------------------------------------------
_RSS = re.compile(r"^(?:mem\.rss(?:\.anon)?|rss_bytes|Heap size \(KB\))(?::\s*(?P<proc>.+))?$")


def _mb(c, v: float) -> float:
    if c.name.startswith("rss_bytes"):
        return v / 2**20
    if "(KB)" in c.name or c.unit == "KB":
        return v / 1024
    return v


#: dumpsys meminfo's App Summary categories (nodes/perf/parsers/meminfo.py stat names), as it prints them.
_MEMINFO_CATEGORIES = {"java_heap": "Java Heap", "native_heap": "Native Heap", "code": "Code", "stack": "Stack",
                       "graphics": "Graphics", "private_other": "Private Other", "system": "System", "unknown": "Unknown"}


def _kb_mb(kb: float) -> str:
    return f"{kb / 1024:,.1f} MB" if kb >= 1024 else f"{kb:,.0f} kB"


def _meminfo(a) -> Reading | None:
    """One ``dumpsys meminfo`` snapshot: an app's TOTAL PSS / RSS and its biggest App Summary
    categories, or the device's RAM and its largest processes — kB as dumpsys prints them."""
    st = a.stats or {}
    if "total_pss" in st or "total_rss" in st:
        who = (a.meta or {}).get("package") or "the app"
        pid = (a.meta or {}).get("pid")
        totals = [f"{_kb_mb(st[k])} {label}" for k, label in (("total_pss", "PSS"), ("total_rss", "RSS")) if k in st]
        s = f"Memory: {who}" + (f" (pid {pid})" if pid else "") + " uses " + " and ".join(totals)
        if st.get("total_swap_pss"):
            s += f", {_kb_mb(st['total_swap_pss'])} swapped (SwapPss)"
        cats = sorted(((label, st[f"{k}_pss"]) for k, label in _MEMINFO_CATEGORIES.items() if f"{k}_pss" in st),
                      key=lambda c: -c[1])
        if cats:
            s += "; biggest by PSS: " + ", ".join(f"{label} {_kb_mb(v)}" for label, v in cats[:3])
        heap = [f"{label} {_kb_mb(st[f'{k}_heap_alloc'])} allocated of {_kb_mb(st[f'{k}_heap_size'])}"
                for k, label in (("native_heap", "native heap"), ("dalvik_heap", "Java (Dalvik) heap"))
                if f"{k}_heap_alloc" in st and f"{k}_heap_size" in st]
        if heap:
            s += "; " + ", ".join(heap)
        return Reading("memory", s + " (one dumpsys meminfo snapshot: no growth over time).", fine=not _serious(a, ["memory"]),
                       numbers={k: st[k] for k in ("total_pss", "total_rss", "total_swap_pss") if k in st}
                       | {"categories_pss_kb": dict(cats)})
    if "total_ram" in st:
        ram = [f"{label} RAM {_kb_mb(st[k])}" for k, label in
               (("used_ram", "used"), ("free_ram", "free"), ("lost_ram", "lost")) if k in st]
        s = f"Memory: the device has {_kb_mb(st['total_ram'])} RAM" + (", " + ", ".join(ram) if ram else "")
        procs = [(k.split(":", 1)[1], v) for k, v in st.items() if k.startswith("process_pss:")]
        if procs:
            s += "; largest by PSS: " + ", ".join(f"{n} {_kb_mb(v)}" for n, v in procs[:3])
        return Reading("memory", s + " (one dumpsys meminfo snapshot).", fine=not _serious(a, ["memory"]),
                       numbers={k: st[k] for k in ("total_ram", "used_ram", "free_ram", "lost_ram") if k in st}
                       | {"processes_pss_kb": dict(procs[:10])})
    return None


def memory(a) -> Reading:
    if a.format == "meminfo":
        got = _meminfo(a)
        if got is not None:
            return got
    plug = _family_of_plug(a, "memory")
    if plug is not None and _get(plug, "processes"):
        from nodes.perf.metrics.memory import summarize_memory

        ps = _get(plug, "processes")
        app = a.app.pid if a.app is not None else None
        s = "Memory: " + summarize_memory(plug)
        if app is not None and all(p.pid != app for p in ps):
            # the app of the question has no reading (e.g. launched after the only process_stats scan)
            who = a.app.process or f"pid {app}"
            s = (f"Memory: no reading of {who} itself — the trace has no process_stats scan or rss_stat counter "
                 f"of it (a process started after the only scan has none); the other processes: "
                 + summarize_memory(plug))
        return Reading("memory", s, fine=not _serious(a, ["memory"]),
                       numbers={"processes": [{"name": p.name, "pid": p.pid, "rss_max_mb": p.rss_max_mb} for p in ps[:10]],
                                "lmk_kills": len(plug.lmk_kills)})
    rows = []
    for c in a.counters:
        m = _RSS.match(c.name)
        if not m or c.name.startswith("mem.rss.anon"):
            continue
        start = c.points[0][1] if c.points else c.min
        rows.append((m.group("proc") or "the process", "heap" if "Heap" in c.name else "RSS",
                     _mb(c, start), _mb(c, c.max), _mb(c, c.last)))
    if rows:
        rows.sort(key=lambda r: (r[1] != "RSS", -r[3]))
        parts = [f"{p} {kind} peak {peak:,.1f} MB (start {start:,.1f} MB, end {end:,.1f} MB, "
                 f"growth {end - start:+,.1f} MB)" for p, kind, start, peak, end in rows[:3]]
        return Reading("memory", "Memory: " + "; ".join(parts) + ".", fine=not _serious(a, ["memory"]),
                       numbers={"rows": [dict(zip(("process", "kind", "start_mb", "peak_mb", "end_mb"), r)) for r in rows[:10]]})
    missing = "no memory counters: the data has no per-process RSS or heap over time"
    partial = []
    avail = next((c for c in a.counters if c.name == "mem.available"), None)
    if avail is not None:
        partial.append(f"the device's available memory ranged {avail.min:,.0f}–{avail.max:,.0f} MB")
    return Reading("memory", f"This data cannot tell the memory use: {missing}.", missing=missing, recipe="memory",
                   partial=tuple(partial))


# --- power ------------------------------------------------------------------------------------
def power(a) -> Reading:
    plug = _family_of_plug(a, "power")
    windows = _get(plug, "windows") if plug is not None else None
    if windows:
        from nodes.perf.metrics.power import lead_window, summarize_power

        w = lead_window(plug)
        return Reading("power", "Energy: " + summarize_power(plug),
                       numbers={"window": w.name, "energy_uws": w.energy_uws, "categories": dict(w.categories)})
    skipped = [x for x in _not_read(a) if "power" in x or "battery" in x]
    partial = []
    procs, _ = _cpu_rows(a)
    if procs:
        partial.append("CPU time by process (not energy): "
                       + ", ".join(f"{p['name']} {dur(p['running_ms'])}" for p in procs[:3]))
    if skipped:
        what = " and ".join(skipped)
        return Reading("power", f"Not read yet: {what} — this trace holds them, PerfScout does not read them yet, "
                       "so no energy is given.", not_read=what, partial=tuple(partial))
    missing = "no power data: the trace has no power rails and no battery counters"
    return Reading("power", f"This trace cannot tell the energy use: {missing}.", missing=missing, recipe="power",
                   partial=tuple(partial))


# --- blocking ---------------------------------------------------------------------------------
_BLOCKING_SLICE = re.compile(r"^(?:binder transaction|binder reply|Lock contention|monitor contention|"
                             r"Contending for|.*\block\b.*contention)", re.I)


def _launch_sleep(a) -> tuple[str, float] | None:
    """"during the launch it slept 140 ms of 157 ms, 100 ms of that in sleep (inside
    activityResume)", and the ms slept: sleeping is no binder call, lock or D wait, so the waits above miss a
    main thread that sleeps through its launch (a warm start's 100 ms ``sleep`` slice)."""
    from nodes.perf.findings.startup import biggest_part

    run = next((r for r in (a.startup.runs if a.startup else []) if r.main_thread is not None), None)
    if run is None or not run.main_thread.sleeping_ms:
        return None
    s = f"during the launch it slept {ms(run.main_thread.sleeping_ms)} of {ms(run.total_ms)}"
    inside = run.inside_biggest
    if inside is not None and inside.states is not None and inside.states.sleeping_ms and len(inside.path) > 1:
        part = biggest_part(run)
        s += f", {ms(inside.states.sleeping_ms)} of that in {inside.path[-1]} (inside {part[0] if part else inside.path[0]})"
    return s, run.main_thread.sleeping_ms


def blocking(a) -> Reading:
    plug = _family_of_plug(a, "blocking")
    if plug is not None and plug.thread:
        from nodes.perf.metrics.blocking import summarize_blocking

        waits = sorted([("binder", x.dur_ms, x.server or "an unknown process") for x in plug.binder]
                       + [("lock", x.dur_ms, f"{x.lock} held by {x.owner}" if x.owner else x.lock) for x in plug.locks]
                       + [("D", x.dur_ms, "IO" if x.io_wait else "uninterruptible sleep") for x in plug.d_state],
                       key=lambda w: -w[1])[:3]
        s = summarize_blocking(plug).rstrip(".")
        label = plug.thread
        if s.startswith(label):  # "main thread (com.demo 7694) waited …" → "Main thread (com.demo 7694): waited …"
            s = s[len(label):].lstrip(": ")
        head = label[0].upper() + label[1:] if label.startswith("main thread") else f"Main thread {label}"
        # waiting for a CPU is a wait too (trace_processor thread_state R / R+): say it beside the others
        main = next((t for t in a.threads if t.tid == plug.tid and t.pid == plug.pid and t.runnable_ms is not None), None)
        if main is not None and main.runnable_ms:
            total = (main.running_ms or 0.0) + main.runnable_ms + (main.sleeping_ms or 0.0)
            s += (f"; runnable (waiting for a CPU) {dur(main.runnable_ms)}"
                  + (f", {pct(100 * main.runnable_ms / total)} of its time" if total else "")
                  + (f", against {dur(main.running_ms)} running" if main.running_ms is not None else ""))
        if waits:
            s += "; longest waits: " + ", ".join(f"{ms(d)} on {what}" for _, d, what in waits)
        if (slept := _launch_sleep(a)) is not None:
            # the longer of the two first: a launch slept through is the answer, not its binder calls
            s = f"{slept[0]}; {s}" if slept[1] > plug.binder_ms + plug.lock_ms + plug.d_ms else f"{s}; {slept[0]}"
        s = f"{head}: {s}"
        return Reading("blocking", s + ".", fine=not _serious(a, ["blocking"]),
                       numbers={"binder_ms": plug.binder_ms, "lock_ms": plug.lock_ms, "d_ms": plug.d_ms})
    parts: list[str] = []
    numbers: dict[str, Any] = {}
    run = next((r for r in (a.startup.runs if a.startup else []) if r.main_thread is not None), None)
    main = next((t for t in a.threads if t.is_main and t.sleeping_ms is not None), None)
    if run is not None:
        mt = run.main_thread
        io = f", {ms(mt.io_wait_ms)} of it IO wait" if mt.io_wait_ms else ""
        parts.append(f"during the launch the main thread slept {ms(mt.sleeping_ms)}, was in uninterruptible "
                     f"sleep (D) {ms(mt.uninterruptible_ms)}{io} and runnable {ms(mt.runnable_ms)}")
        numbers.update(sleeping_ms=mt.sleeping_ms, uninterruptible_ms=mt.uninterruptible_ms)
    elif main is not None:
        parts.append(f"the main thread {main.name} slept {dur(main.sleeping_ms)} and was runnable {dur(main.runnable_ms or 0)}")
        numbers.update(sleeping_ms=main.sleeping_ms)
    waits = sorted((s for s in a.slice_stats if _BLOCKING_SLICE.match(s.name) and s.scope in ("app", "all")),
                   key=lambda s: (s.scope != "app", -s.max_ms))
    if waits:
        w = waits[0]
        parts.append(f"the longest {w.name} slice took {ms(w.max_ms)} ({w.count:,} in all, {ms(w.sum_ms)})")
        numbers.update(longest_wait=w.name, longest_wait_ms=w.max_ms)
    blocked = _meta_int(a, "perfetto.sched_blocked_reasons")
    not_read = ("which function each blocked thread slept in (sched_blocked_reason), binder servers and lock owners"
                if blocked else "binder servers and lock owners")
    if parts:
        s = "; ".join(parts)
        return Reading("blocking", s[0].upper() + s[1:] + ".", not_read=not_read, numbers=numbers)
    missing = "no thread states and no binder or lock slices in this data"
    return Reading("blocking", f"This data cannot tell what the threads waited on: {missing}.", missing=missing,
                   recipe="blocking")


# --- page load ----------------------------------------------------------------------------------
def _span(values: list[float]) -> str:
    """Several loads' values of one vital: "475 ms–1.13 s (median 900 ms)"; one value alone."""
    from statistics import median

    lo, hi = min(values), max(values)
    if lo == hi:
        return dur(lo)
    return f"{dur(lo)}–{dur(hi)} (median {dur(median(values))})"


def _pages(a) -> Reading:
    """Several navigations of the main frame (a.pages): every load's FCP and LCP, judged against
    web.dev's "good" bands (nodes/perf/findings/web.py) load by load. The findings judge only the
    last load, as Lighthouse does (it keeps the last navigation); a question about "the page"
    over a trace of eight loads is about all of them."""
    from nodes.perf.findings.web import CLS_GOOD, FCP_GOOD_MS, LCP_GOOD_MS, TBT_GOOD_MS

    ps = a.pages
    n = len(ps)
    label = {"fcp_ms": "FCP", "lcp_ms": "LCP", "cls": "CLS", "tbt_ms": "TBT"}
    good = {"fcp_ms": FCP_GOOD_MS, "lcp_ms": LCP_GOOD_MS, "cls": CLS_GOOD, "tbt_ms": TBT_GOOD_MS}
    shown, slow, absent, numbers = [], [], [], {"loads": n}
    for k in ("fcp_ms", "lcp_ms", "cls", "tbt_ms"):
        vals = [(i, getattr(p, k)) for i, p in enumerate(ps) if getattr(p, k) is not None]
        numbers[k] = [getattr(p, k) for p in ps]
        if not vals:
            absent.append(k)
            continue
        span = (f"{min(v for _, v in vals):.3f}–{max(v for _, v in vals):.3f}" if k == "cls"
                else _span([v for _, v in vals]))
        without = [i + 1 for i, p in enumerate(ps) if getattr(p, k) is None]
        where = "" if not without else (f" in {len(vals)} of {n} (none in load "
                                         + ", ".join(map(str, without)) + ")")
        shown.append(f"{label[k]} {span}{where}")
        slow += [(i, k, v) for i, v in vals if v > good[k]]
    tail = f"; {' and '.join(label[k] for k in absent)} {'is' if len(absent) == 1 else 'are'} not in this trace" if absent else ""
    judged = " and ".join(label[k] for k in ("fcp_ms", "lcp_ms", "cls", "tbt_ms") if k not in absent)
    if not slow:
        lead = (f"The {n} page loads are fast by {judged}: " + ", ".join(shown)
                + f", every one within web.dev's good range{tail}.")
    else:
        which = sorted({i + 1 for i, _, _ in slow})
        worst_i, worst_k, worst_v = max(slow, key=lambda x: x[2] / good[x[1]])
        shown_v = f"{worst_v:.3f}" if worst_k == "cls" else _sec(worst_v)
        lead = (f"{len(which)} of the {n} page loads {'is' if len(which) == 1 else 'are'} slow "
                f"(load {', '.join(map(str, which))}; the worst {label[worst_k]} {shown_v} in load {worst_i + 1}): "
                + ", ".join(shown) + tail + ".")
    missing = ("not in this trace: " + "; ".join(f"{label[k]} ({ps[-1].missing[k]})" if ps[-1].missing.get(k) else label[k]
                                                for k in absent)) if absent else None
    return Reading("page", lead, fine=not slow, numbers=numbers, missing=missing,
                   recipe="page" if absent else None)


def page(a) -> Reading:
    if len(getattr(a, "pages", None) or []) > 1:
        return _pages(a)
    p = a.page
    if p is None or (p.fcp_ms is None and p.lcp_ms is None):
        # the reader's own reason where it has one (a file:// navigation Lighthouse does not measure)
        why = (p.missing.get("fcp_ms") or p.missing.get("lcp_ms")) if p is not None else None
        missing = why or "no page load: the data has no navigation with paint timings (firstContentfulPaint, LCP candidates)"
        partial = []
        if a.scroll is not None and a.scroll.update_count:  # what the capture is of, instead
            sc = a.scroll
            partial.append(f"it holds {counted(sc.scrolls, 'scroll')}: {sc.janky_frames} of {sc.presented_frames} "
                           "scroll frames janky by Chrome's scroll jank v3")
        elif a.frames and a.frames.count:
            partial.append(_frames_sentence(a.frames))
        if a.long_tasks:
            n = a.long_tasks_seen()
            t = a.long_tasks[0]
            partial.append(f"{counted(n, 'long main-thread task')}, the longest {ms(t.dur_ms)}")
        return Reading("page", f"This data cannot tell the page load: {missing}.", missing=missing, recipe="page",
                       partial=tuple(partial))
    shown = []
    if p.fcp_ms is not None:
        shown.append(f"FCP {_sec(p.fcp_ms)}")
    if p.lcp_ms is not None:
        shown.append(f"LCP {_sec(p.lcp_ms)}")
    if p.cls is not None:
        shown.append("no layout shift" if p.cls == 0 else f"CLS {p.cls:.3f}")
    if p.tbt_ms is not None:
        shown.append(f"TBT {ms(p.tbt_ms)}")
    serious = _serious(a, ["page"])
    numbers = {"fcp_ms": p.fcp_ms, "lcp_ms": p.lcp_ms, "cls": p.cls, "tbt_ms": p.tbt_ms}
    # a vital this trace does not hold is said, with the reader's reason (PageVitals.missing)
    absent = [k for k in ("fcp_ms", "lcp_ms", "cls", "tbt_ms") if numbers[k] is None]
    label = {"fcp_ms": "FCP", "lcp_ms": "LCP", "cls": "CLS", "tbt_ms": "TBT"}
    missing = ("not in this trace: " + "; ".join(f"{label[k]} ({p.missing[k]})" if p.missing.get(k) else label[k]
                                                for k in absent)) if absent else None
    tail = f"; {', '.join(label[k] for k in absent)} not in this trace" if absent else ""
    if not serious:
        return Reading("page", "The page is fast: " + ", ".join(shown) + tail + ".", fine=True, numbers=numbers,
                       missing=missing, recipe="page" if absent else None)
    worst = serious[0]
    s = "The page load: " + ", ".join(shown) + f"; {worst.title}"
    if a.long_tasks and p.tbt_ms:
        t = max(a.long_tasks, key=lambda x: x.dur_ms)
        from nodes.perf.containers import is_container

        what = "" if is_container(t.name) else f" {t.name}"  # a task runner names no work
        s += f"; the longest main-thread task{what} lasts {ms(t.dur_ms)}"
    return Reading("page", s + tail + ".", numbers=numbers, missing=missing, recipe="page" if absent else None)


__all__ = ["Reading", "SERIOUS", "blocking", "cpu", "frames", "memory", "page", "power", "scroll", "startup"]
