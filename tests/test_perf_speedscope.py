"""speedscope reader: py-spy's ``--subprocesses`` root frames become process names, not code.

The capture in tests/data/speedscope is real py-spy output (see SOURCES.md there); expected
numbers come from the file through plain ``json``, not from the reader.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path

import pytest

from nodes.perf.metrics import compute
from nodes.perf.parsers import speedscope

DATA = Path(__file__).parent / "data" / "speedscope"
SUBPROC = DATA / "pyspy-subprocesses.speedscope.json"
SCHEMA = "https://www.speedscope.app/file-format-schema.json"
PROCESS = re.compile(r'process (\d+):"(.*)"')


def _plain(doc: dict):
    """Per profile pid: the command line of its own process frame; and self time (µs) per function
    counted over the stacks with the process frames left out."""
    frames = doc["shared"]["frames"]

    def is_proc(i: int) -> bool:
        return not frames[i].get("file") and PROCESS.fullmatch(frames[i]["name"]) is not None

    commands: dict[int, str] = {}
    self_w: dict[str, float] = defaultdict(float)
    grand = 0.0
    for prof in doc["profiles"]:
        pid = int(re.match(r"Process (\d+)", prof["name"]).group(1))
        for stack, w in zip(prof["samples"], prof["weights"]):
            procs = [PROCESS.fullmatch(frames[i]["name"]) for i in stack if is_proc(i)]
            own = [m for m in procs if int(m.group(1)) == pid]
            if own:
                commands[pid] = own[0].group(2)
            code = [i for i in stack if not is_proc(i)]
            if code:
                self_w[frames[code[-1]]["name"]] += w * 1e6
                grand += w * 1e6
    return commands, self_w, grand


def test_subprocess_frames_name_the_processes():
    doc = json.loads(SUBPROC.read_text())
    commands, self_w, grand = _plain(doc)
    assert len(commands) == 2  # parent and child, each with its own root frame
    pd = speedscope.parse(str(SUBPROC))
    assert set(pd.processes) == set(commands)
    for pid, cmd in commands.items():
        assert pd.meta[f"process {pid}"] == cmd
        # the short name keeps the program and script names, not their directories
        assert pd.processes[pid].startswith("python") and "parent_child.py" in pd.processes[pid]
        assert "/" not in pd.processes[pid]
    child = next(p for p, c in commands.items() if c.endswith(" child"))
    assert pd.processes[child].endswith("child")
    assert all(not r.name.startswith("process ") for r in pd.frame_refs)
    assert sum(pd.stacks.values()) == pytest.approx(grand)
    for (pid, tid), t in pd.threads.items():
        assert pid in commands and tid == pid and t.name == "main thread"


def test_subprocess_frames_are_neither_hot_spots_nor_stack_frames():
    doc = json.loads(SUBPROC.read_text())
    _, self_w, grand = _plain(doc)
    res = compute(speedscope.parse(str(SUBPROC)))
    names = {h.name for h in res.hotspots}
    assert not any(n.startswith("process ") for n in names)
    top = max(self_w, key=self_w.get)
    assert res.hotspots[0].name == top == "spin"
    overall = {h.name: h for h in res.hotspots if h.thread is None}
    assert overall["spin"].self_ms == pytest.approx(self_w["spin"] / 1000, abs=1e-3)
    # <module> is now the root of every stack: it holds the whole sampled time
    assert overall["<module>"].total_ms == pytest.approx(grand / 1000, abs=1e-3)
    assert res.stacks and all(s.frames[0].startswith("<module>") for s in res.stacks)
    labels = {s.thread for s in res.stacks}
    assert any("python parent_child.py child" in (lab or "") for lab in labels)


def _doc(frames: list[dict], profiles: list[dict]) -> dict:
    return {"$schema": SCHEMA, "shared": {"frames": frames}, "profiles": profiles}


def test_profile_without_pid_takes_the_frame_pid(tmp_path):
    frames = [{"name": 'process 42:"/usr/bin/python3 /srv/app/main.py --fast"', "file": "", "line": 0},
              {"name": "work", "file": "/srv/app/main.py", "line": 3}]
    p = tmp_path / "s.speedscope.json"
    p.write_text(json.dumps(_doc(frames, [{"type": "sampled", "name": "Thread 7", "unit": "seconds",
                                           "samples": [[0, 1], [0, 1], [0]], "weights": [0.01, 0.01, 0.01]}])))
    pd = speedscope.parse(str(p))
    assert pd.processes == {42: "python3 main.py --fast"}
    assert list(pd.threads) == [(42, 7)]
    assert pd.stacks == {((42, 7), (0,)): pytest.approx(20000.0)}
    assert pd.frame_refs[0].name == "work"
    assert pd.meta["empty samples 7"] == "1"  # the sample with only the process frame


def test_a_real_function_named_like_a_process_frame_stays(tmp_path):
    # only py-spy's pseudo-frame (no file, line 0) is stripped; a located frame is code
    frames = [{"name": 'process 1:"x"', "file": "/src/a.py", "line": 5},
              {"name": "leaf", "file": "/src/a.py", "line": 9}]
    p = tmp_path / "s.speedscope.json"
    p.write_text(json.dumps(_doc(frames, [{"type": "sampled", "name": "Thread 3", "unit": "milliseconds",
                                           "samples": [[0, 1]], "weights": [5]}])))
    pd = speedscope.parse(str(p))
    assert pd.processes == {}
    assert [r.name for r in pd.frame_refs] == ['process 1:"x"', "leaf"]


def test_long_command_line_is_cut_in_the_name_but_kept_in_meta(tmp_path):
    cmd = "/usr/bin/python3 " + " ".join(f"--opt{i}=/very/long/path/{i}" for i in range(40))
    frames = [{"name": f'process 5:"{cmd}"', "file": "", "line": 0}, {"name": "f", "file": "/a.py", "line": 1}]
    p = tmp_path / "s.speedscope.json"
    p.write_text(json.dumps(_doc(frames, [{"type": "sampled", "name": "Process 5 Thread 5 \"\"", "unit": "seconds",
                                           "samples": [[0, 1]], "weights": [1]}])))
    pd = speedscope.parse(str(p))
    assert len(pd.processes[5]) == speedscope.MAX_PROCESS_NAME and pd.processes[5].endswith("…")
    assert pd.meta["process 5"] == cmd
