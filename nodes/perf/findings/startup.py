"""Startup rules over measured runs and the import tree."""

from __future__ import annotations

from nodes.perf import suggestions
from nodes.perf.findings.common import finding
from nodes.perf.metrics.common import _fms, _fpct
from nodes.perf.metrics.startup import PAGE_LOAD_KIND
from nodes.perf.metrics.android_startup import DOMINANT_CHILD
from nodes.perf.model import BreakdownItem, Finding, ImportEntry, MainThreadState, StartupRun, StartupStats
from nodes.perf.units import counted

#: Median startup from which it is slow, by kind (other kinds: the last value); 2× is "high".
SLOW_STARTUP_MS = {"cold": 5000.0, "warm": 2000.0, "hot": 1500.0}
SLOW_STARTUP_OTHER_MS = 1000.0
#: Spread over the median from which runs "vary a lot" (from this many runs).
SPREAD_SHARE = 0.3
SPREAD_MIN_RUNS = 3
#: The first run this many times the median is "much slower".
FIRST_RUN_FACTOR = 1.5
#: Total import time from which it is a finding, and "high".
IMPORTS_MS = 100.0
IMPORTS_HIGH_MS = 500.0


def _advice(key: str) -> dict:
    """suggestion= and link= of a finding from the curated table (nodes/perf/suggestions.py)."""
    s = suggestions.get(key)
    return {"suggestion": s.text, "link": s.link} if s else {}


def slow_startup(st: StartupStats | None, source: str | None) -> list[Finding]:
    """A launch over Android vitals' threshold for its kind. A page load is not judged here: its
    load event says little of what a user sees, and its own rules (findings/web.py: FCP, LCP,
    CLS, TBT by Lighthouse's scoring) judge it — a fast-painting page with a slow load event
    must not hear "slow startup" with Android launch advice."""
    if not st or st.median_ms is None or st.kind == PAGE_LOAD_KIND:
        return []
    limit = SLOW_STARTUP_MS.get(st.kind, SLOW_STARTUP_OTHER_MS)
    if st.median_ms < limit:
        return []
    return [finding(
        f"Slow startup: {_fms(st.median_ms)} (median)", "high" if st.median_ms >= 2 * limit else "medium",
        f"{counted(len(st.runs), 'run')}, median {_fms(st.median_ms)}, min {_fms(st.min_ms)}, max {_fms(st.max_ms)} "
        f"({st.kind}); threshold {_fms(limit)}.",
        source, metric={"median_ms": st.median_ms, "runs": len(st.runs)}, family="startup", **_advice("SLOW_LAUNCH"),
    )]


def startup_varies(st: StartupStats | None, source: str | None) -> list[Finding]:
    if (not st or st.median_ms is None or len(st.runs) < SPREAD_MIN_RUNS or not st.median_ms
            or st.spread_ms is None or st.spread_ms <= SPREAD_SHARE * st.median_ms):
        return []
    return [finding("Startup time varies a lot", "low",
                    f"spread {_fms(st.spread_ms)} over {len(st.runs):,} runs (median {_fms(st.median_ms)}).",
                    source, metric={"spread_ms": st.spread_ms}, family="startup", **_advice("STARTUP_VARIES"))]


def first_run_slower(st: StartupStats | None, source: str | None) -> list[Finding]:
    if (not st or not st.median_ms or len(st.runs) < 2 or not st.first_ms
            or st.first_ms < FIRST_RUN_FACTOR * st.median_ms):
        return []
    return [finding("The first run is much slower", "info",
                    f"first run {_fms(st.first_ms)} vs median {_fms(st.median_ms)}: cold caches, "
                    "bytecode compilation or disk reads.", source, metric={"first_ms": st.first_ms}, family="startup",
                    **_advice("FIRST_RUN_SLOWER"))]


def slow_imports(st: StartupStats | None, imports: list[ImportEntry], source: str | None) -> list[Finding]:
    """``-X importtime``: the whole import tree takes long; the heaviest modules by own time."""
    if not st or not st.imports:
        return []
    total = sum(i.cumulative_us for i in imports if i.depth == 0) / 1000.0
    if total < IMPORTS_MS:
        return []
    heavy = sorted(imports, key=lambda i: -i.self_us)[:5]
    return [finding(
        f"Imports take {_fms(total)}", "medium" if total < IMPORTS_HIGH_MS else "high",
        "Heaviest modules by own time: " + ", ".join(f"{i.module} {_fms(i.self_us / 1000)}" for i in heavy) + ".",
        source, events=[i.module for i in heavy], metric={"import_ms": round(total, 3)}, family="startup",
        **_advice("SLOW_IMPORTS"),
    )]


# --- Android startups read from a system trace (nodes/perf/metrics/android_startup.py) -------
#: Android vitals' "excessive" launch times by kind (developer.android.com/topic/performance/
#: vitals/launch-time): the same numbers as SLOW_STARTUP_MS.
VITALS_SLOW_MS = SLOW_STARTUP_MS
#: Breakdown reasons (trace_processor's keys and thread states) named for a reader.
STATE_WORDS = {"Running": "running on a CPU", "R": "runnable (waiting for a CPU)", "R+": "runnable (preempted)",
               "S": "sleeping", "D": "uninterruptible sleep", "io": "blocked on IO",
               "launch_delay": "before the app's main thread ran", "bind_application": "bindApplication",
               "activity_start": "activityStart", "activity_resume": "activityResume",
               "activity_restart": "activityRestart", "choreographer_do_frame": "Choreographer#doFrame",
               "verify_class": "class verification", "binder": "binder transactions",
               "monitor_contention": "monitor contention", "art_lock_contention": "ART lock contention",
               "mutex_contention": "pthread mutex contention", "dlopen": "dlopen (native libraries)",
               "open_dex_files_from_oat": "opening dex files", "inflate": "view inflation",
               "resources_manager_get_resources": "ResourcesManager#getResources",
               "userspace_memory_reclaim": "waiting for GC", "kernel_memory_reclaim": "kernel memory reclaim",
               "client_transaction_executed": "clientTransactionExecuted"}


def vitals_verdict(r: StartupRun) -> str:
    """Whether a launch is fast by Android vitals' excessive launch times (the limit the startup
    finding's severity uses): the words that answer "is it slow?"."""
    limit = VITALS_SLOW_MS.get(r.kind, SLOW_STARTUP_OTHER_MS)
    kind = f"a {r.kind} start" if r.kind in VITALS_SLOW_MS else "a start"
    side = "fast: under" if r.total_ms < limit else "slow: over"
    return f"{side} Android vitals' {limit / 1000:.1f} s for {kind}"


def display_times(r: StartupRun) -> list[str]:
    """A launch's time to initial / full display, or that it is unknown and why: the words the
    startup finding and the report's first sentence (nodes/report/view.py) both use."""
    return [f"TTID {_fms(r.ttid_ms)}" if r.ttid_ms is not None else "TTID unknown",
            f"TTFD {_fms(r.ttfd_ms)}" if r.ttfd_ms is not None else "TTFD unknown (no reportFullyDrawn)"]


def biggest_part(r: StartupRun) -> tuple[str, float, float] | None:
    """The largest part of a launch's breakdown: (its name for a reader, ms, % of the launch)."""
    if not r.breakdown:
        return None
    top = r.breakdown[0]
    return _label(top.reason), top.dur_ms, part_share(r, top)


def part_share(r: StartupRun, b: BreakdownItem) -> float:
    """A breakdown part's share of its launch, in % (the report's breakdown table shows it too)."""
    return 100.0 * b.dur_ms / r.total_ms if r.total_ms else 0.0


def biggest_part_words(r: StartupRun) -> str | None:
    """"the biggest part is activityResume (103 ms, 65.7 %); inside it sleep takes 100 ms, the
    main thread sleeping for 100 ms of that": the part, and what it was made of
    (``StartupRun.inside_biggest``) — the words the startup answer and the report's first
    sentence (nodes/report/view.py) share."""
    if (part := biggest_part(r)) is None:
        return None
    label, dur_ms, share = part
    s = f"the biggest part is {label} ({_fms(dur_ms)}, {_fpct(share)})"
    inside = r.inside_biggest
    if inside is None:
        return s
    bits = []
    if len(inside.path) > 1:
        name, d = inside.path[-1], inside.path_ms[-1]
        dominant = d >= DOMINANT_CHILD * inside.path_ms[-2]
        bits.append(f"{name} takes {_fms(d)}" if dominant else f"its longest slice is {name} ({_fms(d)})")
    if (state := main_state(inside.states)) is not None:
        word, v = state
        bits.append(f"the main thread {word} for {_fms(v)} of {'that' if bits else 'it'}")
    return s + ("; inside it " + ", ".join(bits) if bits else "")


def main_state(m: MainThreadState | None) -> tuple[str, float] | None:
    """The scheduler state the main thread spent most of a span in, as a verb phrase."""
    if m is None:
        return None
    states = [("was running", m.running_ms), ("was runnable (waiting for a CPU)", m.runnable_ms),
              ("was sleeping", m.sleeping_ms), ("was in uninterruptible sleep (D)", m.uninterruptible_ms)]
    word, v = max(states, key=lambda x: x[1])
    return (word, v) if v > 0 else None


def _android_runs(st: StartupStats | None):
    return [r for r in (st.runs if st else []) if r.package]


def _label(reason: str) -> str:
    return STATE_WORDS.get(reason, reason)


def android_startup(st: StartupStats | None, source: str | None) -> list[Finding]:
    """The startup itself, one finding a launch: what a startup question is answered with."""
    out = []
    for r in _android_runs(st):
        limit = VITALS_SLOW_MS.get(r.kind, SLOW_STARTUP_OTHER_MS)
        sev = "high" if r.total_ms >= 2 * limit else "medium" if (r.total_ms >= limit or r.slow_reasons) else "info"
        parts = [f"{r.kind} start of {r.package}: {_fms(r.total_ms)} (android_startups)", ", ".join(display_times(r))]
        if (part := biggest_part(r)) is not None:
            label, dur_ms, share = part
            parts.append(f"biggest part of the breakdown: {label} {_fms(dur_ms)} ({_fpct(share)})")
            if (inside := r.inside_biggest) is not None and len(inside.path) > 1:
                parts.append("its slice: " + " > ".join(f"{n} {_fms(d)}" for n, d in zip(inside.path, inside.path_ms)))
        if r.main_thread:
            m = r.main_thread
            parts.append(f"main thread running {_fms(m.running_ms)}, runnable {_fms(m.runnable_ms)}, "
                         f"sleeping {_fms(m.sleeping_ms)}, uninterruptible {_fms(m.uninterruptible_ms)}")
        if r.slow_reasons:
            parts.append("slow-start reasons: " + ", ".join(x.id for x in r.slow_reasons))
        first = r.slow_reasons[0] if r.slow_reasons else None
        fallback = suggestions.get("NO_REPORT_FULLY_DRAWN" if r.ttfd_ms is None else "STARTUP_SUMMARY")
        title = f"{r.kind.capitalize()} startup: " + (f"TTID {_fms(r.ttid_ms)}" if r.ttid_ms is not None else _fms(r.total_ms))
        if r.ttfd_ms is not None:
            title += f", TTFD {_fms(r.ttfd_ms)}"
        out.append(finding(
            title, sev, "; ".join(parts) + ".", source,
            start_ms=r.start_ms, end_ms=round((r.start_ms or 0.0) + r.total_ms, 3),
            events=[f"launching: {r.package}"] + [b.reason for b in r.breakdown[:3]],
            metric={k: v for k, v in (("total_ms", r.total_ms), ("ttid_ms", r.ttid_ms), ("ttfd_ms", r.ttfd_ms)) if v is not None},
            suggestion=first.suggestion if first else (fallback.text if fallback else None),
            link=first.link if first else (fallback.link if fallback else None), family="startup",
        ))
    return out


def slow_start_reasons(st: StartupStats | None, source: str | None) -> list[Finding]:
    """Each slow-start reason trace_processor would report, with its threshold and advice."""
    out = []
    for r in _android_runs(st):
        for x in r.slow_reasons:
            seen = (f"{_fms(x.observed_ms)}" if x.observed_ms is not None else "") + (
                (" (" if x.observed_ms is not None else "") + f"{x.observed:g}"
                + (" %" if "%" in x.expected else "") + (")" if x.observed_ms is not None else "")
                if x.observed is not None else "")
            out.append(finding(
                f"Slow start: {x.id.replace('_', ' ').lower()}", "medium",
                f"{r.package} ({r.kind}): observed {seen or 'yes'}, expected {x.expected}.", source,
                start_ms=r.start_ms, end_ms=round((r.start_ms or 0.0) + r.total_ms, 3), events=[x.id],
                metric={k: v for k, v in (("observed_ms", x.observed_ms), ("observed", x.observed)) if v is not None},
                suggestion=x.suggestion, link=x.link, family="startup",
            ))
    return out


def startup_data_missing(st: StartupStats | None, source: str | None) -> list[Finding]:
    """What the trace lacks for a startup number, and the Perfetto config that records it."""
    out = []
    for r in _android_runs(st):
        if r.missing:
            out.append(finding(
                "Startup: data the trace lacks", "info", " ".join(f"{m}." if not m.endswith(".") else m for m in r.missing),
                source, metric={"missing": len(r.missing)}, family="startup",
                suggestion="Record again with the Perfetto config lines named here",
                link="https://perfetto.dev/docs/concepts/config",
            ))
    return out
