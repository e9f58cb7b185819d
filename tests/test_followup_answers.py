"""Follow-up answers from a thread's last analysis, on real captures' analyses."""

from __future__ import annotations

from pathlib import Path

from nodes.perf.analysis import analyze_file
from nodes.report.followup import answer

DATA = Path(__file__).parent / "data" / "perfetto"


def _analysis(name: str) -> dict:
    return analyze_file(str(DATA / name)).model_dump(mode="json")


def test_slowest_frame_frametimeline_calls_not_janky_reads_as_such():
    """api32's longest frame (10.758 ms) carries FrameTimeline's jank type "None", which means no
    jank: the answer says so in words, never "[None]"."""
    a = _analysis("api32_startup_warm.perfetto-trace")
    assert [(w["dur_ms"], w["jank_type"]) for w in a["frames"]["worst"]][0] == (10.758, "None")
    en = answer("now show me the slowest frame", a)
    zh = answer("最慢的一帧是哪一帧", a)
    assert en.startswith("Slowest frame: starts at") and "lasts 10.8 ms" in en
    assert "(FrameTimeline: not janky)" in en and "[None]" not in en
    assert "FrameTimeline 判定为不卡顿" in zh and "[None]" not in zh


def test_slowest_frame_names_frametimeline_jank_reasons():
    a = _analysis("ms_android12_emulator_sched_cpusampling.pftrace")
    en = answer("show me the slowest frame", a)
    assert "lasts 385 ms" in en and "[Prediction Error, App Deadline Missed, Buffer Stuffing]" in en
