"""The decision log under concurrent writers and torn tails."""

from __future__ import annotations

import multiprocessing as mp

import orjson

from app.decision_log import DecisionLog


def _writer(path: str, who: int, n: int) -> None:
    log = DecisionLog(path)
    for i in range(n):
        log.append({"who": who, "i": i, "reason": "x" * (100 + 37 * who)})


def test_concurrent_appends_from_processes_never_interleave(tmp_path):
    path = tmp_path / "d.jsonl"
    procs = [mp.get_context("spawn").Process(target=_writer, args=(str(path), w, 200)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    lines = path.read_bytes().splitlines()
    assert len(lines) == 800
    recs = [orjson.loads(line) for line in lines]  # every line is one whole record
    for w in range(4):
        assert [r["i"] for r in recs if r["who"] == w] == list(range(200))


def test_torn_tail_is_repaired_on_next_append_and_never_read(tmp_path):
    path = tmp_path / "d.jsonl"
    log = DecisionLog(path)
    log.append({"n": 1})
    with open(path, "ab") as f:
        f.write(b'{"n": 2, "reason": "crash mid-wri')  # a torn last line
    assert [r["n"] for r in log.records()] == [1]
    log.append({"n": 3})
    assert [r["n"] for r in log.records()] == [1, 3]
    assert path.read_bytes().count(b"\n") == 2


def test_corrupt_middle_line_is_skipped(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_bytes(b'{"n": 1}\nnot json\n[1,2]\n{"n": 2}\n')
    assert [r["n"] for r in DecisionLog(path).records()] == [1, 2]
