"""The text readers: atrace/systrace, perf stat, -X importtime. Real captures, with the
expected numbers recounted here with plain regular expressions."""

from __future__ import annotations

import re
import subprocess
import sys
import zlib
from collections import Counter
from pathlib import Path

import pytest

from nodes.perf.errors import PerfDataError
from nodes.perf.metrics import compute
from nodes.perf.parsers import atrace, importtime, perfstat

DATA = Path(__file__).parent / "data" / "perf"
ATRACE = DATA / "android-atrace-systrace.txt"


# --- atrace ---------------------------------------------------------------------------------


def _marks() -> Counter:
    text = ATRACE.read_text()
    return Counter(m.group(1) for m in re.finditer(r"tracing_mark_write: ([BESFC])\b", text))


def test_atrace_real_capture():
    pd = atrace.parse(str(ATRACE))
    marks = _marks()
    assert marks["B"] == marks["E"] == 463
    assert pd.slice_count == marks["B"]
    names = Counter(pd.strings[n] for cols in pd.slices.values() for n in cols.name)
    assert names["Choreographer#doFrame"] == 15 and names["DrawFrame"] == 14  # as SOURCES.md says
    assert sum(len(v) for v in pd.counters.values()) == marks["C"]
    assert len(pd.counters["hwui_Texture"]) == 14
    async_spans = sum(len(c) for c in pd.async_slices.values())
    assert async_spans == marks["S"]  # 9 finished + 8 still open at the end
    assert any("8 async spans never ended" in w for w in pd.warnings)
    # slices land on the writing thread, in the process the payload names
    assert (18926, 18964) in pd.slices and pd.threads[(18926, 18926)].is_main
    ts = [float(m) for m in re.findall(r"\s(\d+\.\d+): ", ATRACE.read_text())]
    assert pd.duration_us == pytest.approx((max(ts) - min(ts)) * 1e6)


def test_atrace_nesting_is_per_writing_thread():
    pd = atrace.parse(str(ATRACE))
    cols = pd.slices[(18926, 18926)]
    frames = [(t, d) for t, d, n in zip(cols.ts, cols.dur, cols.name) if pd.strings[n] == "Choreographer#doFrame"]
    first = min(frames)
    # first doFrame: B at 683202.115809, its E at 683202.116883 (the second E of that thread)
    assert first[0] == pytest.approx(683202.115809e6) and first[1] == pytest.approx(1074.0, abs=0.01)


def test_atrace_html_and_compressed_wrappers(tmp_path):
    text = ATRACE.read_bytes()
    html = tmp_path / "trace.html"
    html.write_bytes(
        b"<!DOCTYPE html>\n<html><head><title>systrace</title></head><body>\n"
        b'<script class="trace-data" type="application/text">' + text + b"</script>\n"
        b'<script class="trace-data" type="application/text">{"traceEvents": []}</script>\n</body></html>'
    )
    from nodes.perf import formats

    assert formats.detect(str(html))[0] == "atrace"
    pd = atrace.parse(str(html))
    assert pd.slice_count == 463 and pd.meta["wrapper"] == "systrace html"
    z = tmp_path / "trace.ctrace"
    z.write_bytes(b"TRACE:\n" + zlib.compress(text))
    assert formats.detect(str(z))[0] == "atrace"
    assert atrace.parse(str(z)).slice_count == 463


def test_atrace_sched_states_and_newer_markers(tmp_path):
    lines = [
        "# tracer: nop",
        "          <idle>-0     [000] d..3  100.000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=app next_pid=42 next_prio=120",
        "             app-42    ( 42) [000] ...1  100.001000: tracing_mark_write: B|42|work",
        "             app-42    ( 42) [000] ...1  100.002000: tracing_mark_write: I|42|instant one",
        "             app-42    ( 42) [000] ...1  100.003000: tracing_mark_write: G|42|net|fetch|7",
        "             app-42    ( 42) [000] ...1  100.004000: tracing_mark_write: E|42",
        "             app-42    ( 42) [000] d..3  100.010000: sched_switch: prev_comm=app prev_pid=42 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120",
        "          <idle>-0     [000] d..3  100.012000: sched_wakeup: comm=app pid=42 prio=120 target_cpu=000",
        "          <idle>-0     [000] d..3  100.015000: sched_waking: comm=app pid=42 prio=120 target_cpu=000",
        "          <idle>-0     [000] d..3  100.020000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=app next_pid=42 next_prio=120",
        "             app-42    ( 42) [000] ...1  100.021000: tracing_mark_write: H|42|net|7",
        "             app-42    ( 42) [000] ...1  100.030000: tracing_mark_write: C|42|queue|5",
    ]
    p = tmp_path / "t.txt"
    p.write_text("\n".join(lines) + "\n")
    pd = atrace.parse(str(p))
    st = pd.thread_states[(42, 42)]
    assert st["running"] == pytest.approx(10_000 + 10_000)  # 100.000–100.010, then 100.020–100.030
    # runnable from sched_waking (100.015), not sched_wakeup (100.012): trace_processor's rule
    assert st["sleeping"] == pytest.approx(5_000) and st["runnable"] == pytest.approx(5_000)
    spans = {pd.strings[n]: d for cols in pd.async_slices.values() for d, n in zip(cols.dur, cols.name)}
    assert spans["fetch"] == pytest.approx(18_000)
    assert pd.threads[(42, 42)].name == "app" and pd.counters["queue"] == [(100.03e6, 5.0)]
    assert any(n == "instant one" for _, _, _, n in pd.instants)


@pytest.mark.parametrize("body", ["", "# tracer: nop\n#\n", "hello world\n", "x-1 [000] 1.0: foo: bar\n"])
def test_atrace_without_events_is_an_error(tmp_path, body):
    p = tmp_path / "t.txt"
    p.write_text(body)
    with pytest.raises(PerfDataError):
        atrace.parse(str(p))


# --- perf stat ------------------------------------------------------------------------------


def test_perf_stat_real_three_runs():
    pd = perfstat.parse(str(DATA / "perf-stat-two_sum.txt"))
    text = (DATA / "perf-stat-two_sum.txt").read_text()
    cmds = re.findall(r"Performance counter stats for '(.*?)':", text)
    assert cmds == ["./target/release/two_sum 300 l", "./target/release/two_sum 300 m", "./target/release/two_sum 300 s"]
    assert [(r.kind, r.what) for r in pd.facts.perf_stat] == [("command", c) for c in cmds]
    s = pd.stats
    assert s["task-clock [run 1]"] == 60243.87 and pd.stat_units["task-clock [run 1]"] == "ms"
    assert s["instructions [run 1]"] == 374_205_673_499
    assert s["insn per cycle [run 2]"] == 2.14
    assert s["branch-misses % [run 3]"] == 0.03
    assert s["backend bound % [run 2]"] == 43.1 and s["retiring % [run 1]"] == 73.8
    assert s["elapsed [run 3]"] == pytest.approx(8.55778354)
    assert "task-clock" not in s  # different commands: no mean across them
    assert pd.duration_us == pytest.approx(61.511974955e6)


def test_perf_stat_single_run_repeats_and_not_counted(tmp_path):
    text = """
 Performance counter stats for 'python x.py' (5 runs):

            512.30 msec task-clock                #    0.998 CPUs utilized            ( +-  1.20% )
     1,234,567,890      cycles                    #    2.410 GHz                      ( +-  0.50% )  (83.31%)
   <not counted>      instructions
   <not supported>      branches
                                                  #     24.6 %  tma_backend_bound

           0.51332 +- 0.00611 seconds time elapsed  ( +-  1.19% )
"""
    p = tmp_path / "stat.txt"
    p.write_text(text)
    pd = perfstat.parse(str(p))
    s = pd.stats
    assert s["task-clock"] == 512.3 and s["task-clock ±%"] == 1.2 and s["CPUs utilized"] == 0.998
    assert s["cycles"] == 1_234_567_890 and s["cycles GHz"] == 2.41 and s["cycles measured %"] == 83.31
    assert s["tma_backend_bound %"] == 24.6 and s["elapsed"] == pytest.approx(0.51332)
    assert any("instructions: <not counted>" in w for w in pd.warnings)


def test_perf_stat_same_command_runs_are_averaged(tmp_path):
    block = " Performance counter stats for 'ls':\n\n   {v} msec task-clock\n\n   {e} seconds time elapsed\n"
    p = tmp_path / "stat.txt"
    p.write_text(block.format(v="10.0", e="0.5") + "---\n" + block.format(v="20.0", e="1.5"))
    pd = perfstat.parse(str(p))
    assert pd.stats["task-clock"] == 15.0 and pd.stats["task-clock [run 2]"] == 20.0


@pytest.mark.parametrize(
    "header, meta",
    [
        ("process id '7708'", {"pid": "7708"}),
        ("process id '7708,7709'", {"pid": "7708,7709"}),
        ("thread id '12'", {"tid": "12"}),
        ("'system wide'", {"target": "system wide"}),
        ("'CPU(s) 0-3'", {"target": "CPU(s) 0-3"}),
        ("'python x.py --n 5' (5 runs)", {"command": "python x.py --n 5", "repeats": "5"}),
        ("'sh -c 'echo hi''", {"command": "sh -c 'echo hi'"}),
    ],
)
def test_perf_stat_header_names_what_was_measured(tmp_path, header, meta):
    p = tmp_path / "stat.txt"
    p.write_text(f"# started on Mon Nov 30 11:26:43 2026\n\n\n Performance counter stats for {header}:\n\n"
                 "           1424.83 msec task-clock                       #    0.636 CPUs utilized\n\n"
                 "       2.239594742 seconds time elapsed\n")
    pd = perfstat.parse(str(p))
    got = {k: v for k, v in pd.facts.shown().items() if k in ("command", "pid", "tid", "target", "repeats")}
    assert got == meta
    assert pd.stats["task-clock"] == 1424.83


def test_perf_stat_findings_name_the_attached_pid(tmp_path):
    block = (" Performance counter stats for process id '7708':\n\n"
             "     2,000,000      cycles\n     1,000,000      instructions   #    0.50  insn per cycle\n\n"
             "       1.5 seconds time elapsed\n")
    p = tmp_path / "stat.txt"
    p.write_text(block + "---\n" + block.replace("7708", "7709"))
    res = compute(perfstat.parse(str(p)))
    low = sorted(f.title for f in res.findings if f.title.startswith("Low IPC"))
    assert low == ["Low IPC 0.5 (pid 7708)", "Low IPC 0.5 (pid 7709)"]
    assert all(f.evidence.command is None for f in res.findings if f.title.startswith("Low IPC"))
    assert "task-clock" not in res.stats and "cycles" not in res.stats  # two pids: no mean across them


def test_perf_stat_without_counters_is_an_error(tmp_path):
    p = tmp_path / "x.txt"
    p.write_text("Performance counter stats for 'x':\n\nnothing here\n")
    with pytest.raises(PerfDataError):
        perfstat.parse(str(p))


# --- -X importtime --------------------------------------------------------------------------

_IT = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \| ( *)(\S+)")


def test_importtime_committed_log():
    log = DATA / "importtime-json-csv-argparse.log"
    rows = [(m.group(4), int(m.group(1)), int(m.group(2)), len(m.group(3)) // 2) for m in _IT.finditer(log.read_text())]
    pd = importtime.parse_with(str(log), search_path=sys.path)
    assert [(i.module, i.self_us, i.cumulative_us, i.depth) for i in pd.imports] == rows
    top = sum(c for _, _, c, d in rows if d == 0)
    assert pd.stats["import total"] == pytest.approx(top / 1000.0)
    mods = {i.module: i for i in pd.imports}
    assert {"json", "csv", "argparse"} <= set(mods)
    assert mods["json"].file and mods["json"].file.endswith("json/__init__.py")
    assert mods["json.decoder"].file.endswith("json/decoder.py")
    assert mods["posix"].file is None  # built in


def test_importtime_fresh_run_with_noise_and_two_runs(tmp_path):
    r = subprocess.run([sys.executable, "-X", "importtime", "-c", "import fractions, sys; print('hi', file=sys.stderr)"],
                       capture_output=True, text=True, check=True)
    log = tmp_path / "it.log"
    log.write_text("some program output\n" + r.stderr + "Traceback? no, just noise\n" + r.stderr)
    pd = importtime.parse(str(log))
    assert "fractions" in {i.module for i in pd.imports}
    assert pd.meta["import runs"] == "2" and "import total run 2" in pd.stats
    assert all(i.depth >= 0 for i in pd.imports)


def test_importtime_does_not_import_what_it_resolves(tmp_path):
    pkg = tmp_path / "sideeffect_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("raise SystemExit('imported!')\n")
    (pkg / "sub.py").write_text("")
    log = tmp_path / "it.log"
    log.write_text(
        "import time: self [us] | cumulative | imported package\n"
        "import time:        10 |         10 |   sideeffect_pkg.sub\n"
        "import time:        20 |         30 | sideeffect_pkg\n"
    )
    pd = importtime.parse_with(str(log), search_path=[str(tmp_path)])
    files = {i.module: i.file for i in pd.imports}
    assert files["sideeffect_pkg"].endswith("sideeffect_pkg/__init__.py")
    assert files["sideeffect_pkg.sub"].endswith("sideeffect_pkg/sub.py")
    assert "sideeffect_pkg" not in sys.modules


def test_importtime_without_lines_is_an_error(tmp_path):
    p = tmp_path / "it.log"
    p.write_text("import time: self [us] | cumulative | imported package\n")
    with pytest.raises(PerfDataError) as e:
        importtime.parse(str(p))
    assert "-X importtime" in str(e.value)


def test_importtime_uses_the_collectors_search_path_line(tmp_path):
    app = tmp_path / "myapp"
    app.mkdir()
    (app / "helpers.py").write_text("")
    log = tmp_path / "importtime.log"
    log.write_text(
        f'# search path: ["{app}"]\n'
        "import time: self [us] | cumulative | imported package\n"
        "import time:       500 |        500 | helpers\n"
    )
    pd = importtime.parse(str(log))
    assert pd.imports[0].file == str(app / "helpers.py")


def test_importtime_looks_modules_up_on_the_path_passed_in_only(tmp_path, monkeypatch):
    """Not on PerfScout's own sys.path or current directory (issue 26 item 9): a module of the
    current directory is not found unless the caller passes a path that holds it."""
    here = tmp_path / "cwd"
    here.mkdir()
    (here / "localmod.py").write_text("")
    log = tmp_path / "it.log"
    log.write_text("import time: self [us] | cumulative | imported package\n"
                   "import time:        10 |         10 | localmod\n"
                   "import time:        20 |         20 | json\n")
    monkeypatch.chdir(here)
    monkeypatch.syspath_prepend(str(here))
    files = {i.module: i.file for i in importtime.parse(str(log)).imports}
    assert files == {"localmod": None, "json": None}
    files = {i.module: i.file for i in importtime.parse_with(str(log), search_path=[str(here)]).imports}
    assert files["localmod"] == str(here / "localmod.py") and files["json"] is None
