"""``perfscout compare``: real captures, and generated seeded captures with a planted change or none.

The generated sides (tests/compare_gen.py) differ only by the planted change; the jitter is
seeded, so whether a change is found never depends on timing a real program.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import compare_gen as gen
from nodes.compare.diff import MismatchError, compare_sides
from nodes.compare.keys import KeyError_, format_key, info, parse_key
from nodes.compare.samples import extract
from nodes.compare.sides import SideError, load_side

DATA = Path(__file__).parent / "data"
CHROME116 = DATA / "report" / "chrome116-devtools-trace.json"
CHROME65 = DATA / "perf" / "chrome65-devtools-timeline.json"
API32 = DATA / "perfetto" / "api32_startup_warm.perfetto-trace"
API24 = DATA / "perfetto" / "api24_startup_cold.perfetto-trace"  # from the frames-analysis branch
GFXINFO = DATA / "android" / "gfxinfo-reactnativefeed-flashlight.txt"
PYSPY = DATA / "perf" / "pyspy-slowapp.speedscope.json"
COLLECTION = DATA / "perf" / "collection-slow_app"


def rows(cmp):
    return {r.key: r for r in cmp.rows}


def hot(cmp):
    return {r.label: r for r in cmp.hotspots}


# --- keys -----------------------------------------------------------------------------------


def test_keys_round_trip_with_quoted_names_holding_dots():
    segs = parse_key('hotspots."json.decoder.JSONDecoder.raw_decode".self_pct')
    assert segs == ("hotspots", "json.decoder.JSONDecoder.raw_decode", "self_pct")
    assert parse_key(format_key(segs)) == segs
    assert parse_key("startup.cold.ttid_ms") == ("startup", "cold", "ttid_ms")
    assert info(("frames", "fps")).direction == "higher"
    assert info(("frames", "jank_ratio")).direction == "lower"
    assert info(("frames", "count")).direction is None


@pytest.mark.parametrize("bad", ["frames.jank_ratoi", "startup.lukewarm.ttid_ms", "speed", "hotspots.x", "page.inp_ms",
                                 "memory.favourite_colour", 'hotspots."unterminated.self_pct', "frames..fps"])
def test_unknown_or_malformed_keys_are_rejected_naming_the_key(bad):
    with pytest.raises(KeyError_) as e:
        info(parse_key(bad))
    assert bad.split(".")[0] in str(e.value)


def test_extract_gives_startup_per_launch_and_per_kind_and_frames_and_hotspots_of_a_real_capture():
    from nodes.compare.sides import _analyse_one

    ok, a = _analyse_one((str(API32),))
    assert ok
    s = extract(a)
    runs = a["startup"]["runs"]
    assert s["startup.total_ms"] == [r["total_ms"] for r in runs]
    kinds = {r["kind"] for r in runs}
    for k in kinds & {"cold", "warm", "hot"}:
        assert s[f"startup.{k}.total_ms"] == [r["total_ms"] for r in runs if r["kind"] == k]
    assert s["frames.count"] == [a["frames"]["count"]]
    top = next(h for h in a["hotspots"] if h["thread"] is None)
    assert s[format_key(("hotspots", top["name"], "self_pct"))][0] >= top["self_pct"]


# --- real captures ------------------------------------------------------------------------


def test_a_real_capture_against_itself_is_unchanged_everywhere():
    side = load_side(str(CHROME116))
    cmp = compare_sides(side, side)
    assert cmp.rows and all(r.verdict == "unchanged" for r in cmp.rows)
    assert all(r.status == "unchanged" for r in cmp.hotspots)
    assert cmp.changes == {"better": [], "worse": []}


def test_two_real_chrome_traces_one_run_each_show_deltas_without_interval_and_say_so():
    a, b = load_side(str(CHROME116)), load_side(str(CHROME65))
    cmp = compare_sides(a, b)
    r = rows(cmp)
    fa, fb = a.runs[0].analysis["frames"], b.runs[0].analysis["frames"]
    assert r["frames.jank_ratio"].diff["delta"] == pytest.approx(fb["jank_ratio"] - fa["jank_ratio"])
    assert r["frames.fps"].verdict == ("worse" if fb["fps"] < fa["fps"] else "better")
    for row in cmp.rows:
        if row.diff:
            assert row.diff["ci_low"] is None and row.diff["p_value"] is None
            assert "one run per side" in row.diff["note"]
    # hot spots matched by name: only-in-one-side rows are new / gone, shared rows grew / shrank
    names_a = {h["name"] for h in a.runs[0].analysis["hotspots"] if h["thread"] is None}
    names_b = {h["name"] for h in b.runs[0].analysis["hotspots"] if h["thread"] is None}
    for name, row in hot(cmp).items():
        if name in names_a and name not in names_b:
            assert row.status == "gone"
        elif name in names_b and name not in names_a:
            assert row.status == "new"
        else:
            assert row.status in ("grew", "shrank", "unchanged")


def test_a_collection_folder_of_several_formats_is_one_run_and_a_glob_of_one_format_is_several(tmp_path):
    side = load_side(str(COLLECTION))
    assert len(side.runs) == 1 and "+" in side.runs[0].analysis["format"]
    for i in range(3):
        shutil.copy(CHROME116, tmp_path / f"t{i}.json")
    (tmp_path / "README.md").write_text("not a capture")
    assert len(load_side(str(tmp_path)).runs) == 3
    assert len(load_side(str(tmp_path / "t[01].json")).runs) == 2


def test_mismatched_kinds_and_unreadable_sides_are_one_line_errors_naming_them(tmp_path):
    with pytest.raises(MismatchError) as e:
        compare_sides(load_side(str(GFXINFO)), load_side(str(PYSPY)))
    assert "mismatched kinds" in str(e.value) and str(GFXINFO) in str(e.value)
    with pytest.raises(MismatchError, match="launches .* are warm.* cold"):
        compare_sides(load_side(str(API32)), load_side(str(API24)))
    bad = tmp_path / "broken.json"
    bad.write_text('{"traceEvents": [ {"ph": "X", ')
    with pytest.raises(SideError) as e2:
        load_side(str(bad))
    assert str(bad) in str(e2.value) and "\n" not in str(e2.value)
    with pytest.raises(SideError, match="matches nothing"):
        load_side(str(tmp_path / "*.pftrace"))
    with pytest.raises(SideError, match="no report of a thread"):
        load_side("no-such-thread", runs_dir=str(tmp_path))


def test_a_thread_name_side_is_its_newest_report(tmp_path):
    from nodes.compare.sides import _analyse_one

    ok, a = _analyse_one((str(CHROME116),))
    folder = tmp_path / "runs" / "t1" / "20260101T000000.000Z"
    folder.mkdir(parents=True)
    (folder / "report.json").write_text(json.dumps({"schema": "perfscout.report/1", "analysis": a}))
    side = load_side("t1", runs_dir=str(tmp_path / "runs"))
    assert len(side.runs) == 1 and side.runs[0].analysis["frames"]["count"] == a["frames"]["count"]


# --- generated captures with a planted change ------------------------------------------------


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    root = tmp_path_factory.mktemp("planted")
    gen.trace_event_runs(root / "base", 6, seed=1)
    gen.trace_event_runs(root / "same", 6, seed=2)
    gen.trace_event_runs(root / "slower", 6, seed=3, parse_ms=36.0)
    gen.trace_event_runs(root / "janky", 6, seed=4, janky_frames=9)
    gen.perfetto_startup_runs(root / "launch", 6, seed=5)
    gen.perfetto_startup_runs(root / "launch_same", 6, seed=6)
    gen.perfetto_startup_runs(root / "launch_slow_bind", 6, seed=7, bind_ms=60.0)
    return {p.name: load_side(str(p)) for p in root.iterdir()}


def test_a_slower_function_is_found_significant_and_the_unchanged_one_is_not(planted):
    cmp = compare_sides(planted["base"], planted["slower"])
    h = hot(cmp)
    parse, render = h["parse_rows"], h["render_page"]
    assert parse.status == "grew" and parse.diff["significant"] is True
    assert 0.15 * 150 < parse.diff["delta"] < 0.25 * 150  # planted +20 % of 5 × 30 ms
    assert parse.diff["ci_low"] > 0 and parse.diff["p_value"] < 0.05
    assert render.status == "no significant change"
    assert rows(cmp)["frames.jank_ratio"].verdict in ("unchanged", "no significant change")


def test_extra_janky_frames_make_the_jank_ratio_worse_and_leave_the_median_frame_alone(planted):
    cmp = compare_sides(planted["base"], planted["janky"])
    r = rows(cmp)
    assert r["frames.jank_ratio"].verdict == "worse"
    assert r["frames.jank_ratio"].diff["delta"] == pytest.approx(6 / 60)
    assert r["frames.p90_ms"].verdict == "worse"
    assert r["frames.p50_ms"].verdict in ("unchanged", "no significant change")
    # doFrame occurrences are one hot spot (their vsync numbers are not names)
    assert "Choreographer#doFrame" in hot(cmp)


def test_a_longer_bind_application_makes_the_cold_startup_worse(planted):
    cmp = compare_sides(planted["launch"], planted["launch_slow_bind"])
    r = rows(cmp)
    for key in ("startup.total_ms", "startup.cold.total_ms", "startup.ttid_ms", "startup.cold.ttid_ms"):
        assert r[key].verdict == "worse", key
        assert 15.0 < r[key].diff["delta"] < 25.0  # planted +20 ms of bindApplication
        assert r[key].diff["ci_low"] > 0
    assert "startup.ttfd_ms" not in r  # the generated app never calls reportFullyDrawn: missing, not 0
    assert hot(cmp)["bindApplication"].status == "grew"
    assert hot(cmp)["activityStart"].status == "no significant change"


@pytest.mark.parametrize("a,b", [("base", "same"), ("launch", "launch_same")])
def test_no_planted_change_is_no_significant_change(planted, a, b):
    cmp = compare_sides(planted[a], planted[b])
    assert cmp.changes == {"better": [], "worse": []}, [(r.key, r.diff) for r in cmp.rows if r.verdict in ("better", "worse")]
    assert any(r.verdict == "no significant change" for r in cmp.rows)


# --- the command ----------------------------------------------------------------------------


def _cli(*args, cwd=None, env_home=None):
    import os

    env = dict(os.environ)
    if env_home:
        env["PERFSCOUT_HOME"] = str(env_home)
    return subprocess.run([sys.executable, "-m", "app.cli", *args], capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=300)


def test_cli_compare_writes_markdown_html_json_and_prints_json(planted, tmp_path):
    out = tmp_path / "cmp"
    p = _cli("compare", str(Path(planted["base"].spec)), str(Path(planted["slower"].spec)), "--out", str(out), "--json",
             env_home=tmp_path)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["schema"] == "perfscout.compare/1"
    assert "hotspots.parse_rows.self_ms" in doc["summary"]["worse_keys"]
    assert sorted(x.name for x in out.iterdir()) == ["compare.html", "compare.json", "compare.md"]
    html = (out / "compare.html").read_text()
    assert "default-src 'none'" in html and 'data-chart="delta"' in html and "<script" not in html
    assert html.count('class="mark bad"') >= 1
    assert "parse_rows" in (out / "compare.md").read_text()
    assert json.loads((out / "compare.json").read_text())["rows"] == doc["rows"]


def test_cli_compare_bad_input_is_one_line_and_exit_2(tmp_path):
    bad = tmp_path / "bad.pftrace"
    bad.write_bytes(b"\x00\xff" * 100)
    for args, needle in (((str(bad), str(CHROME116)), str(bad)),
                         ((str(GFXINFO), str(PYSPY)), "mismatched kinds"),
                         ((str(tmp_path / "missing.json"), str(CHROME116)), "missing.json")):
        p = _cli("compare", *args, env_home=tmp_path)
        assert p.returncode == 2, (args, p.stderr)
        assert needle in p.stderr and len(p.stderr.strip().splitlines()) == 1 and "Traceback" not in p.stderr
    assert not (tmp_path / "runs" / "compare").exists() or not any((tmp_path / "runs" / "compare").iterdir())


# --- issue-16 keys: web vitals of a recorded page load, FrameTimeline jank types -----------------

WEB = DATA / "web" / "webvitals.trace.json.gz"  # recorded by the web-analysis branch (tests/data/web/SOURCES.md)


def test_web_vitals_of_a_recorded_page_load_are_metrics_and_budgets():
    from nodes.compare.budgets import check_run, parse_budgets

    side = load_side(str(WEB))
    page = side.runs[0].analysis["page"]
    s = extract(side.runs[0].analysis)
    for field in ("fcp_ms", "lcp_ms", "cls", "tbt_ms"):
        assert s[f"page.{field}"] == [page[field]]
    b = parse_budgets({"page": {"lcp_ms": page["lcp_ms"] + 1, "cls": {"max": page["cls"] / 2}}})
    got = {r.key: r.status for r in check_run("web", s, b)}
    assert got == {"page.lcp_ms": "pass", "page.cls": "fail"}
    assert all(r.verdict == "unchanged" for r in compare_sides(side, side).rows if r.family == "page")


def test_a_jank_type_one_side_never_marks_counts_zero_there_not_missing():
    from nodes.compare.sides import side_from_analyses

    def analysis(types):
        return {"format": "perfetto", "source": "x", "frames": {"count": 100, "jank_ratio": 0.1, "jank_types": types}}

    a = side_from_analyses("a", [analysis({"None": 100})])
    b = side_from_analyses("b", [analysis({"None": 90, "App Deadline Missed": 10})])
    r = rows(compare_sides(a, b))['frames.jank_types."App Deadline Missed"']
    assert r.a == [0.0] and r.b == [10.0] and r.verdict == "worse"
