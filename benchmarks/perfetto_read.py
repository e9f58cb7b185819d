"""Perfetto reading speed and memory: the streaming reader against parsing the whole ``Trace``.

Three ways over the same file, each in its own process so peak memory is its own:

* ``whole``  — ``Trace.ParseFromString`` of the entire file (the baseline: what a naive reader
  does; it holds every packet at once);
* ``stream`` — our packet streamer + ``TracePacket.ParseFromString`` per packet (decode only);
* ``reader`` — the full reader (``nodes.perf.parsers.perfetto.parse``) producing PerfData.

Inputs: the three real captures in tests/data/perfetto and a ~50 MB trace made by
concatenating the warm-start capture 25 times (a concatenation of Trace messages is a valid
Trace), to show how memory behaves as files grow. Run:
``.venv/bin/python -m benchmarks.perfetto_read``
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "perfetto"
FILES = [
    "api32_startup_warm.perfetto-trace",
    "ms_android12_emulator_sched_cpusampling.pftrace",
    "chrome_fcp_lcp_navigations.pftrace",
]
REPEAT = 25


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: KiB


def _child(mode: str, path: str) -> dict:
    from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace, TracePacket

    from nodes.perf.parsers import perfetto
    from nodes.perf.parsers.perfetto_stream import StreamReport, iter_packets

    base = _rss_mb()
    size = os.path.getsize(path)
    t0 = time.perf_counter()
    if mode == "whole":
        with open(path, "rb") as f:
            trace = Trace()
            trace.ParseFromString(f.read())
        packets = len(trace.packet)
    elif mode == "stream":
        report = StreamReport()
        with open(path, "rb") as f:
            for raw in iter_packets(f, report):
                TracePacket().ParseFromString(raw)
        packets = report.packets
    else:
        data = perfetto.parse(path)
        packets = int(data.meta["perfetto.packets"])
    secs = time.perf_counter() - t0
    return {"packets": packets, "secs": secs, "mb": size / 1e6, "peak_mb": _rss_mb() - base}


def _run(mode: str, path: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.perfetto_read", "--child", mode, path],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / f"warm_x{REPEAT}.perfetto-trace"
        one = (DATA / FILES[0]).read_bytes()
        with open(big, "wb") as f:
            for _ in range(REPEAT):
                f.write(one)
        inputs = [(name, str(DATA / name)) for name in FILES] + [(big.name, str(big))]
        print(f"{'file':<48} {'mode':<7} {'packets/s':>10} {'MB/s':>7} {'peak MB':>8} {'time×':>6} {'mem×':>6}")
        for name, path in inputs:
            base = _run("whole", path)
            for mode in ("whole", "stream", "reader"):
                r = base if mode == "whole" else _run(mode, path)
                print(
                    f"{name:<48} {mode:<7} {r['packets'] / r['secs']:>10.0f} {r['mb'] / r['secs']:>7.1f} "
                    f"{r['peak_mb']:>8.1f} {r['secs'] / base['secs']:>6.2f} "
                    f"{r['peak_mb'] / max(base['peak_mb'], 0.1):>6.2f}"
                )
        print("time× and mem× are ratios to 'whole' (Trace.ParseFromString) on the same file, same run.")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        print(json.dumps(_child(sys.argv[2], sys.argv[3])))
    else:
        main()
