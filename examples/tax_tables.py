"""Tax lookup tables, computed when the module is imported — the start-up cost of slow_start.py.

The table holds the tax owed for every whole amount up to ``LIMIT``, built bracket by bracket
with a Python loop. Importing this module therefore takes a few hundred milliseconds, and
``-X importtime`` charges them to ``tax_tables`` itself (self time), not to what it imports.
"""

from __future__ import annotations

LIMIT = 250_000
BRACKETS = ((10_000, 0.0), (40_000, 0.12), (90_000, 0.22), (180_000, 0.32), (float("inf"), 0.40))


def _build_table(limit: int) -> list[float]:
    table = [0.0] * (limit + 1)
    for amount in range(1, limit + 1):
        owed, lower = 0.0, 0
        for upper, rate in BRACKETS:
            if amount <= lower:
                break
            owed += (min(amount, upper) - lower) * rate
            lower = upper
        table[amount] = owed
    return table


TABLE = _build_table(LIMIT)


def tax_for(income: float) -> float:
    whole = int(income)
    if whole <= LIMIT:
        return TABLE[whole]
    return TABLE[LIMIT] + (whole - LIMIT) * BRACKETS[-1][1]
