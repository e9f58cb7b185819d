"""The lens sections of a report (CPU, power, memory, blocking, Chrome scrolling), built once
from the analysis for both renderers.

Each section function returns a :class:`LensSection` — its sentence, its tables
(nodes/report/tables.py ``Table``, plain-text cells), its charts — or None when the analysis has
no data for that lens; nodes/report/content.py ``lens_section`` turns it into the blocks the
Markdown and HTML renderers lay out and escape. :func:`lens_sections` lists them in the
report's order; :func:`lead_with` moves the question's lens to the front (the lens mechanism of
issue 23 reorders this list, nothing else). Table cells show the numbers of
``perfscout analyze --json`` (``power``, ``cpu``, ``memory``, ``blocking``, ``scroll``) to the
digits written next to each formatter below; every table is capped at LENS_TABLE_ROWS rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from nodes.perf.metrics.blocking import summarize_blocking
from nodes.perf.metrics.cpu import summarize_cpu
from nodes.perf.metrics.memory import summarize_memory
from nodes.perf.metrics.power import summarize_power
from nodes.perf.metrics.scroll import summarize_scroll
from nodes.perf.model import AnalysisResult, BlockingStats, CpuStats, CpuUse, MemoryStats, PowerStats, ScrollStats
from nodes.report import fmt, lens_charts
from nodes.report.charts import Chart
from nodes.report.tables import Table, plain

#: Rows per lens table (processes, threads, rails, intervals, janky updates).
LENS_TABLE_ROWS = 15


@dataclass
class LensSection:
    #: The lens it answers (graph.enums.Lens value on the lens branch: cpu, power, …).
    lens: str
    #: Anchor id in the HTML page, and the heading (not the lens's own title: the lens answer of
    #: the lens branch heads its section with that one, this one shows the data under it).
    id: str
    title: str
    #: The metric module's own sentence with the numbers (summarize_*).
    sentence: str
    tables: list[Table] = field(default_factory=list)
    charts: list[Chart] = field(default_factory=list)
    #: What the data lacks for this lens and how to capture it (MissingData, one line each).
    missing: list[str] = field(default_factory=list)
    #: The analysis sections (provenance) its numbers come from.
    sources: tuple[str, ...] = ()


def _ms(v: float | None) -> str:
    """ms to 0.1 ms (the JSON has 0.001 ms)."""
    return fmt.ms(v, 1)


def _share(v: float | None) -> str:
    """A 0–1 fraction as a percentage to 0.1 % (the JSON's 4 decimals)."""
    return fmt.ratio_pct(v)


def _missing(items) -> list[str]:
    return [f"{m.what}: {m.why}" + (f" — capture with: {' '.join(m.capture.split())}" if m.capture else "") for m in items]


# --- CPU ------------------------------------------------------------------------------------


def _cpu_chart(kind: str, title: str, rows: list[CpuUse], label) -> Chart | None:
    return lens_charts.bars(
        kind, title,
        [(label(r), [(r.running_ms, "accent", f"{label(r)}: running {r.running_ms:,.1f} ms ({_share(r.share_of_window)} of the window)"),
                     (r.runnable_ms, "soft", f"{label(r)}: runnable {r.runnable_ms:,.1f} ms (waiting for a CPU)")])
         for r in rows if r.running_ms is not None and r.runnable_ms is not None],
        "ms (dark: running on a CPU, light: runnable, waiting for one)",
        f"{title}: time on a CPU and time waiting for one, the top {min(len(rows), lens_charts.LENS_CHART_ROWS)}.")


def cpu_section(c: CpuStats | None) -> LensSection | None:
    if c is None or not (c.processes or c.threads or c.cpus):
        return None
    procs, threads = c.processes[:LENS_TABLE_ROWS], c.threads[:LENS_TABLE_ROWS]
    s = LensSection("cpu", "lens-cpu", "CPU by process and thread", summarize_cpu(c), missing=_missing(c.missing), sources=("threads",))
    cpus = f" on {c.cpu_count} CPUs" if c.cpu_count else ""
    if procs:
        s.tables.append(plain(["process", "pid", "running", "runnable", "share of window", "share of CPUs"],
                                  [[p.name, str(p.pid), _ms(p.running_ms), _ms(p.runnable_ms), _share(p.share_of_window),
                                    _share(p.share_of_cpus)] for p in procs], {1, 2, 3, 4, 5},
                                  f"Processes over the {fmt.dur(c.window_ms)} {c.window}{cpus}"))
        s.charts.append(_cpu_chart("cpu-processes", "CPU by process", c.processes, lambda r: r.name))
    if threads:
        s.tables.append(plain(["thread", "process", "tid", "running", "runnable", "share of window"],
                                  [[t.name, t.process or f"pid {t.pid}", str(t.tid), _ms(t.running_ms), _ms(t.runnable_ms),
                                    _share(t.share_of_window)] for t in threads], {2, 3, 4, 5}, "Threads"))
        s.charts.append(_cpu_chart("cpu-threads", "CPU by thread", c.threads,
                                   lambda r: f"{r.name} ({r.process or r.pid})"))
    if c.cpus:
        s.tables.append(plain(["CPU", "frequency avg", "min", "max", "idle", "idle share"],
                                  [[str(x.cpu), *(f"{fmt.num(f, 0)} MHz" if f is not None else "–"
                                                  for f in (x.freq_avg_mhz, x.freq_min_mhz, x.freq_max_mhz)),
                                    _ms(x.idle_ms), _share(x.idle_share)] for x in c.cpus[:LENS_TABLE_ROWS]],
                                  {0, 1, 2, 3, 4, 5}, "Per CPU"))
    for sec in c.sections[:LENS_TABLE_ROWS]:
        s.tables.append(plain(["process", "pid", "running", "runnable", "share of window"],
                                  [[p.name, str(p.pid), _ms(p.running_ms), _ms(p.runnable_ms), _share(p.share_of_window)]
                                   for p in sec.processes[:5]], {1, 2, 3, 4},
                                  f"Inside {sec.name} ({_ms(sec.start_ms)} + {_ms(sec.dur_ms)}), top processes"))
    return s


# --- power ----------------------------------------------------------------------------------


def _uws(v: float | None) -> str:
    """Energy in µWs to 1 µWs (as the JSON)."""
    return "–" if v is None else f"{fmt.num(v, 0)} µWs"


def power_section(p: PowerStats | None) -> LensSection | None:
    if p is None or not p.windows:
        return None
    s = LensSection("power", "lens-power", "Energy by category and rail", summarize_power(p), missing=_missing(p.missing), sources=("counters",))
    asked = [n for n, why in p.named.items() if why is None]  # the sections the user named come first
    windows = sorted(p.windows, key=lambda w: asked.index(w.name) if w.name in asked else len(asked))
    for i, w in enumerate(windows[:LENS_TABLE_ROWS]):
        drawn = i < lens_charts.LENS_CHART_WINDOWS
        what = "the whole trace" if w.name == "trace" else w.name
        head = f"{what}: {_ms(w.dur_ms)} from {_ms(w.start_ms)}, {_uws(w.energy_uws)}, {fmt.num(w.power_uw, 0)} µW"
        if w.categories:
            s.tables.append(plain(["category", "energy", "power"],
                                      [[k, _uws(e), f"{fmt.num(w.category_power_uw.get(k), 0)} µW"]
                                       for k, e in w.categories.items()], {1, 2}, f"Energy by category — {head}"))
            s.charts.append(drawn and lens_charts.bars(
                "power-categories", f"Energy by category: {what}",
                [(k, [(e, "accent", f"{k}: {e:,.0f} µWs over {what}")]) for k, e in w.categories.items()],
                "energy (µWs)", f"Energy per PowerMetric category over {what} ({_ms(w.dur_ms)})."))
        if w.rails:
            rails = sorted(w.rails.items(), key=lambda kv: -kv[1])
            s.tables.append(plain(["rail", "energy"], [[k, _uws(e)] for k, e in rails[:LENS_TABLE_ROWS]], {1},
                                      f"Energy per rail — {what}"))
            s.charts.append(drawn and lens_charts.bars(
                "power-rails", f"Energy per rail: {what}", [(k, [(e, "soft", f"{k}: {e:,.0f} µWs over {what}")]) for k, e in rails],
                "energy (µWs)", f"Energy per rail over {what}, the top {min(len(rails), lens_charts.LENS_CHART_ROWS)}."))
        if w.battery_diff_mah is not None:
            s.tables.append(plain(["battery charge", "mAh"],
                                      [["highest", fmt.num(w.battery_start_mah, 3)], ["lowest", fmt.num(w.battery_end_mah, 3)],
                                       ["used", fmt.num(w.battery_diff_mah, 3)]], {1}, f"Battery — {what}"))
    s.charts = [c for c in s.charts if c]
    if p.resets:
        s.missing.append("rail counters that went backwards (reset), counted as no energy: "
                         + ", ".join(f"{k} ×{n}" for k, n in p.resets.items()))
    return s


# --- memory ---------------------------------------------------------------------------------


def _main_series(proc):
    """The series that says the process's size: mem.rss, else anon, else its first in MB."""
    by = {x.name: x for x in proc.series}
    return by.get("mem.rss") or by.get("mem.rss.anon") or next((x for x in proc.series if x.unit == "MB"), None)


def _curve(proc):
    """The series drawn over time for a process: mem.rss, else anon, else its first in MB —
    the first of them with two readings or more (a single reading is no curve)."""
    by = {x.name: x for x in proc.series if len(x.samples) >= 2}
    return by.get("mem.rss") or by.get("mem.rss.anon") or next((x for x in by.values() if x.unit == "MB"), None)


def memory_section(m: MemoryStats | None) -> LensSection | None:
    if m is None or not (m.processes or m.lmk_kills):
        return None
    s = LensSection("memory", "lens-memory", "Memory over time", summarize_memory(m), missing=_missing(m.missing), sources=("counters",))
    rows = []
    for p in m.processes[:LENS_TABLE_ROWS]:
        main = _main_series(p)
        rows.append([p.name, str(p.pid), fmt.num(p.rss_max_mb, 1) + " MB" if p.rss_max_mb is not None else "–",
                     main.name if main else "–",
                     f"{fmt.num(main.start, 1)} → {fmt.num(main.end, 1)} {main.unit}" if main else "–",
                     f"{main.growth:+,.1f} {main.unit}" if main else "–",
                     f"{p.gc.count} ({_ms(p.gc.total_ms)})" if p.gc else "–", "killed" if p.killed else ""])
    if rows:
        s.tables.append(plain(["process", "pid", "RSS peak", "series", "start → end", "growth", "GC", "lmkd"], rows,
                                  {1, 2, 5}, "Processes (the app first, then by RSS)"))
    gc_rows = []
    for p in m.processes:
        for i, (kind, k) in enumerate(p.gc.by_type.items() if p.gc else ()):
            gc_rows.append([f"{p.name} ({p.pid})", kind, str(k.count), _ms(k.total_ms), _ms(k.max_ms), fmt.ms(k.pause_ms, 2),
                            "–" if k.reclaimed_mb is None else f"{fmt.num(k.reclaimed_mb, 1)} MB",
                            fmt.ms(p.gc.main_thread_wait_ms, 2) if i == 0 and p.gc.main_thread_waits else "–"])
    if gc_rows:
        s.tables.append(plain(
            ["process", "GC type", "count", "total", "longest", "threads paused", "reclaimed", "main thread waited"],
            gc_rows[:LENS_TABLE_ROWS], {2, 3, 4, 5, 6, 7},
            "ART garbage collections (as trace_processor's android_garbage_collection_events; paused: ART's "
            "suspend-all and flip; the main thread's wait for GC is per process, on its first row)"))
    series = [(p, x) for p in m.processes for x in p.series][:LENS_TABLE_ROWS * 2]
    if series:
        s.tables.append(plain(["process", "counter", "start", "peak", "at", "end", "growth"],
                                  [[f"{p.name} ({p.pid})", x.name, fmt.num(x.start, 3), fmt.num(x.peak, 3), _ms(x.peak_ms),
                                    fmt.num(x.end, 3), f"{x.growth:+,.3f}"] for p, x in series], {2, 3, 4, 5, 6},
                                  "Counters (MB for mem.*, the app's own unit otherwise)"))
    if m.lmk_kills:
        s.tables.append(plain(["time", "pid", "process", "reason", "oom_score_adj"],
                                  [[_ms(k.ts_ms), str(k.pid), k.process or "–", k.kill_reason or "–",
                                    "–" if k.oom_score_adj is None else str(k.oom_score_adj)] for k in m.lmk_kills[:LENS_TABLE_ROWS]],
                                  {0, 1, 4}, "Low-memory kills"))
    kills = [(k.ts_ms, "bad", f"lmkd killed {k.process or k.pid} at {k.ts_ms:,.1f} ms") for k in m.lmk_kills]
    app = m.processes[0] if m.processes else None
    gcs = [(t, "task", f"GC of {app.name} at {t:,.1f} ms") for t in (app.gc.starts_ms if app and app.gc else [])]
    rss = [(f"{p.name} ({p.pid}) {ser.name}", ser.samples) for p in m.processes if (ser := _curve(p))]
    chart = lens_charts.lines_over_time(
        "memory-rss", "Memory over time per process", rss, "MB",
        f"RSS (mem.rss, else mem.rss.anon: the first with two readings or more) of the first {min(len(rss), lens_charts.LENS_CHART_LINES)} processes over "
        "time; red ticks: low-memory kills, purple: GCs of the app.", kills + gcs) if rss else None
    heap = [(f"{p.name} ({p.pid})", x.samples) for p in m.processes for x in p.series
            if x.name.startswith("Heap size") and len(x.samples) >= 2]
    hchart = lens_charts.lines_over_time("memory-heap", "Java heap over time", heap, "KB",
                                         "Heap size (KB) of each process that logs it, over time; purple ticks: the app's GCs.", gcs) if heap else None
    s.charts = [c for c in (chart, hchart) if c]
    return s


# --- blocking -------------------------------------------------------------------------------


def blocking_rows(b: BlockingStats) -> list[tuple[str, float, float, str, bool, int]]:
    """The main thread's waits, longest first: (kind, start ms, duration ms, on what, in the
    startup, janky frames overlapped)."""
    out = [("binder", x.start_ms, x.dur_ms, f"{x.server or 'unknown process'}" + (f" / {x.server_thread}" if x.server_thread else ""),
            x.overlap.in_startup, len(x.overlap.janky_frames)) for x in b.binder]
    out += [("lock", x.start_ms, x.dur_ms, f"{x.lock}" + (f" held by {x.owner or f'tid {x.owner_tid}'}" if x.owner or x.owner_tid else "")
             + (f" in {x.owner_method}" if x.owner_method else ""), x.overlap.in_startup, len(x.overlap.janky_frames)) for x in b.locks]
    out += [("D (IO)" if x.io_wait else "D", x.start_ms, x.dur_ms,
             "IO wait" if x.io_wait else "not IO" if x.io_wait is False else "no sched_blocked_reason",
             x.overlap.in_startup, len(x.overlap.janky_frames)) for x in b.d_state]
    return sorted(out, key=lambda r: (-r[2], r[1]))


_BLOCK_CLASS = {"binder": "accent", "lock": "bad", "D (IO)": "first", "D": "task"}


def blocking_section(b: BlockingStats | None) -> LensSection | None:
    if b is None or not (b.binder or b.locks or b.d_state or b.other_locks or b.binder_calls or b.lock_waits or b.d_ms):
        return None
    s = LensSection("blocking", "lens-blocking", "What the main thread waited on", summarize_blocking(b), missing=_missing(b.missing),
                    sources=("threads",))
    s.tables.append(plain(["thread", "binder calls", "binder", "lock waits", "locks", "D", "of it IO"],
                              [[b.thread or "–", str(b.binder_calls), _ms(b.binder_ms), str(b.lock_waits), _ms(b.lock_ms),
                                _ms(b.d_ms), _ms(b.io_wait_ms)]], {1, 2, 3, 4, 5, 6}, "The main thread's waits"))
    rows = blocking_rows(b)
    if rows:
        s.tables.append(plain(["kind", "start", "duration", "on", "in startup", "janky frames"],
                                  [[k, _ms(t), _ms(d), on, "yes" if st else "", str(j) if j else ""]
                                   for k, t, d, on, st, j in rows[:LENS_TABLE_ROWS]], {1, 2, 5},
                                  "Longest waits of the main thread (binder, lock, uninterruptible sleep)"))
        chart = lens_charts.bars(
            "blocking", "Longest waits of the main thread",
            [(f"{k} @ {t:,.0f} ms", [(d, _BLOCK_CLASS[k], f"{k} {d:,.1f} ms at {t:,.1f} ms: {on}")]) for k, t, d, on, _, _ in rows],
            "ms (blue: binder, red: lock, orange: D with IO, purple: other D)",
            f"The main thread's {min(len(rows), lens_charts.LENS_CHART_ROWS)} longest waits, longest first.")
        s.charts = [chart] if chart else []
    if b.binder_servers:
        s.tables.append(plain(["server", "calls", "total", "longest"],
                                  [[x.server, str(x.calls), _ms(x.total_ms), _ms(x.max_ms)] for x in b.binder_servers[:LENS_TABLE_ROWS]],
                                  {1, 2, 3}, "Binder calls by server process"))
    if b.other_locks:
        s.tables.append(plain(["thread", "start", "duration", "lock", "owner"],
                                  [[x.thread, _ms(x.start_ms), _ms(x.dur_ms), x.lock, x.owner or (f"tid {x.owner_tid}" if x.owner_tid else "–")]
                                   for x in b.other_locks[:LENS_TABLE_ROWS]], {1, 2}, "Lock waits on the app's other threads"))
    return s


# --- scroll ---------------------------------------------------------------------------------


def scroll_section(sc: ScrollStats | None) -> LensSection | None:
    if sc is None or not sc.update_count:
        return None
    s = LensSection("scroll", "lens-scroll", "Scrolling: Chrome's verdicts and latency", summarize_scroll(sc), missing=_missing(sc.missing),
                    sources=("frames",))
    s.tables.append(plain(["metric", "value"], [
        ["scrolls", str(sc.scrolls)], ["scroll updates", str(sc.update_count)],
        ["presented scroll frames", str(sc.presented_frames)],
        ["janky (scroll jank v3)", f"{sc.janky_frames} ({_share(sc.janky_ratio)})"],
        ["janky (scroll jank v4)", f"{sc.v4_janky_frames} of {sc.v4_frames}"],
        ["latency p50 / p90 / p99", " / ".join(_ms(x) for x in (sc.latency_p50_ms, sc.latency_p90_ms, sc.latency_p99_ms))],
        ["latency max", _ms(sc.latency_max_ms)],
        ["dropped / partial frames", f"{sc.dropped_frames} / {sc.partial_frames}"]], set(), "Chrome's scroll verdicts"))
    if sc.frame_states:
        s.tables.append(plain(["frame state (PipelineReporter)", "frames"],
                                  [[k, str(n)] for k, n in sc.frame_states.items()], {1}))
    if sc.janky_stages:
        s.tables.append(plain(["stage (EventLatency)", "janky updates", "p50", "p90", "share", "p50 over all updates"],
                                  [[st.name, str(st.janky_updates), _ms(st.p50_ms), _ms(st.p90_ms), _share(st.share_of_janky_latency), _ms(st.all_p50_ms)]
                                   for st in sc.janky_stages[:LENS_TABLE_ROWS]], {1, 2, 3, 4, 5},
                                  "Where the janky scroll updates' latency went"))
    janky = [u for u in sc.updates if u.janky]
    if janky:
        s.tables.append(plain(["start", "latency", "type", "grown most (cause)"],
                                  [[_ms(u.start_ms), _ms(u.latency_ms), u.type, u.jank_cause or "–"] for u in janky[:LENS_TABLE_ROWS]], {0, 1},
                                  f"Janky scroll updates ({len(janky)}, the first {min(len(janky), LENS_TABLE_ROWS)})"))
    pts = [(u.start_ms, u.latency_ms, "bad" if u.janky else "ok",
            f"{u.type} at {u.start_ms:,.1f} ms: {u.latency_ms:,.1f} ms" + (" (janky)" if u.janky else ""))
           for u in sc.updates if u.latency_ms is not None]
    levels = [(v, f"p{q}") for v, q in ((sc.latency_p50_ms, 50), (sc.latency_p90_ms, 90), (sc.latency_p99_ms, 99)) if v is not None]
    chart = lens_charts.scatter_over_time(
        "scroll-latency", "Input-to-frame latency of each scroll update", pts, "ms",
        f"{min(len(pts), lens_charts.LENS_CHART_POINTS):,} scroll updates by start time (red: on a frame Chrome judged janky); "
        "dashed: p50 / p90 / p99.", levels)
    s.charts = [chart] if chart else []
    return s


# --- the list -------------------------------------------------------------------------------


def lens_sections(a: AnalysisResult) -> list[LensSection]:
    """The sections the data has, in the report's order."""
    built = (cpu_section(a.cpu), power_section(a.power), memory_section(a.memory), blocking_section(a.blocking),
             scroll_section(a.scroll))
    return [s for s in built if s is not None]


def lead_with(sections: list[LensSection], lens: str | None) -> list[LensSection]:
    """The question's lens first, the others in their order."""
    return sorted(sections, key=lambda s: s.lens != lens)
