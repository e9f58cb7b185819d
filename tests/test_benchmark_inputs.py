"""The benchmarks' generated inputs are what they claim (benchmarks/_perfetto_concat.py): copies
of a real Perfetto capture shifted so they do not collide, read back as k times the capture."""

from __future__ import annotations

from pathlib import Path

from benchmarks._perfetto_concat import concat
from nodes.perf.parsers import perfetto

WARM = Path(__file__).parent / "data" / "perfetto" / "api32_startup_warm.perfetto-trace"


def test_shifted_copies_do_not_collide(tmp_path):
    one = perfetto.parse(str(WARM))
    out = tmp_path / "x3.perfetto-trace"
    made = concat(WARM, out, (2 * WARM.stat().st_size + 1) / 1e6)  # two copies and a bit: three
    assert made["copies"] == 3
    assert out.read_bytes()[: WARM.stat().st_size] == WARM.read_bytes()  # copy 0 is the capture
    three = perfetto.parse(str(out))
    assert three.slice_count == 3 * one.slice_count
    assert len(three.processes) == 3 * len(one.processes)  # pids shifted: no process merged
    assert len(three.threads) == 3 * len(one.threads)
    assert len(three.frames) == 3 * len(one.frames)
    # one after the other in time, a span plus a 1 s gap apart
    assert three.duration_us >= 3 * one.duration_us
    assert three.duration_us < 3 * (one.duration_us + made["span_ns"] / 1000)
