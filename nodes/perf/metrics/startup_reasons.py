"""Slow-start reasons of one Android startup, as trace_processor's ``android_startup`` metric
decides them (src/trace_processor/metrics/sql/android/startup/slow_start_reasons.sql), with the
thresholds of its slow_start_thresholds.sql, each a small named rule.

Each rule returns a :class:`~nodes.perf.model.SlowReason` (id, what was observed, the threshold,
a suggestion from :mod:`nodes.perf.suggestions`) or None. Rules whose data the trace lacks
return None; the run's ``missing`` already says what to record.

Not decided here (docs/perfetto.md): ``APP_IN_DEBUGGABLE_MODE`` and ``UNLOCK_RUNNING`` (the
package list and keyguard state are not read), ``RUN_FROM_APK`` (its odex-status parsing).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import Callable

from nodes.perf import suggestions
from nodes.perf.metrics.android_startup import (
    JIT_THREAD,
    Launch,
    _all_thread_slices,
    _process_slices,
    _states_in,
    _thread_slices,
)
from nodes.perf.model import SlowReason
from nodes.perf.sched_state import SchedState

# Thresholds, named as slow_start_thresholds.sql names them.
RUNNABLE_PERCENTAGE = 15.0
INTERRUPTIBLE_SLEEP_MS = 2900.0
BLOCKING_IO_MS = 450.0
OPEN_DEX_FILES_FROM_OAT_PERCENTAGE = 20.0
BIND_APPLICATION_MS = 1250.0
VIEW_INFLATION_MS = 450.0
RESOURCES_MANAGER_GET_RESOURCES_MS = 130.0
VERIFY_CLASSES_PERCENTAGE = 15.0
POTENTIAL_CPU_CONTENTION_MS = 100.0
JIT_ACTIVITY_MS = 100.0
LOCK_CONTENTION_PERCENTAGE = 20.0
MONITOR_CONTENTION_PERCENTAGE = 15.0
JIT_COMPILED_METHODS_COUNT = 65
BROADCAST_DISPATCHED_COUNT = 15
BROADCAST_RECEIVED_COUNT = 50

#: Processes whose CPU time is the system's own launch work, not contention (our choice:
#: trace_processor ranks processes by CPU cycles; cycles are not in these traces).
_NOT_CONTENTION = ("system_server", "surfaceflinger")


def _reason(rid: str, expected: str, observed_ms: float | None = None, observed: float | None = None) -> SlowReason:
    s = suggestions.get(rid)
    return SlowReason(id=rid, observed_ms=None if observed_ms is None else round(observed_ms, 3),
                      observed=None if observed is None else round(observed, 3), expected=expected,
                      suggestion=s.text if s else "", link=s.link if s else None)


def _dur_ms(launch: Launch) -> float:
    return (launch.startup.ts_end - launch.startup.ts) / 1000.0


def _sum_on_main(ctx, launch: Launch, test: Callable[[str], bool]) -> float:
    """``android_sum_dur_on_main_thread_for_startup_and_slice``: slices that start in the
    startup, their whole duration (ms)."""
    st, pid = launch.startup, launch.pid
    s = _thread_slices(ctx, (pid, pid))
    if s is None:
        return 0.0
    return sum(d for t, d, _ in s.where(ctx.pd, test) if st.ts <= t <= st.ts_end) / 1000.0


def _sum_in_app(ctx, launch: Launch, test: Callable[[str], bool]) -> float:
    """``android_sum_dur_for_startup_and_slice``: every thread of the app process (ms)."""
    st = launch.startup
    return sum(d for t, d, _ in _process_slices(ctx, launch.pid, test) if st.ts <= t <= st.ts_end) / 1000.0


def _state_ms(ctx, key, launch: Launch, states: set[str], io_only: bool = False) -> float:
    st = launch.startup
    return sum(b - a for a, b, s, io in _states_in(ctx.pd, key, st.ts, st.ts_end)
               if SchedState(s).label in states and (not io_only or io == 1)) / 1000.0


def _pct(v: float, whole: float) -> float:
    return 100.0 * v / whole if whole > 0 else 0.0


# --- the rules --------------------------------------------------------------------------------
def main_thread_runnable(ctx, launch: Launch, _all) -> SlowReason | None:
    r = launch.run.main_thread
    if r is None or r.runnable_ms <= RUNNABLE_PERCENTAGE / 100.0 * _dur_ms(launch):
        return None
    return _reason("MAIN_THREAD_TIME_SPENT_IN_RUNNABLE", f"≤ {RUNNABLE_PERCENTAGE:g} % of the startup",
                   observed_ms=r.runnable_ms, observed=round(_pct(r.runnable_ms, _dur_ms(launch)), 2))


def main_thread_interruptible_sleep(ctx, launch: Launch, _all) -> SlowReason | None:
    r = launch.run.main_thread
    if r is None or r.sleeping_ms <= INTERRUPTIBLE_SLEEP_MS:
        return None
    return _reason("MAIN_THREAD_TIME_SPENT_IN_INTERRUPTIBLE_SLEEP", f"≤ {INTERRUPTIBLE_SLEEP_MS:g} ms", r.sleeping_ms)


def main_thread_blocking_io(ctx, launch: Launch, _all) -> SlowReason | None:
    r = launch.run.main_thread
    if r is None or r.io_wait_ms is None or r.io_wait_ms <= BLOCKING_IO_MS:
        return None
    return _reason("MAIN_THREAD_TIME_SPENT_IN_BLOCKING_IO", f"≤ {BLOCKING_IO_MS:g} ms", r.io_wait_ms)


def open_dex_files_from_oat(ctx, launch: Launch, _all) -> SlowReason | None:
    v = _sum_on_main(ctx, launch, lambda n: n.startswith("OpenDexFilesFromOat"))
    if _pct(v, _dur_ms(launch)) <= OPEN_DEX_FILES_FROM_OAT_PERCENTAGE:
        return None
    return _reason("MAIN_THREAD_TIME_SPENT_IN_OPEN_DEX_FILES_FROM_OAT",
                   f"≤ {OPEN_DEX_FILES_FROM_OAT_PERCENTAGE:g} % of the startup", v, round(_pct(v, _dur_ms(launch)), 2))


def _sum_rule(rid: str, limit_ms: float, test: Callable[[str], bool]):
    def rule(ctx, launch: Launch, _all) -> SlowReason | None:
        v = _sum_in_app(ctx, launch, test)
        return _reason(rid, f"≤ {limit_ms:g} ms", v) if v > limit_ms else None
    rule.__name__ = rid.lower()
    return rule


bind_application = _sum_rule("TIME_SPENT_IN_BIND_APPLICATION", BIND_APPLICATION_MS, lambda n: n == "bindApplication")
view_inflation = _sum_rule("TIME_SPENT_IN_VIEW_INFLATION", VIEW_INFLATION_MS, lambda n: n == "inflate")
resources_manager = _sum_rule("TIME_SPENT_IN_RESOURCES_MANAGER_GET_RESOURCES", RESOURCES_MANAGER_GET_RESOURCES_MS,
                              lambda n: n == "ResourcesManager#getResources")


def verifying_classes(ctx, launch: Launch, _all) -> SlowReason | None:
    v = _sum_in_app(ctx, launch, lambda n: n.startswith("VerifyClass"))
    if _pct(v, _dur_ms(launch)) <= VERIFY_CLASSES_PERCENTAGE:
        return None
    return _reason("TIME_SPENT_VERIFYING_CLASSES", f"≤ {VERIFY_CLASSES_PERCENTAGE:g} % of the startup", v,
                   round(_pct(v, _dur_ms(launch)), 2))


def cpu_contention(ctx, launch: Launch, _all) -> SlowReason | None:
    """Runnable > 100 ms and another process was the most active on the CPUs meanwhile."""
    r = launch.run.main_thread
    if r is None or r.runnable_ms <= POTENTIAL_CPU_CONTENTION_MS:
        return None
    st = launch.startup
    running: dict[int, float] = {}
    for key in ctx.pd.sched_intervals:
        if key[0] == launch.pid or ctx.pd.processes.get(key[0]) in _NOT_CONTENTION or key[0] <= 0:
            continue
        v = sum(b - a for a, b, s, _ in _states_in(ctx.pd, key, st.ts, st.ts_end) if s == 0)
        if v:
            running[key[0]] = running.get(key[0], 0.0) + v
    if not running:
        return None
    top = max(running, key=running.get)
    out = _reason("POTENTIAL_CPU_CONTENTION_WITH_ANOTHER_PROCESS", f"runnable ≤ {POTENTIAL_CPU_CONTENTION_MS:g} ms",
                  r.runnable_ms)
    name = ctx.pd.processes.get(top, f"pid {top}")
    out.suggestion += f" (most active meanwhile: {name}, {running[top] / 1000.0:,.1f} ms on CPU)"
    return out


def jit_activity(ctx, launch: Launch, _all) -> SlowReason | None:
    by_pid = ctx.__dict__.get("_jit_threads")
    if by_pid is None:  # once per analysis: each launch asks for its own process's
        by_pid = ctx.__dict__["_jit_threads"] = {}
        for k in ctx.pd.sched_intervals:
            if ctx.pd.threads.get(k) and (ctx.pd.threads[k].name or "") == JIT_THREAD:
                by_pid.setdefault(k[0], []).append(k)
    keys = by_pid.get(launch.pid, [])
    if not keys:
        return None
    v = sum(_state_ms(ctx, k, launch, {"Running"}) for k in keys)
    return _reason("JIT_ACTIVITY", f"≤ {JIT_ACTIVITY_MS:g} ms running on {JIT_THREAD}", v) if v > JIT_ACTIVITY_MS else None


def lock_contention(ctx, launch: Launch, _all) -> SlowReason | None:
    v = _sum_on_main(ctx, launch, lambda n: n.startswith("Lock contention on"))
    if _pct(v, _dur_ms(launch)) <= LOCK_CONTENTION_PERCENTAGE:
        return None
    return _reason("MAIN_THREAD_LOCK_CONTENTION", f"≤ {LOCK_CONTENTION_PERCENTAGE:g} % of the startup", v,
                   round(_pct(v, _dur_ms(launch)), 2))


def monitor_contention(ctx, launch: Launch, _all) -> SlowReason | None:
    v = _sum_on_main(ctx, launch, lambda n: n.startswith("Lock contention on a monitor"))
    if _pct(v, _dur_ms(launch)) <= MONITOR_CONTENTION_PERCENTAGE:
        return None
    return _reason("MAIN_THREAD_MONITOR_CONTENTION", f"≤ {MONITOR_CONTENTION_PERCENTAGE:g} % of the startup", v,
                   round(_pct(v, _dur_ms(launch)), 2))


def jit_compiled_methods(ctx, launch: Launch, _all) -> SlowReason | None:
    st = launch.startup
    n = sum(1 for t, _d, _ in _process_slices(ctx, launch.pid, lambda s: s.startswith("JIT compiling"), JIT_THREAD)
            if st.ts <= t <= st.ts_end)
    if n <= JIT_COMPILED_METHODS_COUNT:
        return None
    return _reason("JIT_COMPILED_METHODS", f"≤ {JIT_COMPILED_METHODS_COUNT} methods", observed=n)


def _starts_with(ctx, prefix: str) -> list[float]:
    """Start times of every thread slice whose name starts with ``prefix``, sorted; computed
    once per analysis (a trace with many launches asks for each)."""
    cache = ctx.__dict__.setdefault("_slice_starts", {})
    if prefix not in cache:
        cache[prefix] = [t for t, _d, _n, _k in _all_thread_slices(ctx, lambda s: s.startswith(prefix))]
    return cache[prefix]


def _count_rule(rid: str, limit: int, prefix: str):
    def rule(ctx, launch: Launch, _all) -> SlowReason | None:
        st = launch.startup
        starts = _starts_with(ctx, prefix)
        n = bisect_right(starts, st.ts_end) - bisect_left(starts, st.ts)
        return _reason(rid, f"≤ {limit}", observed=n) if n > limit else None
    rule.__name__ = rid.lower()
    return rule


broadcasts_dispatched = _count_rule("BROADCAST_DISPATCHED_COUNT", BROADCAST_DISPATCHED_COUNT, "Broadcast dispatched")
broadcasts_received = _count_rule("BROADCAST_RECEIVED_COUNT", BROADCAST_RECEIVED_COUNT, "broadcastReceiveReg")


def concurrent_startup(ctx, launch: Launch, others) -> SlowReason | None:
    st = launch.startup
    n = sum(1 for o in others if o is not launch and max(o.startup.ts, st.ts) < min(o.startup.ts_end, st.ts_end))
    return _reason("STARTUP_RUNNING_CONCURRENT", "no other startup at the same time", observed=n) if n else None


def gc_activity(ctx, launch: Launch, _all) -> SlowReason | None:
    """GC slices (``*mark sweep GC``, ``*concurrent copying GC``, ``*semispace GC``) of the app
    during the startup: trace_processor fires on any GC time in them."""
    st = launch.startup
    hits = [d for t, d, _ in _process_slices(ctx, launch.pid, lambda s: s.endswith(
        ("mark sweep GC", "concurrent copying GC", "semispace GC"))) if st.ts <= t <= st.ts_end]
    return _reason("GC_ACTIVITY", "no GC during the startup", sum(hits) / 1000.0, len(hits)) if hits else None


def _sched_keys_of(ctx, suffix: str) -> list[tuple[int, int]]:
    """The threads with scheduler data whose process name ends with ``suffix``, in their stored
    order: found once per analysis (a trace with many launches asks once a launch)."""
    cache = ctx.__dict__.setdefault("_sched_keys_by_suffix", {})
    if suffix not in cache:
        pd = ctx.pd
        if suffix:  # the names tested once a process, not once a thread (19,000 on the 100 MB trace)
            pids = {pid for pid, name in pd.processes.items() if (name or "").endswith(suffix)}
            cache[suffix] = [key for key in pd.sched_intervals if key[0] in pids] if pids else []
        else:  # every name ends with "", a pid of no name too
            cache[suffix] = list(pd.sched_intervals)
    return cache[suffix]


def _process_running(rid: str, suffix: str):
    def rule(ctx, launch: Launch, _all) -> SlowReason | None:
        st = launch.startup
        v = 0.0
        for key in _sched_keys_of(ctx, suffix):
            v += sum(b - a for a, b, s, _ in _states_in(ctx.pd, key, st.ts, st.ts_end) if s == 0)
        return _reason(rid, f"{suffix} not running during the startup", v / 1000.0) if v > 0 else None
    rule.__name__ = rid.lower()
    return rule


dex2oat_running = _process_running("DEX2OAT_RUNNING", "dex2oat64")
installd_running = _process_running("INSTALLD_RUNNING", "installd")


def missing_baseline_profile(ctx, launch: Launch, _all) -> SlowReason | None:
    """An ART odex-status slice ``location=… status=… filter=… reason=install[-dm]`` for the
    package's odex during the startup: installed without a baseline or cloud profile."""
    st = launch.startup
    odex = _all_thread_slices(ctx, lambda s: s.startswith("location=") and " reason=" in s, cache="odex status")
    for t, _d, name, key in odex:
        if key[0] != launch.pid or not (st.ts <= t <= st.ts_end):
            continue
        location = name.split(" status=", 1)[0][len("location="):]
        reason = name.split(" reason=", 1)[1] if " reason=" in name else ""
        if st.package in location and location.endswith("odex") and reason in ("install", "install-dm"):
            return _reason("NO_BASELINE_OR_CLOUD_PROFILES", "a baseline or cloud profile installed", observed=1)
    return None


#: Per call: a main-thread binder transaction and the reply serving it both longer than this.
BINDER_TRANSACTION_MS = 20.0


def binder_transactions_blocked(ctx, launch: Launch, _all) -> SlowReason | None:
    """``MAIN_THREAD_BINDER_TRANSCATIONS_BLOCKED``: a main-thread ``binder transaction`` in the
    startup that took > 20 ms, served by a ``binder reply`` that took > 20 ms too. The reader's
    binder slices carry no flow: the reply is the longest ``binder reply`` of another thread that
    lies within the transaction (trace_processor follows the flow arrow)."""
    st, pid = launch.startup, launch.pid
    main = _thread_slices(ctx, (pid, pid))
    if main is None:
        return None
    limit = BINDER_TRANSACTION_MS * 1000.0
    calls = [(t, d) for t, d, _ in main.named(ctx.pd, "binder transaction")
             if st.ts <= t <= st.ts_end and d > limit]
    if not calls:
        return None
    replies = [(t, d) for t, d, _n, key in _all_thread_slices(ctx, lambda n: n == "binder reply", cache="binder reply")
               if key != (pid, pid)]
    slow = []
    for t, d in calls:
        served = [rd for rt, rd in replies if rt >= t and rt + rd <= t + d]
        if served and max(served) > limit:
            slow.append(d / 1000.0)
    if not slow:
        return None
    return _reason("MAIN_THREAD_BINDER_TRANSCATIONS_BLOCKED", f"no main-thread binder call over {BINDER_TRANSACTION_MS:g} ms",
                   observed_ms=max(slow), observed=len(slow))


#: Every rule, in slow_start_reasons.sql's order.
RULES = (
    missing_baseline_profile, gc_activity, dex2oat_running, installd_running, main_thread_runnable,
    main_thread_interruptible_sleep, main_thread_blocking_io, open_dex_files_from_oat, bind_application,
    view_inflation, resources_manager, verifying_classes, cpu_contention, jit_activity, lock_contention,
    monitor_contention, jit_compiled_methods, broadcasts_dispatched, broadcasts_received, concurrent_startup,
    binder_transactions_blocked,
)


def evaluate(ctx, launch: Launch, launches: list[Launch]) -> list[SlowReason]:
    if launch.pid is None:
        return []
    return [r for rule in RULES if (r := rule(ctx, launch, launches)) is not None]
