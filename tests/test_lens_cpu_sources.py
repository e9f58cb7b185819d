"""The CPU lens on data that measures CPU without a scheduler trace: ``dumpsys cpuinfo``, ``top``
(toybox and Android 7's), ``perf stat``, Chrome's thread time. Each expected value is read here
from the capture's own text (regexes / json), never from PerfScout's readers."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from app.api import PerfScout
from app.settings import Settings
from nodes.perf import formats

DATA = Path(__file__).parent / "data"


@pytest.fixture
def ps(tmp_path, perfscout_home):
    with PerfScout(Settings.from_env(), workspace=tmp_path) as p:
        yield p


def _ask(ps, tmp_path, rel: str, question: str):
    src = DATA / rel
    shutil.copy(src, tmp_path / src.name)
    r = ps.ask(f"{question} {src.name}")
    assert r.route == "analyze" and r.route_info["lens"] == "cpu", (r.route, r.route_info, r.answer)
    return src.read_text(), (r.answer or "").splitlines()[0]


def _p(v: float) -> str:
    return f"{v:.1f} %"


def test_the_dumps_are_read_by_the_registered_cpuinfo_reader():
    for name in ("top.txt", "cpuinfo.txt", "top-android7.txt"):
        assert formats.detect(str(DATA / "android" / name))[0] == "cpuinfo"


def test_dumpsys_cpuinfo_answers_with_its_shares_of_all_cores_over_its_window(ps, tmp_path):
    text, first = _ask(ps, tmp_path, "android/cpuinfo.txt", "哪个进程最耗 CPU")
    a, b = map(int, re.search(r"CPU usage from (\d+)ms to (\d+)ms ago", text).groups())
    procs = [(n, float(v)) for v, n in re.findall(r"^\s*\+?([\d.]+)% \d+/([^:]+):", text, re.M)][:3]
    total = float(re.search(r"^([\d.]+)% TOTAL", text, re.M).group(1))
    assert first == (f"CPU by process (dumpsys cpuinfo, % of all cores over the {(a - b) / 1000:.1f} s window): "
                     + ", ".join(f"{n} {_p(v)}" for n, v in procs) + f"; {_p(total)} of all cores busy in all.")


def test_toybox_top_answers_with_its_shares_of_one_core(ps, tmp_path):
    text, first = _ask(ps, tmp_path, "android/top.txt", "哪个进程最耗 CPU")
    cap, idle = map(int, re.search(r"^(\d+)%cpu.*?(\d+)%idle", text, re.M).groups())
    rows = [(line.split()[-1], float(line.split()[8])) for line in text.splitlines() if re.match(r"^\s*\d+ ", line)]
    rows.sort(key=lambda r: -r[1])
    assert first == ("CPU by process (top, % of one core in one snapshot): "
                     + ", ".join(f"{n} {_p(v)}" for n, v in rows[:3]) + f"; {_p(100 * (cap - idle) / cap)} of all cores busy in all.")


def test_android7_top_answers_with_its_cpu_column(ps, tmp_path):
    text, first = _ask(ps, tmp_path, "android/top-android7.txt", "哪个进程最耗 CPU")
    total = sum(map(int, re.search(r"User (\d+)%, System (\d+)%, IOW (\d+)%, IRQ (\d+)%", text).groups()))
    rows = [(line.split()[-1], float(re.search(r"(\d+)%", line).group(1))) for line in text.splitlines()
            if re.match(r"^\s*\d+\s+\d+\s+\d+%", line)]
    assert first == ("CPU by process (top, % of one core in one snapshot): "
                     + ", ".join(f"{n} {_p(v)}" for n, v in rows[:3]) + f"; {_p(total)} of all cores busy in all.")


def test_perf_stat_answers_with_task_clock_user_and_sys(ps, tmp_path):
    text, first = _ask(ps, tmp_path, "perf/perf-stat-two_sum.txt", "how much CPU time did it use")
    runs = []
    for i, block in enumerate(text.split("---"), 1):
        cmd = re.search(r"counter stats for '([^']+)'", block).group(1)
        clock = float(re.search(r"([\d,.]+) msec task-clock", block).group(1).replace(",", ""))
        util = float(re.search(r"#\s+([\d.]+) CPUs utilized", block).group(1))
        user = float(re.search(r"([\d.]+) seconds user", block).group(1))
        runs.append((clock, f"run {i}: {cmd}", util, user))
    runs.sort(key=lambda r: -r[0])
    clock, name, util, user = runs[0]
    assert first.startswith(f"CPU time (perf stat): {name} {clock / 1000:.1f} s task-clock ({util:.2f} CPUs utilized, "
                            f"user {user:.1f} s, sys ")
    assert "no CPU time" not in first


def _self_ms_by_name(events: list[dict]) -> dict[str, float]:
    """Self time of complete ('X') events per name: duration minus the children's, per thread."""
    out: dict[str, float] = {}
    by_thread: dict[tuple, list[dict]] = {}
    for e in events:
        if e.get("ph") == "X" and "dur" in e:
            by_thread.setdefault((e.get("pid"), e.get("tid")), []).append(e)
    for evs in by_thread.values():
        evs.sort(key=lambda e: (e["ts"], -e["dur"]))
        stack: list[list] = []  # [end, name, child time]
        def close(until: float) -> None:
            while stack and stack[-1][0] <= until:
                end, name, child, dur = stack.pop()
                out[name] = out.get(name, 0.0) + (dur - child) / 1000.0
                if stack:
                    stack[-1][2] += dur
        for e in evs:
            close(e["ts"])
            stack.append([e["ts"] + e["dur"], e["name"], 0.0, e["dur"]])
        close(float("inf"))
    return out


def test_a_cpu_question_on_a_tracing_profile_answers_with_its_wall_time_hot_spots(ps, tmp_path):
    import json

    text, first = _ask(ps, tmp_path, "perf/viztracer-multithread.json", "哪里最耗时")
    selfs = _self_ms_by_name(json.loads(text)["traceEvents"])
    name, ms = max(selfs.items(), key=lambda kv: kv[1])
    assert first.startswith(f"{_p(100 * ms / sum(selfs.values()))} of the traced wall time is in {name} by itself")
    assert "wall time, not CPU time" in first


def test_a_cpu_question_on_py_spy_says_what_its_samples_are(ps, tmp_path):
    import json
    from collections import Counter

    text, first = _ask(ps, tmp_path, "perf/pyspy-slowapp.speedscope.json", "哪里最耗时")
    doc = json.loads(text)
    frames = doc["shared"]["frames"]
    leaf = Counter()
    for prof in doc["profiles"]:
        for stack, w in zip(prof["samples"], prof["weights"]):
            leaf[frames[stack[-1]]["name"]] += w
    name, w = leaf.most_common(1)[0]
    assert first.startswith(f"{_p(100 * w / sum(leaf.values()))} of py-spy's samples are in {name} (")
    assert "--idle" in first


def test_chrome_thread_time_is_the_tdur_of_top_level_slices_per_process(ps, tmp_path):
    import gzip
    import json

    src = DATA / "perf" / "chrome-android-thread-time.json.gz"
    shutil.copy(src, tmp_path / src.name)
    doc = json.loads(gzip.decompress(src.read_bytes()))
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    names = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    per_thread: dict[tuple, list] = {}
    for e in events:
        if e.get("ph") == "X" and "tdur" in e and "dur" in e:
            per_thread.setdefault((e["pid"], e["tid"]), []).append((e["ts"], -e["dur"], e["tdur"]))
    per_proc: dict[int, float] = {}
    for (pid, _tid), evs in per_thread.items():
        end = float("-inf")
        for ts, neg_dur, tdur in sorted(evs):
            if ts >= end:  # top level: inside no earlier slice of the thread
                per_proc[pid] = per_proc.get(pid, 0.0) + tdur
                end = ts - neg_dur
    top = sorted(per_proc.items(), key=lambda kv: -kv[1])[:2]
    r = ps.ask(f"哪个进程最耗 CPU {src.name}")
    first = (r.answer or "").splitlines()[0]
    from nodes.perf.units import dur

    assert first.startswith("CPU time by process (Chrome thread time, tdur of top-level slices): "
                            + ", ".join(f"{names.get(pid, f'pid {pid}')} {dur(us / 1000)}" for pid, us in top))


def test_which_process_on_a_multi_process_profile_is_answered_per_process(ps, tmp_path):
    import json

    src = DATA / "speedscope" / "pyspy-subprocesses.speedscope.json"
    shutil.copy(src, tmp_path / src.name)
    doc = json.loads(src.read_text())
    per_pid: dict[int, float] = {}
    for prof in doc["profiles"]:
        pid = int(re.match(r"Process (\d+) ", prof["name"]).group(1))
        # py-spy --subprocesses roots each stack in a "process N:…" frame; a sample with only that
        # frame stands for no code (the reader counts it apart, meta "empty samples")
        names = [f["name"] for f in doc["shared"]["frames"]]
        per_pid[pid] = per_pid.get(pid, 0.0) + sum(
            w for s, w in zip(prof["samples"], prof["weights"]) if [i for i in s if not names[i].startswith("process ")])
    total = sum(per_pid.values())
    r = ps.ask(f"which process uses the most CPU {src.name}")
    first = (r.answer or "").splitlines()[0]
    from nodes.perf.units import dur

    order = sorted(per_pid.items(), key=lambda kv: -kv[1])
    assert first.startswith("Sampled time by process: ")
    shown = re.findall(r"\(pid (\d+)\) ([\d.]+ ms) \(([\d.]+ %) of the samples\)", first)
    assert shown == [(str(pid), dur(w * 1000), _p(100 * w / total)) for pid, w in order]
