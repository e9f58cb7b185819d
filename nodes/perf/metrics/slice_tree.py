"""The nesting of one thread's slices, computed with numpy instead of a per-slice stack walk.

The rules are those of the stack walk that :func:`nodes.perf.metrics.hotspots.walk` used to run
in Python (kept as the reference in tests/slice_walk_reference.py, and compared with this module
on generated slice sets by tests/test_slice_tree.py). Slices are taken sorted by start, longer
first on equal starts; a slice closes when a later one starts at or after its end; a slice that
runs past the end of the slice it starts in (JSON ``X`` events are not always properly nested) is
cut at that end, so its parent's self time never goes negative and self time never exceeds the
thread's busy time.

Why this works without a stack: with ``c`` the (cut) ends, the slices open when slice ``i``
starts are exactly the earlier ones with ``c[j] > ts[i]``, and its parent is the latest of them;
the descendants of ``j`` are then the contiguous indices up to the first start at or after
``c[j]`` (a ``searchsorted``), which gives depths by counting and parents by depth. The cut ends
depend on the parents, so they are found by a short fixed-point iteration (cut ends → tree →
cut ends) and the result is accepted only when it satisfies the walk's definition exactly (every
parent open, no earlier sibling still open, every end cut to its parent's); if it does not settle
within :data:`MAX_ROUNDS`, the cut ends come from a plain stack loop, so the answer is always the
walk's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: Fixed-point rounds before falling back to the exact stack loop. Properly nested data settles
#: in one round; a slice that runs past its parent costs one more round per cascade.
MAX_ROUNDS = 8


@dataclass
class SliceTree:
    """The nesting of ``n`` slices given sorted by (start, longer first). All arrays have ``n``
    entries indexed like the input; ``parent`` is -1 for a top-level slice."""

    parent: np.ndarray  #: int64, the direct parent's index or -1
    depth: np.ndarray  #: int64, 0 for top-level slices
    end: np.ndarray  #: float64, the end after the cut to the parent's end
    dur: np.ndarray  #: float64, the duration after that cut (the input's where not cut)
    own: np.ndarray  #: float64, dur minus the direct children's dur (may be <= 0)
    subtree_end: np.ndarray  #: int64, one past the last descendant's index
    by_depth: np.ndarray  #: int64, the indices grouped by depth, ascending within a depth
    depth_bounds: np.ndarray  #: int64, ``by_depth[depth_bounds[d]:depth_bounds[d + 1]]`` is depth d
    rounds: int  #: fixed-point rounds used (0: the stack loop was needed)

    def post_order(self) -> np.ndarray:
        """Indices in the order the walk closes slices: children before their parent."""
        n = len(self.parent)
        pos = self.subtree_end - self.depth - 1  # earlier non-ancestors + own subtree - 1
        out = np.empty(n, dtype=pos.dtype)
        out[pos] = np.arange(n, dtype=pos.dtype)
        return out

    def outermost(self, name: np.ndarray) -> np.ndarray:
        """True where no ancestor has the same name: the occurrences whose time counts towards
        the name's total, so recursion is not counted twice."""
        n = len(name)
        if not n:
            return np.zeros(0, dtype=bool)
        order = stable_argsort(name)  # by name, index order within a name
        g = name[order].astype(np.int64)
        # an earlier same-name slice j is an ancestor of i iff subtree_end[j] > i: running max of
        # subtree ends per name (names offset apart so one running max serves all groups)
        span = n + 1
        shifted = self.subtree_end[order] + g * span
        prev = np.empty(n, dtype=np.int64)
        prev[0] = -1
        np.maximum.accumulate(shifted[:-1], out=prev[1:])
        first = np.ones(n, dtype=bool)
        first[1:] = g[1:] != g[:-1]
        out = np.empty(n, dtype=bool)
        out[order] = first | (prev - g * span <= order)
        return out


def _index_type(n: int) -> type:
    """32-bit indices when they fit: half the memory of the per-slice index arrays."""
    return np.int32 if n < 1 << 31 else np.int64


def stable_argsort(a: np.ndarray) -> np.ndarray:
    """``np.argsort(a, kind="stable")`` of non-negative integers, as 16-bit ones when they fit:
    numpy sorts those by radix, several times faster than 64-bit ones."""
    if len(a) and int(a.max()) < 1 << 16:
        a = a.astype(np.uint16)
    return np.argsort(a, kind="stable")


def _levels(depth: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    by_depth = stable_argsort(depth).astype(depth.dtype, copy=False)
    bounds = np.searchsorted(depth[by_depth], np.arange(int(depth.max()) + 2))
    return by_depth, bounds


def _tree(ts: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Subtree ends, depths and parents implied by the ends ``c`` (exact when ``c`` is)."""
    n = len(ts)
    idx = np.arange(n, dtype=_index_type(n))
    sub = idx + 1
    # most slices are leaves (the next one starts after their end): search only for the others
    inner = np.flatnonzero(ts[1:] < c[:-1])
    sub[inner] = np.maximum(np.searchsorted(ts, c[inner], side="left"), inner + 1)
    closed = np.cumsum(np.bincount(sub, minlength=n + 1)[:n])  # slices closed by index i
    depth = (idx - closed).astype(idx.dtype)  # steps up by at most one: a forest in pre-order
    by_depth, bounds = _levels(depth)
    # the parent is the latest earlier index one level up; queried in (depth, index) order, so
    # the queries come sorted (several times faster than in index order)
    del closed
    key = depth[by_depth].astype(np.int64) * n + by_depth
    pos = np.searchsorted(key, key - n) - 1
    del key
    parent = np.empty(n, dtype=idx.dtype)
    parent[by_depth] = np.where(depth[by_depth] > 0, by_depth[pos], -1)
    return sub, depth, parent, by_depth, bounds


def _cut(e: np.ndarray, parent: np.ndarray, by_depth: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """Each end cut to its parent's (cut) end, level by level from the top."""
    c = e.copy()
    for d in range(1, len(bounds) - 1):
        ids = by_depth[bounds[d]:bounds[d + 1]]
        c[ids] = np.minimum(e[ids], c[parent[ids]])
    return c


def _holds(ts: np.ndarray, c: np.ndarray, depth: np.ndarray, parent: np.ndarray, by_depth: np.ndarray) -> bool:
    """The walk's definition: every parent is still open when its child starts, and the
    previous sibling (hence everything between parent and child) has closed."""
    has = parent >= 0
    if not np.all(c[parent[has]] > ts[has]):
        return False
    # previous index at the same depth; a sibling when it comes after the parent
    rank = np.empty(len(ts), dtype=np.int64)
    rank[by_depth] = np.arange(len(ts), dtype=np.int64)
    prev = by_depth[np.maximum(rank - 1, 0)]
    sib = (rank > 0) & (depth[prev] == depth) & (prev > parent)
    return bool(np.all(c[prev[sib]] <= ts[sib]))


def _cut_loop(ts: np.ndarray, e: np.ndarray) -> np.ndarray:
    """The cut ends by the plain stack walk (the fallback; exact by construction)."""
    out = []
    stack: list[float] = []
    for t, end in zip(ts.tolist(), e.tolist()):
        while stack and stack[-1] <= t:
            stack.pop()
        if stack and end > stack[-1]:
            end = stack[-1]
        stack.append(end)
        out.append(end)
    return np.array(out, dtype=np.float64)


def build(ts: np.ndarray, dur: np.ndarray) -> SliceTree:
    """The nesting of slices sorted by (start, longer first), durations finite and >= 0."""
    n = len(ts)
    e = ts + dur
    c = e
    rounds = 0
    tree = None
    for rounds in range(1, MAX_ROUNDS + 1):
        tree = _tree(ts, c)
        cn = _cut(e, tree[2], tree[3], tree[4])
        if np.array_equal(cn, c):
            break
        c = cn
    else:
        tree = None
    cn = None
    if tree is None or not _holds(ts, c, tree[1], tree[2], tree[3]):
        c = _cut_loop(ts, e)
        tree = _tree(ts, c)
        rounds = 0
    sub, depth, parent, by_depth, bounds = tree
    cut_dur = np.where(c < e, c - ts, dur)
    has = parent >= 0
    children = np.bincount(parent[has], weights=cut_dur[has], minlength=n) if n else np.zeros(0)
    return SliceTree(parent=parent, depth=depth, end=c, dur=cut_dur, own=cut_dur - children,
                     subtree_end=sub, by_depth=by_depth, depth_bounds=bounds, rounds=rounds)
