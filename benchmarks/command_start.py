"""How long the two quick commands take as a user types them, beside a bare interpreter.

`perfscout route --offline "测一下FPS"` (warm classifier cache) and `perfscout analyze` on a
~100 KB trace, each run N times as whole processes, interleaved with `python -c pass` so a busy
machine slows all three alike; medians in seconds and the ratio to the bare interpreter. The
target (issue 15) is ≤ 0.5 s wall for each command on an idle 2-core machine; the load average
at the start is printed because on a loaded machine the figure is not that one.

The commands run as ``make`` leaves them: with the project's bytecode compiled (the Makefile
does it after the install). These machines set PYTHONDONTWRITEBYTECODE, so without that step
every start would compile the project's modules again.

    python -m benchmarks.command_start [N]
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PERFSCOUT = Path(sys.executable).with_name("perfscout")
TRACE = REPO / "tests" / "data" / "perf" / "viztracer-multithread.json"  # 168 KB, real


def _wall(argv: list[str], env: dict[str, str]) -> float:
    t = time.perf_counter()
    subprocess.run(argv, env=env, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t


def main(n: int = 9) -> dict:
    home = tempfile.mkdtemp(prefix="perfscout-bench-")
    env = {**os.environ, "PERFSCOUT_HOME": home}
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "perfscout route --offline": [str(PERFSCOUT), "route", "--offline", "测一下FPS"],
        "perfscout analyze (168 KB trace)": [str(PERFSCOUT), "analyze", str(TRACE)],
    }
    _wall(commands["perfscout route --offline"], env)  # warm the classifier cache
    times: dict[str, list[float]] = {k: [] for k in commands}
    load = os.getloadavg()[0]
    for _ in range(n):
        for name, argv in commands.items():
            times[name].append(_wall(argv, env))
    base = statistics.median(times["python -c pass"])
    out = {"load_average_1m": round(load, 2), "runs": n, "median_s": {}, "ratio_to_bare_python": {}}
    for name, ts in times.items():
        med = statistics.median(ts)
        out["median_s"][name] = round(med, 3)
        out["ratio_to_bare_python"][name] = round(med / base, 1)
        print(f"{name:36s} median {med:6.3f} s   ({med / base:5.1f}× bare python)")
    print(f"load average at start: {load:.2f} (2 cores)")
    results = REPO / "benchmarks" / "results" / "command_start.json"
    results.write_text(json.dumps(out, indent=2) + "\n")
    return out


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 9)
