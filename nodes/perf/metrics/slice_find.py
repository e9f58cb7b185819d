"""Find the slices with given names without a Python loop over every slice: the lens metrics
(power sections, GC, lmkd kills, lock contention) look for a few names among millions."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, Iterable, Iterator

import numpy as np

from nodes.perf.metrics.common import joined_column
from nodes.perf.model import PerfData


def name_ids(pd: PerfData, match: Callable[[str], bool]) -> set[int]:
    """Interned ids of the names ``match`` accepts (one pass over the distinct names)."""
    return {i for i, s in enumerate(pd.strings) if match(s)}


def named_sections(pd: PerfData, names: Iterable[str]) -> tuple[list[tuple[str, float, float]], list[str]]:
    """(name, start µs, end µs) of every thread slice or async span the user named, by start,
    and the names no slice has (said in the warnings, the rest still answered)."""
    wanted = list(dict.fromkeys(n for n in names if n))
    if not wanted:
        return [], []
    found = [(pd.strings[n], ts, ts + dur)
             for _k, ts, dur, n in find_slices(pd, name_ids(pd, lambda s: s in wanted), thread=True, async_=True)]
    seen = {n for n, _a, _b in found}
    return found, [n for n in wanted if n not in seen]


#: The name index of each PerfData being analysed (:func:`indexed`), by ``id``: a table's
#: tracks, their names laid end to end and where each track begins.
_INDEXES: dict[int, dict[str, tuple[list, np.ndarray, np.ndarray]]] = {}


@contextmanager
def indexed(pd: PerfData) -> Iterator[None]:
    """Within the block, :func:`find_slices` lays ``pd``'s names end to end once per table, not
    once per call: an analysis asks it about seven times (GC, sections, power, lmkd, blocking;
    nodes/perf/metrics/__init__.py runs the families inside this block), and on a trace of
    11,000 threads gathering the names was most of each call. The data must not change inside
    the block (the metrics only read it); the index is dropped at its end."""
    mine = id(pd) not in _INDEXES
    if mine:
        _INDEXES[id(pd)] = {}
    try:
        yield
    finally:
        if mine:
            _INDEXES.pop(id(pd), None)


def _table_names(pd: PerfData, which: str) -> tuple[list, np.ndarray, np.ndarray]:
    """(tracks with slices as (key, columns), their name ids end to end, each track's first
    index and the end) of ``pd.slices`` or ``pd.async_slices``."""
    cache = _INDEXES.get(id(pd))
    got = cache.get(which) if cache is not None else None
    if got is None:
        tracks = [(key, cols) for key, cols in getattr(pd, which).items() if len(cols)]
        # one isin over every track's names at once: per track, its fixed cost was the whole
        # cost of a trace of thousands of short-lived threads
        lens = [len(cols) for _k, cols in tracks]
        got = (tracks, _names_column([cols for _k, cols in tracks], lens), np.cumsum([0] + lens))
        if cache is not None:
            cache[which] = got
    return got


def thread_names(pd: PerfData) -> tuple[list, np.ndarray, np.ndarray]:
    """(threads with slices as (key, columns), their slices' name ids end to end — int32 when
    they fit, else int64 —, each thread's first index and the end), laid out once per analysis
    (:func:`indexed`)."""
    return _table_names(pd, "slices")


#: Names joined and narrowed this many at a time by :func:`_names_column`.
_NAMES_AT_ONCE = 1 << 20


def _names_column(cols: list, lens: list[int]) -> np.ndarray:
    """The tracks' name ids end to end: int32 when every id fits (the index is held through
    the analysis: ~17 MB, not 34, at 1 GB read whole), joined a run of tracks at a time so the
    int64 join is never whole; int64 when one does not."""
    out = np.empty(sum(lens), dtype=np.int32)
    at = i = 0
    while i < len(cols):
        j, held = i + 1, lens[i]
        while j < len(cols) and held + lens[j] <= _NAMES_AT_ONCE:
            held += lens[j]
            j += 1
        part = joined_column(cols[i:j], "name", np.int64)
        if len(part) and (int(part.min()) < -2**31 or int(part.max()) >= 2**31):
            return joined_column(cols, "name", np.int64)
        out[at:at + len(part)] = part
        at += len(part)
        i = j
    return out


def find_slices(pd: PerfData, ids: Iterable[int], thread: bool = True, async_: bool = False,
                keys: Iterable | None = None) -> list[tuple[tuple, float, float, int]]:
    """(track key, ts µs, dur µs, name id) of every slice named by one of ``ids``, in time order;
    thread slices and/or async spans, of the given track keys only when ``keys`` is given."""
    wanted = np.fromiter(ids, dtype=np.int64)
    if not len(wanted):
        return []
    out = []
    tables = (["slices"] if thread else []) + (["async_slices"] if async_ else [])
    only = set(keys) if keys is not None else None
    for table in tables:
        tracks, names, offsets = _table_names(pd, table)
        if not tracks:
            continue
        hit = np.flatnonzero(np.isin(names, wanted))
        if not len(hit):
            continue
        which = np.searchsorted(offsets, hit, side="right") - 1
        for w, i, nid in zip(which.tolist(), (hit - offsets[which]).tolist(), names[hit].tolist()):
            key, cols = tracks[w]
            if only is None or key in only:
                out.append((key, cols.ts[i], cols.dur[i], nid))
    out.sort(key=lambda r: (r[1], -r[2]))
    return out

