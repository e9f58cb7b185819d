"""Load: N concurrent threads of turns through the graph, per checkpoint store.

Every turn is the ``analyze`` route on a tiny Trace Event JSON (offline: no model), so the
cost measured is the graph, the analyzer and the checkpointer, not a model. The baseline is
the same load on LangGraph's in-memory saver, measured in the same run; the ratios against it
are the numbers to compare across machines. PostgreSQL is a private server started on
loopback (tests/postgres_server.py) or the one named by PERFSCOUT_TEST_POSTGRES_URL.

    .venv/bin/python -m benchmarks.load [threads] [turns_per_thread]
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))


def _trace(path: Path) -> None:
    ev = [{"name": "thread_name", "ph": "M", "pid": 1, "tid": 1, "args": {"name": "main"}}]
    for i in range(50):
        ev.append({"name": f"task{i % 5}", "ph": "X", "ts": i * 1000, "dur": 800 + (i % 7) * 300, "pid": 1, "tid": 1})
    path.write_text(json.dumps({"traceEvents": ev}))


def _run(store: str | None, home: Path, threads: int, turns: int) -> dict:
    from langgraph.checkpoint.memory import InMemorySaver

    from app.api import PerfScout
    from app.settings import Settings

    settings = Settings(state_dir=home, checkpoint_url=store, offline=True)
    saver = InMemorySaver() if store is None else None
    latencies: list[float] = []
    failures: list[str] = []
    lock = threading.Lock()
    with PerfScout(settings, llm=None, checkpointer=saver, workspace=home) as ps:
        _ = ps.graph
        ps.ask("解读一下 tiny.json", thread_id="warm-up")

        def worker(w: int) -> None:
            for i in range(turns):
                t0 = time.perf_counter()
                r = ps.ask("解读一下 tiny.json", thread_id=f"load-{w}-{i}")
                dt = time.perf_counter() - t0
                with lock:
                    latencies.append(dt)
                    if r.status != "done":
                        failures.append(f"{r.status}: {r.diagnosis or r.answer}")

        t0 = time.perf_counter()
        ts = [threading.Thread(target=worker, args=(w,)) for w in range(threads)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        wall = time.perf_counter() - t0
    lat = sorted(latencies)
    p99 = lat[min(len(lat) - 1, int(round(0.99 * (len(lat) - 1))))]
    return {"turns": len(lat), "wall_s": wall, "throughput": len(lat) / wall, "p50_ms": statistics.median(lat) * 1000,
            "p99_ms": p99 * 1000, "failures": len(failures), "first_failure": failures[0] if failures else None}


def main(argv: list[str]) -> int:
    threads = int(argv[1]) if len(argv) > 1 else 8
    turns = int(argv[2]) if len(argv) > 2 else 10
    import postgres_server

    rows: list[tuple[str, dict]] = []
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        for sub in ("mem", "sqlite", "pg"):
            (home / sub).mkdir()
            _trace(home / sub / "tiny.json")
        rows.append(("memory (baseline)", _run(None, home / "mem", threads, turns)))
        rows.append(("sqlite", _run(str(home / "sqlite" / "cp.sqlite"), home / "sqlite", threads, turns)))
        server, why = postgres_server.start()
        if server is None:
            print(f"postgres: not measured ({why})")
        else:
            rows.append(("postgres", _run(server.create_database("load"), home / "pg", threads, turns)))
    base = rows[0][1]
    print(f"load: {threads} threads x {turns} turns (analyze route, tiny Trace Event JSON, offline)")
    print(f"{'store':<18} {'turns/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'tput/base':>9} {'p99/base':>9} {'failed':>6}")
    for name, r in rows:
        print(f"{name:<18} {r['throughput']:8.1f} {r['p50_ms']:8.1f} {r['p99_ms']:8.1f} "
              f"{r['throughput'] / base['throughput']:9.2f} {r['p99_ms'] / base['p99_ms']:9.2f} {r['failures']:6d}")
        if r["first_failure"]:
            print(f"  first failure: {r['first_failure'][:200]}")
    return 1 if any(r["failures"] for _, r in rows) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
