"""Two programs' launch times against each other: interleaved order, ratio and its interval.

The statistics are decided on a deterministic stand-in launcher (seeded times); the one test that
launches real programs checks only the order they ran in, never how long they took."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

from nodes.collect.ab_launches import interleaved, measure_ab, verdict
from nodes.collect.options import CollectOptions
from nodes.collect.target import parse_target
from nodes.compare.diff import compare_sides
from nodes.compare.sides import load_side


def test_the_order_is_a_b_a_b():
    assert interleaved(3) == ["a", "b", "a", "b", "a", "b"]


def _targets(tmp_path):
    for name in ("old.py", "new.py"):
        (tmp_path / name).write_text(
            "import sys\nwith open(sys.argv[1], 'a') as f:\n    f.write(sys.argv[2])\n")
    log = tmp_path / "order.txt"
    a = parse_target(f"{sys.executable} old.py {log} a", str(tmp_path))
    b = parse_target(f"{sys.executable} new.py {log} b", str(tmp_path))
    return a, b, log


def test_a_planted_ratio_is_found_with_an_interval_that_covers_it(tmp_path):
    a, b, _ = _targets(tmp_path)
    rng = np.random.default_rng(18)
    seen = []

    def fake(target, i):  # seconds: B is 1.3 × A, each with 3 % noise
        seen.append(target.display)
        base = 0.050 * (1.3 if target is b else 1.0)
        return base * float(rng.lognormal(0.0, 0.03))

    collected = measure_ab(a, b, tmp_path / "run", CollectOptions(), runs=12, launch=fake)
    s = collected["summary"]
    assert seen == [t.display for t in [a, b] * 12]
    assert s["order"] == interleaved(12) and len(s["a_ms"]) == len(s["b_ms"]) == 12
    assert s["ratio"] == pytest.approx(float(np.median(s["b_ms"]) / np.median(s["a_ms"])))
    assert s["ci_low"] < 1.3 < s["ci_high"] and s["significant"] is True
    assert s["sentence"].startswith(f"{a.display} starts 1.") and "interleaved" in s["sentence"]
    # each side is a startup capture the analyzer reads and compare can compare
    cmp = compare_sides(load_side(collected["paths"]["a"]), load_side(collected["paths"]["b"]))
    row = {r.key: r for r in cmp.rows}["startup.total_ms"]
    assert row.verdict == "worse" and row.a == s["a_ms"] and row.b == s["b_ms"]
    assert json.loads((tmp_path / "run" / "ab.json").read_text())["ratio"] == s["ratio"]


def test_the_same_program_twice_is_no_significant_difference():
    rng = np.random.default_rng(3)
    a = [50 * float(rng.lognormal(0, 0.03)) for _ in range(12)]
    b = [50 * float(rng.lognormal(0, 0.03)) for _ in range(12)]
    r = verdict("old.py", "new.py", a, b)
    assert r.significant is False and r.ci_low < 1.0 < r.ci_high
    assert r.sentence.startswith("no significant difference")
    faster = verdict("old.py", "new.py", [60.0, 61.0, 59.5, 60.5, 60.2], [40.0, 41.0, 39.8, 40.3, 40.6])
    assert faster.sentence.startswith("new.py starts 1.")
    zh = verdict("old.py", "new.py", [60.0, 61.0, 59.5, 60.5, 60.2], [40.0, 41.0, 39.8, 40.3, 40.6], "zh-Hans")
    assert zh.sentence.startswith("new.py 启动比 old.py 快 1.") and "交替启动" in zh.sentence
    assert zh.ratio == faster.ratio and zh.ci_low == faster.ci_low


def test_real_launches_run_interleaved(tmp_path):
    a, b, log = _targets(tmp_path)
    collected = measure_ab(a, b, tmp_path / "run", CollectOptions(timeout_s=20), runs=3)
    assert log.read_text() == "ababab"
    assert len(collected["summary"]["a_ms"]) == 3 and all(v > 0 for v in collected["summary"]["b_ms"])
