"""The metrics after a Perfetto trace is read grow linearly with threads and launches.

A trace of ``k`` shifted copies of the warm-start capture (benchmarks/_perfetto_concat.py) has
``k`` times its threads, processes, launches, measureBlocks and slices. A metric that is
quadratic in threads × launches (as the CPU sections were: every thread walked for every
launch) shows as a CPU cost per copy that grows with ``k``; a linear one keeps it flat. For
each ``k``: the file is read once (``nodes.perf.formats.load``), then ``metrics.compute`` on a
fresh copy of that PerfData, least CPU of ``--runs``, and the JSON the command prints
(app/analyze_cmd.py ``to_json``). Beside it, same run: the read's CPU per copy (the decode
side; benchmarks/perfetto_growth.py measures the whole command against its baseline).

Run: ``python -m benchmarks.metrics_growth [--copies 1,4,16,32] [--runs 3]``; results in
``benchmarks/results/metrics_growth.json``. The machine is shared: ``uptime`` is recorded.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "tests" / "data" / "perfetto" / "api32_startup_warm.perfetto-trace"


def _load() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def measure(path: str, runs: int) -> dict:
    from app.analyze_cmd import to_json
    from nodes.perf import metrics
    from nodes.perf.formats import load

    t = time.process_time()
    pd = load(path)
    read_s = time.process_time() - t
    frozen = pickle.dumps(pd, protocol=5)
    best = None
    for _ in range(runs):
        fresh = pickle.loads(frozen)
        t = time.process_time()
        res = metrics.compute(fresh)
        json.dumps(to_json(res))
        cpu = time.process_time() - t
        best = cpu if best is None else min(best, cpu)
    return {"read_cpu_s": round(read_s, 3), "metrics_cpu_s": round(best, 3),
            "threads": len(pd.threads), "sched_threads": len(pd.sched_intervals),
            "slice_threads": len(pd.slices), "processes": len(pd.processes),
            "launches": len(res.startup.runs) if res.startup else 0,
            "cpu_sections": len(res.cpu.sections) if res.cpu else 0}


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.metrics_growth")
    ap.add_argument("--copies", default="1,4,16,32", help="copies of the warm start per file (1 first)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--dir", help="where the made traces go (default: a temporary folder; kept if given)")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "metrics_growth.json"))
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from benchmarks._perfetto_concat import concat

    tmp = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="metrics_growth_"))
    tmp.mkdir(parents=True, exist_ok=True)
    mb1 = SOURCE.stat().st_size / 1e6
    load_before = _load()
    print(load_before)
    print(f"{'copies':>6} {'MB':>6} {'threads':>8} {'launches':>8} {'sections':>8} {'metrics s':>9} "
          f"{'per copy ms':>11} {'vs 1st':>6} {'read s':>7} {'read/copy ms':>12}", flush=True)
    rows = []
    try:
        for k in [int(x) for x in args.copies.split(",") if x]:
            if k == 1:
                path = str(SOURCE)
            else:
                path = str(tmp / f"warm_x{k}.perfetto-trace")
                if not os.path.exists(path):
                    concat(SOURCE, path + ".part", k * mb1 - 0.01)
                    os.replace(path + ".part", path)
            row = {"asked_copies": k, "size_mb": round(os.path.getsize(path) / 1e6, 1), **measure(path, args.runs)}
            # copies in the file: a shifted copy re-encodes to a few bytes fewer, so a file made to a
            # size can hold one more than asked; counted by threads (the first row is one copy)
            row["copies"] = round(row["threads"] / rows[0]["threads"]) if rows else k
            k = row["copies"]
            row["metrics_ms_per_copy"] = round(1000 * row["metrics_cpu_s"] / k, 1)
            row["read_ms_per_copy"] = round(1000 * row["read_cpu_s"] / k, 1)
            row["per_copy_vs_first"] = round(row["metrics_ms_per_copy"] / (rows[0]["metrics_ms_per_copy"] if rows
                                                                            else row["metrics_ms_per_copy"]), 2)
            rows.append(row)
            print(f"{k:6d} {row['size_mb']:6.1f} {row['threads']:8d} {row['launches']:8d} {row['cpu_sections']:8d} "
                  f"{row['metrics_cpu_s']:9.2f} {row['metrics_ms_per_copy']:11.1f} {row['per_copy_vs_first']:6.2f} "
                  f"{row['read_cpu_s']:7.2f} {row['read_ms_per_copy']:12.1f}", flush=True)
    finally:
        if not args.dir:
            for p in tmp.glob("*"):
                p.unlink()
            tmp.rmdir()
    load_after = _load()
    print(load_after)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({
        "python": sys.version.split()[0], "cpus": os.cpu_count(), "source": SOURCE.name, "runs": args.runs,
        "measured": "metrics.compute + to_json on the read PerfData, least CPU of runs; the read once",
        "load_before": load_before, "load_after": load_after, "rows": rows}, indent=2) + "\n")
    print(f"written: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
