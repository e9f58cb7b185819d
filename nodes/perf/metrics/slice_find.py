"""Find the slices with given names without a Python loop over every slice: the lens metrics
(power sections, GC, lmkd kills, lock contention) look for a few names among millions."""

from __future__ import annotations

from typing import Callable, Iterable

import numpy as np

from nodes.perf.model import PerfData


def name_ids(pd: PerfData, match: Callable[[str], bool]) -> set[int]:
    """Interned ids of the names ``match`` accepts (one pass over the distinct names)."""
    return {i for i, s in enumerate(pd.strings) if match(s)}


def find_slices(pd: PerfData, ids: Iterable[int], thread: bool = True, async_: bool = False,
                keys: Iterable | None = None) -> list[tuple[tuple, float, float, int]]:
    """(track key, ts µs, dur µs, name id) of every slice named by one of ``ids``, in time order;
    thread slices and/or async spans, of the given track keys only when ``keys`` is given."""
    wanted = np.fromiter(ids, dtype=np.int64)
    if not len(wanted):
        return []
    out = []
    tables = ([pd.slices] if thread else []) + ([pd.async_slices] if async_ else [])
    only = set(keys) if keys is not None else None
    for table in tables:
        for key, cols in table.items():
            if only is not None and key not in only:
                continue
            names = np.frombuffer(cols.name, dtype=np.int64) if cols.name.itemsize == 8 else np.asarray(cols.name)
            hit = np.nonzero(np.isin(names, wanted))[0]
            for i in hit.tolist():
                out.append((key, cols.ts[i], cols.dur[i], int(names[i])))
    out.sort(key=lambda r: (r[1], -r[2]))
    return out
