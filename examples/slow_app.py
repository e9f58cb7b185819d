"""A small order-report program with one planted, explainable bottleneck.

It builds a sales report from generated orders. ``unique_customers`` keeps the customers it has
seen in a *list* and asks ``customer not in seen`` for every order: each check scans the whole
list, so the loop is quadratic in the number of customers. With the default size it spends a
few seconds there, far more than everything else together — the profile shows it as the top
hot spot, on the ``not in seen`` line. The fix is one character class away: a ``set``.

    python examples/slow_app.py            # default size
    python examples/slow_app.py 40000      # more orders: the quadratic part grows fastest
"""

from __future__ import annotations

import random
import sys
from collections import namedtuple

Order = namedtuple("Order", "order_id customer amount")

DEFAULT_ORDERS = 24_000


def load_orders(n: int, seed: int = 7) -> list[Order]:
    """Orders from about 0.8·n customers, so most customers are new when first seen."""
    rng = random.Random(seed)
    customers = int(n * 0.8)
    return [Order(i, rng.randrange(customers), round(rng.uniform(1, 500), 2)) for i in range(n)]


def unique_customers(orders: list[Order]) -> list[int]:
    """Customers in first-seen order. The planted bottleneck: membership in a list is O(n)."""
    seen: list[int] = []
    for order in orders:
        if order.customer not in seen:  # O(len(seen)) per order: quadratic overall
            seen.append(order.customer)
    return seen


def totals_by_customer(orders: list[Order]) -> dict[int, float]:
    totals: dict[int, float] = {}
    for order in orders:
        totals[order.customer] = totals.get(order.customer, 0.0) + order.amount
    return totals


def format_report(customers: list[int], totals: dict[int, float], top: int = 5) -> str:
    best = sorted(customers, key=lambda c: totals[c], reverse=True)[:top]
    lines = [f"{len(customers)} customers, {sum(totals.values()):.2f} in sales"]
    lines += [f"  customer {c:>6}: {totals[c]:10.2f}" for c in best]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    n = int(float(argv[1])) if len(argv) > 1 else DEFAULT_ORDERS
    orders = load_orders(n)
    customers = unique_customers(orders)
    totals = totals_by_customer(orders)
    print(format_report(customers, totals))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
