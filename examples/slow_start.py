"""A command-line tool that is slow to start because of what one import does.

``tax_tables`` computes its lookup tables at import time, before ``main`` runs, so every launch
pays for them even when the user only asks for ``--help``. ``python -X importtime`` shows it
as the import with the largest self time; the fix is to build the tables lazily (on first use)
or to ship them precomputed.

    python examples/slow_start.py          # prints "ready" and a result, then exits
"""

from __future__ import annotations

import sys

import tax_tables  # the slow import: builds its tables at import time


def main(argv: list[str]) -> int:
    income = float(argv[1]) if len(argv) > 1 else 52_000.0
    print("ready", flush=True)
    print(f"tax on {income:.0f}: {tax_tables.tax_for(income):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
