"""Comparisons through the graph: two named sides on the analyze route, and the follow-up that
compares the thread's last analysis with the one before (the real nodes, offline)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import compare_gen as gen
from app.api import PerfScout
from app.settings import Settings
from nodes.compare.intent import asks_previous, sides_in

DATA = Path(__file__).parent / "data"
CHROME116 = DATA / "report" / "chrome116-devtools-trace.json"
CHROME65 = DATA / "perf" / "chrome65-devtools-timeline.json"


@pytest.fixture
def ps(tmp_path, perfscout_home):
    with PerfScout(Settings.from_env(offline=True), workspace=tmp_path) as p:
        yield p


def test_sides_are_the_named_files_and_folders_in_order(tmp_path):
    (tmp_path / "run_a").mkdir()
    (tmp_path / "run_b").mkdir()
    assert sides_in("对比一下 before.pftrace 和 after.pftrace", str(tmp_path)) == ["before.pftrace", "after.pftrace"]
    assert sides_in("compare run_a/ with run_b/", str(tmp_path)) == ["run_a/", "run_b/"]
    assert sides_in("compare run_b with run_a", str(tmp_path)) == ["run_b", "run_a"]
    assert sides_in("解读一下 before.pftrace", str(tmp_path)) == []  # no comparison cue
    assert sides_in("compare run_a/ with run_c/", str(tmp_path)) == ["run_a/"]  # run_c does not exist
    for text in ("和上次比变快了吗", "is it better than the previous run?", "did it get faster?", "比上次慢了多少"):
        assert asks_previous(text), text
    for text in ("分析一下这份数据", "what is the previous frame?", "上次采集的数据在哪"):
        assert not asks_previous(text), text


def test_two_named_captures_are_compared_on_the_analyze_route(ps, tmp_path):
    shutil.copy(CHROME116, tmp_path / "before.json")
    shutil.copy(CHROME65, tmp_path / "after.json")
    r = ps.ask("对比一下 before.json 和 after.json", thread_id="c1")
    assert (r.status, r.route) == ("done", "analyze")
    assert r.answer.startswith("对比") and "frames.jank_ratio" in r.answer and "变差" in r.answer
    assert "每边只有一次运行" in r.answer
    folder = Path(r.report["dir"])
    assert r.report["compare_html"] == str(folder / "compare.html")
    assert {"compare.md", "compare.html", "compare.json", "report.md"} <= {p.name for p in folder.iterdir()}


def test_two_run_folders_are_compared_with_statistics(ps, tmp_path):
    gen.trace_event_runs(tmp_path / "run_a", 5, seed=31)
    gen.trace_event_runs(tmp_path / "run_b", 5, seed=32, parse_ms=36.0)
    r = ps.ask("compare run_a/ with run_b/", thread_id="c2")
    assert (r.status, r.route) == ("done", "analyze"), r.answer
    assert r.answer.startswith("run_b") or "run_b" in r.answer.splitlines()[0]
    assert "parse_rows" in r.answer and "worse" in r.answer.lower()
    assert "one run per side" not in r.answer


def test_is_it_better_than_the_previous_run_compares_the_last_two_analyses(ps, tmp_path):
    shutil.copy(CHROME116, tmp_path / "first.json")
    shutil.copy(CHROME65, tmp_path / "second.json")
    only = ps.ask("解读一下 first.json", thread_id="c3")
    assert only.status == "done"
    none = ps.ask("is it better than the previous run?", thread_id="c3")
    assert none.route == "analyze" and "no previous run" in none.answer  # docs/ROUTING.md rule 8
    ps.ask("解读一下 second.json", thread_id="c3")
    en = ps.ask("is it better than the previous run?", thread_id="c3")
    assert en.route == "analyze" and "first.json" in en.answer and "second.json" in en.answer
    assert "frames.jank_ratio" in en.answer and "worse" in en.answer
    zh = ps.ask("和上次比变快了吗", thread_id="c3")
    assert "和上次比" in zh.answer and "变差" in zh.answer


def test_a_comparison_side_outside_the_workspace_or_unreadable_fails_in_one_line(ps, tmp_path):
    shutil.copy(CHROME116, tmp_path / "good.json")
    (tmp_path / "bad.json").write_text('{"traceEvents": [{"ph": ')
    r = ps.ask("对比一下 good.json 和 bad.json", thread_id="c4")
    assert r.status == "failed" and "bad.json" in (r.answer or "")


def _racers(tmp_path):
    log = tmp_path / "order.txt"
    for name, mark in (("old.py", "a"), ("new.py", "b")):
        (tmp_path / name).write_text(f"with open({str(log)!r}, 'a') as f:\n    f.write({mark!r})\n")
    return log


def test_which_starts_faster_launches_both_interleaved_on_the_startup_route(ps, tmp_path, monkeypatch):
    log = _racers(tmp_path)
    r = ps.ask("which starts faster, old.py or new.py", thread_id="r1", allow_run=True)
    assert (r.status, r.route) == ("done", "startup"), r.answer
    n = len(log.read_text()) // 2
    assert n >= 10 and log.read_text() == "ab" * n  # interleaved A B A B …
    first = r.answer.splitlines()[0]
    assert ("faster than" in first or first.startswith("no significant difference")) and "interleaved" in first
    assert f"{n} launches each" in first and "startup.total_ms" in r.answer


def test_two_programs_are_not_launched_without_permission(ps, tmp_path):
    log = _racers(tmp_path)
    r = ps.ask("比较一下 old.py 和 new.py 的启动耗时", thread_id="r2")
    assert r.route == "startup" and r.status == "failed" and "--allow-run" in (r.answer or "")
    assert not log.exists()
    ok = ps.ask("比较一下 old.py 和 new.py 的启动耗时", thread_id="r3", allow_run=True)
    assert ok.status == "done" and "交替启动" in ok.answer.splitlines()[0] and ok.answer.splitlines()[1].startswith("对比")


def test_a_racer_outside_the_workspace_is_confirmed_not_refused(ps, tmp_path):
    """Issue 27 item 6: the race asks to confirm a program outside the workspace, as the
    permission rules do for any proposal (docs/permission.md); yes runs both, no runs nothing."""
    log = _racers(tmp_path)
    elsewhere = tmp_path.parent / f"{tmp_path.name}-elsewhere"
    elsewhere.mkdir()
    (elsewhere / "new.py").write_text((tmp_path / "new.py").read_text())
    (tmp_path / "new.py").unlink()
    outside = str(elsewhere / "new.py")
    text = f"比较一下 old.py 和 {outside} 的启动耗时"

    r = ps.ask(text, thread_id="r4", allow_run=True)
    assert (r.status, r.route) == ("needs_input", "startup"), r.answer
    q = r.question
    assert q["field"] == "confirm_run" and q["argv"] == [outside] and "old.py" in q["prompt"]
    assert not log.exists()  # nothing ran before the yes
    done = ps.resume("r4", "yes", allow_run=True)
    assert done.status == "done", done.answer
    n = len(log.read_text()) // 2
    assert n >= 10 and log.read_text() == "ab" * n

    log.unlink()
    r = ps.ask(text, thread_id="r5", allow_run=True)
    declined = ps.resume("r5", "no", allow_run=True)
    assert declined.status == "failed" and "declined" in (declined.answer or "")
    assert not log.exists()
    # --allow-run alone never confirms it, and without it the inside racer is refused first.
    r = ps.ask(text, thread_id="r6")
    assert r.status == "failed" and "--allow-run" in (r.answer or "") and not log.exists()


def test_two_racers_outside_the_workspace_are_confirmed_in_one_question(ps, tmp_path):
    elsewhere = tmp_path.parent / f"{tmp_path.name}-far"
    elsewhere.mkdir()
    log = _racers(elsewhere)
    a, b = str(elsewhere / "old.py"), str(elsewhere / "new.py")
    r = ps.ask(f"比较一下 {a} 和 {b} 的启动耗时", thread_id="r7", allow_run=True)
    assert r.status == "needs_input" and r.question["argv"] == [a]
    assert f"`{a}` and `{b}`" in r.question["prompt"]  # the one yes covers both exact argvs
    done = ps.resume("r7", "yes", allow_run=True)
    assert done.status == "done", done.answer
    assert log.read_text() == "ab" * (len(log.read_text()) // 2) and log.read_text()
