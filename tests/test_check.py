"""``perfscout check``: where budgets are found, what they say, exit codes, JUnit XML (parsed back),
regressions against a baseline, folders checked trace by trace, and the commands of docs/ci.md."""

from __future__ import annotations

import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import compare_gen as gen
from app import check_cmd
from nodes.compare.budgets import BudgetError, load_budgets, parse_budgets

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).parent / "data"
CHROME116 = DATA / "report" / "chrome116-devtools-trace.json"
GFXINFO = DATA / "android" / "gfxinfo-reactnativefeed-flashlight.txt"
PYSPY = DATA / "perf" / "pyspy-slowapp.speedscope.json"


def _run(target, **kw):
    out = io.StringIO()
    code = check_cmd.run(str(target), stdout=out, **kw)
    return code, out.getvalue()


def _toml(path: Path, text: str) -> str:
    path.write_text(text)
    return str(path)


# --- finding and reading budgets --------------------------------------------------------------


def test_quoted_and_nested_keys_are_the_same_budgets(tmp_path):
    quoted = parse_budgets({"frames.fps": {"min": 55}, "frames.jank_ratio": 0.1,
                            'hotspots."json.decoder.raw_decode".self_pct': 20, "regression.max_pct": 5})
    nested = parse_budgets({"frames": {"fps": {"min": 55}, "jank_ratio": 0.1},
                            "hotspots": {"json.decoder.raw_decode": {"self_pct": 20}}, "regression": {"max_pct": 5}})
    assert quoted.items == nested.items and quoted.regression_max_pct == nested.regression_max_pct == 5
    by = {b.key: b for b in quoted.items}
    assert by["frames.fps"].min == 55 and by["frames.fps"].max is None
    assert by["frames.jank_ratio"].max == 0.1
    assert 'hotspots."json.decoder.raw_decode".self_pct' in by


def test_budget_file_resolution_order(tmp_path):
    own = tmp_path / "perfscout.toml"
    py = tmp_path / "pyproject.toml"
    _toml(py, '[project]\nname = "x"\n[tool.perfscout.budgets]\n"frames.fps" = { min = 30 }\n')
    assert load_budgets(None, str(tmp_path)).source.endswith("pyproject.toml [tool.perfscout.budgets]")
    _toml(own, '[budgets]\n"frames.fps" = { min = 60 }\n')
    b = load_budgets(None, str(tmp_path))
    assert b.source.endswith("perfscout.toml [budgets]") and b.items[0].min == 60
    other = _toml(tmp_path / "ci-budgets.toml", '[budgets]\n"frames.jank_ratio" = 0.2\n')
    assert load_budgets(other, str(tmp_path)).items[0].key == "frames.jank_ratio"
    assert load_budgets(str(py), str(tmp_path)).items[0].min == 30  # a pyproject.toml given with --budgets
    with pytest.raises(BudgetError, match="no budgets"):
        load_budgets(None, str(tmp_path / "empty-dir-that-does-not-exist"))


@pytest.mark.parametrize("text,needle", [
    ('[budgets]\n"frames.jank_ratoi" = 0.05\n', "frames.jank_ratoi"),
    ('[budgets]\n"frames.fps" = "fast"\n', "must be a number"),
    ('[budgets]\n"frames.fps" = { min = 60, max = 30 }\n', "above max"),
    ('[budgets]\n"frames.fps" = { minimum = 60 }\n', "only min and max"),
    ('[budgets]\n"regression.max" = 5\n', "regression.max"),
    ('[budgets\n', "not valid TOML"),
    ('[other]\nx = 1\n', "no [budgets] table"),
])
def test_bad_budgets_are_bad_usage_naming_the_problem(tmp_path, text, needle):
    f = _toml(tmp_path / "b.toml", text)
    with pytest.raises(check_cmd.CheckError) as e:
        _run(CHROME116, budgets_file=f)
    assert needle in str(e.value) and "\n" not in str(e.value)


# --- absolute budgets on a real capture -----------------------------------------------------------


def _frames_of(path):
    from nodes.compare.sides import load_side

    return load_side(str(path)).runs[0].analysis["frames"]


def test_pass_fail_missing_and_the_junit_file_parsed_back(tmp_path):
    fr = _frames_of(CHROME116)
    f = _toml(tmp_path / "b.toml", "[budgets]\n"
              f'"frames.fps" = {{ min = {fr["fps"] - 1} }}\n'         # holds
              f'"frames.p90_ms" = {fr["p90_ms"] / 2}\n'                # fails
              '"startup.ttid_ms" = 500\n')                             # the Chrome trace has no TTID: missing
    junit = tmp_path / "out" / "junit.xml"
    code, text = _run(CHROME116, budgets_file=f, junit_path=str(junit))
    assert code == 1
    assert re.search(r"PASS\s+frames\.fps", text) and re.search(r"FAIL\s+frames\.p90_ms", text)
    assert re.search(r"MISSING\s+startup\.ttid_ms", text)
    suite = ET.parse(junit).getroot().find("testsuite")
    cases = suite.findall("testcase")
    assert [c.get("name").split(" ")[0] for c in cases] == ["frames.fps", "frames.p90_ms", "startup.ttid_ms"]
    assert suite.get("tests") == "3" and suite.get("failures") == "2"
    assert cases[0].find("failure") is None
    assert cases[1].find("failure").get("type") == "budget" and str(fr["p90_ms"])[:4] in cases[1].find("failure").get("message")
    assert cases[2].find("failure").get("type") == "missing"

    code, _ = _run(CHROME116, budgets_file=_toml(tmp_path / "c.toml", '[budgets]\n"startup.ttid_ms" = 500\n'),
                   junit_path=str(junit), allow_missing=True)
    assert code == 0
    case = ET.parse(junit).getroot().find("testsuite").find("testcase")
    assert case.find("skipped") is not None and case.find("failure") is None


def test_startup_budgets_on_the_real_warm_start_use_its_ttid_and_ttfd(tmp_path):
    """REFERENCE.md: Macrobenchmark's TTID 154.63 ms and TTFD 659.64 ms for api32_startup_warm."""
    api32 = DATA / "perfetto" / "api32_startup_warm.perfetto-trace"
    f = _toml(tmp_path / "b.toml", '[budgets.startup]\nttid_ms = 156.2\nttfd_ms = 650\n'
              '[budgets.startup.warm]\nttid_ms = 156.2\n[budgets.startup.cold]\nttid_ms = 300\n')
    code, text = _run(api32, budgets_file=f, as_json=True)
    got = {r["key"]: r for r in json.loads(text)["results"]}
    assert code == 1
    assert got["startup.ttid_ms"]["status"] == "pass" and abs(got["startup.ttid_ms"]["value"] - 154.63) < 1.55
    assert got["startup.warm.ttid_ms"]["status"] == "pass"
    assert got["startup.ttfd_ms"]["status"] == "fail" and abs(got["startup.ttfd_ms"]["value"] - 659.64) < 6.6
    assert got["startup.cold.ttid_ms"]["status"] == "missing"  # a warm start has no cold launch


# --- regressions against a baseline, folders trace by trace -----------------------------------------


@pytest.fixture(scope="module")
def sides(tmp_path_factory):
    root = tmp_path_factory.mktemp("check")
    gen.trace_event_runs(root / "baseline", 6, seed=11)
    gen.trace_event_runs(root / "same", 6, seed=12)
    gen.trace_event_runs(root / "slower", 6, seed=13, parse_ms=36.0)
    gen.trace_event_runs(root / "one_slower", 1, seed=14, parse_ms=36.0)
    gen.trace_event_runs(root / "one_same", 1, seed=15)
    return root


REGRESSION = '[budgets]\n\'hotspots."parse_rows".self_ms\' = 1000\n"regression.max_pct" = 10\n'


def test_regression_fails_a_planted_slowdown_and_passes_noise(sides, tmp_path):
    f = _toml(tmp_path / "b.toml", REGRESSION)
    code, text = _run(sides / "slower", budgets_file=f, baseline=str(sides / "baseline"))
    assert code == 1 and re.search(r"FAIL\s+hotspots\.parse_rows\.self_ms not worse", text), text
    assert "p = " in text  # several runs on both sides: decided by the test
    code, text = _run(sides / "same", budgets_file=f, baseline=str(sides / "baseline"))
    assert code == 0, text


def test_with_one_run_on_a_side_the_delta_alone_decides(sides, tmp_path):
    f = _toml(tmp_path / "b.toml", REGRESSION)
    code, text = _run(sides / "one_slower", budgets_file=f, baseline=str(sides / "baseline"))
    assert code == 1 and "the delta alone decides" in text
    code, _ = _run(sides / "one_same", budgets_file=f, baseline=str(sides / "baseline"))
    assert code == 0


def test_a_regression_from_zero_fails_and_staying_at_zero_passes():
    from nodes.compare.budgets import check_regression

    b = parse_budgets({"frames.jank_ratio": 1.0, "regression.max_pct": 5})
    worse = check_regression({"frames.jank_ratio": [0.1]}, {"frames.jank_ratio": [0.0]}, b, "run")
    assert [r.status for r in worse] == ["fail"] and "from 0" in worse[0].message
    same = check_regression({"frames.jank_ratio": [0.0]}, {"frames.jank_ratio": [0.0]}, b, "run")
    assert [r.status for r in same] == ["pass"]


def test_regression_without_baseline_or_against_another_kind_is_bad_usage(sides, tmp_path):
    f = _toml(tmp_path / "b.toml", REGRESSION)
    with pytest.raises(check_cmd.CheckError, match="needs --baseline"):
        _run(sides / "same", budgets_file=f)
    g = _toml(tmp_path / "g.toml", '[budgets]\n"frames.jank_ratio" = 0.9\n"regression.max_pct" = 10\n')
    with pytest.raises(check_cmd.CheckError, match="mismatched kinds"):
        _run(GFXINFO, budgets_file=g, baseline=str(PYSPY))


def test_a_folder_is_checked_trace_by_trace_and_parallel_parsing_changes_nothing(sides, tmp_path, monkeypatch):
    f = _toml(tmp_path / "b.toml", '[budgets]\n"frames.jank_ratio" = 0.05\n\'hotspots."parse_rows".self_ms\' = 170\n')
    junit = tmp_path / "j.xml"
    code, text = _run(sides / "slower", budgets_file=f, junit_path=str(junit))
    cases = ET.parse(junit).getroot().find("testsuite").findall("testcase")
    assert len(cases) == 2 * 6
    assert {c.get("classname") for c in cases} == {f"perfscout.budgets.run{i:02d}.json" for i in range(6)}
    assert code == 1  # parse_rows takes 5 × 36 ms = 180 ms > 170 in the slower build
    parallel = [(c.get("name"), c.find("failure") is None) for c in cases]
    monkeypatch.setenv("PERFSCOUT_WORKERS", "1")
    _run(sides / "slower", budgets_file=f, junit_path=str(junit))
    serial = [(c.get("name"), c.find("failure") is None) for c in ET.parse(junit).getroot().find("testsuite")]
    assert serial == parallel


# --- the CLI and docs/ci.md -----------------------------------------------------------------------


def _cli(args, cwd, home):
    env = dict(os.environ, PERFSCOUT_HOME=str(home), PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "app.cli", *args], capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=300)


def test_cli_exit_codes_are_0_1_2_with_one_line_errors(tmp_path):
    fr = _frames_of(CHROME116)
    (tmp_path / "perfscout.toml").write_text(f'[budgets]\n"frames.fps" = {{ min = {fr["fps"] - 1} }}\n')
    assert _cli(["check", str(CHROME116)], tmp_path, tmp_path).returncode == 0
    (tmp_path / "perfscout.toml").write_text(f'[budgets]\n"frames.fps" = {{ min = {fr["fps"] + 1} }}\n')
    assert _cli(["check", str(CHROME116)], tmp_path, tmp_path).returncode == 1
    (tmp_path / "perfscout.toml").write_text('[budgets]\n"frames.fsp" = 1\n')
    p = _cli(["check", str(CHROME116)], tmp_path, tmp_path)
    assert p.returncode == 2 and "frames.fsp" in p.stderr and len(p.stderr.strip().splitlines()) == 1
    (tmp_path / "perfscout.toml").write_text('[budgets]\n"frames.fps" = 1\n')
    p = _cli(["check", str(tmp_path / "nope.pftrace")], tmp_path, tmp_path)
    assert p.returncode == 2 and "nope.pftrace" in p.stderr and "Traceback" not in p.stderr
    (tmp_path / "file").write_text("x")
    p = _cli(["check", str(CHROME116), "--junit", str(tmp_path / "file" / "j.xml")], tmp_path, tmp_path)
    assert p.returncode == 2 and "j.xml" in p.stderr and len(p.stderr.strip().splitlines()) == 1


def _doc_blocks(lang: str) -> list[str]:
    text = (ROOT / "docs" / "ci.md").read_text()
    return re.findall(rf"```{lang}\n(.*?)```", text, re.S)


def test_the_commands_of_docs_ci_md_run_as_documented(tmp_path):
    toml = _doc_blocks("toml")[0]
    (tmp_path / "perfscout.toml").write_text(toml)
    job = next(b for b in _doc_blocks("sh") if "perfscout check traces/" in b)  # the CI job's block
    commands = [ln for ln in job.splitlines() if ln.startswith("perfscout check")]
    assert len(commands) == 2
    gen.trace_event_runs(tmp_path / "baseline", 5, seed=21)
    gen.trace_event_runs(tmp_path / "traces", 5, seed=22)

    def job() -> list[int]:
        codes = []
        for cmd in commands:
            argv = shlex.split(cmd.split(">")[0])
            p = _cli(argv[1:], tmp_path, tmp_path)
            if ">" in cmd:
                (tmp_path / cmd.split(">")[1].strip()).write_text(p.stdout)
            codes.append(p.returncode)
        return codes

    assert job() == [0, 0]
    suite = ET.parse(tmp_path / "perf-junit.xml").getroot().find("testsuite")
    assert int(suite.get("tests")) == 5 * 4 + 4 and suite.get("failures") == "0"
    assert json.loads((tmp_path / "perf-check.json").read_text())["passed"] is True
    # the same job on a build with a slower parse_rows fails on the regression budget
    shutil.rmtree(tmp_path / "traces")
    gen.trace_event_runs(tmp_path / "traces", 5, seed=23, parse_ms=40.0)
    assert job() == [1, 1]
    failed = [c for c in ET.parse(tmp_path / "perf-junit.xml").getroot().iter("testcase") if c.find("failure") is not None]
    assert failed and all("parse_rows" in c.get("name") for c in failed)


def test_a_budget_is_printed_as_written_not_in_exponent_form():
    from nodes.compare.budgets import Budget

    assert Budget("power.measureBlock.energy_uws", max=1_000_000.0).describe() == "power.measureBlock.energy_uws ≤ 1,000,000"
    assert Budget("frames.p90_ms", max=16.7).describe() == "frames.p90_ms ≤ 16.7"
    assert Budget("frames.fps", min=55.0, max=120.5).describe() == "55 ≤ frames.fps ≤ 120.5"
    from nodes.compare.budgets import Budgets, check_run

    [r] = check_run("r", {"power.measureBlock.energy_uws": [1_197_946.0]},
                    Budgets(source="t", items=(Budget("power.measureBlock.energy_uws", max=1_000_000.0),)))
    assert r.message.endswith("= 1,197,946 > 1,000,000")  # the failing value's bound too


def test_a_missing_key_names_what_the_data_has_that_looks_like_it():
    """A typo in a window or process name is the usual cause of "no such metric": the line says
    which keys of the same metric the real warm start does have."""
    from nodes.compare.budgets import Budgets, check_run
    from nodes.compare.samples import extract
    from nodes.perf.analysis import analyze_file

    samples = extract(analyze_file(str(DATA / "perfetto" / "api32_startup_warm.perfetto-trace")).model_dump(mode="json"))
    assert "power.measureBlock.energy_uws" in samples and "cpu.system_server.running_ms" in samples
    budgets = parse_budgets({"power.measureBlok.energy_uws": 1, "cpu.system_servr.running_ms": 1,
                             "cpu.nosuchprocess.running_ms": 1})
    typo_window, typo_process, unknown = (r.message for r in check_run("r", samples, budgets))
    assert "did you mean power.measureBlock.energy_uws" in typo_window
    assert typo_process.endswith("did you mean cpu.system_server.running_ms?")
    cpu_keys = sorted(k for k in samples if k.startswith("cpu.") and k.endswith(".running_ms"))
    assert unknown.startswith("cpu.nosuchprocess.running_ms: the data has no such metric; it has " + cpu_keys[0])
