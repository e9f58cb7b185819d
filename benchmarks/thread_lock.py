"""The thread lock (app/threads.py), per store: what it costs a turn, and what a second turn sees.

For the file lock beside SQLite and for ``pg_advisory_lock`` (a private PostgreSQL on loopback,
tests/postgres_server.py, or PERFSCOUT_TEST_POSTGRES_URL):

- ``uncontended``: take and release a free thread (p50 / p99 ms) — the cost added to every turn;
- ``handover``: a turn waiting for a held thread gets it this long after the holder lets go;
- ``after SIGKILL``: a child process holds the thread and is SIGKILLed; the thread is free
  again this long after the kill (a try-lock, no waiting);
- ``busy after``: with ``wait_s`` = 0.5 on a held thread, ThreadBusy comes after this long.

    .venv/bin/python -m benchmarks.thread_lock [rounds]
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))


def _locks(store: str):
    from app.threads import FileThreadLocks, PostgresThreadLocks

    return PostgresThreadLocks(store) if store.startswith("postgresql://") else FileThreadLocks(store + ".locks")


def _hold_forever(store: str, ready) -> None:
    with _locks(store).hold("victim", 0):
        ready.set()
        time.sleep(600)


def _ms(xs: list[float]) -> str:
    xs = sorted(xs)
    return f"p50 {statistics.median(xs) * 1000:.1f} ms, p99 {xs[min(len(xs) - 1, int(len(xs) * 0.99))] * 1000:.1f} ms"


def measure(store: str, rounds: int) -> dict[str, str]:
    from app.errors import ThreadBusy

    locks = _locks(store)
    free = []
    for i in range(rounds):
        t = time.perf_counter()
        with locks.hold(f"t{i % 5}", 0):
            pass
        free.append(time.perf_counter() - t)

    handover = []
    for _ in range(max(5, rounds // 10)):
        held, released = threading.Event(), []

        def holder() -> None:
            with locks.hold("h", 0):
                held.set()
                time.sleep(0.2)
                released.append(time.perf_counter())

        th = threading.Thread(target=holder)
        th.start()
        held.wait()
        with locks.hold("h", 30):
            got = time.perf_counter()
        th.join()
        handover.append(got - released[0])

    after_kill = []
    ctx = mp.get_context("fork")
    for _ in range(5):
        ready = ctx.Event()
        p = ctx.Process(target=_hold_forever, args=(store, ready))
        p.start()
        ready.wait(60)
        os.kill(p.pid, signal.SIGKILL)
        t = time.perf_counter()
        p.join()
        while True:
            try:
                with locks.hold("victim", 0):
                    break
            except ThreadBusy:
                time.sleep(0.001)
        after_kill.append(time.perf_counter() - t)

    held, done = threading.Event(), threading.Event()

    def sit() -> None:
        with locks.hold("b", 0):
            held.set()
            done.wait(30)

    th = threading.Thread(target=sit)
    th.start()
    held.wait()
    t = time.perf_counter()
    try:
        with locks.hold("b", 0.5):
            pass
    except ThreadBusy:
        busy = time.perf_counter() - t
    done.set()
    th.join()
    return {
        "uncontended": _ms(free),
        "handover": _ms(handover),
        "after SIGKILL": _ms(after_kill),
        "busy after (wait 0.5 s)": f"{busy * 1000:.0f} ms",
    }


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    import postgres_server

    with tempfile.TemporaryDirectory() as d:
        stores = {"SQLite (flock)": str(Path(d) / "cp.sqlite")}
        server, why = postgres_server.start()
        if server is not None:
            stores["PostgreSQL (advisory)"] = server.create_database("bench")
        else:
            print(f"PostgreSQL skipped: {why}")
        for name, store in stores.items():
            for k, v in measure(store, rounds).items():
                print(f"{name:<22} {k:<24} {v}")


if __name__ == "__main__":
    main()
