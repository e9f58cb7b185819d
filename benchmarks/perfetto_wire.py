"""The C wire walk against its numpy fallback: ``perfscout analyze --json FILE`` with the
extension (nodes/perf/parsers/_wirec.c) and with ``PERFSCOUT_PURE_PYTHON_WIRE=1``, runs
interleaved (C, numpy, C, numpy, …) so both see the same load on a shared machine; least CPU
(user + sys, ``os.wait4``) of each, wall time and peak RSS beside, ``uptime`` before and after.

``python -m benchmarks.perfetto_wire [--runs 3] [FILE]`` (default: the 2 MB warm-start capture;
the 100 MB file of ``benchmarks.perfetto_growth --keep`` shows the difference better).
Prints JSON; ``--out`` also writes it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

from benchmarks.perfetto_growth import SOURCE, _load, _run


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.perfetto_wire")
    ap.add_argument("file", nargs="?", default=str(SOURCE))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    from nodes.perf.parsers import perfetto_wire

    if perfetto_wire.NATIVE is None:
        print("the C extension is not built (or PERFSCOUT_PURE_PYTHON_WIRE=1): nothing to compare", file=sys.stderr)
        return 1
    perfscout = shutil.which("perfscout", path=str(Path(sys.executable).parent)) or "perfscout"
    cmd = [perfscout, "analyze", "--json", args.file]
    runs: dict[str, list[dict]] = {"c": [], "numpy": []}
    load_before = _load()
    saved = os.environ.get("PERFSCOUT_PURE_PYTHON_WIRE")
    try:
        for _ in range(args.runs):
            for label, value in (("c", "0"), ("numpy", "1")):
                os.environ["PERFSCOUT_PURE_PYTHON_WIRE"] = value
                runs[label].append(_run(cmd))
    finally:
        if saved is None:
            os.environ.pop("PERFSCOUT_PURE_PYTHON_WIRE", None)
        else:
            os.environ["PERFSCOUT_PURE_PYTHON_WIRE"] = saved
    best = {k: min(v, key=lambda r: r["cpu_s"]) for k, v in runs.items()}
    result = {
        "command": "perfscout analyze --json FILE", "file": args.file, "runs": args.runs,
        "load_before": load_before, "load_after": _load(),
        **{k: {"cpu_s": round(b["cpu_s"], 2), "wall_s": round(b["wall_s"], 2), "peak_rss_mb": round(b["peak_rss_mb"]),
               "cpu_s_all": [round(r["cpu_s"], 2) for r in runs[k]]} for k, b in best.items()},
        "cpu_saved_s": round(best["numpy"]["cpu_s"] - best["c"]["cpu_s"], 2),
        "ratio_numpy_to_c": round(best["numpy"]["cpu_s"] / best["c"]["cpu_s"], 3),
    }
    text = json.dumps(result, indent=1)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
