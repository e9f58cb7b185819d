"""The per-slice stack walk that nodes/perf/metrics/hotspots.py ran in Python before the nesting
was computed with numpy (nodes/perf/metrics/slice_tree.py): kept unchanged as the reference the
vectorised walk is compared with (tests/test_slice_tree.py)."""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from nodes.perf.metrics.common import MAX_PATHS, _Thread


def reference_walk(ctx, key: tuple[int, int]) -> None:
    cols = ctx.pd.slices[key]
    n = len(cols)
    th = ctx.threads[key] = _Thread(key)
    if not n:
        return
    ts = np.frombuffer(cols.ts, dtype=np.float64).copy()
    dur = np.frombuffer(cols.dur, dtype=np.float64).copy()
    name = np.frombuffer(cols.name, dtype=np.dtype(cols.name.typecode)).astype(np.int64)
    ok = np.isfinite(ts) & np.isfinite(dur)
    if not ok.all():
        ts, dur, name = ts[ok], dur[ok], name[ok]
    dur = np.maximum(dur, 0.0)
    order = np.lexsort((-dur, ts))
    ts, dur, name = ts[order], dur[order], name[order]
    th.ts, th.dur, th.name = ts, dur, name
    th.count = len(ts)
    self_by, total_by, count_by = th.self_by, th.total_by, th.count_by
    active: dict[int, int] = defaultdict(int)
    paths = ctx.paths
    track_paths = len(paths) < MAX_PATHS
    # stack entries: [end, nid, start, dur, child_us, path]
    stack: list[list] = []
    busy = 0.0
    top_level = th.top_level

    for t, d, nid in zip(ts.tolist(), dur.tolist(), name.tolist()):
        end = t + d
        while stack and stack[-1][0] <= t:
            e = stack.pop()  # closes: own time = duration − direct children
            n_ = e[1]
            own = e[3] - e[4]
            if own > 0.0:
                self_by[n_] += own
                if track_paths:
                    paths[(key, e[5])] += own
            else:
                self_by[n_] += 0.0  # listed even with no time of its own
            active[n_] -= 1
        if stack:
            parent = stack[-1]
            if end > parent[0]:
                # Overlaps its parent's end (no proper nesting, e.g. JSON X events): only the
                # part inside the parent is its own, so self time never exceeds busy time.
                end = parent[0]
                d = end - t
            parent[4] += d
            path = parent[5] + (nid,) if len(parent[5]) < 64 else parent[5]
        else:
            busy += d
            top_level.append((t, d, nid))
            path = (nid,)
        if active[nid] == 0:
            total_by[nid] += d  # outermost occurrence only: recursion is not counted twice
        active[nid] += 1
        stack.append([end, nid, t, d, 0.0, path])
    while stack:
        e = stack.pop()
        own = e[3] - e[4]
        self_by[e[1]] += own if own > 0.0 else 0.0
        if track_paths and own > 0.0:
            paths[(key, e[5])] += own
    counts = np.bincount(name)
    for nid in np.flatnonzero(counts).tolist():
        count_by[nid] = int(counts[nid])
    th.busy_us = busy


def reference_stacks(ctx) -> list:
    """The old hotspots.stacks: every path (the reference walk's slice paths and the sampled
    stacks, both in ``ctx.paths``) sorted by weight; sampled stacks name their process."""
    import os

    from nodes.perf.metrics.common import _ms
    from nodes.perf.model import MAX_RESULT_STACKS, StackWeight

    pd = ctx.pd
    items = sorted(ctx.paths.items(), key=lambda kv: -kv[1])[:MAX_RESULT_STACKS]
    out = []
    for (track, path), w in items:
        if path and path[0] == "s":
            # CPU samples: marked sampled, with their process as "name (pid N)" or "pid N" (none
            # for an unnamed pid 0: the profile named no process)
            frames = [f"{n} ({os.path.basename(f)})" if f else n for n, f in path[1:]]
            pid, proc = track[0], pd.processes.get(track[0])
            label = f"{proc} (pid {pid})" if proc else f"pid {pid}" if pid else None
            out.append(StackWeight(frames=frames, weight_ms=_ms(w), thread=pd.thread_label(*track),
                                   process=label, sampled=True))
        else:
            frames = [pd.strings[n] for n in path]
            out.append(StackWeight(frames=frames, weight_ms=_ms(w), thread=pd.thread_label(*track)))
    return out

