"""``perfscout report``: re-render from a report, an analysis JSON, a trace, or a thread's last run."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from app.report_cmd import run_report
from nodes.report.render import write_report
from nodes.report.view import ReportInputError, build_view

from tests.helpers.report_sample import SAMPLE_ATTRIBUTION, sample_analysis


@pytest.fixture()
def earlier(tmp_path) -> Path:
    """A report as a graph run leaves it: <runs>/<thread>/<time>/report.*"""
    d = tmp_path / "runs" / "th-1" / "20250101T000000.000Z"
    d.mkdir(parents=True)
    v = build_view(sample_analysis(), attribution=SAMPLE_ATTRIBUTION, route="analyze", question="解读一下 trace.json",
                   collected={"kind": "file", "paths": {"data": "trace.json"}, "source": "trace.json"})
    write_report(v, d)
    return d


def _snapshot(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in d.iterdir()}


@pytest.mark.parametrize("which", ["folder", "report.json", "thread"])
def test_rerender_keeps_numbers_and_attribution_in_a_new_folder(tmp_path, earlier, which):
    before = _snapshot(earlier)
    target = {"folder": str(earlier), "report.json": str(earlier / "report.json"), "thread": "th-1"}[which]
    out = run_report(target, runs_dir=str(tmp_path / "runs"))
    assert Path(out["dir"]) != earlier and _snapshot(earlier) == before
    new = json.loads(Path(out["json"]).read_text())
    old = json.loads((earlier / "report.json").read_text())
    for key in ("analysis", "attribution", "route", "request", "verdict", "summary"):
        assert new[key] == old[key], key
    expect_parent = tmp_path / "runs" / ("th-1" if which == "thread" else "local")
    assert Path(out["dir"]).parent == expect_parent


def test_analysis_json_renders(tmp_path):
    f = tmp_path / "analysis.json"
    f.write_text(json.dumps(sample_analysis().model_dump(mode="json")))
    out = run_report(str(f), runs_dir=str(tmp_path / "runs"), out=str(tmp_path / "o"))
    assert out["dir"] == str(tmp_path / "o")
    md = Path(out["markdown"]).read_text()
    assert "## Frames" in md and "analysis.json" in md  # the file it came from is in Sources


@pytest.mark.parametrize(
    "make, msg",
    [
        (lambda d: str(d / "missing"), "no such file, and no report of a thread"),
        (lambda d: (d / "empty").mkdir() or str(d / "empty"), "no report.json in it"),
        (lambda d: (d / "r.json").write_text('{"schema": "perfscout.report/1"}') and str(d / "r.json"), "without its analysis"),
        (lambda d: (d / "a.json").write_text('{"format": "x", "source": "s", "frames": {"count": "many"}}') and str(d / "a.json"),
         "analysis is not a valid result: frames.count"),
    ],
)
def test_bad_targets_are_one_line_errors(tmp_path, make, msg):
    with pytest.raises(ReportInputError) as e:
        run_report(make(tmp_path), runs_dir=str(tmp_path / "runs"))
    assert msg in str(e.value) and "\n" not in str(e.value)


def _cli(monkeypatch, capsys, *args: str) -> tuple[int, str, str]:
    from app import cli

    monkeypatch.setattr(sys, "argv", ["perfscout", "report", *args])
    with pytest.raises(SystemExit) as e:
        cli.main()
    cap = capsys.readouterr()
    return e.value.code, cap.out, cap.err


def test_cli_prints_the_paths_and_exits_0(tmp_path, earlier, monkeypatch, capsys):
    monkeypatch.setenv("PERFSCOUT_HOME", str(tmp_path))
    code, out, err = _cli(monkeypatch, capsys, "th-1", "--json")
    assert code == 0, err
    paths = json.loads(out)
    assert Path(paths["html"]).is_file() and Path(paths["html"]).parent.parent == tmp_path / "runs" / "th-1"


def test_cli_bad_input_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PERFSCOUT_HOME", str(tmp_path))
    code, out, err = _cli(monkeypatch, capsys, str(tmp_path / "nope.json"))
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("perfscout: ") and "Traceback" not in err


def test_a_trace_file_is_analysed_then_reported(tmp_path):
    trace = Path(__file__).parent / "data" / "report" / "chrome116-devtools-trace.json"
    out = run_report(str(trace), runs_dir=str(tmp_path / "runs"))
    md = Path(out["markdown"]).read_text()
    assert "chrome116-devtools-trace.json" in md and "## Sources" in md
