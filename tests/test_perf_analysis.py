"""analyze_paths over a collection, the perfscout JSON files, and the `inspect` command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest

from app.analyze_cmd import run, to_json
from nodes.perf.analysis import analyze_file, analyze_paths
from nodes.perf.errors import PerfDataError
from nodes.perf.model import StartupRun
from nodes.perf.parsers import perfscout_json as pj

DATA = Path(__file__).parent / "data" / "perf"
ROOT = Path(__file__).resolve().parent.parent


def _collection(tmp_path) -> list[str]:
    series = pj.write_psutil_series(
        tmp_path / "psutil.json",
        {"cpu_percent": [(i * 0.1, 99.0) for i in range(50)], "rss_bytes": [(i * 0.1, 30e6 + i * 1e6) for i in range(50)]},
        {"cpu_percent": "%", "rss_bytes": "bytes"},
        pid=4242, command="python slowapp.py", interval_s=0.1,
        threads=[{"tid": 4242, "name": "MainThread", "user_s": 0.4, "system_s": 0.02}],
    )
    runs = pj.write_startup_runs(
        tmp_path / "startup.json",
        [StartupRun(index=0, total_ms=700.0, kind="cold", ready_by="exit", exit_code=0),
         {"index": 1, "total_ms": 450.0, "kind": "cold"}, {"index": 2, "total_ms": 480.0, "kind": "cold"}],
        target="slowapp.py", kind="cold",
        phases=[{"name": "imports", "start_ms": 0.0, "dur_ms": 120.0, "thread": "MainThread"}],
    )
    return [str(DATA / "pyspy-slowapp.speedscope.json"), series, str(DATA / "importtime-json-csv-argparse.log"), runs]


def test_schemas_round_trip(tmp_path):
    paths = _collection(tmp_path)
    doc = json.loads(Path(paths[1]).read_text())
    assert doc["perfscout"] == "psutil-series" and doc["series"]["cpu_percent"]["points"][1] == [0.1, 99.0]
    pd = __import__("nodes.perf.formats", fromlist=["load"]).load(paths[1])
    assert pd.format == "psutil_series" and len(pd.counters["rss_bytes"]) == 50
    assert pd.thread_states[(4242, 4242)]["running"] == pytest.approx(420_000)
    pd2 = __import__("nodes.perf.formats", fromlist=["load"]).load(paths[3])
    assert [r.total_ms for r in pd2.startup_runs] == [700.0, 450.0, 480.0] and pd2.meta["target"] == "slowapp.py"


@pytest.mark.parametrize(
    "doc, words",
    [
        ({"perfscout": "startup-runs", "runs": [{"index": 0}]}, "runs.0.total_ms"),
        ({"perfscout": "startup-runs", "runs": []}, "without runs"),
        ({"perfscout": "psutil-series", "series": {"x": {"points": [[0, "a"]]}}}, "series.x.points"),
        ({"perfscout": "psutil-series", "series": {}}, "without any points"),
        ({"perfscout": "mystery"}, None),
    ],
)
def test_schema_violations_are_one_line_errors(tmp_path, doc, words):
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(doc))
    with pytest.raises(PerfDataError) as e:
        analyze_file(str(p))
    assert "\n" not in str(e.value) and str(p) in str(e.value)
    if words:
        assert words in str(e.value)


def test_a_collection_merges_into_one_result(tmp_path):
    res = analyze_paths(_collection(tmp_path))
    assert res.format == "speedscope+psutil_series+importtime+startup_runs"
    kinds = {h.kind for h in res.hotspots}
    assert {"sample", "import"} <= kinds
    st = res.startup
    assert st.median_ms == 480.0 and st.first_ms == 700.0 and st.kind == "cold"
    assert st.phases[0].name == "imports" and st.imports and st.imports[0].module
    assert {c.name for c in res.counters} == {"cpu_percent", "rss_bytes"}
    assert "CPU bound" in {f.title for f in res.findings}
    sev = [f.severity for f in res.findings]
    assert sev == sorted(sev, key={"high": 0, "medium": 1, "low": 2, "info": 3}.get)


def test_one_bad_file_is_a_warning_all_bad_is_the_error(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    res = analyze_paths([str(DATA / "viztracer-multithread.json"), str(bad)])
    assert res.partial and any(str(bad) in w for w in res.warnings)
    with pytest.raises(PerfDataError) as e:
        analyze_paths([str(bad), str(tmp_path / "missing.json")])
    assert str(bad) in str(e.value)
    with pytest.raises(PerfDataError):
        analyze_paths([])


def test_analyzer_node_contract(tmp_path):
    """The graph node calls analyze_paths and stores model_dump(mode='json')."""
    res = analyze_paths([str(DATA / "chrome65-devtools-timeline.json")])
    dumped = res.model_dump(mode="json")
    json.dumps(dumped)  # JSON-able as is
    assert dumped["format"] == "trace_event" and dumped["frames"]["count"] == 13


def test_inspect_json_has_the_documented_keys():
    out, err = StringIO(), StringIO()
    assert run(str(DATA / "chrome-android-thread-time.json.gz"), as_json=True, out=out, err=err) == 0
    data = json.loads(out.getvalue())
    for k in ("format", "duration_ms", "hotspots", "threads", "frames", "startup"):
        assert k in data
    for k in ("name", "file", "line", "self_ms", "total_ms", "self_pct"):
        assert k in data["hotspots"][0]
    for k in ("count", "fps", "jank_ratio", "p50_ms", "p90_ms", "p99_ms"):
        assert k in data["frames"]
    assert "stacks" not in data and "durations_ms" not in data["frames"]


def test_inspect_summary_tables(tmp_path):
    out = StringIO()
    assert run(_collection(tmp_path), out=out) == 0
    text = out.getvalue()
    for words in ("Findings", "Hot spots", "Startup (cold)", "Imports", "Counters", "parse_records"):
        assert words in text
    out = StringIO()
    run(str(DATA / "perf-stat-two_sum.txt"), out=out)
    assert "[run 2]" in out.getvalue()  # data in brackets is not taken for markup


@pytest.mark.parametrize(
    "make, words",
    [
        (lambda d: d / "missing.json", "no such file"),
        (lambda d: (d / "empty.json.gz").write_bytes(b"") and None or d / "empty.json.gz", "empty gzip"),
        (lambda d: (d / "t.json").write_bytes(b'{"traceEvents": [{"ph":"X"') and None or d / "t.json", "t.json"),
        (lambda d: (d / "b.bin").write_bytes(os.urandom(2048)) and None or d / "b.bin", "b.bin"),
    ],
)
def test_cli_bad_input_is_one_line_and_exit_2(tmp_path, make, words):
    path = make(tmp_path)
    r = subprocess.run([sys.executable, "-m", "app.cli", "inspect", str(path)], cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0] and "Traceback" not in r.stderr


def test_cli_json_end_to_end():
    r = subprocess.run([sys.executable, "-m", "app.cli", "inspect", str(DATA / "android-atrace-systrace.txt"), "--json"],
                       cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["format"] == "atrace" and data["frames"]["count"] == 15


def test_to_json_keeps_the_model_shape():
    res = analyze_file(str(DATA / "viztracer-multithread.json"))
    data = to_json(res)
    assert data["hotspots"][0]["name"] == "time.sleep" and "stacks" not in data
