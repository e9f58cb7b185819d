"""analyze_paths on the files of one collection: one row per thread, per-file provenance,
hot-spot counts and order, and finding texts people can read (relative paths, numbers formatted
as the report formats them).

``collection-slow_app/`` is a real run of PerfScout's collector (see tests/data/perf/SOURCES.md);
expected numbers are recomputed from the files with plain ``json`` / ``re``.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from nodes.perf.analysis import analyze_paths, merge_threads
from nodes.perf.metrics import compute, shown_path
from nodes.perf.model import AnalysisResult, PerfData, ThreadStat
from nodes.perf.parsers import perfscout_json as pj

COLL = Path(__file__).parent / "data" / "perf" / "collection-slow_app"
FILES = [str(COLL / n) for n in ("psutil-series.json", "pyspy.speedscope.json", "perf-stat.txt")]
SCHEMA = "https://www.speedscope.app/file-format-schema.json"


def _plain_pyspy() -> tuple[int, dict[str, int], dict[str, int], float]:
    """pid, samples each function is on (once per sample), samples it is the leaf of, and the
    weight (ms) of the samples that hold Python code."""
    doc = json.loads((COLL / "pyspy.speedscope.json").read_text())
    frames = doc["shared"]["frames"]
    (prof,) = doc["profiles"]
    pid = int(re.match(r"Process (\d+)", prof["name"]).group(1))
    on: dict[str, int] = {}
    leaf: dict[str, int] = {}
    busy_ms = 0.0
    for stack, w in zip(prof["samples"], prof["weights"]):
        names = [frames[i]["name"] for i in stack if not frames[i]["name"].startswith("process ")]
        if not names:
            continue
        busy_ms += w * 1000.0
        for n in set(names):
            on[n] = on.get(n, 0) + 1
        leaf[names[-1]] = leaf.get(names[-1], 0) + 1
    return pid, on, leaf, busy_ms


# --- the real collection ------------------------------------------------------------------------


def test_the_same_thread_from_pyspy_and_psutil_is_one_row():
    pid, _on, _leaf, busy_ms = _plain_pyspy()
    series = json.loads((COLL / "psutil-series.json").read_text())
    assert series["pid"] == pid and [t["tid"] for t in series["threads"]] == [pid]
    cpu_ms = (series["threads"][0]["user_s"] + series["threads"][0]["system_s"]) * 1000
    res = analyze_paths(FILES)
    rows = [t for t in res.threads if (t.pid, t.tid) == (pid, pid)]
    assert len(rows) == 1 and len(res.threads) == 1
    row = rows[0]
    assert row.is_main
    # busy: what py-spy sampled (the --idle run's 10 ms samples); running: psutil's CPU time
    assert row.busy_ms == pytest.approx(busy_ms, abs=0.01)
    assert row.running_ms == pytest.approx(cpu_ms, abs=0.01)
    assert row.process == "python slow_app.py"  # py-spy's process name
    assert sum(t.is_main for t in res.threads) == 1


def test_perf_stat_attached_to_a_pid_is_a_pid_not_a_command():
    text = (COLL / "perf-stat.txt").read_text()
    pid = re.search(r"for process id '(\d+)'", text).group(1)
    res = analyze_paths([FILES[2]])
    assert res.meta["pid"] == pid and "command" not in res.meta
    merged = analyze_paths(FILES)
    # psutil says the same pid: one fact, not "pid" and "pid (perf-stat.txt)"
    assert merged.meta["pid"] == pid and not any(k.startswith("pid (") for k in merged.meta)
    assert merged.meta["command"] == json.loads((COLL / "psutil-series.json").read_text())["command"]
    assert not any("process id" in v for v in merged.meta.values())


def test_each_section_and_finding_names_its_own_file():
    res = analyze_paths(FILES)
    assert res.meta["source: hot spots"] == "pyspy.speedscope.json"
    assert res.meta["source: counters"] == "psutil-series.json"
    assert res.meta["source: stats"] == "perf-stat.txt"
    assert res.meta["source: threads"] == "psutil-series.json, pyspy.speedscope.json"
    assert "source" not in res.meta and not any(k.startswith("source (") for k in res.meta)
    hot = next(f for f in res.findings if f.title.startswith("Hot spot"))
    assert hot.evidence.source == FILES[1]
    assert all(f.evidence.source in FILES for f in res.findings)


def test_hot_spot_counts_are_the_samples_a_function_was_on():
    _pid, on, leaf, _ = _plain_pyspy()
    res = analyze_paths(FILES)
    overall = {h.name: h for h in res.hotspots if h.thread is None}
    for name in ("<module>", "main", "unique_customers"):
        assert overall[name].count == on[name] > 0
    assert overall["<module>"].count == sum(leaf.values())  # the root of every sample
    # by self time, then total: every function with self time before the callers without
    selfs = [h.self_ms for h in overall.values()]
    order = [(h.self_ms, h.total_ms) for h in res.hotspots if h.thread is None]
    assert order == sorted(order, key=lambda st: (-st[0], -st[1]))
    first_zero = next(i for i, s in enumerate(selfs) if s == 0)
    assert all(s == 0 for s in selfs[first_zero:])


def test_the_hot_spot_finding_reads_like_the_report():
    res = analyze_paths(FILES)
    h = next(h for h in res.hotspots if h.thread is None)
    assert h.name == "unique_customers" and os.path.isabs(h.file)  # the attributor opens it
    f = next(f for f in res.findings if f.title == "Hot spot: unique_customers")
    assert f"{h.self_pct:.1f} %" in f.detail and f"{h.self_ms:,.0f} ms self" in f.detail
    assert re.search(r"\d,\d{3} ms self", f.detail)  # over a second: thousands separated


# --- hand-built data, numbers worked out by hand ------------------------------------------------


def _profile(tmp_path: Path, file: str, pid: int = 50) -> str:
    """py-spy-like: main → work (hot, 2,410 ms in 241 samples) and main → idle (10 ms)."""
    frames = [{"name": "main", "file": file, "line": 9}, {"name": "work", "file": file, "line": 3},
              {"name": "idle", "file": file, "line": 6}]
    samples = [[0, 1]] * 241 + [[0, 2]]
    doc = {"$schema": SCHEMA, "shared": {"frames": frames},
           "profiles": [{"type": "sampled", "name": f'Process {pid} Thread {pid} ""', "unit": "seconds",
                         "startValue": 0, "endValue": 2.42, "samples": samples, "weights": [0.01] * len(samples)}]}
    p = tmp_path / "prof.speedscope.json"
    p.write_text(json.dumps(doc))
    return str(p)


def test_finding_paths_are_relative_inside_the_workspace_and_absolute_outside(tmp_path, monkeypatch):
    src = tmp_path / "proj" / "app.py"
    src.parent.mkdir()
    prof = _profile(tmp_path, str(src))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # the current directory plays no part
    res = analyze_paths([prof], root=str(tmp_path / "proj"))
    f = next(f for f in res.findings if f.title == "Hot spot: work")
    assert f.detail == ("work (app.py:3) takes 99.6 % of the sampled time by itself "
                        "(2,410 ms self, 2,410 ms with callees).")
    assert next(h for h in res.hotspots if h.name == "work").file == str(src)
    f = next(f for f in analyze_paths([prof], root=str(elsewhere)).findings if f.title == "Hot spot: work")
    assert f"work ({src}:3) takes" in f.detail


def test_hot_spot_paths_are_relative_to_the_root_passed_in_not_the_cwd(tmp_path, monkeypatch):
    from nodes.perf.findings.hotspots import hot_spots
    from nodes.perf.model import Hotspot

    ws = tmp_path / "ws"
    (ws / "pkg").mkdir(parents=True)
    h = Hotspot(name="slow", file=str(ws / "pkg" / "mod.py"), line=7, self_ms=900.0, total_ms=950.0, self_pct=90.0,
                kind="sample")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    text = hot_spots([h], 1000.0, "p.json", str(ws))[0].detail
    assert f"({os.path.join('pkg', 'mod.py')}:7)" in text
    monkeypatch.chdir(ws)  # the cwd does not matter, with or without a root
    assert hot_spots([h], 1000.0, "p.json", str(ws))[0].detail == text
    assert str(ws / "pkg" / "mod.py") in hot_spots([h], 1000.0, "p.json", None)[0].detail


def test_shown_path():
    assert shown_path("/a/b/c.py", None) == "/a/b/c.py"
    assert shown_path("/a/b/c.py", "/a") == os.path.join("b", "c.py")
    assert shown_path("/a/b/c.py", "/a/b/c") == "/a/b/c.py"
    assert shown_path("/ab/c.py", "/a") == "/ab/c.py"  # a sibling that shares a prefix
    assert shown_path("rel/c.py", "/a") == "rel/c.py"


def test_counts_per_thread_and_zero_self_callers(tmp_path):
    pd = PerfData("speedscope", "/p.json")
    main, a, b = pd.frame_id("main", "/x.py", 1), pd.frame_id("a", "/x.py", 2), pd.frame_id("b", "/x.py", 3)
    for _ in range(3):
        pd.add_sample([main, a], 10_000, 1, 1)   # 3 samples: main → a
    pd.add_sample([main, b], 50_000, 1, 2, samples=5)  # 5 samples aggregated: main → b on thread 2
    pd.add_sample([main], 0.0, 1, 1)        # main on its own, no weight: on the stack, no time
    res = compute(pd)
    overall = {h.name: h for h in res.hotspots if h.thread is None}
    assert (overall["main"].count, overall["a"].count, overall["b"].count) == (9, 3, 5)
    assert [h.name for h in res.hotspots if h.thread is None] == ["b", "a", "main"]
    assert overall["main"].self_ms == 0 and overall["main"].total_ms == 80
    t2 = [h for h in res.hotspots if h.thread and h.name == "b"]
    assert len(t2) == 1 and t2[0].count == 5
    t1 = {h.name: h.count for h in res.hotspots if h.thread and "(1)" in h.thread and h.name != "b"}
    assert t1 == {"a": 3, "main": 4}


def _row(pid, tid, name, busy, **kw) -> ThreadStat:
    return ThreadStat(pid=pid, tid=tid, name=name, busy_ms=busy, **kw)


def test_merge_threads_combines_rows_and_keeps_one_main():
    prof = AnalysisResult(format="speedscope", source="p", threads=[
        _row(7, 7, "main thread", 2000.0, process="python app.py", is_main=True),
        _row(7, 8, "worker", 300.0)])
    series = AnalysisResult(format="psutil_series", source="s", threads=[
        _row(7, 7, "python", 1400.0, running_ms=1400.0, is_main=True),
        _row(7, 8, "tid 8", 250.0, running_ms=250.0)])
    trace = AnalysisResult(format="trace_event", source="t", threads=[
        _row(0, 1, "MainThread", 90.0, slice_count=4, is_main=True)])  # pid unknown: never merged
    rows = merge_threads([prof, series, trace])
    by = {(r.pid, r.tid): r for r in rows}
    assert len(rows) == 3 and sum(r.is_main for r in rows) == 1
    m = by[(7, 7)]
    assert m.is_main and rows[0] is m  # two files call it main; it leads the list
    assert (m.name, m.process, m.busy_ms, m.running_ms) == ("python", "python app.py", 2000.0, 1400.0)
    w = by[(7, 8)]
    assert (w.name, w.busy_ms, w.running_ms, w.is_main) == ("worker", 300.0, 250.0, False)
    assert by[(0, 1)].slice_count == 4 and not by[(0, 1)].is_main


def test_cpu_time_alone_is_busy_time_when_nothing_sampled_it():
    rows = merge_threads([
        AnalysisResult(format="psutil_series", source="s", threads=[_row(3, 3, "python", 120.0, running_ms=120.0, is_main=True)]),
        AnalysisResult(format="trace_event", source="t", threads=[_row(3, 3, "tid 3", 40.0, running_ms=120.0, slice_count=2)]),
    ])
    assert len(rows) == 1 and rows[0].busy_ms == 40.0 and rows[0].running_ms == 120.0 and rows[0].name == "python"


def test_overall_hot_spots_of_several_files_are_ranked_together(tmp_path):
    prof = _profile(tmp_path, "/srv/app.py")
    series = pj.write_psutil_series(tmp_path / "s.json", {"cpu_percent": [(0.0, 50.0), (0.1, 60.0)]}, {"cpu_percent": "%"},
                                    pid=50, threads=[{"tid": 50, "name": "python", "user_s": 1.0, "system_s": 0.5}])
    imports = tmp_path / "imports.log"
    imports.write_text("import time: self [us] | cumulative | imported package\n"
                       "import time:     50000 |      70000 | slowmod\n"
                       "import time:     20000 |      20000 |   slowmod.part\n")
    res = analyze_paths([prof, series, str(imports)])
    overall = [(h.name, h.self_ms) for h in res.hotspots if h.thread is None]
    assert overall == [("work", 2410.0), ("slowmod", 50.0), ("slowmod.part", 20.0), ("idle", 10.0), ("main", 0.0)]
    assert [t.busy_ms for t in res.threads] == [2420.0] and res.threads[0].running_ms == 1500.0
