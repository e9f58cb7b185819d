"""Exports other tools open: the full result as JSON, speedscope JSON, Trace Event JSON.

* ``report.json`` — the analysis, attribution, collection and route, for scripts and for
  ``perfscout report`` to re-render later.
* ``profile.speedscope.json`` — the hottest stacks as a sampled profile (speedscope's file
  format, https://www.speedscope.app/file-format-schema.json), one profile per thread (named
  "… (sampled)" when its stacks are CPU samples), then one per process over its sampled threads.
* ``timeline.trace.json`` — frames, long tasks, startup phases and counters as Chrome Trace
  Event JSON (``X`` and ``C`` events with ``M`` names), which ui.perfetto.dev and
  chrome://tracing open.
"""

from __future__ import annotations

from typing import Any

from nodes.report.tables import WORST_FRAME_SLICES
from nodes.report.view import ReportView

REPORT_SCHEMA = "perfscout.report/1"
SPEEDSCOPE_SCHEMA = "https://www.speedscope.app/file-format-schema.json"


def report_json(v: ReportView) -> dict[str, Any]:
    return {
        "schema": REPORT_SCHEMA,
        "generated_at": v.generated_at,
        "verdict": v.verdict,
        "summary": v.summary_sentences(),
        "analysis": v.analysis.model_dump(mode="json"),
        "attribution": v.attribution,
        "collected": v.collected,
        "route": v.route,
        "route_info": v.route_info,
        "request": v.question,
        "lens": v.lens,
        "lens_answer": v.lens_section(),
        "narrative": {"text": v.narrative, "by": "language model", "unverified_numbers": v.narrative_unverified}
        if v.narrative
        else None,
        "exports": v.exports,
    }


def speedscope(v: ReportView) -> dict[str, Any] | None:
    """The stacks as speedscope sampled profiles (None when the analysis has no stacks)."""
    stacks = [s for s in v.analysis.stacks if s.weight_ms > 0 and s.frames]
    if not stacks:
        return None
    frames: list[dict[str, Any]] = []
    index: dict[str, int] = {}
    by_thread: dict[str, tuple[list[list[int]], list[float]]] = {}
    #: sampled stacks by process, and the threads each came from: a process with several
    #: sampled threads gets a profile of its own (one thread's would repeat that thread's)
    by_process: dict[str, tuple[list[list[int]], list[float]]] = {}
    threads_of: dict[str, set[str]] = {}
    for s in stacks:
        ids = []
        for name in s.frames:
            i = index.get(name)
            if i is None:
                i = index[name] = len(frames)
                frames.append({"name": name})
            ids.append(i)
        thread = s.thread or "all threads"
        samples, weights = by_thread.setdefault(f"{thread} (sampled)" if s.sampled else thread, ([], []))
        samples.append(ids)
        weights.append(round(s.weight_ms, 6))
        if s.sampled and s.process:
            samples, weights = by_process.setdefault(f"{s.process}, all threads (sampled)", ([], []))
            samples.append(ids)
            weights.append(round(s.weight_ms, 6))
            threads_of.setdefault(s.process, set()).add(thread)
    for proc, threads in threads_of.items():
        if len(threads) < 2:
            by_process.pop(f"{proc}, all threads (sampled)", None)
    profiles = [
        {
            "type": "sampled",
            "name": thread,
            "unit": "milliseconds",
            "startValue": 0,
            "endValue": round(sum(w), 6),
            "samples": smp,
            "weights": w,
        }
        for thread, (smp, w) in (sorted(by_thread.items(), key=lambda kv: -sum(kv[1][1]))
                                 + sorted(by_process.items(), key=lambda kv: -sum(kv[1][1])))
    ]
    return {
        "$schema": SPEEDSCOPE_SCHEMA,
        "version": "0.0.1",
        "name": f"PerfScout: {v.analysis.source}",
        "exporter": "perfscout",
        "activeProfileIndex": 0,
        "shared": {"frames": frames},
        "profiles": profiles,
    }


def trace_events(v: ReportView) -> dict[str, Any] | None:
    """The timed parts of the analysis as Trace Event JSON (None when nothing has a time)."""
    a = v.analysis
    pid = 1
    events: list[dict[str, Any]] = [
        {"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": f"PerfScout: {a.source}"}},
    ]
    tids: dict[str, int] = {}

    def tid(label: str) -> int:
        t = tids.get(label)
        if t is None:
            t = tids[label] = len(tids) + 1
            events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": t, "args": {"name": label}})
            events.append({"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": t, "args": {"sort_index": t}})
        return t

    timed = 0
    fr = a.frames
    if fr and fr.starts_ms and len(fr.starts_ms) == len(fr.durations_ms):
        t = tid("Frames")
        for s, d in zip(fr.starts_ms, fr.durations_ms):
            events.append({"ph": "X", "name": "Frame" if d <= fr.budget_ms else "Janky frame", "cat": "frame",
                           "pid": pid, "tid": t, "ts": round(s * 1000, 3), "dur": round(d * 1000, 3), "args": {"dur_ms": d}})
            timed += 1
    elif fr and fr.worst:
        t = tid("Worst frames")
        for w in fr.worst:
            events.append({"ph": "X", "name": "Janky frame" if w.dur_ms > fr.budget_ms else "Frame", "cat": "frame",
                           "pid": pid, "tid": t, "ts": round(w.start_ms * 1000, 3), "dur": round(w.dur_ms * 1000, 3),
                           "args": {"jank_type": w.jank_type, "ran": w.ran[:WORST_FRAME_SLICES]}})
            timed += 1
    for lt in a.long_tasks:
        events.append({"ph": "X", "name": lt.name, "cat": "long_task", "pid": pid, "tid": tid(lt.thread),
                       "ts": round(lt.start_ms * 1000, 3), "dur": round(lt.dur_ms * 1000, 3)})
        timed += 1
    if a.startup:
        for p in a.startup.phases:
            events.append({"ph": "X", "name": p.name, "cat": "startup", "pid": pid, "tid": tid(f"Startup: {p.thread or 'phases'}"),
                           "ts": round(p.start_ms * 1000, 3), "dur": round(p.dur_ms * 1000, 3)})
            timed += 1
    for c in a.counters:
        key = c.unit or "value"
        for t_ms, val in c.points:
            events.append({"ph": "C", "name": c.name, "pid": pid, "tid": 0, "ts": round(t_ms * 1000, 3), "args": {key: val}})
            timed += 1
    if not timed:
        return None
    return {
        "traceEvents": events,
        "displayTimeUnit": "ms",
        "otherData": {"exporter": "perfscout", "source": a.source, "format": a.format},
    }
