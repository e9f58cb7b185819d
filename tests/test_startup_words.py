"""A launch's display times and the biggest part of its breakdown are worded once
(nodes/perf/findings/startup.py ``display_times`` / ``biggest_part``): the startup finding and
the report's first sentence say the same thing (issue 26, item 6)."""

from __future__ import annotations

from pathlib import Path

from nodes.perf.findings.startup import android_startup, biggest_part, display_times
from nodes.perf.model import AnalysisResult, BreakdownItem, StartupRun, StartupStats
from nodes.report.view import build_view

ROOT = Path(__file__).resolve().parents[1]


def _run(**kw) -> StartupRun:
    base = dict(index=1, total_ms=800.0, kind="cold", package="com.demo.shop",
                breakdown=[BreakdownItem(reason="bind_application", dur_ms=200.0)])
    return StartupRun(**(base | kw))


def test_unknown_times_are_said_to_be_unknown_in_the_finding_and_the_sentence():
    run = _run(ttid_ms=None, ttfd_ms=None)
    assert display_times(run) == ["TTID unknown", "TTFD unknown (no reportFullyDrawn)"]
    st = StartupStats(runs=[run], median_ms=800.0, kind="cold")
    [f] = android_startup(st, "t.pftrace")
    assert "TTID unknown, TTFD unknown (no reportFullyDrawn)" in f.detail  # before: TTID left out here
    v = build_view(AnalysisResult(format="perfetto", source="t.pftrace", startup=st))
    assert "TTID unknown, TTFD unknown (no reportFullyDrawn)" in v.headline()


def test_the_biggest_part_is_the_same_in_both():
    run = _run(ttid_ms=700.0, ttfd_ms=900.0)
    label, dur_ms, share = biggest_part(run)
    assert (label, dur_ms, share) == ("bindApplication", 200.0, 25.0)
    st = StartupStats(runs=[run], median_ms=800.0, kind="cold")
    [f] = android_startup(st, "t.pftrace")
    assert "biggest part of the breakdown: bindApplication 200 ms (25.0 %)" in f.detail
    v = build_view(AnalysisResult(format="perfetto", source="t.pftrace", startup=st))
    assert "the biggest part is bindApplication (200 ms, 25.0 %)" in " ".join(v.summary_sentences())
    assert biggest_part(_run(breakdown=[])) is None


def test_the_words_are_written_once():
    hits = [str(p.relative_to(ROOT)) for p in sorted((ROOT / "nodes").rglob("*.py"))
            if "no reportFullyDrawn)\"" in p.read_text() or "100.0 * top.dur_ms" in p.read_text()
            or "/ r.total_ms" in p.read_text()]
    assert hits == ["nodes/perf/findings/startup.py"]


def test_a_launch_hears_whether_it_is_fast_by_android_vitals_in_both_answers():
    """"启动快吗" / "why is startup slow" on a 157 ms warm start heard numbers but no verdict."""
    from nodes.perf.findings.startup import SLOW_STARTUP_MS, vitals_verdict
    from nodes.perf.lens_readers import startup

    for kind, limit in SLOW_STARTUP_MS.items():
        assert vitals_verdict(_run(kind=kind, total_ms=limit - 1)).startswith("fast: under")
        assert vitals_verdict(_run(kind=kind, total_ms=limit)).startswith("slow: over")
    run = _run(ttid_ms=700.0, ttfd_ms=900.0)
    st = StartupStats(runs=[run], median_ms=800.0, kind="cold")
    a = AnalysisResult(format="perfetto", source="t.pftrace", startup=st)
    said = "fast: under Android vitals' 5.0 s for a cold start"
    assert vitals_verdict(run) == said
    assert said in build_view(a).headline() and said in startup(a).lead
