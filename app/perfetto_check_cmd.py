"""``perfscout perfetto-check TRACE``: compare PerfScout's Perfetto reader with the official
trace processor, where the user has a ``trace_processor_shell`` binary.

PerfScout reads Perfetto traces in pure Python; the official trace processor is the
reference implementation. Running both over the same trace and printing where they
disagree (slice counts per thread, frame and jank counts, running time per thread) is how a
user can trust — or catch — the Python reader on *their* traces. The binary is only ever
taken from ``--trace-processor`` or ``PERFSCOUT_TRACE_PROCESSOR``: without one the command
says so and stops; it never lets the ``perfetto`` package download one.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from nodes.perf.model import PerfData

ENV_VAR = "PERFSCOUT_TRACE_PROCESSOR"
#: Relative difference under which running times count as equal (rounding, trace-end closing).
RUNNING_TOLERANCE = 0.02

#: The SQL run in the trace processor; each mirrors one rule of the Python reader.
SQL_SLICES_PER_THREAD = """
select thread.tid as tid, coalesce(process.pid, thread.tid) as pid, count(*) as n
from slice join thread_track on slice.track_id = thread_track.id
join thread using (utid) left join process using (upid)
where slice.dur >= 0
group by utid
"""
#: janky = a user-visible jank type, the reader's rule (perfetto_frames.USER_VISIBLE_JANK).
SQL_FRAMES = """
select count(*) as frames,
       sum(case when jank_type glob '*App Deadline Missed*' or jank_type glob '*App Resynced Jitter*'
                  or jank_type glob '*Unknown Jank*' or jank_type glob '*SurfaceFlinger CPU Deadline Missed*'
                  or jank_type glob '*SurfaceFlinger GPU Deadline Missed*'
                  or jank_type glob '*SurfaceFlinger Scheduling*' or jank_type glob '*Display HAL*'
                then 1 else 0 end) as janky
from actual_frame_timeline_slice where surface_frame_token is not null
"""
SQL_RUNNING = """
select thread.tid as tid, coalesce(process.pid, thread.tid) as pid, sum(sched.dur) as running_ns
from sched join thread using (utid) left join process using (upid)
where thread.tid != 0 and sched.dur > 0
group by utid
"""


@dataclass
class TraceSummary:
    """The numbers both readers are compared on."""

    slices: dict[tuple[int, int], int] = field(default_factory=dict)  # (pid, tid) → count
    frames: int = 0
    janky: int = 0
    running_ms: dict[tuple[int, int], float] = field(default_factory=dict)


def summarize_reader(data: PerfData) -> TraceSummary:
    s = TraceSummary()
    for key, cols in data.slices.items():
        s.slices[key] = len(cols)
    surface = [f for f in data.frames if f.layer is not None]
    s.frames = len(surface)
    s.janky = sum(1 for f in surface if f.janky)
    for key, states in data.thread_states.items():
        if states.get("running"):
            s.running_ms[key] = states["running"] / 1000.0
    return s


def summarize_processor(tp: Any) -> TraceSummary:
    """The same numbers from a TraceProcessor (or anything with its ``query`` method)."""
    s = TraceSummary()
    for row in tp.query(SQL_SLICES_PER_THREAD):
        s.slices[(int(row.pid), int(row.tid))] = int(row.n)
    for row in tp.query(SQL_FRAMES):
        s.frames = int(row.frames or 0)
        s.janky = int(row.janky or 0)
    for row in tp.query(SQL_RUNNING):
        s.running_ms[(int(row.pid), int(row.tid))] = float(row.running_ns) / 1e6
    return s


def compare(ours: TraceSummary, theirs: TraceSummary, tolerance: float = RUNNING_TOLERANCE) -> list[str]:
    """One line per disagreement; an empty list means the readers agree."""
    diffs: list[str] = []
    for key in sorted(set(ours.slices) | set(theirs.slices)):
        a, b = ours.slices.get(key, 0), theirs.slices.get(key, 0)
        if a != b:
            diffs.append(f"slices on pid {key[0]} tid {key[1]}: perfscout {a}, trace processor {b}")
    if ours.frames != theirs.frames:
        diffs.append(f"frames: perfscout {ours.frames}, trace processor {theirs.frames}")
    if ours.janky != theirs.janky:
        diffs.append(f"janky frames: perfscout {ours.janky}, trace processor {theirs.janky}")
    for key in sorted(set(ours.running_ms) | set(theirs.running_ms)):
        a, b = ours.running_ms.get(key, 0.0), theirs.running_ms.get(key, 0.0)
        if abs(a - b) > tolerance * max(a, b, 1.0):
            diffs.append(
                f"running time of pid {key[0]} tid {key[1]}: perfscout {a:.2f} ms, trace processor {b:.2f} ms"
            )
    return diffs


def find_binary(explicit: str | None, env: Mapping[str, str]) -> str | None:
    return explicit or env.get(ENV_VAR) or None


def _open_processor(trace: str, binary: str):
    from perfetto.trace_processor import TraceProcessor, TraceProcessorConfig

    return TraceProcessor(trace=trace, config=TraceProcessorConfig(bin_path=binary))


def run_check(
    trace: str,
    trace_processor: str | None = None,
    env: Mapping[str, str] | None = None,
    open_processor: Callable[[str, str], Any] = _open_processor,
) -> tuple[int, list[str]]:
    """Run both readers over ``trace``; return (exit code, lines to print).

    Exit codes follow the CLI: 0 the readers agree, 1 they differ (or the binary failed),
    2 no usable binary was given (nothing is downloaded) or the trace is unreadable.
    """
    from nodes.perf.errors import PerfDataError
    from nodes.perf.parsers import perfetto

    binary = find_binary(trace_processor, os.environ if env is None else env)
    if not binary:
        return 2, [
            "No trace_processor_shell given, so there is nothing to compare against: pass "
            f"--trace-processor /path/to/trace_processor_shell or set {ENV_VAR}=/path. "
            "PerfScout never downloads one."
        ]
    if not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
        return 2, [f"{binary}: not an executable file; cannot run the trace processor"]
    try:
        data = perfetto.parse(trace)
    except PerfDataError as e:
        return 2, [str(e)]
    ours = summarize_reader(data)
    try:
        tp = open_processor(trace, binary)
        try:
            theirs = summarize_processor(tp)
        finally:
            close = getattr(tp, "close", None)
            if close:
                close()
    except Exception as e:  # the binary's own failures (bad version, crash): one line
        return 1, [f"trace processor failed: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"]
    diffs = compare(ours, theirs)
    head = (
        f"{trace}: {sum(ours.slices.values())} slices on {len(ours.slices)} threads, "
        f"{ours.frames} frames ({ours.janky} janky), running time for {len(ours.running_ms)} threads"
    )
    if not diffs:
        return 0, [head, "perfscout and the trace processor agree."]
    return 1, [head, f"{len(diffs)} differences:"] + ["  " + d for d in diffs]
