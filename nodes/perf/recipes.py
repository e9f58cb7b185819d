"""How to record the data a lens needs: one table of copy-pasteable recipes.

When a trace cannot answer a question (no launch events, no power rails …) the answer says what
is missing and gives one of these. Each ``config`` is a Perfetto TraceConfig in text format
(tests/test_lens_recipes.py parses every one with the TraceConfig proto of the ``perfetto``
package), recorded with ``command``; the data source and field names are Perfetto's
(perfetto.dev/docs/reference/trace-config-proto). Pure data: nothing here runs anything.
"""

from __future__ import annotations

from dataclasses import dataclass

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


_PROCESS_STATS = """data_sources {
  config {
    name: "linux.process_stats"
    process_stats_config { scan_all_processes_on_start: true proc_stats_poll_ms: 250 }
  }
}"""

RECIPES: dict[str, Recipe] = {r.key: r for r in (
    Recipe("startup", "a system trace of the launch (ActivityManager's launch events, the app's main thread)", """
buffers { size_kb: 65536 fill_policy: RING_BUFFER }
data_sources {
  config {
    name: "linux.ftrace"
    ftrace_config {
      ftrace_events: "sched/sched_switch"
      ftrace_events: "sched/sched_waking"
      ftrace_events: "sched/sched_blocked_reason"
      ftrace_events: "task/task_newtask"
      atrace_categories: "am"
      atrace_categories: "wm"
      atrace_categories: "dalvik"
      atrace_categories: "view"
      atrace_categories: "gfx"
      atrace_categories: "binder_driver"
      atrace_apps: "*"
    }
  }
}
""" + _PROCESS_STATS + """
duration_ms: 15000
""", _RECORD + "\n# start the capture, then launch cold in a second shell:\n"
       "adb shell am force-stop <package> && adb shell am start -W -n <package>/<activity>"),
    Recipe("frames", "a system trace with SurfaceFlinger's FrameTimeline and the app's frames", """
buffers { size_kb: 65536 fill_policy: RING_BUFFER }
data_sources { config { name: "android.surfaceflinger.frametimeline" } }
data_sources {
  config {
    name: "linux.ftrace"
    ftrace_config {
      ftrace_events: "sched/sched_switch"
      ftrace_events: "sched/sched_waking"
      atrace_categories: "gfx"
      atrace_categories: "view"
      atrace_categories: "input"
      atrace_categories: "dalvik"
      atrace_apps: "*"
    }
  }
}
""" + _PROCESS_STATS + """
duration_ms: 20000
""", _RECORD),
    Recipe("scroll", "Chrome's input and frame events (EventLatency, the frame reporter) while scrolling", """
buffers { size_kb: 131072 fill_policy: RING_BUFFER }
data_sources {
  config {
    name: "track_event"
    track_event_config {
      enabled_categories: "input"
      enabled_categories: "benchmark"
      enabled_categories: "latencyInfo"
      enabled_categories: "cc"
      enabled_categories: "viz"
      enabled_categories: "toplevel"
      enabled_categories: "disabled-by-default-devtools.timeline"
    }
  }
}
data_sources { config { name: "org.chromium.trace_metadata" } }
duration_ms: 20000
""", "# Chrome on Android (chrome://flags: 'Enable Perfetto system tracing'), or desktop Chrome with\n"
     "# --enable-features=EnablePerfettoSystemTracing, recorded by the system's perfetto:\n" + _RECORD),
    Recipe("cpu", "the scheduler (who ran on which CPU, who waited) and CPU frequency and idle", """
buffers { size_kb: 65536 fill_policy: RING_BUFFER }
data_sources {
  config {
    name: "linux.ftrace"
    ftrace_config {
      ftrace_events: "sched/sched_switch"
      ftrace_events: "sched/sched_waking"
      ftrace_events: "power/cpu_frequency"
      ftrace_events: "power/cpu_idle"
      ftrace_events: "task/task_newtask"
      ftrace_events: "task/task_rename"
    }
  }
}
""" + _PROCESS_STATS + """
data_sources {
  config {
    name: "linux.perf"
    perf_event_config { timebase { frequency: 100 } callstack_sampling { kernel_frames: false } }
  }
}
duration_ms: 10000
""", _RECORD),
    Recipe("memory", "per-process memory counters (RSS, swap) over time and low-memory kills", """
buffers { size_kb: 65536 fill_policy: RING_BUFFER }
data_sources {
  config {
    name: "linux.ftrace"
    ftrace_config {
      ftrace_events: "kmem/rss_stat"
      ftrace_events: "mm_event/mm_event_record"
      ftrace_events: "lowmemorykiller/lowmemory_kill"
      ftrace_events: "oom/oom_score_adj_update"
      atrace_categories: "dalvik"
      atrace_apps: "*"
    }
  }
}
""" + _PROCESS_STATS + """
data_sources {
  config {
    name: "linux.sys_stats"
    sys_stats_config { meminfo_period_ms: 1000 vmstat_period_ms: 1000 }
  }
}
duration_ms: 30000
""", _RECORD + "\n# or one snapshot of one app: adb shell dumpsys meminfo <package>"),
    Recipe("power", "ODPM power rails and battery counters", """
buffers { size_kb: 32768 fill_policy: RING_BUFFER }
data_sources {
  config {
    name: "android.power"
    android_power_config {
      battery_poll_ms: 250
      battery_counters: BATTERY_COUNTER_CAPACITY_PERCENT
      battery_counters: BATTERY_COUNTER_CHARGE
      battery_counters: BATTERY_COUNTER_CURRENT
      collect_power_rails: true
    }
  }
}
""" + _PROCESS_STATS + """
duration_ms: 30000
""", _RECORD + "\n# power rails need a device with ODPM (Pixel 6 and later; `adb shell dumpsys powerstats` lists them)"),
    Recipe("blocking", "binder transactions, lock contention and why threads slept (sched_blocked_reason)", """
buffers { size_kb: 65536 fill_policy: RING_BUFFER }
data_sources {
  config {
    name: "linux.ftrace"
    ftrace_config {
      ftrace_events: "sched/sched_switch"
      ftrace_events: "sched/sched_waking"
      ftrace_events: "sched/sched_blocked_reason"
      ftrace_events: "binder/binder_transaction"
      ftrace_events: "binder/binder_transaction_received"
      atrace_categories: "binder_driver"
      atrace_categories: "binder_lock"
      atrace_categories: "dalvik"
      atrace_categories: "am"
      atrace_apps: "*"
    }
  }
}
""" + _PROCESS_STATS + """
duration_ms: 15000
""", _RECORD),
    Recipe("page", "a Chrome performance trace of the page load (DevTools or Lighthouse)", None,
           "# Chrome DevTools → Performance → 'Start profiling and reload page', then 'Save profile…';\n"
           "# or with Lighthouse, which saves the same trace:\n"
           "npx lighthouse <url> --save-assets --output-path=./page   # writes page-0.trace.json"),
)}

__all__ = ["RECIPES", "Recipe"]
