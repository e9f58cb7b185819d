"""The android_expert node and the Android startup hook, against the stand-in adb.

Each test scripts what the device prints, runs the node as the graph would, and asserts the
exact adb commands sent, the files written and the update the policies read. Where it matters,
the real policy (graph.policy.decide_after) is run on the merged state, so "continues to the
analyzer", "finishes", "retries once" are checked against the router, not assumed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage

from fake_adb.harness import DATA, FakeAdb, getprop
from graph.enums import NextStep, Node
from graph.policy import decide_after
from nodes import android_expert
from nodes.android.trace import REMOTE_ATRACE, REMOTE_PERFETTO
from nodes.framework.context import NodeContext
from nodes.perf.parsers import gfxinfo

S = "emulator-5554"
PKG = "com.demo.shop"
NAME = Node.ANDROID_EXPERT.value


def ctx(tmp_path: Path, **extra) -> NodeContext:
    return NodeContext(runs_dir=str(tmp_path / "runs"), startup_runs=3,
                       **{"android_capture_s": 0, "android_launch_pause_s": 0, **extra})


def state(text: str, **kw) -> dict:
    base = {"messages": [HumanMessage(text)], "_route": "android", "steps": 1,
            "route_history": ["orchestrator:android"], "attempts": {}}
    base.update(kw)
    return base


def run(node, st: dict) -> tuple[dict, dict]:
    """(update, state after the update) — lists such as messages are appended, the rest replaced."""
    up = node(st)
    merged = dict(st)
    for k, v in up.items():
        merged[k] = (st.get(k) or []) + v if k == "messages" else v
    return up, merged


def next_step(merged: dict, node: str = NAME) -> str:
    return decide_after(merged, node)[2].step.value


# --------------------------------------------------------------------------------------
# Frames
# --------------------------------------------------------------------------------------


def test_fps_resets_reads_framestats_writes_the_file_and_continues(tmp_path, monkeypatch):
    fake = FakeAdb(tmp_path, monkeypatch).device(S)
    real = (DATA / "gfxinfo-framestats-android13.txt").read_text()
    fake.shell(S, f"dumpsys gfxinfo {PKG} reset", "")
    fake.shell(S, f"dumpsys gfxinfo {PKG} framestats", real)
    fake.shell(S, "dumpsys SurfaceFlinger --latency", "16666666\n")
    node = android_expert.make(ctx(tmp_path, android_capture_s=2), sleep=lambda s: slept.append(s))
    slept: list[float] = []
    up, merged = run(node, state(f"测一下 {PKG} 的FPS", package=PKG))

    assert fake.calls() == [
        ["devices", "-l"],
        ["-s", S, "shell", "getprop"],
        ["-s", S, "shell", f"dumpsys gfxinfo {PKG} reset"],
        ["-s", S, "shell", f"dumpsys gfxinfo {PKG} framestats"],
        ["-s", S, "shell", "dumpsys SurfaceFlinger --latency"],
    ]
    assert slept == [2.0]  # the user's interaction window, between reset and read
    c = up["collected"]
    assert c["kind"] == "android" and c["source"] == f"adb -s {S} shell dumpsys gfxinfo {PKG} framestats"
    path = Path(c["paths"]["framestats"])
    assert path.parent == Path(up["run_dir"]) and str(path).startswith(str(tmp_path / "runs" / "local"))
    # The device's bytes are kept as printed, under one meta line naming the device and command.
    text = path.read_text()
    assert text.endswith(real) and text.startswith("# perfscout-meta: ")
    meta = json.loads(text.splitlines()[0].split(": ", 1)[1])
    assert meta["refresh_period_ns"] == 16666666 and meta["model"] == "Pixel 6" and meta["serial"] == S
    s = c["summary"]
    assert (s["gfxinfo_total_frames"], s["gfxinfo_janky_frames"], s["framestats_frames"], s["framestats_over_budget"]) == (7, 3, 6, 2)
    assert s["refresh_hz"] == 60.0 and s["framestats_max_ms"] == 40.0
    # The analyzer reads the saved file like any other gfxinfo dump.
    assert len(gfxinfo.parse(str(path)).frames) == 6
    assert up["last_error"] is None and up["attempts"] == {NAME: 1}
    assert next_step(merged) == NextStep.CONTINUE.value


def test_fps_without_a_package_uses_the_foreground_app(tmp_path, monkeypatch):
    fake = FakeAdb(tmp_path, monkeypatch).device(S)
    fake.shell(S, "dumpsys activity activities",
               "  mResumedActivity: ActivityRecord{f00d u0 com.demo.shop/.MainActivity t42}\n")
    fake.shell(S, f"dumpsys gfxinfo {PKG} reset", "")
    fake.shell(S, f"dumpsys gfxinfo {PKG} framestats", (DATA / "gfxinfo-reactnativefeed-flashlight.txt").read_text())
    fake.shell(S, "dumpsys SurfaceFlinger --latency", {"stdout": "", "rc": 1})
    up, merged = run(android_expert.make(ctx(tmp_path)), state("测一下FPS"))
    assert up["package"] == PKG and up["collected"]["summary"]["gfxinfo_total_frames"] == 35360
    assert up["collected"]["summary"]["budget_source"].startswith("default")  # refresh unknown: said so
    assert next_step(merged) == NextStep.CONTINUE.value


def test_fps_with_no_app_in_front_asks_for_the_package(tmp_path, monkeypatch):
    fake = FakeAdb(tmp_path, monkeypatch).device(S)
    fake.shell(S, "dumpsys activity activities", "ACTIVITY MANAGER ACTIVITIES\n  (nothing)\n")
    up, merged = run(android_expert.make(ctx(tmp_path)), state("测一下FPS", collected={"kind": "file", "paths": {"x": "old"}}))
    assert up["missing"] == ["package"] and up["question"]["for_node"] == NAME
    assert up["collected"] is None  # an earlier turn's data does not count as this turn's evidence
    assert next_step(merged) == NextStep.ASK_USER.value


def test_app_not_running_is_a_validation_error_naming_the_command(tmp_path, monkeypatch):
    fake = FakeAdb(tmp_path, monkeypatch).device(S)
    fake.shell(S, f"dumpsys gfxinfo {PKG} reset", "")
    fake.shell(S, f"dumpsys gfxinfo {PKG} framestats", f"Applications Graphics Acceleration Info:\nNo process found for: {PKG}\n")
    fake.shell(S, "dumpsys SurfaceFlinger --latency", "16666666\n")
    up, merged = run(android_expert.make(ctx(tmp_path)), state("fps", package=PKG))
    err = up["last_error"]
    assert err["kind"] == "validation" and PKG in err["message"] and "is not running" in err["message"]
    assert f"adb -s {S} shell 'dumpsys gfxinfo {PKG} framestats'" in err["message"]
    assert next_step(merged) == NextStep.FAIL.value


def test_output_that_does_not_parse_is_a_validation_error(tmp_path, monkeypatch):
    fake = FakeAdb(tmp_path, monkeypatch).device(S)
    fake.shell(S, "dumpsys cpuinfo", "Can't find service: cpuinfo\n")
    fake.shell(S, "top -b -n 1", {"stdout": "", "rc": 1})
    up, _ = run(android_expert.make(ctx(tmp_path)), state("看看手机上的 CPU 占用"))
    assert up["last_error"]["kind"] == "validation"
    assert up["last_error"]["message"].startswith(f"`adb -s {S} shell 'dumpsys cpuinfo'` output did not parse")


# --------------------------------------------------------------------------------------
# Queries answered in place
# --------------------------------------------------------------------------------------


def test_meminfo_of_a_package_is_answered_and_finishes(tmp_path, monkeypatch):
    fake = FakeAdb(tmp_path, monkeypatch).device(S)
    fake.shell(S, f"dumpsys meminfo {PKG}", (DATA / "meminfo-app-android13.txt").read_text())
    up, merged = run(android_expert.make(ctx(tmp_path)), state(f"dump meminfo of {PKG}", package=PKG))
    assert fake.calls()[-1] == ["-s", S, "shell", f"dumpsys meminfo {PKG}"]
    c = up["collected"]
    assert not c["paths"] and c["summary"]["total_pss"] == 81523 and c["summary"]["java_heap_pss"] == 11508
    assert Path(c["raw"]["meminfo"]).read_text().endswith((DATA / "meminfo-app-android13.txt").read_text())
    assert "PSS total 79.6 MB" in up["answer"] and "Java heap (PSS) 11.2 MB" in up["answer"]
    assert next_step(merged) == NextStep.FINISH.value


def test_cpu_query_states_both_bases(tmp_path, monkeypatch):
    fake = FakeAdb(tmp_path, monkeypatch).device(S)
    fake.shell(S, "dumpsys cpuinfo", (DATA / "cpuinfo.txt").read_text())
    fake.shell(S, "top -b -n 1", (DATA / "top.txt").read_text())
    up, merged = run(android_expert.make(ctx(tmp_path)), state(f"看看 {PKG} 的 CPU 占用", package=PKG))
    s = up["collected"]["summary"]
    assert (s["cpuinfo_total"], s["package_cpuinfo_pct"], s["package_top_pct"], s["top_capacity_pct"]) == (25, 27, 23.3, 800)
    assert "27% of all cores (dumpsys cpuinfo)" in up["answer"] and "23.3% of one core" in up["answer"]
    assert next_step(merged) == NextStep.FINISH.value


def test_device_list_with_states(tmp_path, monkeypatch):
    fake = FakeAdb(tmp_path, monkeypatch)
    fake.devices(f"{S:<22} device product:oriole model:Pixel_6 transport_id:1", "R58M123ABC unauthorized usb:1-1 transport_id:2")
    fake.shell(S, "getprop", getprop("Pixel 6", "14", 34))
    up, merged = run(android_expert.make(ctx(tmp_path)), state("list devices"))
    assert "emulator-5554: Google Pixel 6, Android 14, API 34" in up["answer"]
    assert "R58M123ABC is unauthorized: unlock the phone" in up["answer"]
    assert [d["state"] for d in up["collected"]["summary"]["devices"]] == ["device", "unauthorized"]
    assert fake.calls() == [["devices", "-l"], ["-s", S, "shell", "getprop"]]  # nothing asked of the unauthorized one
    assert next_step(merged) == NextStep.FINISH.value


# --------------------------------------------------------------------------------------
# No usable device, no adb, a bad name
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "lines, reason",
    [
        ((), "no device attached: connect a phone with USB debugging on"),
        (("R58M123ABC unauthorized usb:1-1 transport_id:2",), "device R58M123ABC is unauthorized: unlock the phone"),
        (("R58M123ABC offline transport_id:2",), "device R58M123ABC is offline: reconnect the USB cable"),
    ],
)
def test_no_usable_device_is_a_typed_skip(tmp_path, monkeypatch, lines, reason):
    FakeAdb(tmp_path, monkeypatch).devices(*lines)
    up, merged = run(android_expert.make(ctx(tmp_path)), state("测一下FPS", package=PKG))
    assert up["skipped"]["node"] == NAME and up["skipped"]["reason"].startswith(reason)
    assert next_step(merged) == NextStep.SKIP.value


def test_adb_not_installed_is_a_typed_skip_naming_the_package(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))  # the real PATH-without-adb path
    up, merged = run(android_expert.make(ctx(tmp_path)), state("采集一下 trace"))
    assert "apt install adb" in up["skipped"]["reason"] and "platform-tools" in up["skipped"]["reason"]
    assert up["answer"].startswith("Skipped android_expert: adb (Android Debug Bridge) is not installed")
    assert next_step(merged) == NextStep.SKIP.value


def test_several_devices_and_none_chosen_asks_then_uses_the_answer(tmp_path, monkeypatch):
    fake = FakeAdb(tmp_path, monkeypatch)
    fake.devices("AAA device model:Pixel_6 transport_id:1", "BBB device model:Pixel_8 transport_id:2")
    up, merged = run(android_expert.make(ctx(tmp_path)), state("看看电池"))
    assert up["missing"] == ["serial"] and up["question"]["choices"] == ["AAA", "BBB"]
    assert "AAA (Pixel 6)" in up["question"]["prompt"]
    assert next_step(merged) == NextStep.ASK_USER.value
    # The answer comes back as state.serial (ask_user), and the node uses that device.
    fake.shell("BBB", "getprop", getprop("Pixel 8", "14", 34))
    fake.shell("BBB", "dumpsys battery", "Current Battery Service state:\n  AC powered: false\n  USB powered: true\n"
               "  status: 2\n  level: 85\n  voltage: 4200\n  temperature: 312\n")
    up2, merged2 = run(android_expert.make(ctx(tmp_path)), {**merged, "serial": "BBB", "missing": [], "question": None})
    assert up2["answer"] == "Battery of BBB: Google Pixel 8, Android 14, API 34: level 85%, charging, 31.2 °C, 4200 mV"
    assert next_step(merged2) == NextStep.FINISH.value


def test_a_hostile_package_name_never_reaches_a_shell(tmp_path, monkeypatch):
    fake = FakeAdb(tmp_path, monkeypatch).device(S)
    up, merged = run(android_expert.make(ctx(tmp_path)), state("dump meminfo", package="com.demo.shop;reboot"))
    assert up["last_error"]["kind"] == "validation" and "not a valid Android package name" in up["last_error"]["message"]
    assert fake.calls() == []  # refused before adb was even asked for devices
    assert next_step(merged) == NextStep.FAIL.value


# --------------------------------------------------------------------------------------
# A device that disconnects mid-collection: one retry through the policy, then a clear failure
# --------------------------------------------------------------------------------------


def test_disconnect_mid_collection_is_retried_once_and_then_succeeds(tmp_path, monkeypatch):
    fake = FakeAdb(tmp_path, monkeypatch).device(S)
    fake.shell(S, f"dumpsys meminfo {PKG}",
               {"stderr": f"error: device '{S}' not found\n", "rc": 1},
               (DATA / "meminfo-app-android13.txt").read_text())
    node = android_expert.make(ctx(tmp_path))
    up, merged = run(node, state(f"dump meminfo of {PKG}", package=PKG))
    assert up["last_error"]["kind"] == "retryable" and f"device {S} disconnected" in up["last_error"]["message"]
    assert next_step(merged) == NextStep.RETRY.value
    up2, merged2 = run(node, {**merged, "steps": merged["steps"], "route_history": merged["route_history"]})
    assert up2["last_error"] is None and up2["attempts"] == {NAME: 2}
    assert up2["collected"]["summary"]["total_pss"] == 81523
    assert next_step(merged2) == NextStep.FINISH.value


def test_a_device_that_stays_gone_fails_after_one_retry(tmp_path, monkeypatch):
    fake = FakeAdb(tmp_path, monkeypatch).device(S)
    fake.shell(S, "dumpsys cpuinfo", {"stderr": "error: closed\n", "rc": 1})
    node = android_expert.make(ctx(tmp_path))
    _, merged = run(node, state("cpu 占用"))
    assert next_step(merged) == NextStep.RETRY.value
    up2, merged2 = run(node, merged)
    assert up2["last_error"]["kind"] == "retryable"
    policy, view, decision = decide_after(merged2, NAME)
    assert decision.step is NextStep.FAIL and "retry budget spent" in decision.reason


def test_a_hung_adb_call_is_a_timeout(tmp_path, monkeypatch):
    fake = FakeAdb(tmp_path, monkeypatch).device(S)
    fake.shell(S, "dumpsys battery", {"sleep": 5})
    up, merged = run(android_expert.make(ctx(tmp_path, adb_timeout_s=0.5)), state("battery level?"))
    assert up["last_error"]["kind"] == "timeout" and "did not finish within 0.5 s" in up["last_error"]["message"]
    assert next_step(merged) == NextStep.FAIL.value  # the same call would hang the same way


# --------------------------------------------------------------------------------------
# Traces
# --------------------------------------------------------------------------------------


def test_perfetto_capture_config_on_stdin_pulled_checked_and_removed(tmp_path, monkeypatch):
    fake = FakeAdb(tmp_path, monkeypatch).device(S, sdk=33)
    run_dir = tmp_path / "turn"
    line = f"perfetto --txt -c - -o {REMOTE_PERFETTO}"
    fake.shell(S, line, {"stderr": "Connected to the Perfetto traced service, TTL: 13s\nWrote 2037208 bytes\n"})
    fake.on(["-s", S, "pull", REMOTE_PERFETTO, str(run_dir / "trace.perfetto-trace")],
            {"stdout": "1 file pulled.\n", "pull_from": str(DATA / "api32_startup_warm.perfetto-trace")})
    fake.shell(S, f"rm -f {REMOTE_PERFETTO}", "")
    up, merged = run(android_expert.make(ctx(tmp_path)), state(f"抓 3 秒 perfetto trace of {PKG}", package=PKG, run_dir=str(run_dir)))
    assert [c[2:] for c in fake.calls()[2:]] == [
        ["shell", line], ["pull", REMOTE_PERFETTO, str(run_dir / "trace.perfetto-trace")], ["shell", f"rm -f {REMOTE_PERFETTO}"]]
    config = fake.stdin_of(["-s", S, "shell", line])
    for needle in ('name: "linux.ftrace"', 'ftrace_events: "sched/sched_switch"', 'atrace_categories: "gfx"',
                   'atrace_categories: "dalvik"', f'atrace_apps: "{PKG}"', 'name: "android.surfaceflinger.frametimeline"',
                   'name: "linux.process_stats"', "duration_ms: 3000"):
        assert needle in config
    c = up["collected"]
    assert Path(c["paths"]["perfetto"]).read_bytes() == (DATA / "api32_startup_warm.perfetto-trace").read_bytes()
    assert (run_dir / "perfetto-config.pbtxt").read_text() == config
    s = c["summary"]
    assert s["tool"] == "perfetto" and s["seconds"] == 3.0
    assert s["checked"], s.get("check_note")  # read back with the Perfetto reader
    assert s["slices"] > 1000 and s["threads"] > 10
    assert next_step(merged) == NextStep.CONTINUE.value


def test_old_device_uses_atrace_and_the_pulled_text(tmp_path, monkeypatch):
    fake = FakeAdb(tmp_path, monkeypatch).device(S, release="8.1.0", sdk=27)
    run_dir = tmp_path / "turn"
    pulled = tmp_path / "device.atrace"
    pulled.write_text("TRACE:\n" + (DATA / "android-atrace-systrace.txt").read_text())
    line = f"atrace -t 5 -b 16384 -a {PKG} -o {REMOTE_ATRACE} gfx view input am wm dalvik sched"
    fake.shell(S, line, "capturing trace... done\n")
    fake.on(["-s", S, "pull", REMOTE_ATRACE, str(run_dir / "trace.atrace.txt")], {"pull_from": str(pulled)})
    fake.shell(S, f"rm -f {REMOTE_ATRACE}", "")
    up, merged = run(android_expert.make(ctx(tmp_path)), state("采集一下 trace", package=PKG, run_dir=str(run_dir)))
    c = up["collected"]
    assert c["paths"] == {"atrace": str(run_dir / "trace.atrace.txt")}
    assert c["summary"]["tool"] == "atrace" and "no Perfetto service" in c["summary"]["notes"][0]
    assert c["source"] == f"adb -s {S} shell '{line}'"
    assert c["summary"]["checked"] and c["summary"]["slices"] > 0, c["summary"].get("check_note")
    assert next_step(merged) == NextStep.CONTINUE.value


def test_a_reader_that_does_not_import_leaves_the_capture_unchecked_and_says_why(tmp_path):
    from nodes.android.trace import _check_with_reader

    out = _check_with_reader("nodes.perf.parsers.no_such_reader", str(tmp_path / "t"), "perfetto")
    assert out["checked"] is False and "nodes.perf.parsers.no_such_reader is not available" in out["check_note"]


def test_refused_perfetto_falls_back_to_atrace_and_says_why(tmp_path, monkeypatch):
    fake = FakeAdb(tmp_path, monkeypatch).device(S, release="9", sdk=28)
    run_dir = tmp_path / "turn"
    fake.shell(S, f"perfetto --txt -c - -o {REMOTE_PERFETTO}",
               {"stderr": "Could not connect to the traced service\n", "rc": 1})
    line = f"atrace -t 5 -b 16384 -o {REMOTE_ATRACE} gfx view input am wm dalvik sched"
    fake.shell(S, line, "capturing trace... done\n")
    fake.on(["-s", S, "pull", REMOTE_ATRACE, str(run_dir / "trace.atrace.txt")],
            {"pull_from": str(DATA / "android-atrace-systrace.txt")})
    fake.shell(S, f"rm -f {REMOTE_ATRACE}", "")
    up, _ = run(android_expert.make(ctx(tmp_path)), state("systrace", run_dir=str(run_dir)))
    note = up["collected"]["summary"]["notes"][0]
    assert "Perfetto capture failed" in note and "persist.traced.enable" in note
    assert "atrace" in up["collected"]["paths"]


# --------------------------------------------------------------------------------------
# Launch time: the startup node's Android side
# --------------------------------------------------------------------------------------

COLD = "Stopping: com.demo.shop\nStarting: Intent {{ cmp=com.demo.shop/.MainActivity }}\nStatus: ok\nLaunchState: COLD\n" \
       "Activity: com.demo.shop/.MainActivity\nTotalTime: {t}\nWaitTime: {w}\nComplete\n"


def startup_update(st, c):
    """The startup stage (runner included) on a device package."""
    from nodes import startup

    return startup.make(c)(st)


def test_startup_update_runs_cold_launches_and_reports_median(tmp_path, monkeypatch):
    fake = FakeAdb(tmp_path, monkeypatch).device(S)
    fake.shell(S, f"cmd package resolve-activity --brief -c android.intent.category.LAUNCHER {PKG}",
               "priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=true\ncom.demo.shop/.MainActivity\n")
    fake.shell(S, f"am start -W -S -n {PKG}/.MainActivity",
               COLD.format(t=812, w=840), COLD.format(t=640, w=655), COLD.format(t=700, w=731))
    st = state(f"测一下 {PKG} 的冷启动", _route="startup", package=PKG, target=None,
               route_history=["orchestrator:startup"])
    up = startup_update(st, ctx(tmp_path))
    assert fake.calls()[2:] == [
        ["-s", S, "shell", f"cmd package resolve-activity --brief -c android.intent.category.LAUNCHER {PKG}"],
        *[["-s", S, "shell", f"am start -W -S -n {PKG}/.MainActivity"]] * 3,
    ]
    s = up["collected"]["summary"]
    assert s["total_ms"] == [812, 640, 700] and s["median_ms"] == 700 and s["spread_ms"] == 172
    assert s["mode"] == "cold" and s["launch_state"] == "cold" and s["first_ms"] == 812
    assert up["attempts"] == {"startup": 1} and up["route_history"][-1] == "startup"
    merged = {**st, **up}
    # A device launch needs no permission to run local programs; with its file it goes on.
    assert decide_after(merged, Node.STARTUP)[2].step is NextStep.CONTINUE


def test_startup_update_warm_mode_and_a_missing_app(tmp_path, monkeypatch):
    fake = FakeAdb(tmp_path, monkeypatch).device(S, release="9", sdk=28)
    fake.shell(S, f"cmd package resolve-activity --brief -c android.intent.category.LAUNCHER {PKG}",
               "priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=true\ncom.demo.shop/.MainActivity\n")
    warm = "Starting: Intent {{ cmp=com.demo.shop/.MainActivity }}\nStatus: ok\nActivity: com.demo.shop/.MainActivity\n" \
           "ThisTime: {t}\nTotalTime: {t}\nWaitTime: {t}\nComplete\n"
    fake.shell(S, f"am start -W -n {PKG}/.MainActivity", warm.format(t=900), warm.format(t=210), warm.format(t=190))
    fake.shell(S, "input keyevent KEYCODE_HOME", "")
    up = startup_update(state("measure warm start 2 times", package=PKG), ctx(tmp_path))
    s = up["collected"]["summary"]
    assert s["total_ms"] == [210, 190] and s["mode"] == "warm" and s["launch_state"] == "warm"
    assert [c[3] for c in fake.calls()[3:]] == [f"am start -W -n {PKG}/.MainActivity", "input keyevent KEYCODE_HOME",
                                                f"am start -W -n {PKG}/.MainActivity", "input keyevent KEYCODE_HOME",
                                                f"am start -W -n {PKG}/.MainActivity"]

    fake.shell(S, "cmd package resolve-activity --brief -c android.intent.category.LAUNCHER com.not.installed",
               "No activity found\n")
    up = startup_update(state("冷启动", package="com.not.installed"), ctx(tmp_path))
    assert up["last_error"]["kind"] == "validation" and "has no launcher activity" in up["last_error"]["message"]


def test_startup_node_delegates_a_device_package_to_the_android_side(tmp_path, monkeypatch):
    from nodes import startup

    fake = FakeAdb(tmp_path, monkeypatch).device(S)
    fake.shell(S, f"cmd package resolve-activity --brief -c android.intent.category.LAUNCHER {PKG}", f"{PKG}/.MainActivity\n")
    fake.shell(S, f"am start -W -S -n {PKG}/.MainActivity", COLD.format(t=500, w=510))
    node = startup.make(ctx(tmp_path))
    up = node(state(f"测一下 {PKG} 的冷启动", _route="startup", package=PKG))
    assert up["collected"]["summary"]["total_ms"] == [500, 500, 500]
    assert up["steps"] == 2 and up["attempts"] == {"startup": 1}


# --------------------------------------------------------------------------------------
# Through the compiled graph: router → android_expert → policy
# --------------------------------------------------------------------------------------


def _graph(tmp_path):
    from langgraph.checkpoint.memory import InMemorySaver

    from graph.builder import build_graph

    return build_graph(checkpointer=InMemorySaver(), context=ctx(tmp_path))


def test_graph_answers_a_meminfo_query_and_ends(tmp_path, monkeypatch):
    fake = FakeAdb(tmp_path, monkeypatch).device(S)
    fake.shell(S, f"dumpsys meminfo {PKG}", (DATA / "meminfo-app-android9.txt").read_text())
    out = _graph(tmp_path).invoke({"messages": [HumanMessage(f"dump meminfo of {PKG}")]},
                                  {"configurable": {"thread_id": "t-mem"}})
    assert out["route_history"] == ["orchestrator:android", NAME]
    assert out["answer"].startswith(f"Memory of {PKG} (pid 4321)") and "PSS total 37.5 MB" in out["answer"]
    assert Path(out["collected"]["raw"]["meminfo"]).parent.parent.name == "t-mem"  # <runs>/<thread>/<time>/


def test_graph_without_adb_ends_with_the_typed_skip(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "no-adb-here"))
    out = _graph(tmp_path).invoke({"messages": [HumanMessage("测一下FPS")]}, {"configurable": {"thread_id": "t"}})
    assert out["skipped"]["node"] == NAME and "apt install adb" in out["skipped"]["reason"]
    assert out["route_history"] == ["orchestrator:android", NAME]


def test_graph_fps_capture_continues_to_the_analyzer(tmp_path, monkeypatch):
    fake = FakeAdb(tmp_path, monkeypatch).device(S)
    fake.shell(S, f"dumpsys gfxinfo {PKG} reset", "")
    fake.shell(S, f"dumpsys gfxinfo {PKG} framestats", (DATA / "gfxinfo-framestats-android13.txt").read_text())
    fake.shell(S, "dumpsys SurfaceFlinger --latency", "16666666\n")
    out = _graph(tmp_path).invoke({"messages": [HumanMessage(f"测一下 {PKG} 的FPS")]}, {"configurable": {"thread_id": "t"}})
    assert out["route_history"][:3] == ["orchestrator:android", NAME, Node.ANALYZER.value]
    assert out["analysis"]["format"] == "gfxinfo" and out["analysis"]["frames"]["count"] == 6


def test_graph_retries_a_disconnect_once_through_the_policy(tmp_path, monkeypatch):
    fake = FakeAdb(tmp_path, monkeypatch).device(S)
    fake.shell(S, f"dumpsys meminfo {PKG}", {"stderr": f"error: device '{S}' not found\n", "rc": 1},
               (DATA / "meminfo-app-android9.txt").read_text())
    out = _graph(tmp_path).invoke({"messages": [HumanMessage(f"dump meminfo of {PKG}")]}, {"configurable": {"thread_id": "t"}})
    assert out["route_history"] == ["orchestrator:android", NAME, NAME]
    assert out["attempts"] == {NAME: 2} and out["last_error"] is None
    assert out["collected"]["summary"]["total_pss"] == 38428
    assert fake.calls().count(["-s", S, "shell", f"dumpsys meminfo {PKG}"]) == 2


def test_an_unwritable_run_folder_is_a_typed_failure(tmp_path, monkeypatch):
    FakeAdb(tmp_path, monkeypatch).device(S)
    blocker = tmp_path / "file-not-dir"
    blocker.write_text("x")
    up, merged = run(android_expert.make(ctx(tmp_path)), state("battery", run_dir=str(blocker / "sub")))
    assert up["last_error"]["kind"] == "unavailable" and "cannot write the collected data" in up["last_error"]["message"]
    assert next_step(merged) == NextStep.FAIL.value
