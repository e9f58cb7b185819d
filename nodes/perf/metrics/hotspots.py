"""Hot spots: self and total time per slice name, sampled function, pstats row or import.

Nested slices: per-thread stacks rebuilt from times (sorted by start, longer first), self =
own time minus direct children. Sampled stacks: self = the leaf's weight, total = the weight of
every stack the function is on, counted once per stack (recursion does not double it). pstats
rows and ``-X importtime`` modules as they come. Also the heaviest stacks for flame graphs.
"""

from __future__ import annotations

import os
from collections import defaultdict

import numpy as np

from nodes.perf.metrics.common import MAX_PATHS, TOP_PER_THREAD, _ms, _pct, _Thread
from nodes.perf.model import MAX_RESULT_STACKS, AppScope, Hotspot, ScopeSummary, SliceStat, StackWeight


def walk(ctx, key: tuple[int, int]) -> None:
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


def _in_scope(ctx, key: tuple[int, int]) -> bool:
    sc = ctx.scope
    return sc is None or key[0] in sc.app_pids


def slice_hotspots(ctx) -> list[Hotspot]:
    """Self/total time per slice name over the app's threads when an app is identified
    (``ctx.scope``; rows marked scope="app"), else over every thread; then per thread. Only
    thread slices count: async spans (``PerfData.async_slices``: network requests,
    ``launching:``) are not time a thread spent."""
    if not ctx.threads:
        return []
    pd = ctx.pd
    mine = {k: th for k, th in ctx.threads.items() if _in_scope(ctx, k)}
    scope = "app" if ctx.scope is not None else None
    total_busy = sum(t.busy_us for t in mine.values())
    agg_self: dict[int, float] = defaultdict(float)
    agg_total: dict[int, float] = defaultdict(float)
    agg_count: dict[int, int] = defaultdict(int)
    for th in mine.values():
        for nid, v in th.self_by.items():
            agg_self[nid] += v
        for nid, v in th.total_by.items():
            agg_total[nid] += v
        for nid, v in th.count_by.items():
            agg_count[nid] += v
    out: list[Hotspot] = []
    ranked = sorted(agg_self, key=lambda n: (-agg_self[n], -agg_total[n]))[: ctx.top]
    for nid in ranked:
        out.append(slice_hotspot(ctx, nid, agg_self[nid], agg_total[nid], agg_count[nid], total_busy, None, scope))
    # per thread: the main thread and the busiest others (of the app, when there is one)
    keys = sorted(mine, key=lambda k: -mine[k].busy_us)[:8]
    if ctx.main in mine and ctx.main not in keys:
        keys.insert(0, ctx.main)
    if len(ctx.threads) > 1:
        for k in keys:
            th = ctx.threads[k]
            if th.busy_us <= 0:
                continue
            label = pd.thread_label(*k)
            for nid in sorted(th.self_by, key=lambda n: (-th.self_by[n], -th.total_by[n]))[:TOP_PER_THREAD]:
                out.append(slice_hotspot(ctx, nid, th.self_by[nid], th.total_by[nid], th.count_by[nid], th.busy_us,
                                         label, scope))
    return out


#: Rows of ``slice_stats`` kept per scope (by summed duration): bounded JSON.
MAX_SLICE_STATS = 1500
#: Names the summaries of the other scopes list.
SCOPE_TOP_NAMES = 5


def slice_stats(ctx) -> list[SliceStat]:
    """Per-name statistics of every slice, for the app ("app") and for all processes ("all"),
    as androidx TraceSectionMetric computes them: every slice with that name counts (nested
    ones too), ``sum`` adds their durations, ``first`` is the earliest by start time; thread
    slices and process-scoped async spans (kind "async") each get their own row."""
    pd = ctx.pd
    sc = ctx.scope
    acc: dict[tuple[str, str, int], list] = {}  # (scope, kind, nid) → [count, sum, min, max, first_ts, first_dur, pid]

    def add(scope: str, kind: str, nid: int, n: int, tot: float, lo: float, hi: float, t0: float, d0: float, pid: int):
        a = acc.get((scope, kind, nid))
        if a is None:
            acc[(scope, kind, nid)] = [n, tot, lo, hi, t0, d0, pid]
            return
        a[0] += n
        a[1] += tot
        a[2] = min(a[2], lo)
        a[3] = max(a[3], hi)
        if t0 < a[4]:
            a[4], a[5], a[6] = t0, d0, pid

    def group(kind: str, pid: int, ts: np.ndarray, dur: np.ndarray, name: np.ndarray) -> None:
        if not len(ts):
            return
        order = np.lexsort((ts, name))
        ts, dur, name = ts[order], dur[order], name[order]
        uniq, first, counts = np.unique(name, return_index=True, return_counts=True)
        sums = np.add.reduceat(dur, first)
        mins = np.minimum.reduceat(dur, first)
        maxs = np.maximum.reduceat(dur, first)
        scopes = ["all"] + (["app"] if sc is not None and pid in sc.app_pids else [])
        for j, nid in enumerate(uniq.tolist()):
            i = int(first[j])
            for scope in scopes:
                add(scope, kind, nid, int(counts[j]), float(sums[j]), float(mins[j]), float(maxs[j]),
                    float(ts[i]), float(dur[i]), pid)

    for key, th in ctx.threads.items():
        group("thread", key[0], th.ts, th.dur, th.name)
    for (pid, _track), cols in pd.async_slices.items():
        group("async", pid, np.frombuffer(cols.ts, dtype=np.float64), np.frombuffer(cols.dur, dtype=np.float64),
              np.frombuffer(cols.name, dtype=np.dtype(cols.name.typecode)).astype(np.int64))
    out: list[SliceStat] = []
    for scope in ("app", "all"):
        rows = sorted(((k, v) for k, v in acc.items() if k[0] == scope), key=lambda kv: -kv[1][1])[:MAX_SLICE_STATS]
        for (_, kind, nid), (n, tot, lo, hi, t0, d0, pid) in rows:
            out.append(SliceStat(
                name=pd.strings[nid], scope=scope, kind=kind, count=n, sum_ms=_ms(tot), min_ms=_ms(lo),
                max_ms=_ms(hi), first_ms=_ms(d0), first_start_ms=ctx.rel(t0), first_process=pd.processes.get(pid),
            ))
    return out


def app_scope(ctx) -> AppScope | None:
    """The app process and, apart, what the harness and the system processes did."""
    sc = ctx.scope
    if sc is None:
        return None
    pd = ctx.pd
    groups: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for k in ctx.threads:
        groups[sc.group(k[0])].append(k)
    summaries = []
    for g in ("app", "harness", "system"):
        keys = groups.get(g, [])
        if not keys:
            continue
        self_by: dict[int, float] = defaultdict(float)
        for k in keys:
            for nid, v in ctx.threads[k].self_by.items():
                self_by[nid] += v
        top = sorted(self_by, key=lambda n: -self_by[n])[:SCOPE_TOP_NAMES]
        pids = sorted({k[0] for k in keys})
        summaries.append(ScopeSummary(
            scope=g,
            processes=[pd.processes.get(p) or str(p) for p in pids][:20],
            busy_ms=_ms(sum(ctx.threads[k].busy_us for k in keys)),
            slice_count=sum(ctx.threads[k].count for k in keys),
            top=[f"{pd.strings[n]} ({_ms(self_by[n]):g} ms)" for n in top],
        ))
    return AppScope(pid=sc.pid, process=sc.process, chosen_by=sc.chosen_by, summaries=summaries,
                    harness=[pd.processes.get(p) or str(p) for p in sorted(sc.harness_pids)])


def slice_hotspot(ctx, nid: int, s: float, t: float, c: int, whole: float, thread: str | None,
                  scope: str | None = None) -> Hotspot:
    name = ctx.pd.strings[nid]
    file, line = ctx.pd.locations.get(nid, (None, None))
    if file is not None and name.endswith(f" ({file}:{line})"):
        name = name[: -len(f" ({file}:{line})")]  # viztracer's "func (file:line)"
    return Hotspot(
        name=name,
        file=file,
        line=line,
        self_ms=_ms(s),
        total_ms=_ms(t),
        self_pct=_pct(s, whole),
        total_pct=_pct(t, whole),
        count=c,
        thread=thread,
        kind="slice",
        scope=scope,
    )


def samples(ctx) -> None:
    """Aggregate sampled stacks per function (name, file): self, total, hottest line, and how
    many samples the function was on (anywhere in the stack, once per sample)."""
    pd = ctx.pd
    if not pd.stacks:
        ctx.sample_rows: list = []
        return
    refs = pd.frame_refs
    fkey = [(r.name, r.file) for r in refs]
    self_w: dict = defaultdict(float)
    total_w: dict = defaultdict(float)
    count: dict = defaultdict(int)
    line_w: dict = defaultdict(lambda: defaultdict(float))
    per_thread_self: dict = defaultdict(lambda: defaultdict(float))
    per_thread_total: dict = defaultdict(lambda: defaultdict(float))
    per_thread_count: dict = defaultdict(lambda: defaultdict(int))
    n_samples = pd.stack_samples
    grand = 0.0
    for key, w in pd.stacks.items():
        track, ids = key
        if not ids:
            continue
        grand += w
        ctx.sampled_busy[track] += w
        n = n_samples.get(key, 1)
        leaf = ids[-1]
        lk = fkey[leaf]
        self_w[lk] += w
        per_thread_self[track][lk] += w
        if refs[leaf].line is not None:
            line_w[lk][refs[leaf].line] += w
        seen = set()
        for i in ids:
            k = fkey[i]
            if k in seen:
                continue
            seen.add(k)
            total_w[k] += w
            count[k] += n
            per_thread_total[track][k] += w
            per_thread_count[track][k] += n
            if k != lk and refs[i].line is not None and k not in line_w:
                line_w[k][refs[i].line] += 0.0
        if len(ctx.paths) < MAX_PATHS:
            ctx.paths[(track, ("s",) + tuple(fkey[i] for i in ids[-64:]))] += w
    ctx.sample_rows = [self_w, total_w, count, line_w, per_thread_self, per_thread_total, per_thread_count, grand]


def sample_hotspots(ctx) -> list[Hotspot]:
    if not ctx.pd.stacks or not ctx.sample_rows:
        return []
    self_w, total_w, count, line_w, pts, ptt, ptc, grand = ctx.sample_rows

    def line_of(k) -> int | None:
        lines = line_w.get(k)
        if not lines:
            return None
        return max(lines.items(), key=lambda kv: (kv[1], -kv[0]))[0]

    out: list[Hotspot] = []
    # by self time, then total: callers with no self time of their own (main, <module>) come
    # after every function that has some, ordered by the time spent under them
    keys = sorted(total_w, key=lambda k: (-self_w.get(k, 0.0), -total_w[k], k[0], k[1] or ""))[: ctx.top]
    for k in keys:
        out.append(Hotspot(
            name=k[0], file=k[1], line=line_of(k),
            self_ms=_ms(self_w.get(k, 0.0)), total_ms=_ms(total_w[k]),
            self_pct=_pct(self_w.get(k, 0.0), grand), total_pct=_pct(total_w[k], grand),
            count=count.get(k, 0), thread=None, kind="sample",
        ))
    if len(pts) > 1:
        tracks = sorted(pts, key=lambda tr: -ctx.sampled_busy[tr])[:8]
        for tr in tracks:
            whole = ctx.sampled_busy[tr]
            label = ctx.pd.thread_label(*tr)
            for k in sorted(pts[tr], key=lambda k: (-pts[tr][k], -ptt[tr].get(k, 0.0), k[0], k[1] or ""))[:TOP_PER_THREAD]:
                out.append(Hotspot(
                    name=k[0], file=k[1], line=line_of(k),
                    self_ms=_ms(pts[tr][k]), total_ms=_ms(ptt[tr].get(k, 0.0)),
                    self_pct=_pct(pts[tr][k], whole), total_pct=_pct(ptt[tr].get(k, 0.0), whole),
                    count=ptc[tr].get(k, 0), thread=label, kind="sample",
                ))
    return out


def call_hotspots(ctx) -> list[Hotspot]:
    calls = ctx.pd.calls
    if not calls:
        return []
    whole = sum(c.self_us for c in calls) or 1.0
    ranked = sorted(calls, key=lambda c: (-c.self_us, -c.total_us))[: ctx.top]
    return [
        Hotspot(
            name=c.name, file=c.file, line=c.line,
            self_ms=_ms(c.self_us), total_ms=_ms(c.total_us),
            self_pct=_pct(c.self_us, whole), total_pct=_pct(c.total_us, whole),
            count=c.calls, thread=None, kind="call",
        )
        for c in ranked
    ]


def import_hotspots(ctx) -> list[Hotspot]:
    imps = ctx.pd.imports
    if not imps:
        return []
    whole = sum(i.cumulative_us for i in imps if i.depth == 0) or sum(i.self_us for i in imps) or 1.0
    ranked = sorted(imps, key=lambda i: (-i.self_us, -i.cumulative_us))[: ctx.top]
    return [
        Hotspot(
            name=i.module, file=i.file, line=1 if i.file else None,
            self_ms=_ms(i.self_us), total_ms=_ms(i.cumulative_us),
            self_pct=_pct(i.self_us, whole), total_pct=_pct(i.cumulative_us, whole),
            count=1, thread=None, kind="import",
        )
        for i in ranked
    ]


def stacks(ctx) -> list[StackWeight]:
    pd = ctx.pd
    items = sorted(ctx.paths.items(), key=lambda kv: -kv[1])[:MAX_RESULT_STACKS]
    out = []
    for (track, path), w in items:
        if path and path[0] == "s":
            frames = [f"{n} ({os.path.basename(f)})" if f else n for n, f in path[1:]]
        else:
            frames = [pd.strings[n] for n in path]
        out.append(StackWeight(frames=frames, weight_ms=_ms(w), thread=pd.thread_label(*track)))
    return out
