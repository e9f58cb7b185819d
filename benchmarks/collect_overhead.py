"""What observing a program costs it: examples/slow_app.py alone vs. under the collector.

Baseline and observed runs alternate in the same process, so machine load hits both alike;
the ratio (median observed / median baseline wall time) is the number to compare across
machines. Also times the runner on 100 MB of output, against ``cat`` of the same bytes into
/dev/null. Run: ``.venv/bin/python -m benchmarks.collect_overhead [rounds]``.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from nodes.collect.options import CollectOptions
from nodes.collect.profile import collect_profile
from nodes.collect.rundir import open_run_dir
from nodes.collect.runner import run_bounded
from nodes.collect.target import parse_target

REPO = Path(__file__).resolve().parents[1]


def _plain(argv: list[str]) -> float:
    t0 = time.perf_counter()
    res = run_bounded(argv, timeout_s=300)
    assert res.returncode == 0, res.stderr_tail()
    return time.perf_counter() - t0


def main(argv: list[str]) -> int:
    rounds = int(argv[1]) if len(argv) > 1 else 3
    target = parse_target("examples/slow_app.py", REPO)
    base, observed, samples = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(rounds):
            base.append(_plain(list(target.argv)))
            run_dir = open_run_dir(None, tmp, None, "profile")
            t0 = time.perf_counter()
            got = collect_profile(target, run_dir, CollectOptions(timeout_s=300))
            observed.append(time.perf_counter() - t0)
            samples.append(got["summary"]["pyspy_samples"])
        code = "import sys\nb = b'x' * 1048575 + b'\\n'\nfor _ in range(100): sys.stdout.buffer.write(b)"
        out_base = _plain(["sh", "-c", f"{sys.executable} -c \"{code}\" > /dev/null"])
        t0 = time.perf_counter()
        res = run_bounded([sys.executable, "-c", code], timeout_s=300)
        out_obs = time.perf_counter() - t0
    mb, mo = statistics.median(base), statistics.median(observed)
    print(f"slow_app.py alone:            median {mb:.2f} s over {rounds} runs")
    print(f"slow_app.py under collector:  median {mo:.2f} s (py-spy samples: {samples})")
    print(f"ratio observed/alone:         {mo / mb:.2f}x")
    print(f"100 MB of output, to /dev/null: {out_base:.2f} s; through the bounded runner: {out_obs:.2f} s "
          f"(ratio {out_obs / out_base:.2f}x, kept {len(res.stdout.data())} of {res.stdout.total} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
