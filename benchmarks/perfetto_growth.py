"""Perfetto traces from 2 MB to 200 MB: read and analyse time and memory as the file grows.

Inputs: the real warm-start capture (tests/data/perfetto/api32_startup_warm.perfetto-trace,
2.0 MB) and copies of it concatenated with timestamps, pids, track uuids and packet sequences
shifted so the copies do not collide (benchmarks/_perfetto_concat.py). Each size is read
(``nodes.perf.parsers.perfetto.parse``) and analysed (``nodes.perf.analysis.analyze_file``:
read + every metric family) in a fresh subprocess that reports wall and CPU seconds and its
peak RSS (``VmHWM``) and growth over its RSS before the read. Run:
``python -m benchmarks.perfetto_growth [--sizes 2,20,50,100,200]``; results in
``benchmarks/results/perfetto_growth.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "tests" / "data" / "perfetto" / "api32_startup_warm.perfetto-trace"


def _rss_kb(field: str = "VmRSS") -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def _child(which: str, path: str) -> None:
    from nodes.perf.analysis import analyze_file
    from nodes.perf.parsers import perfetto

    before = _rss_kb()
    t0, c0 = time.perf_counter(), time.process_time()
    if which == "read":
        pd = perfetto.parse(path)
        n = pd.slice_count
    else:
        n = len(analyze_file(path).hotspots)
    out = {"seconds": time.perf_counter() - t0, "cpu_seconds": time.process_time() - c0,
           "peak_rss_mb": _rss_kb("VmHWM") / 1024, "growth_mb": (_rss_kb("VmHWM") - before) / 1024, "n": n}
    print(json.dumps(out))


def _measure(which: str, path: str) -> dict:
    p = subprocess.run([sys.executable, "-m", "benchmarks.perfetto_growth", "--child", which, path],
                       cwd=ROOT, capture_output=True, text=True, check=True)
    return json.loads(p.stdout.strip().splitlines()[-1])


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.perfetto_growth")
    ap.add_argument("--sizes", default="2,20,50,100,200", help="sizes in MB (2 = the capture itself)")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "perfetto_growth.json"))
    args = ap.parse_args(argv)
    if args.child:
        _child(*args.child)
        return 0
    sys.path.insert(0, str(ROOT))
    from benchmarks._perfetto_concat import concat

    rows = []
    print(f"{'size MB':>8} {'copies':>6} {'read s':>7} {'read CPU s':>10} {'MB/s':>6} {'read peak MB':>12} "
          f"{'read growth MB':>14} {'analyze s':>9} {'analyze peak MB':>15}")
    with tempfile.TemporaryDirectory(prefix="perfetto_growth_") as tmp:
        for mb in [float(x) for x in args.sizes.split(",") if x]:
            if mb <= SOURCE.stat().st_size / 1e6 + 0.01:
                path, made = str(SOURCE), {"copies": 1}
            else:
                path = os.path.join(tmp, f"warm_{mb:g}mb.perfetto-trace")
                made = concat(SOURCE, path, mb)
            size = os.path.getsize(path) / 1e6
            r, a = _measure("read", path), _measure("analyze", path)
            rows.append({"size_mb": size, "copies": made["copies"], "read": r, "analyze": a})
            print(f"{size:8.1f} {made['copies']:6d} {r['seconds']:7.2f} {r['cpu_seconds']:10.2f} "
                  f"{size / r['cpu_seconds']:6.1f} {r['peak_rss_mb']:12.0f} {r['growth_mb']:14.0f} "
                  f"{a['seconds']:9.2f} {a['peak_rss_mb']:15.0f}", flush=True)
            if path != str(SOURCE):
                os.unlink(path)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"python": sys.version.split()[0], "cpus": os.cpu_count(),
                                          "source": SOURCE.name, "rows": rows}, indent=2))
    print(f"written: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
