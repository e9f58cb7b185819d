"""The Android readers on a real gfxinfo capture and on outputs written from the documented formats."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nodes.perf.errors import PerfDataError
from nodes.perf.parsers import amstart, android_capture, cpuinfo, gfxinfo, meminfo

DATA = Path(__file__).parent / "data" / "android"
REAL_GFXINFO = DATA / "gfxinfo-reactnativefeed-flashlight.txt"


# --------------------------------------------------------------------------------------
# gfxinfo
# --------------------------------------------------------------------------------------


def test_real_capture_summary_histogram_and_legacy_table():
    pd = gfxinfo.parse(str(REAL_GFXINFO))
    fs = pd.frame_summary
    assert (fs["total_frames"], fs["janky_frames"], fs["janky_pct"]) == (35360, 23595, 66.73)
    assert (fs["p50_ms"], fs["p90_ms"], fs["p95_ms"], fs["p99_ms"]) == (28, 48, 53, 57)
    assert fs["missed_vsync"] == 4838 and fs["slow_ui_thread"] == 5842 and fs["frame_deadline_missed"] == 12149
    # Only non-empty buckets are kept; their counts add up to the frames the histogram covers.
    buckets = dict(b.split("=") for b in str(fs["histogram"]).split())
    assert buckets["9ms"] == "596" and buckets["500ms"] == "1" and "5ms" not in buckets
    assert pd.facts.package == "com.reactnativefeed" and pd.processes[14824] == "com.reactnativefeed"
    # The legacy table: 120 rows, each frame the sum of its four stages.
    assert fs["frame_source"] == "legacy profile table"
    assert len(pd.frames) == 120
    first = pd.frames[0]
    assert first.dur_us == pytest.approx((20.51 + 0.49 + 7.13 + 16.37) * 1000)
    assert pd.frames[1].ts_us == pytest.approx(first.dur_us)  # laid end to end, and said so
    assert any("no timestamps" in w for w in pd.warnings)
    assert pd.stats["frame_stage_draw_max"] == pytest.approx(30.96)


def test_android13_framestats_rows_by_header_name():
    pd = gfxinfo.parse(str(DATA / "gfxinfo-framestats-android13.txt"))
    fs = pd.frame_summary
    assert fs["profile_columns"] == 23
    assert fs["frames_flagged_skipped"] == 1  # the Flags=1 row (layout change) is not a frame
    assert [round(f.dur_us / 1000, 3) for f in pd.frames] == [10, 12, 20, 40, 8, 14]
    assert all(f.budget_us == pytest.approx(16666.666) for f in pd.frames)
    assert fs["budget_source"] == "FrameInterval column"
    # FrameDeadline is HWUI's own verdict on Android 12+.
    assert [f.janky for f in pd.frames] == [False, False, True, True, False, False]
    assert fs["frame_deadline_missed_legacy"] == 2 and fs["gpu_p90_ms"] == 9
    assert pd.frames[0].layer == "com.demo.shop/com.demo.shop.MainActivity"
    assert pd.frames[1].ts_us - pd.frames[0].ts_us == pytest.approx(16666.666)
    # Summary comes from the process block (first), not the per-window repeat.
    assert fs["total_frames"] == 7


def test_old_layout_uses_device_refresh_period_from_meta(tmp_path):
    body = (DATA / "gfxinfo-framestats-android9.txt").read_text()
    plain = gfxinfo.parse(str(DATA / "gfxinfo-framestats-android9.txt"))
    assert plain.frame_summary["profile_columns"] == 14
    assert plain.frame_summary["budget_source"].startswith("default")
    assert [f.janky for f in plain.frames] == [None] * 4  # no verdict in the data: the analyzer decides
    assert plain.frame_summary["frames_flagged_skipped"] == 1

    p = tmp_path / "g.txt"
    p.write_text(android_capture.header({"refresh_period_ns": 11111111, "model": "Pixel 4"}) + body)
    pd = gfxinfo.parse(str(p))
    assert pd.frame_summary["budget_source"] == "device refresh period"
    assert {round(f.budget_us, 3) for f in pd.frames} == {11111.111}
    assert [round(f.dur_us / 1000) for f in pd.frames] == [6, 9, 15, 30]
    assert pd.meta["model"] == "Pixel 4"


def test_gzipped_dump_reads_the_same(tmp_path):
    p = tmp_path / "g.txt.gz"
    p.write_bytes(gzip.compress(REAL_GFXINFO.read_bytes()))
    assert gfxinfo.parse(str(p)).frame_summary["total_frames"] == 35360


def test_summary_only_dump(tmp_path):
    p = tmp_path / "s.txt"
    p.write_text("** Graphics info for pid 7 [com.a.b] **\nTotal frames rendered: 10\nJanky frames: 1 (10.00%)\n"
                 "90th percentile: 19ms\n")
    pd = gfxinfo.parse(str(p))
    assert pd.frames == [] and pd.frame_summary["frame_source"] == "summary only"
    assert pd.frame_summary["p90_ms"] == 19


@pytest.mark.parametrize(
    "text, needle",
    [
        ("Applications Graphics Acceleration Info:\nNo process found for: com.nope.app\n", "com.nope.app"),
        ("hello world\n", "no gfxinfo summary"),
        ("---PROFILEDATA---\nFlags,IntendedVsync,FrameCompleted,\n1,5,9,\n---PROFILEDATA---\n", "no usable frame"),
        ("", "empty"),
    ],
)
def test_bad_gfxinfo_is_one_perfdataerror(tmp_path, text, needle):
    p = tmp_path / "bad.txt"
    p.write_text(text)
    with pytest.raises(PerfDataError) as e:
        gfxinfo.parse(str(p))
    assert needle in str(e.value) and "\n" not in str(e.value)


def test_sniffers_pick_their_own_format():
    heads = {f.name: f.read_bytes()[:65536] for f in DATA.glob("*.txt")}
    assert gfxinfo.sniff(heads["gfxinfo-reactnativefeed-flashlight.txt"], "x")
    assert gfxinfo.sniff(heads["gfxinfo-framestats-android9.txt"], "x")
    assert not gfxinfo.sniff(heads["meminfo-app-android13.txt"], "x")
    assert not gfxinfo.sniff(heads["android-atrace-systrace.txt"], "x")
    assert meminfo.sniff(heads["meminfo-device.txt"], "x") and not meminfo.sniff(heads["cpuinfo.txt"], "x")
    assert cpuinfo.sniff(heads["cpuinfo.txt"], "x") and cpuinfo.sniff(heads["top.txt"], "x")
    assert not cpuinfo.sniff(heads["gfxinfo-reactnativefeed-flashlight.txt"], "x")
    assert not amstart.sniff(heads["gfxinfo-reactnativefeed-flashlight.txt"], "x")


# --------------------------------------------------------------------------------------
# am start -W
# --------------------------------------------------------------------------------------

ANDROID13_RUNS = """# run 1: adb -s X shell 'am start -W -S -n com.demo.shop/.MainActivity'
Stopping: com.demo.shop
Starting: Intent { cmp=com.demo.shop/.MainActivity }
Status: ok
LaunchState: COLD
Activity: com.demo.shop/.MainActivity
TotalTime: 712
WaitTime: 745
Complete
# run 2: adb -s X shell 'am start -W -S -n com.demo.shop/.MainActivity'
Starting: Intent { cmp=com.demo.shop/.MainActivity }
Status: ok
LaunchState: COLD
Activity: com.demo.shop/.MainActivity
TotalTime: 650
WaitTime: 671
Complete
# run 3: adb -s X shell 'am start -W -S -n com.demo.shop/.MainActivity'
Starting: Intent { cmp=com.demo.shop/.MainActivity }
Error type 3
Error: Activity class {com.demo.shop/com.demo.shop.MainActivity} does not exist.
"""

ANDROID8_RUN = """Starting: Intent { act=android.intent.action.MAIN cat=[android.intent.category.LAUNCHER] cmp=com.demo.shop/.MainActivity }
Status: ok
Activity: com.demo.shop/.MainActivity
ThisTime: 402
TotalTime: 402
WaitTime: 431
Complete
"""


def test_am_start_runs_failed_launch_is_a_warning_not_a_number(tmp_path):
    p = tmp_path / "am.txt"
    p.write_text(ANDROID13_RUNS)
    pd = amstart.parse(str(p))
    assert [(r.index, r.total_ms, r.wait_ms, r.kind) for r in pd.startup_runs] == [
        (1, 712, 745, "cold"), (2, 650, 671, "cold")]
    assert pd.startup_runs[0].command.endswith("am start -W -S -n com.demo.shop/.MainActivity'")
    assert pd.warnings == ["launch 3 did not complete: Error type 3"]
    assert pd.meta["activity"] == "com.demo.shop/.MainActivity"
    assert amstart.sniff(p.read_bytes(), "am.txt")


def test_am_start_pre_android10_kind_comes_from_the_forced_mode(tmp_path):
    p = tmp_path / "am.txt"
    p.write_text(android_capture.header({"launch_mode": "warm"}) + "# run 0 (warm-up): adb shell am start -W -n c/.A\n"
                 + ANDROID8_RUN + "# run 1: adb shell am start -W -n c/.A\n" + ANDROID8_RUN.replace("402", "220"))
    pd = amstart.parse(str(p))
    # The warm-up launch is in the file but is not a measurement.
    assert [(r.index, r.total_ms, r.kind) for r in pd.startup_runs] == [(1, 220, "warm")]


def test_am_start_without_any_completed_launch(tmp_path):
    p = tmp_path / "am.txt"
    p.write_text("Starting: Intent { cmp=a.b/.C }\nStatus: timeout\nActivity: a.b/.C\nComplete\n")
    with pytest.raises(PerfDataError, match="no launch completed: launch 1 did not complete: Status: timeout"):
        amstart.parse(str(p))
    p.write_text("nothing here\n")
    with pytest.raises(PerfDataError, match="no `am start -W` launch found"):
        amstart.parse(str(p))


# --------------------------------------------------------------------------------------
# meminfo, cpuinfo, top
# --------------------------------------------------------------------------------------


def test_meminfo_android13_app_summary_columns_by_position():
    pd = meminfo.parse(str(DATA / "meminfo-app-android13.txt"))
    s = pd.stats
    assert (s["total_pss"], s["total_rss"], s["total_swap_pss"]) == (81523, 167288, 120)
    assert (s["java_heap_pss"], s["java_heap_rss"], s["native_heap_pss"], s["graphics_pss"]) == (11508, 25660, 22300, 23072)
    # "Unknown:" has only an RSS value: it must not be read as PSS.
    assert s["unknown_rss"] == 1220 and "unknown_pss" not in s
    assert "private_other_rss" not in s and s["private_other_pss"] == 3060
    assert (s["native_heap_heap_size"], s["native_heap_heap_alloc"], s["dalvik_heap_heap_alloc"]) == (31264, 25498, 5467)
    assert pd.facts.package == "com.demo.shop" and pd.stat_units["total_pss"] == "kB"


def test_meminfo_android9_and_device_wide():
    old = meminfo.parse(str(DATA / "meminfo-app-android9.txt")).stats
    assert old["total_pss"] == 38428 and old["total_swap_pss"] == 20 and "total_rss" not in old
    dev = meminfo.parse(str(DATA / "meminfo-device.txt")).stats
    assert (dev["total_ram"], dev["free_ram"], dev["used_ram"], dev["lost_ram"]) == (5709368, 2123456, 3102340, 483572)
    assert dev["process_pss:com.demo.shop"] == 201004


def test_meminfo_no_process(tmp_path):
    p = tmp_path / "m.txt"
    p.write_text("Applications Memory Usage (in Kilobytes):\nUptime: 1 Realtime: 1\nNo process found for: com.x.y\n")
    with pytest.raises(PerfDataError, match="no process for com.x.y"):
        meminfo.parse(str(p))


def test_cpuinfo_and_top_keep_their_different_bases():
    c = cpuinfo.parse(str(DATA / "cpuinfo.txt")).stats
    assert (c["cpuinfo.total"], c["cpuinfo.user"], c["cpuinfo.kernel"], c["cpuinfo.iowait"]) == (25, 15, 8.5, 0.3)
    assert c["cpuinfo.process:com.demo.shop"] == 27 and c["cpuinfo.process:com.example.new"] == 0
    assert c["cpuinfo.window"] == 58413 - 28366 and c["cpuinfo.load_1min"] == 7.41
    t = cpuinfo.parse(str(DATA / "top.txt")).stats
    assert t["top.capacity"] == 800 and t["top.idle"] == 775
    assert t["top.process:com.demo.shop"] == 23.3 and t["top.process:top -b -n 1"] == 0
    old = cpuinfo.parse(str(DATA / "top-android7.txt")).stats
    assert old["top.process:com.demo.shop"] == 9 and old["top.process:rcu_preempt"] == 0 and old["top.user"] == 5


# --------------------------------------------------------------------------------------
# Hostile input: only PerfDataError, ever.
# --------------------------------------------------------------------------------------

_FRAGMENTS = st.sampled_from([
    "---PROFILEDATA---\n", "Flags,IntendedVsync,FrameCompleted,FrameInterval,\n", "0,1,2,3,\n", "0,-5,x,,\n",
    "Total frames rendered: 9\n", "Janky frames: 3 (33,3%)\n", "HISTOGRAM: 5ms=1 x=2\n", "Draw\tPrepare\tProcess\tExecute\n",
    "\t1.0\t2.0\t3.0\t4.0\n", "Starting: Intent {}\n", "TotalTime: 12\n", "Status: ok\n", "App Summary\n",
    "TOTAL PSS: 5 TOTAL RSS: x\n", "Pss(KB) Rss(KB)\n", "  ------  ------\n", "Java Heap:  1  2\n", "25% TOTAL: 1% user\n",
    "PID USER S[%CPU] ARGS\n", "12 u S 1.0 a b c\n", "# perfscout-meta: {bad json\n", "\x00\x01", "9223372036854775807,",
])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(st.one_of(_FRAGMENTS, st.text(max_size=40)), max_size=25))
def test_readers_raise_only_perfdataerror(tmp_path, parts):
    p = tmp_path / "fuzz.txt"
    p.write_text("".join(parts), encoding="utf-8", errors="replace")
    for reader in (gfxinfo, amstart, meminfo, cpuinfo):
        try:
            pd = reader.parse(str(p))
        except PerfDataError as e:
            assert "\n" not in str(e)
        else:
            assert pd.format == reader.FORMAT
