"""``perfscout analyze --json`` on Perfetto traces from 2 MB to 1 GB, beside a baseline, same run.

Inputs: the real warm-start capture (tests/data/perfetto/api32_startup_warm.perfetto-trace,
2.0 MB) and copies of it concatenated with timestamps, pids, track uuids and packet sequences
shifted so the copies do not collide (benchmarks/_perfetto_concat.py), written to ``--dir``
(default: a temporary folder; a 1 GB file takes ~4 min to make, ``--keep`` keeps them).

At each size, each as its own process, least CPU of ``--runs`` (3) runs, the commands
interleaved (ours, baseline, ours, baseline, …) so a change in the machine's speed while they
run weighs on both:

* **ours** — ``perfscout analyze --json FILE`` (the command a user types; its output goes to a temporary
  file, read only for whether the result is partial, stopped at the event cap);
* **baseline** — ``python -m benchmarks.perfetto_growth --baseline FILE``: the whole file into
  ``Trace.FromString`` (protobuf's upb backend, the ``perfetto`` package's generated protos),
  then a Python loop reading every ftrace event's timestamp and pid and every compact-sched
  column (``list`` of each repeated field) — the least a pure-Python reader must do with upb.

CPU is user + sys of that process (``os.wait4``), peak RSS its ``ru_maxrss``; wall time beside.
The machine is shared: ``uptime`` load is recorded before and after. Run:
``python -m benchmarks.perfetto_growth [--sizes 2,20,100,1000]``; results in
``benchmarks/results/perfetto_growth.json``. ``PERFSCOUT_MAX_EVENTS`` (recorded in the results)
passes to every run of ours: raised, a 1 GB trace is read whole instead of stopping at the cap.
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
SOURCE = ROOT / "tests" / "data" / "perfetto" / "api32_startup_warm.perfetto-trace"
_COMPACT_COLUMNS = ("switch_timestamp", "switch_prev_state", "switch_next_pid", "switch_next_prio",
                    "switch_next_comm_index", "waking_timestamp", "waking_pid", "waking_target_cpu",
                    "waking_prio", "waking_comm_index")


def baseline(path: str) -> dict:
    """The baseline's work: Trace.FromString on the whole file, every ftrace event's ts and pid,
    every compact-sched column."""
    from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace

    with open(path, "rb") as f:
        trace = Trace.FromString(f.read())
    events = values = 0
    checksum = 0
    for p in trace.packet:
        if not p.HasField("ftrace_events"):
            continue
        b = p.ftrace_events
        for e in b.event:
            checksum += e.timestamp + e.pid
            events += 1
        if b.HasField("compact_sched"):
            cs = b.compact_sched
            for name in _COMPACT_COLUMNS:
                values += len(list(getattr(cs, name)))
    return {"events": events, "compact_values": values, "checksum": checksum % 1_000_003}


def _run(cmd: list[str], cwd: str | os.PathLike = ROOT) -> dict:
    """One process: its user+sys CPU, wall time and peak RSS. Its stdout goes to a temporary
    file (not a pipe: nothing here reads while it runs), and when it is ``analyze --json``
    output, whether the result is partial and the read stopped at the event cap is kept, so
    a size whose read stopped early says so beside its figures."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as out:
        p = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=subprocess.PIPE)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        err = p.stderr.read().decode(errors="replace") if p.stderr else ""
        if p.stderr:
            p.stderr.close()
        p.returncode = os.waitstatus_to_exitcode(status)
        if p.returncode != 0:
            raise RuntimeError(f"{cmd} failed ({p.returncode}): {err[-500:]}")
        out.seek(0)
        result = _completeness(out.read())
    return {"cpu_s": ru.ru_utime + ru.ru_stime, "wall_s": wall, "peak_rss_mb": ru.ru_maxrss / 1024, **result}


def _completeness(stdout: bytes) -> dict:
    """``partial`` and ``stopped_at_event_cap`` of an ``analyze --json`` output; {} for other output."""
    try:
        doc = json.loads(stdout)
    except ValueError:
        return {}
    if not isinstance(doc, dict) or "partial" not in doc:
        return {}
    capped = any("event cap" in str(w) for w in doc.get("warnings") or [])
    return {"partial": bool(doc["partial"]), "stopped_at_event_cap": capped}


def _best(cmds: dict[str, tuple[list[str], str | os.PathLike]], runs: int) -> dict[str, dict]:
    """Each command (label → (argv, cwd)) ``runs`` times, interleaved — one run of each, then
    the next round — so a machine that slows down or speeds up while they run (other tenants,
    another process) weighs on all of them alike, and their ratio is taken in the same
    conditions; per label the run of least CPU, with every run's CPU beside it."""
    tries: dict[str, list[dict]] = {label: [] for label in cmds}
    for _ in range(runs):
        for label, (cmd, cwd) in cmds.items():
            tries[label].append(_run(cmd, cwd))
    out = {}
    for label, runs_of in tries.items():
        best = min(runs_of, key=lambda r: r["cpu_s"])
        out[label] = {**best, "cpu_s_all": [round(r["cpu_s"], 3) for r in runs_of],
                      "peak_rss_mb_max": max(r["peak_rss_mb"] for r in runs_of)}
    return out


def _load() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.perfetto_growth")
    ap.add_argument("--sizes", default="2,20,100,1000", help="sizes in MB (2 = the capture itself)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--dir", help="where the generated traces go (default: a temporary folder)")
    ap.add_argument("--keep", action="store_true", help="keep the generated traces (reused next time)")
    ap.add_argument("--compare", action="append", default=[], metavar="LABEL=DIR",
                    help="also time `python -m app.cli analyze --json` run from another checkout (e.g. the "
                         "commit before a change), same sizes, same run")
    ap.add_argument("--baseline", metavar="FILE", help=argparse.SUPPRESS)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "perfetto_growth.json"))
    args = ap.parse_args(argv)
    if args.baseline:
        print(json.dumps(baseline(args.baseline)))
        return 0
    sys.path.insert(0, str(ROOT))
    from benchmarks._perfetto_concat import concat

    perfscout = shutil.which("perfscout", path=str(Path(sys.executable).parent)) or "perfscout"
    rows = []
    load_before = _load()
    print(load_before)
    print(f"{'size MB':>8} {'ours CPU s':>10} {'base CPU s':>10} {'ratio':>6} {'ours MB/s':>9} "
          f"{'ours wall s':>11} {'base wall s':>11} {'ours peak MB':>12} {'base peak MB':>12}")
    tmp = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="perfetto_growth_"))
    tmp.mkdir(parents=True, exist_ok=True)
    try:
        for mb in [float(x) for x in args.sizes.split(",") if x]:
            if mb <= SOURCE.stat().st_size / 1e6 + 0.01:
                path, copies = str(SOURCE), 1
            else:
                path = str(tmp / f"warm_{mb:g}mb.perfetto-trace")
                if not os.path.exists(path):
                    concat(SOURCE, path + ".part", mb)
                    os.replace(path + ".part", path)
                copies = -1
            size = os.path.getsize(path) / 1e6
            if copies < 0:
                copies = round(size / (SOURCE.stat().st_size / 1e6))
            cmds = {"ours": ([perfscout, "analyze", "--json", path], ROOT),
                    "baseline": ([sys.executable, "-m", "benchmarks.perfetto_growth", "--baseline", path], ROOT)}
            for spec in args.compare:
                label, _, where = spec.partition("=")
                cmds[f"compare:{label}"] = ([sys.executable, "-m", "app.cli", "analyze", "--json", path], where)
            best = _best(cmds, args.runs)
            ours, base = best.pop("ours"), best.pop("baseline")
            ratio = ours["cpu_s"] / base["cpu_s"]
            others = {}
            for key, row in best.items():
                label = key.removeprefix("compare:")
                others[label] = {**row, "cpu_ratio": round(row["cpu_s"] / base["cpu_s"], 2)}
                print(f"   {label}: CPU {row['cpu_s']:.2f} s, ratio {others[label]['cpu_ratio']:.2f}, "
                      f"peak {row['peak_rss_mb_max']:.0f} MB", flush=True)
                print(f"   {label}: CPU {others[label]['cpu_s']:.2f} s, ratio {others[label]['cpu_ratio']:.2f}, "
                      f"peak {others[label]['peak_rss_mb_max']:.0f} MB", flush=True)
            rows.append({"size_mb": round(size, 1), "copies": copies, "ours": ours, "baseline": base,
                         "cpu_ratio": round(ratio, 2), "ours_mb_per_cpu_s": round(size / ours["cpu_s"], 1),
                         **({"compare": others} if others else {})})
            print(f"{size:8.1f} {ours['cpu_s']:10.2f} {base['cpu_s']:10.2f} {ratio:6.2f} {size / ours['cpu_s']:9.1f} "
                  f"{ours['wall_s']:11.2f} {base['wall_s']:11.2f} {ours['peak_rss_mb_max']:12.0f} "
                  f"{base['peak_rss_mb_max']:12.0f}"
                  + ("  (read stopped at the event cap: partial, no like-for-like ratio)"
                     if ours.get("stopped_at_event_cap") else ""), flush=True)
            if not args.keep and path != str(SOURCE):
                os.unlink(path)
    finally:
        if not args.dir and not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    load_after = _load()
    print(load_after)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({
        "python": sys.version.split()[0], "cpus": os.cpu_count(), "source": SOURCE.name,
        "command": "perfscout analyze --json FILE", "baseline": "python -m benchmarks.perfetto_growth --baseline FILE",
        "runs": args.runs, "max_events": os.environ.get("PERFSCOUT_MAX_EVENTS", "default"),
        "load_before": load_before, "load_after": load_after, "rows": rows}, indent=2) + "\n")
    print(f"written: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
