"""Curated, offline suggestions for findings: one line of what to do, and the Android (or web)
documentation page that explains it. No model is involved; a finding's rule picks its entry
by id.

The ids of the startup entries are trace_processor's slow-start reason ids
(src/trace_processor/metrics/sql/android/startup/slow_start_reasons.sql), so a reason and its
advice stay paired; the others are named after the rule that uses them.
"""

from __future__ import annotations

from typing import NamedTuple


class Suggestion(NamedTuple):
    text: str
    link: str


_BASELINE = "https://developer.android.com/topic/performance/baselineprofiles/overview"
_LAUNCH = "https://developer.android.com/topic/performance/vitals/launch-time"
_APP_STARTUP = "https://developer.android.com/topic/libraries/app-startup"
_THREADS = "https://developer.android.com/topic/performance/threads"
_STRICT = "https://developer.android.com/reference/android/os/StrictMode"
_LAYOUT = "https://developer.android.com/develop/ui/views/layout/improving-layouts/optimizing-layout"
_MEMORY = "https://developer.android.com/topic/performance/memory"
_MACRO = "https://developer.android.com/topic/performance/benchmarking/macrobenchmark-overview"
_FULLY_DRAWN = "https://developer.android.com/topic/performance/vitals/launch-time#retrieve-TTFD"
_BROADCASTS = "https://developer.android.com/develop/background-work/background-tasks/broadcasts"
_SHRINK = "https://developer.android.com/build/shrink-code"

TABLE: dict[str, Suggestion] = {
    # --- startup: trace_processor slow-start reason ids ------------------------------------
    "JIT_ACTIVITY": Suggestion(
        "Ship a Baseline Profile (and a startup profile) so startup code is compiled ahead of time instead of JIT-compiled", _BASELINE),
    "JIT_COMPILED_METHODS": Suggestion(
        "Many methods were JIT-compiled during the launch: add them to a Baseline Profile", _BASELINE),
    "NO_BASELINE_OR_CLOUD_PROFILES": Suggestion(
        "The app was installed without a baseline or cloud profile: generate a Baseline Profile with the Baseline Profile Gradle plugin", _BASELINE),
    "TIME_SPENT_VERIFYING_CLASSES": Suggestion(
        "Class verification ran at startup: a Baseline Profile lets ART verify these classes at install time", _BASELINE),
    "MAIN_THREAD_TIME_SPENT_IN_OPEN_DEX_FILES_FROM_OAT": Suggestion(
        "Opening dex files took long: shrink the app with R8 and ship a Baseline Profile", _SHRINK),
    "TIME_SPENT_IN_BIND_APPLICATION": Suggestion(
        "Application.onCreate / ContentProviders do too much: initialise libraries lazily with App Startup, or move them off the main thread", _APP_STARTUP),
    "TIME_SPENT_IN_VIEW_INFLATION": Suggestion(
        "Inflation of the first screen is long: flatten the layout hierarchy, defer hidden parts with ViewStub", _LAYOUT),
    "TIME_SPENT_IN_RESOURCES_MANAGER_GET_RESOURCES": Suggestion(
        "Resource loading is slow: avoid loading large resources or many configurations during startup", _LAUNCH),
    "MAIN_THREAD_TIME_SPENT_IN_RUNNABLE": Suggestion(
        "The main thread waited for a CPU: start less work in parallel with the launch (background threads, services, other processes)", _LAUNCH),
    "POTENTIAL_CPU_CONTENTION_WITH_ANOTHER_PROCESS": Suggestion(
        "Another process kept the CPUs busy during the launch: measure on an idle device, or defer that work", _LAUNCH),
    "MAIN_THREAD_TIME_SPENT_IN_INTERRUPTIBLE_SLEEP": Suggestion(
        "The main thread slept waiting for other threads or processes (locks, binder, futures): move those waits off the main thread", _THREADS),
    "MAIN_THREAD_TIME_SPENT_IN_BLOCKING_IO": Suggestion(
        "The main thread blocked on disk IO: move file, database and SharedPreferences reads off the main thread (StrictMode finds them)", _STRICT),
    "MAIN_THREAD_LOCK_CONTENTION": Suggestion(
        "The main thread waited for locks held by other threads: do not share locks between startup work and the main thread", _THREADS),
    "MAIN_THREAD_MONITOR_CONTENTION": Suggestion(
        "The main thread waited on Java monitors (synchronized): shorten what other threads hold them for during startup", _THREADS),
    "MAIN_THREAD_BINDER_TRANSCATIONS_BLOCKED": Suggestion(
        "Long binder calls blocked the main thread: make system-service calls from a background thread, or cache their results", _THREADS),
    "GC_ACTIVITY": Suggestion(
        "Garbage collection ran during the launch: allocate less in Application.onCreate and the first activity", _MEMORY),
    "DEX2OAT_RUNNING": Suggestion(
        "dex2oat was compiling during the launch: measure again once compilation is done (Macrobenchmark resets and compiles first)", _MACRO),
    "INSTALLD_RUNNING": Suggestion(
        "installd was busy during the launch: measure again on a settled device", _MACRO),
    "BROADCAST_DISPATCHED_COUNT": Suggestion(
        "Many broadcasts were dispatched during the launch: avoid sending or triggering broadcasts at startup", _BROADCASTS),
    "BROADCAST_RECEIVED_COUNT": Suggestion(
        "Many broadcast receivers were registered during the launch: register them later, or only the ones the first screen needs", _BROADCASTS),
    "STARTUP_RUNNING_CONCURRENT": Suggestion(
        "Another app startup overlapped this one: measure launches one at a time", _MACRO),
    # --- startup: our own rules ----------------------------------------------------------------
    "STARTUP_SUMMARY": Suggestion(
        "Measure repeatedly with Macrobenchmark (StartupTimingMetric) and look at the largest part of the breakdown first", _MACRO),
    "NO_REPORT_FULLY_DRAWN": Suggestion(
        "Call reportFullyDrawn() when the content is shown so time to full display can be measured", _FULLY_DRAWN),
    "STARTUP_VARIES": Suggestion(
        "Launch times vary a lot: run more iterations on an idle machine and compare medians, not single runs", _MACRO),
    "FIRST_RUN_SLOWER": Suggestion(
        "The first run pays for cold caches and compilation: measure cold and warm starts apart", _MACRO),
    "SLOW_IMPORTS": Suggestion(
        "Import heavy modules lazily (inside the function that needs them) and drop unused imports",
        "https://docs.python.org/3/using/cmdline.html#cmdoption-X"),
    "SLOW_LAUNCH": Suggestion(
        "The launch is over Android vitals' threshold for its kind: work through the slow-start reasons and the breakdown", _LAUNCH),
}


def get(key: str) -> Suggestion | None:
    return TABLE.get(key)
