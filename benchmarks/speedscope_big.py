"""``perfscout analyze --json`` on a 10 M-sample speedscope profile, beside a baseline, same run.

Input: the real py-spy profile tests/data/attrib/profiles/sortedcontainers.speedscope.json
(1,526 samples, 144 frames) with its samples and weights repeated, in order, to ``--samples``
(10 000 000: 206 MB of JSON), written to ``--dir`` (default: a temporary folder; ``--keep``
keeps it and reuses it next time). Never in the repository.

Each as its own process, interleaved, least CPU of ``--runs`` (3):

* **ours** — ``perfscout analyze --json FILE`` (stdout discarded), with
  ``PERFSCOUT_MAX_WHOLE_FILE`` raised to hold the file: speedscope is a whole-file reader whose
  default cap (40 MiB) refuses it, and the error says to raise that setting;
* **baseline** — ``python -m benchmarks.speedscope_big --baseline FILE``: ``json.load`` of the
  file and one Python loop over every sample (its stack's length and its weight summed).

CPU is user + sys of that process (``os.wait4``), peak RSS its ``ru_maxrss``; wall time beside;
``uptime`` before and after (the machine is shared). Results:
``benchmarks/results/speedscope_big.json``.

    .venv/bin/python -m benchmarks.speedscope_big [--samples N] [--runs N] [--dir D] [--keep]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "tests" / "data" / "attrib" / "profiles" / "sortedcontainers.speedscope.json"


def _run(cmd: list[str], env: dict[str, str] | None = None) -> dict:
    """One process: its user+sys CPU, wall time and peak RSS; stdout discarded."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    err = p.stderr.read().decode(errors="replace") if p.stderr else ""
    if p.stderr:
        p.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{cmd} failed: {err[-500:]}")
    return {"cpu_s": round(ru.ru_utime + ru.ru_stime, 3), "wall_s": round(wall, 3), "peak_rss_mb": round(ru.ru_maxrss / 1024, 1)}


def _load() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def generate(path: Path, samples: int) -> None:
    """SOURCE with its (single) profile's samples and weights repeated to ``samples``."""
    doc = json.loads(SOURCE.read_text())
    prof = doc["profiles"][0]
    s, w = prof.pop("samples"), prof.pop("weights")
    reps, rest = divmod(samples, len(s))
    dur = prof["endValue"] - prof["startValue"]
    prof["endValue"] = prof["startValue"] + dur * samples / len(s)

    def body(items: list) -> str:
        return ",".join(json.dumps(x, separators=(",", ":")) for x in items)

    schema = json.dumps({"$schema": doc.pop("$schema")}, separators=(",", ":"))[:-1]  # py-spy writes it first
    head = json.dumps({k: v for k, v in doc.items() if k != "profiles"}, separators=(",", ":"))
    prof_head = json.dumps(prof, separators=(",", ":"))[:-1]
    with open(path, "w", encoding="utf-8", buffering=1 << 22) as f:
        f.write(schema + ',"profiles":[' + prof_head + ',"samples":[')
        for items in (s, w):
            one = body(items)
            for i in range(reps):
                f.write(one if i == 0 else "," + one)
            if rest:
                f.write(("," if reps else "") + body(items[:rest]))
            f.write('],"weights":[' if items is s else "]}],")
        f.write(head[1:])


def baseline(path: str) -> dict:
    """json.load, then one loop over the samples: the least any Python reader does."""
    with open(path, "rb") as f:
        doc = json.load(f)
    n = frames = 0
    total = 0.0
    for prof in doc["profiles"]:
        for stack, w in zip(prof["samples"], prof["weights"]):
            n += 1
            frames += len(stack)
            total += w
    return {"samples": n, "frames": frames, "weight": total}


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.speedscope_big")
    ap.add_argument("--samples", type=int, default=10_000_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--dir", help="where the generated profile goes (default: a temporary folder)")
    ap.add_argument("--keep", action="store_true", help="keep the generated profile (reused next time)")
    ap.add_argument("--baseline", metavar="FILE", help=argparse.SUPPRESS)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "speedscope_big.json"))
    args = ap.parse_args(argv)
    if args.baseline:
        print(json.dumps(baseline(args.baseline)))
        return 0
    tmp = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="speedscope_big_"))
    tmp.mkdir(parents=True, exist_ok=True)
    path = tmp / f"sortedcontainers_{args.samples}.speedscope.json"
    try:
        if not path.exists():
            generate(path.with_suffix(".part"), args.samples)
            os.replace(path.with_suffix(".part"), path)
        size = path.stat().st_size
        perfscout = shutil.which("perfscout", path=str(Path(sys.executable).parent)) or "perfscout"
        env = dict(os.environ, PERFSCOUT_MAX_WHOLE_FILE=str(max(size + 1, 40 << 20)))
        load_before = _load()
        print(load_before, flush=True)
        ours_runs, base_runs = [], []
        for _ in range(args.runs):  # interleaved: both see the same load
            ours_runs.append(_run([perfscout, "analyze", "--json", str(path)], env))
            base_runs.append(_run([sys.executable, "-m", "benchmarks.speedscope_big", "--baseline", str(path)]))
            print(f"  ours {ours_runs[-1]['cpu_s']:.2f} s CPU, baseline {base_runs[-1]['cpu_s']:.2f} s CPU", flush=True)
        ours = min(ours_runs, key=lambda r: r["cpu_s"])
        base = min(base_runs, key=lambda r: r["cpu_s"])
        load_after = _load()
        result = {
            "file": {"samples": args.samples, "bytes": size, "from": str(SOURCE.relative_to(ROOT))},
            "ours": {**ours, "cpu_s_all": [round(r["cpu_s"], 2) for r in ours_runs],
                     "command": "perfscout analyze --json FILE"},
            "baseline": {**base, "cpu_s_all": [round(r["cpu_s"], 2) for r in base_runs],
                         "command": "json.load + a loop over the samples"},
            "cpu_ratio": round(ours["cpu_s"] / base["cpu_s"], 2),
            "target_ratio": 3.0,
            "load_before": load_before,
            "load_after": load_after,
        }
        print(f"{args.samples} samples, {size / 1e6:.0f} MB: ours {ours['cpu_s']:.2f} s CPU ({ours['wall_s']:.1f} s wall, "
              f"{ours['peak_rss_mb']:.0f} MB), baseline {base['cpu_s']:.2f} s CPU ({base['wall_s']:.1f} s wall, "
              f"{base['peak_rss_mb']:.0f} MB): ratio {result['cpu_ratio']:.2f} (target ≤ 3)\n{load_after}")
        Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
        print("written:", args.out)
    finally:
        if not args.keep and not args.dir:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
