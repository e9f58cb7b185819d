"""Bring every packet's timestamp onto the trace's one clock.

Perfetto producers stamp packets in different clock domains (ftrace in BOOTTIME, Chrome in
MONOTONIC, SDK producers in a per-sequence *incremental* clock whose values are deltas), and
``ClockSnapshot`` packets say what each clock read at the same instant. Without converting,
slices from different producers would not line up and a startup measured across Chrome and
the system would be off by the uptime. Conversion follows snapshot edges, hopping through
intermediate clocks when no snapshot pairs the two directly (e.g. sequence clock 64 →
MONOTONIC → BOOTTIME).
"""

from __future__ import annotations

from bisect import bisect_right
from collections import deque

BOOTTIME = 6
#: Clock ids 64..127 are scoped to the packet sequence that defines them.
_SEQ_SCOPED_MIN, _SEQ_SCOPED_MAX = 64, 127

ClockKey = tuple[int, int]  # (sequence id or 0 for global clocks, clock id)


class ClockConverter:
    def __init__(self) -> None:
        self.primary: ClockKey = (0, BOOTTIME)
        #: (src, dst) → sorted list of (src_ts, dst_ts) pairs from snapshots.
        self._edges: dict[tuple[ClockKey, ClockKey], list[tuple[int, int]]] = {}
        self._neighbours: dict[ClockKey, set[ClockKey]] = {}
        self._paths: dict[ClockKey, list[ClockKey] | None] = {}
        #: Incremental clocks: key → (last absolute value, unit multiplier in ns).
        self._incremental: dict[ClockKey, list[int]] = {}
        #: Non-incremental clocks whose unit is not 1 ns.
        self._mult: dict[ClockKey, int] = {}
        self.unconverted = 0

    @staticmethod
    def key(seq: int, clock_id: int) -> ClockKey:
        return (seq, clock_id) if _SEQ_SCOPED_MIN <= clock_id <= _SEQ_SCOPED_MAX else (0, clock_id)

    def add_snapshot(self, seq: int, snapshot) -> None:
        """Record a ``ClockSnapshot``: every pair of its clocks becomes an edge."""
        if snapshot.HasField("primary_trace_clock") and snapshot.primary_trace_clock:
            self.primary = (0, int(snapshot.primary_trace_clock))
        points: list[tuple[ClockKey, int]] = []
        for c in snapshot.clocks:
            k = self.key(seq, c.clock_id)
            mult = c.unit_multiplier_ns or 1
            if c.is_incremental:
                self._incremental[k] = [c.timestamp, mult]
            elif mult != 1:
                self._mult[k] = mult
            # Edges are kept in nanoseconds so that multipliers need handling only once.
            points.append((k, c.timestamp * mult))
        for i, (a, ta) in enumerate(points):
            for b, tb in points[i + 1 :]:
                if a != b:
                    self._add_edge(a, b, ta, tb)
                    self._add_edge(b, a, tb, ta)
        self._paths.clear()

    def _add_edge(self, a: ClockKey, b: ClockKey, ta: int, tb: int) -> None:
        pairs = self._edges.setdefault((a, b), [])
        if not pairs or ta >= pairs[-1][0]:
            pairs.append((ta, tb))
        else:
            pairs.insert(bisect_right(pairs, (ta, tb)), (ta, tb))
        self._neighbours.setdefault(a, set()).add(b)

    def _path(self, src: ClockKey) -> list[ClockKey] | None:
        if src in self._paths:
            return self._paths[src]
        prev: dict[ClockKey, ClockKey] = {src: src}
        todo = deque([src])
        while todo:
            cur = todo.popleft()
            if cur == self.primary:
                break
            for nxt in self._neighbours.get(cur, ()):
                if nxt not in prev:
                    prev[nxt] = cur
                    todo.append(nxt)
        path: list[ClockKey] | None = None
        if self.primary in prev:
            path = [self.primary]
            while path[-1] != src:
                path.append(prev[path[-1]])
            path.reverse()
        self._paths[src] = path
        return path

    def to_ns(self, seq: int, clock_id: int | None, ts: int) -> int:
        """The trace-clock time (ns) of ``ts`` read on ``clock_id`` (None: the trace clock)."""
        if clock_id is None:
            return ts
        k = self.key(seq, clock_id)
        inc = self._incremental.get(k)
        if inc is not None:
            inc[0] += ts
            ts_ns = inc[0] * inc[1]
        else:
            ts_ns = ts * self._mult.get(k, 1)
        if k == self.primary:
            return ts_ns
        path = self._path(k)
        if path is None:
            self.unconverted += 1
            return ts_ns
        for a, b in zip(path, path[1:]):
            pairs = self._edges[(a, b)]
            i = bisect_right(pairs, (ts_ns, 1 << 63)) - 1
            if i < 0:
                i = 0
            sa, sb = pairs[i]
            ts_ns = ts_ns - sa + sb
        return ts_ns
