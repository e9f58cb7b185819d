"""CPU use per process from sources that measure it without a scheduler trace: ``dumpsys
cpuinfo`` and ``top`` (nodes/perf/parsers/cpuinfo.py) and ``perf stat`` (parsers/perfstat.py).

They do not measure what trace_processor's ``thread_state`` Running does (time on a CPU, per
thread, summed over the trace; nodes/perf/metrics/cpu.py), and ``CpuStats.measure`` says which
one a result holds:

* ``cpuinfo`` — ``dumpsys cpuinfo``'s ProcessCpuTracker: each process's user + kernel time over
  the dump's window (``CPU usage from Xms to Yms ago``) as a percentage of *all* cores' time
  (TOTAL ≤ 100 %). A share, not a time: the dump does not print the core count, so
  ``running_ms`` stays None and ``share_of_cpus`` = the percentage / 100.
* ``top`` — one snapshot, each process as a percentage of *one* core (toybox prints the
  capacity, ``800%cpu`` = eight cores): ``share_of_window`` = the percentage / 100 (a share of
  one core, as running / window is), ``share_of_cpus`` = the percentage / the capacity. The
  interval top measured over is not in its output: no window, no time.
* ``thread_time`` — Chrome's ``tdur`` of top-level slices per thread (``from_thread_time``);
* ``samples`` — the sampled stacks' weight per process when more than one process was sampled
  (``from_samples``): CPU time for a CPU sampler, wall time for one that samples idle threads;
* ``perf_stat`` — ``task-clock`` (msec of CPU the counted task used) per run, the command as
  the process; ``share_of_window`` = task-clock / elapsed (perf's "CPUs utilized").
"""

from __future__ import annotations

from nodes.perf.model import CpuStats, CpuUse, PerfData

_CPUINFO_PROC = "cpuinfo.process:"
_TOP_PROC = "top.process:"


def _r(x: float, digits: int = 4) -> float:
    return round(x, digits)


def _pids(pd: PerfData) -> dict[str, int]:
    return {name: pid for pid, name in pd.processes.items()}


def _rows(pd: PerfData, prefix: str) -> list[tuple[str, float]]:
    rows = [(k[len(prefix):], v) for k, v in pd.stats.items() if k.startswith(prefix)]
    return sorted(rows, key=lambda r: -r[1])


def from_dump(pd: PerfData) -> CpuStats | None:
    """Per-process shares from a ``dumpsys cpuinfo`` / ``top`` capture (cpuinfo first: it has a window)."""
    pids = _pids(pd)
    s = pd.stats
    rows = _rows(pd, _CPUINFO_PROC)
    if rows:
        window = s.get("cpuinfo.window")
        out = CpuStats(window="dumpsys cpuinfo window", window_ms=window, measure="cpuinfo",
                       total_pct=s.get("cpuinfo.total"))
        for name, v in rows:
            out.processes.append(CpuUse(pid=pids.get(name, 0), name=name, cpu_pct=v, share_of_cpus=_r(v / 100.0)))
        return out
    rows = _rows(pd, _TOP_PROC)
    if not rows:
        return None
    cap = s.get("top.capacity")
    if cap and "top.idle" in s:
        total = 100.0 * (cap - s["top.idle"]) / cap
    elif "top.user" in s:
        total = sum(s.get(f"top.{k}", 0.0) for k in ("user", "sys", "iow", "irq"))
    else:
        total = None
    out = CpuStats(window="top snapshot", window_ms=None, measure="top",
                   cpu_count=int(cap // 100) if cap else None, total_pct=_r(total, 1) if total is not None else None)
    for name, v in rows:
        out.processes.append(CpuUse(pid=pids.get(name, 0), name=name, cpu_pct=v, share_of_window=_r(v / 100.0),
                                    share_of_cpus=_r(v / cap) if cap else None))
    return out


def from_perf_stat(pd: PerfData) -> CpuStats | None:
    """One row per ``perf stat`` run: its task-clock (CPU time), user + sys, over its elapsed time."""
    s = pd.stats
    targets = pd.facts.perf_stat or []
    runs = [""] if "task-clock" in s and len(targets) <= 1 else [f" [run {i}]" for i in range(1, len(targets) + 1)]
    out = CpuStats(window="perf stat run", measure="perf_stat")
    for i, suffix in enumerate(runs):
        clock = s.get(f"task-clock{suffix}")
        if clock is None:
            continue
        elapsed = s.get(f"elapsed{suffix}")
        what = targets[i].what if i < len(targets) else "the counted task"
        name = what.strip().strip("'") or f"run {i + 1}"
        if len(runs) > 1:
            name = f"run {i + 1}: {name}"
        util = s.get(f"CPUs utilized{suffix}")
        user, sys_ = s.get(f"user{suffix}"), s.get(f"sys{suffix}")
        out.processes.append(CpuUse(
            pid=0, name=name, running_ms=_r(clock, 3),
            share_of_window=_r(clock / (elapsed * 1000.0)) if elapsed else util,
            cpu_pct=_r(100.0 * util, 1) if util is not None else None,
            user_ms=_r(user * 1000.0, 3) if user is not None else None,
            sys_ms=_r(sys_ * 1000.0, 3) if sys_ is not None else None,
        ))
        if out.window_ms is None and elapsed:
            out.window_ms = _r(elapsed * 1000.0, 3)
    if not out.processes:
        return None
    out.processes.sort(key=lambda p: -(p.running_ms or 0.0))
    return out


def from_thread_time(pd: PerfData, top: int = 64) -> CpuStats | None:
    """Per thread and process, Chrome's thread time: the ``tdur`` of the thread's top-level
    slices (parsers/trace_event/phases.py), as catapult's thread-time view sums them. Work
    outside any traced slice is not in it, so it is at most the thread's CPU time."""
    if not pd.thread_cpu_us:
        return None
    window_us = pd.duration_us
    out = CpuStats(window="trace", window_ms=round(window_us / 1000.0, 3), measure="thread_time")
    per_proc: dict[int, float] = {}
    rows = sorted(pd.thread_cpu_us.items(), key=lambda kv: (-kv[1][0], kv[0]))
    for (pid, tid), (us, _n) in rows:
        per_proc[pid] = per_proc.get(pid, 0.0) + us
    for (pid, tid), (us, _n) in rows[:top]:
        info = pd.threads.get((pid, tid))
        out.threads.append(CpuUse(pid=pid, tid=tid, name=(info.name if info and info.name else f"tid {tid}"),
                                  process=pd.processes.get(pid), running_ms=round(us / 1000.0, 3),
                                  share_of_window=_r(us / window_us) if window_us > 0 else None))
    for pid, us in sorted(per_proc.items(), key=lambda kv: (-kv[1], kv[0]))[:top]:
        out.processes.append(CpuUse(pid=pid, name=pd.processes.get(pid) or f"pid {pid}", running_ms=round(us / 1000.0, 3),
                                    share_of_window=_r(us / window_us) if window_us > 0 else None))
    return out


def from_samples(pd: PerfData, top: int = 32) -> CpuStats | None:
    """Per process, the time its sampled stacks stand for (each sample's weight: the sampling
    interval), when the samples come from more than one process (py-spy --subprocesses, a
    Perfetto callstack sampler): "which process" is then answered per process, not per function.
    A sampler that also samples idle threads (py-spy --idle) counts wall time, not CPU time."""
    per_proc: dict[int, float] = {}
    per_thread: dict[tuple[int, int], float] = {}
    for ((pid, tid), _stack), w in pd.stacks.items():
        per_proc[pid] = per_proc.get(pid, 0.0) + w
        per_thread[(pid, tid)] = per_thread.get((pid, tid), 0.0) + w
    if len(per_proc) < 2:
        return None
    total = sum(per_proc.values())
    window_us = pd.duration_us
    out = CpuStats(window="trace", window_ms=round(window_us / 1000.0, 3), measure="samples")
    for pid, w in sorted(per_proc.items(), key=lambda kv: (-kv[1], kv[0]))[:top]:
        out.processes.append(CpuUse(pid=pid, name=pd.processes.get(pid) or f"pid {pid}", running_ms=round(w / 1000.0, 3),
                                    cpu_pct=_r(100.0 * w / total, 2) if total else None,
                                    share_of_window=_r(w / window_us) if window_us > 0 else None))
    for (pid, tid), w in sorted(per_thread.items(), key=lambda kv: (-kv[1], kv[0]))[:top]:
        info = pd.threads.get((pid, tid))
        out.threads.append(CpuUse(pid=pid, tid=tid, name=(info.name if info and info.name else f"tid {tid}"),
                                  process=pd.processes.get(pid), running_ms=round(w / 1000.0, 3),
                                  cpu_pct=_r(100.0 * w / total, 2) if total else None))
    return out


def other_sources(pd: PerfData) -> CpuStats | None:
    """The CPU family of a file with no scheduler data, from the source it has (None: none)."""
    if pd.thread_cpu_us:
        return from_thread_time(pd)
    if pd.stacks:
        return from_samples(pd)
    if pd.format == "cpuinfo":
        return from_dump(pd)
    if pd.format == "perfstat":
        return from_perf_stat(pd)
    return None
