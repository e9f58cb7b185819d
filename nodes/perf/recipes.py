"""How to record the data a lens needs: one table of copy-pasteable recipes.

When a trace cannot answer a question (no launch events, no power rails …) the answer says what
is missing and gives one of these. Each ``config`` is a Perfetto TraceConfig in text format,
written by the small builder below from the data sources the lens adds (tests/test_lenses.py
parses every one with the TraceConfig proto of the ``perfetto`` package), recorded with
``command``; the data source and field names are Perfetto's
(perfetto.dev/docs/reference/trace-config-proto). Pure data and text: nothing here runs anything.
"""

from __future__ import annotations

from dataclasses import dataclass
from textwrap import indent

#: Records a text config from stdin on the device, then pulls the file (perfetto.dev/docs/quickstart/android-tracing).
_RECORD = ("cat {file} | adb shell perfetto --txt -c - -o /data/misc/perfetto-traces/{name}.pftrace\n"
           "adb pull /data/misc/perfetto-traces/{name}.pftrace")


@dataclass(frozen=True)
class Recipe:
    """One way to record what a lens needs."""

    key: str
    #: What it records, in a few words ("a system trace of the launch").
    what: str
    #: A Perfetto TraceConfig in text format, or None (the command alone records it).
    config: str | None
    #: The commands that record it, with ``{file}`` the saved config where there is one.
    command: str

    def text(self, file: str = "config.pbtx") -> str:
        """The recipe as the user copies it: the config (saved as ``file``), then the commands."""
        cmd = self.command.format(file=file, name=self.key)
        if self.config is None:
            return cmd
        return f"# save as {file}\n{self.config.strip()}\n# then\n{cmd}"


# The config builder: each recipe names the data sources it adds and the builder writes the
# text format around them (the same text a person would write: one field a line, two spaces
# an indent level), so the shared stanzas — the ring buffer, the scheduler's events, atrace for
# every app, the process list — are written once.


def _block(name: str, *fields: str) -> str:
    """``name { … }`` with one field a line."""
    return name + " {\n" + indent("\n".join(fields), "  ") + "\n}"


def _repeated(field: str, *values: str) -> list[str]:
    """A repeated string field, one ``field: "value"`` line a value."""
    return [f'{field}: "{v}"' for v in values]


def _source(name: str, config: str | None = None) -> str:
    """One data source; ``config`` its own config message (text format), if it takes one."""
    if config is None:
        return f'data_sources {{ config {{ name: "{name}" }} }}'
    return _block("data_sources", _block("config", f'name: "{name}"', config))


#: The scheduler's switches and wake-ups: who ran, who waited (every lens that reads thread states).
_SCHED = ("sched/sched_switch", "sched/sched_waking")


def _ftrace(*events: str, atrace: tuple[str, ...] = ()) -> str:
    """linux.ftrace with these kernel events and atrace categories; with categories, every app's
    own atrace sections too (``atrace_apps: "*"``)."""
    apps = ['atrace_apps: "*"'] if atrace else []
    fields = _repeated("ftrace_events", *events) + _repeated("atrace_categories", *atrace) + apps
    return _source("linux.ftrace", _block("ftrace_config", *fields))


#: The process and thread list, polled (names for the pids the other sources record).
_PROCESS_STATS = _source(
    "linux.process_stats", "process_stats_config { scan_all_processes_on_start: true proc_stats_poll_ms: 250 }"
)


def _config(buffer_kb: int, *sources: str, duration_ms: int) -> str:
    """A whole TraceConfig: one ring buffer of ``buffer_kb``, the sources, the duration."""
    buffer = f"buffers {{ size_kb: {buffer_kb} fill_policy: RING_BUFFER }}"
    return "\n".join((buffer, *sources, f"duration_ms: {duration_ms}"))


RECIPES: dict[str, Recipe] = {r.key: r for r in (
    Recipe("startup", "a system trace of the launch (ActivityManager's launch events, the app's main thread)", _config(
        65536,
        _ftrace(*_SCHED, "sched/sched_blocked_reason", "task/task_newtask",
                atrace=("am", "wm", "dalvik", "view", "gfx", "binder_driver")),
        _PROCESS_STATS,
        duration_ms=15000,
    ), _RECORD + "\n# start the capture, then launch cold in a second shell:\n"
       "adb shell am force-stop <package> && adb shell am start -W -n <package>/<activity>"),
    Recipe("frames", "a system trace with SurfaceFlinger's FrameTimeline and the app's frames", _config(
        65536,
        _source("android.surfaceflinger.frametimeline"),
        _ftrace(*_SCHED, atrace=("gfx", "view", "input", "dalvik")),
        _PROCESS_STATS,
        duration_ms=20000,
    ), _RECORD),
    Recipe("scroll", "Chrome's input and frame events (EventLatency, the frame reporter) while scrolling", _config(
        131072,
        _source("track_event", _block("track_event_config", *_repeated(
            "enabled_categories", "input", "benchmark", "latencyInfo", "cc", "viz", "toplevel",
            "disabled-by-default-devtools.timeline"))),
        _source("org.chromium.trace_metadata"),
        duration_ms=20000,
    ), "# Chrome on Android (chrome://flags: 'Enable Perfetto system tracing'), or desktop Chrome with\n"
       "# --enable-features=EnablePerfettoSystemTracing, recorded by the system's perfetto:\n" + _RECORD),
    Recipe("cpu", "the scheduler (who ran on which CPU, who waited) and CPU frequency and idle", _config(
        65536,
        _ftrace(*_SCHED, "power/cpu_frequency", "power/cpu_idle", "task/task_newtask", "task/task_rename"),
        _PROCESS_STATS,
        _source("linux.perf", "perf_event_config { timebase { frequency: 100 } callstack_sampling { kernel_frames: false } }"),
        duration_ms=10000,
    ), _RECORD),
    Recipe("memory", "per-process memory counters (RSS, swap) over time and low-memory kills", _config(
        65536,
        _ftrace("kmem/rss_stat", "mm_event/mm_event_record", "lowmemorykiller/lowmemory_kill",
                "oom/oom_score_adj_update", atrace=("dalvik",)),
        _PROCESS_STATS,
        _source("linux.sys_stats", "sys_stats_config { meminfo_period_ms: 1000 vmstat_period_ms: 1000 }"),
        duration_ms=30000,
    ), _RECORD + "\n# or one snapshot of one app: adb shell dumpsys meminfo <package>"),
    Recipe("power", "ODPM power rails and battery counters", _config(
        32768,
        _source("android.power", _block(
            "android_power_config", "battery_poll_ms: 250", "battery_counters: BATTERY_COUNTER_CAPACITY_PERCENT",
            "battery_counters: BATTERY_COUNTER_CHARGE", "battery_counters: BATTERY_COUNTER_CURRENT",
            "collect_power_rails: true")),
        _PROCESS_STATS,
        duration_ms=30000,
    ), _RECORD + "\n# power rails need a device with ODPM (Pixel 6 and later; `adb shell dumpsys powerstats` lists them)"),
    Recipe("blocking", "binder transactions, lock contention and why threads slept (sched_blocked_reason)", _config(
        65536,
        _ftrace(*_SCHED, "sched/sched_blocked_reason", "binder/binder_transaction",
                "binder/binder_transaction_received", atrace=("binder_driver", "binder_lock", "dalvik", "am")),
        _PROCESS_STATS,
        duration_ms=15000,
    ), _RECORD),
    Recipe("page", "a Chrome performance trace of the page load (DevTools or Lighthouse)", None,
           "# Chrome DevTools → Performance → 'Start profiling and reload page', then 'Save profile…';\n"
           "# or with Lighthouse, which saves the same trace:\n"
           "npx lighthouse <url> --save-assets --output-path=./page   # writes page-0.trace.json"),
)}

__all__ = ["RECIPES", "Recipe"]
