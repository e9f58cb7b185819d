"""A batch job whose time goes to waiting, not computing: a sleep left in the hot path.

Each record passes through ``throttle``, which sleeps 20 ms "to be gentle with the API" — but
the records are local and no API is called. The job takes about two seconds and the CPU is
nearly idle the whole time: the psutil series shows a low CPU %, and py-spy (which PerfScout
runs with ``--idle``) puts the samples on the ``time.sleep`` line in ``throttle``.

    python examples/sleepy_worker.py          # 100 records
    python examples/sleepy_worker.py 50
"""

from __future__ import annotations

import hashlib
import sys
import time

PAUSE_S = 0.02


def throttle() -> None:
    """The planted cost: a fixed pause per record that nothing needs."""
    time.sleep(PAUSE_S)


def digest(record: str) -> str:
    return hashlib.sha256(record.encode()).hexdigest()[:12]


def process(records: list[str]) -> list[str]:
    out = []
    for record in records:
        throttle()
        out.append(digest(record))
    return out


def main(argv: list[str]) -> int:
    n = int(argv[1]) if len(argv) > 1 else 100
    results = process([f"record-{i}" for i in range(n)])
    print(f"processed {len(results)} records; last digest {results[-1] if results else '-'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
