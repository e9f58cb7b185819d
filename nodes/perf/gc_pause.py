"""The cyclic garbage collector paused while a reader or the metrics build large, long-lived data.

Reading a big trace or computing its metrics creates millions of small objects that live to the
end (the model's rows, per-thread sums, slice stacks) and drops only acyclic garbage, which
reference counting frees at once. With the collector on, every full collection walks all of
those live objects again for nothing: ~2 s of the ~10 s read of a 100 MB Perfetto trace
(benchmarks/perfetto_growth.py), about a quarter of the metrics' CPU on it. The collector is
switched back on afterwards (left off if the caller had it off).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """Run the block with the cyclic collector off; restore its earlier state after."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
