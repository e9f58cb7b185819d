"""Profilers' output: speedscope (py-spy sampled, evented) and cProfile pstats, on real output
of the tools (committed, and generated afresh here), checked against plain json / pstats."""

from __future__ import annotations

import cProfile
import json
import marshal
import pstats as std_pstats
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from nodes.perf.errors import PerfDataError
from nodes.perf.metrics import compute
from nodes.perf.parsers import pstats as pstats_reader
from nodes.perf.parsers import speedscope

DATA = Path(__file__).parent / "data" / "perf"
PYSPY = DATA / "pyspy-slowapp.speedscope.json"


# --- speedscope -----------------------------------------------------------------------------


def _independent(doc: dict):
    """Self (leaf) and total (once per stack) weight per function (name, file), in µs."""
    frames = doc["shared"]["frames"]
    self_w, total_w = defaultdict(float), defaultdict(float)
    grand = 0.0
    for prof in doc["profiles"]:
        mult = {"seconds": 1e6, "milliseconds": 1e3, "microseconds": 1.0}[prof["unit"]]
        for stack, w in zip(prof["samples"], prof["weights"]):
            if not stack:
                continue
            grand += w * mult
            keys = [(frames[i]["name"], frames[i].get("file")) for i in stack]
            self_w[keys[-1]] += w * mult
            for k in set(keys):
                total_w[k] += w * mult
    return self_w, total_w, grand


def test_pyspy_capture_against_plain_json():
    doc = json.loads(PYSPY.read_text())
    pd = speedscope.parse(str(PYSPY))
    assert pd.meta["producer"].startswith("py-spy")
    assert len(doc["profiles"]) == 2 and len(pd.threads) == 2
    tok = [t for t in pd.threads.values() if t.name == "Tokenizer"]
    assert tok and not tok[0].is_main
    assert sum(t.is_main is True for t in pd.threads.values()) == 1
    self_w, total_w, grand = _independent(doc)
    res = compute(pd)
    overall = {(h.name, h.file): h for h in res.hotspots if h.thread is None}
    assert sum(pd.stacks.values()) == pytest.approx(grand)
    for k, h in overall.items():
        assert h.self_ms == pytest.approx(self_w.get(k, 0.0) / 1000, abs=1e-3)
        assert h.total_ms == pytest.approx(total_w[k] / 1000, abs=1e-3)
        assert h.self_pct == pytest.approx(100 * self_w.get(k, 0.0) / grand, abs=0.01)
    top = max(self_w, key=self_w.get)
    assert res.hotspots[0].name == top[0] and res.hotspots[0].file == top[1] and res.hotspots[0].line
    mine = [h for h in res.hotspots if h.thread is None and h.file and h.file.endswith("slowapp.py")]
    assert {"parse_records", "worker", "main"} <= {h.name for h in mine}


def test_pyspy_live_capture(tmp_path):
    exe = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    out = tmp_path / "live.speedscope.json"
    r = subprocess.run([exe, "record", "-f", "speedscope", "-r", "200", "-o", str(out), "--",
                        sys.executable, str(DATA / "slowapp.py")], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and out.exists(), f"py-spy could not trace: {r.stderr.strip()[:200]}"
    pd = speedscope.parse(str(out))
    _, _, grand = _independent(json.loads(out.read_text()))
    assert sum(pd.stacks.values()) == pytest.approx(grand)
    names = {r.name for r in pd.frame_refs}
    assert "parse_records" in names or "tokenize" in names or "findall" in names


def _evented(events, frames=("a", "b", "c", "d"), unit="milliseconds", end=14):
    return {
        "$schema": "https://www.speedscope.app/file-format-schema.json",
        "shared": {"frames": [{"name": n, "file": f"/src/{n}.py", "line": i + 1} for i, n in enumerate(frames)]},
        "profiles": [{"type": "evented", "name": "main", "unit": unit, "startValue": 0, "endValue": end, "events": events}],
    }


def test_evented_profile_self_and_total(tmp_path):
    # speedscope's own "simple" example: a[b[c d c]] from 0 to 14
    ev = [("O", 0, 0), ("O", 0, 1), ("O", 0, 2), ("C", 2, 2), ("O", 2, 3), ("C", 6, 3), ("O", 6, 2),
          ("C", 9, 2), ("C", 14, 1), ("C", 14, 0)]
    p = tmp_path / "e.speedscope.json"
    p.write_text(json.dumps(_evented([{"type": t, "at": at, "frame": f} for t, at, f in ev])))
    res = compute(speedscope.parse(str(p)))
    hs = {h.name: h for h in res.hotspots if h.thread is None}
    assert (hs["b"].self_ms, hs["c"].self_ms, hs["d"].self_ms) == (5.0, 5.0, 4.0)
    assert hs["a"].self_ms == 0.0 and hs["a"].total_ms == 14.0 and hs["c"].total_ms == 5.0
    assert hs["d"].file == "/src/d.py" and hs["d"].line == 4
    assert hs["b"].self_pct == pytest.approx(100 * 5 / 14, abs=0.01)


def test_evented_profile_unclosed_and_mismatched(tmp_path):
    ev = [{"type": "O", "frame": 0, "at": 0}, {"type": "O", "frame": 1, "at": 1},
          {"type": "C", "frame": 0, "at": 5},            # closes b too
          {"type": "O", "frame": 2, "at": 6},            # never closed: ends at endValue
          {"type": "C", "frame": 3, "at": 7},            # not open: skipped
          {"type": "O", "frame": 9, "at": 8},            # no such frame: skipped
          {"type": "O", "frame": 1, "at": 2}]            # out of order: skipped
    p = tmp_path / "e.speedscope.json"
    p.write_text(json.dumps(_evented(ev, end=10)))
    pd = speedscope.parse(str(p))
    got = sorted((pd.strings[n], t, d) for cols in pd.slices.values() for t, d, n in zip(cols.ts, cols.dur, cols.name))
    assert got == [("a", 0.0, 5000.0), ("b", 1000.0, 4000.0), ("c", 6000.0, 4000.0)]
    assert pd.partial and pd.skipped_events == 3


@pytest.mark.parametrize(
    "doc",
    [
        {"$schema": "https://www.speedscope.app/file-format-schema.json"},
        {"$schema": "https://www.speedscope.app/file-format-schema.json", "shared": {"frames": []}, "profiles": []},
        {"$schema": "https://www.speedscope.app/file-format-schema.json", "shared": {"frames": [{"name": "x"}]},
         "profiles": [{"type": "sampled", "unit": "seconds", "samples": [[5]], "weights": [1]}]},
        [1, 2],
    ],
)
def test_bad_speedscope_is_an_error(tmp_path, doc):
    p = tmp_path / "s.json"
    p.write_text(json.dumps(doc))
    with pytest.raises(PerfDataError):
        speedscope.parse(str(p))


# --- pstats ---------------------------------------------------------------------------------


def _workload():
    def leaf(n):
        return sum(i * i for i in range(n))

    def middle(k):
        return [leaf(2000) for _ in range(k)]

    def rec(d):
        return leaf(500) if d == 0 else rec(d - 1) + leaf(100)

    middle(60)
    rec(30)


def test_pstats_generated_now_against_stdlib(tmp_path):
    prof = cProfile.Profile()
    prof.enable()
    _workload()
    prof.disable()
    out = tmp_path / "w.prof"
    prof.dump_stats(str(out))
    pd = pstats_reader.parse(str(out))
    ref = std_pstats.Stats(str(out))
    assert len(pd.calls) == len(ref.stats)
    rows = {(c.file, c.line, c.name): c for c in pd.calls}
    for (file, line, func), (cc, nc, tt, ct, _callers) in ref.stats.items():
        key = (None, None, func) if file == "~" or line == 0 else (file, line, func)
        c = rows[key]
        assert (c.calls, c.primitive_calls) == (nc, cc)
        assert c.self_us == pytest.approx(tt * 1e6) and c.total_us == pytest.approx(ct * 1e6)
    res = compute(pd)
    by_name = {h.name: h for h in res.hotspots}
    assert by_name["leaf"].file.endswith("test_perf_profiles.py") and by_name["leaf"].kind == "call"
    assert by_name["rec"].count == 31  # recursive: 31 calls, 1 primitive
    assert pd.end_us == pytest.approx(ref.total_tt * 1e6)


def test_pstats_committed_capture():
    pd = pstats_reader.parse(str(DATA / "slowapp.pstats"))
    ref = std_pstats.Stats(str(DATA / "slowapp.pstats"))
    assert len(pd.calls) == len(ref.stats)
    names = {c.name for c in pd.calls}
    assert {"parse_records", "fib", "main"} <= names  # (cProfile sees the main thread only)
    fib = next(c for c in pd.calls if c.name == "fib")
    assert fib.file.endswith("slowapp.py") and fib.line == 10 and fib.calls > fib.primitive_calls


@pytest.mark.parametrize(
    "payload",
    [
        b"",
        b"{0",  # dict, truncated
        marshal.dumps([1, 2, 3]),
        marshal.dumps({("a", 1, "f"): (1, 1, 0.1)}),          # wrong row shape
        marshal.dumps({("a", "x", "f"): (1, 1, 0.1, 0.2, {})}),  # wrong key types
        marshal.dumps({}),
        b"\xff\xfe\x00garbage",
    ],
)
def test_bad_pstats_is_an_error(tmp_path, payload):
    p = tmp_path / "x.prof"
    p.write_bytes(payload)
    with pytest.raises(PerfDataError):
        pstats_reader.parse(str(p))


def test_pstats_skips_malformed_rows_but_keeps_good_ones(tmp_path):
    data = {("a.py", 1, "good"): (1, 1, 0.5, 0.5, {}), ("b.py", 2, "bad"): (1, 1, "x", 0.1, {}),
            ("c.py", 3, "neg"): (1, 1, -1.0, 0.1, {})}
    p = tmp_path / "x.prof"
    p.write_bytes(marshal.dumps(data))
    pd = pstats_reader.parse(str(p))
    assert [c.name for c in pd.calls] == ["good"] and pd.partial and pd.skipped_events == 2
