"""Ftrace bundles read in batches, as columns: the fast path of ``perfetto_ftrace``.

A batch is the bundles between two event-cap checks (at most ~1 MiB of packets). Their events
are decoded together (``perfetto_wire``): one pass gives every event's time, thread and kind,
one pass per kind its fields. What each kind does is what ``FtraceState.bundle`` does event by
event — the same state, the same order of arrival wherever order counts (the atrace and
scheduler columns, first-wins thread group ids, last-wins thread names, the caps that keep the
first N points) — so the two paths give the same PerfData. atrace lines of the common shapes
(``B|tgid|name``, ``E``, ``C|tgid|name|value``) and ``zero`` events are columns too
(perfetto_atrace_columns.py, one C pass when built); what is per event by nature (the other atrace lines, new tasks and
renames) stays a Python loop over plain lists, in arrival order.

A bundle this path does not read — non-compact ``sched_switch`` / ``sched_waking`` (older
kernels' traces), a time beyond 64 bits, a column shorter than its timestamps, wire shapes the
bulk decoder leaves alone — is read by ``FtraceState.bundle`` in its place in the order.
"""

from __future__ import annotations

from itertools import repeat

import numpy as np

from nodes.perf.model import MAX_COUNTER_POINTS
from nodes.perf.parsers import perfetto_atrace_columns as columns
from nodes.perf.parsers import perfetto_wire as wire
from nodes.perf.parsers.perfetto_binder import _RECV, _SEND
from nodes.perf.parsers.perfetto_bundle_view import BundleView, event_count
from nodes.perf.parsers.perfetto_bundle_view import full as upb_bundle
from nodes.perf.parsers.perfetto_cpu import MAX_POINTS as CPU_MAX_POINTS
from nodes.perf.parsers.perfetto_memory import _RSS_MEMBERS
from nodes.perf.parsers.perfetto_memory import MAX_POINTS as MEMORY_MAX_POINTS
from nodes.perf.parsers.perfetto_sched import BLOCKED, IN, NEW, OUT, WAKE
from nodes.perf.parsers.perfetto_slices import AtraceLog

_NUM = {name: num for num, name in wire.KINDS.items()}
#: Kinds read here; a bundle holding one of SLOW is read event by event.
FAST = frozenset({"print", "zero", "sched_blocked_reason", "binder_transaction", "binder_transaction_received",
                  "cpu_frequency", "cpu_idle", "rss_stat", "task_newtask", "task_rename"})
SLOW = frozenset({"sched_switch", "sched_waking"})
#: By kind number (the last entry for every number past the kinds): 1 a SLOW kind, 2 a FAST one.
_CLASS = np.zeros(max(wire.KINDS) + 2, np.int8)
_CLASS[[_NUM[k] for k in SLOW]] = 1
_CLASS[[_NUM[k] for k in FAST]] = 2
_C = ord("C")
_EMPTY = "[empty slice name]"
_CLONE_THREAD = 0x00010000
_BIG = 1 << 62


def read_batch(state, items: list, rows: dict | None = None) -> int:
    """Read ``items`` — [(FtraceEventBundle or its perfetto_bundle_view.BundleView, raw packet
    bytes)] in arrival order — into ``state`` (an FtraceState); returns how many bundles were
    dropped as malformed. Of a view, _apply reads only ``cpu`` and ``compact_sched.intern_table``;
    the event-by-event path gets upb's bundle. ``rows``: what the bundle check recorded of exactly
    these packets (perfetto_wire.recorded), else the walk reads them."""
    try:
        dec = _decode(items, rows)
    except wire.WireError:
        dec = None
    bad = 0
    if dec is None:
        for b, _ in items:
            bad += state.bundle_checked(upb_bundle(b))
        return bad
    slow = dec["slow"]
    i = 0
    while i < len(items):
        if slow[i]:
            bad += state.bundle_checked(upb_bundle(items[i][0]))
            i += 1
            continue
        j = i
        while j < len(items) and not slow[j]:
            j += 1
        try:
            _apply(state, items, dec, i, j)
        except (TypeError, ValueError, KeyError, IndexError, OverflowError):
            # Fields that decode but hold nonsense (an atrace tgid of digits int() refuses):
            # the event-by-event reader drops such a packet; here the bundles of this run are
            # counted as dropped (what was stored before the failure stays).
            bad += j - i
        i = j
    return bad


def _decode(items, rows=None):
    """Every bundle's events and compact columns as arrays, and which bundles need the slow path."""
    walk = _walk_native(items, rows) if wire.NATIVE is not None else _walk_numpy(items)
    slow, compact, ev_count = walk["slow"], walk["compact"], walk["ev_count"]
    nb = len(items)
    for c in ("switch_timestamp", "waking_timestamp"):
        values, counts = compact[c]
        if len(values):
            hi = np.cumsum(counts)
            total = np.concatenate(([0.0], np.cumsum(values.astype(np.float64))))
            big = np.concatenate(([0], np.cumsum(values >= np.uint64(_BIG))))
            huge = (total[hi] - total[hi - counts] >= 2.0 ** 61) | (big[hi] - big[hi - counts] > 0)
            slow[huge] = True  # times beyond 62 bits: the event-by-event reader decides
    nlen, kind_no = walk["nlen"], walk["kind_no"]
    if (nlen > 1).any():
        raise wire.WireError("an event with more than one message field")
    kind = kind_no.astype(np.int64)  # a field number: under 2^61
    kind[nlen == 0] = -1
    bundle_of = np.repeat(np.arange(nb), ev_count)
    ts = walk["ts"]
    cls = _CLASS[np.minimum(kind_no, len(_CLASS) - 1)]
    cls[kind < 0] = 0
    slow_ev = (cls == 1) | ((cls == 2) & (ts >= np.uint64(1 << 63)))
    if slow_ev.any():
        slow[np.unique(bundle_of[slow_ev])] = True
    return {"slow": slow, "joined": walk["joined"], "buf": walk["buf"], "ev_count": ev_count,
            "ev_first": np.cumsum(ev_count) - ev_count, "kind": kind, "k_off": walk["k_off"],
            "k_end": walk["k_off"] + walk["k_len"], "ts": wire.as_int64(ts), "pid": wire.as_uint32(walk["pid"]),
            "compact": compact, "bundle_of": bundle_of}


def _walk_native(items, rows=None):
    """The packets walked in C (perfetto_wire.bundles), or what the bundle check recorded of
    them as it walked them (``rows``, perfetto_wire.recorded: the same arrays): offsets into the
    packets joined once, no bytes object per event. A column written unpacked is counted by
    upb's full parse and not by the packed read: such a bundle is slow, as :func:`_walk_numpy`
    finds by comparing the counts; a column shorter than its timestamps likewise."""
    packets = [raw for _, raw in items]
    w = wire.recorded(packets, rows) if rows is not None else wire.bundles(packets)
    ev_count, compact = w["ev_count"], w["compact"]
    nb = len(items)
    slow = w["unpacked"].copy()
    slow |= np.fromiter((event_count(b) for b, _ in items), np.int64, nb) != ev_count
    slow |= (compact["switch_next_pid"][1] < compact["switch_timestamp"][1]) | (
        compact["waking_pid"][1] < compact["waking_timestamp"][1])
    return {"slow": slow, "compact": compact, "ev_count": ev_count, "joined": w["buf"],
            "buf": np.frombuffer(w["buf"], np.uint8), "ts": w["ts"], "pid": w["pid"], "nlen": w["nlen"],
            "kind_no": w["kind_no"], "k_off": w["k_off"], "k_len": w["k_len"]}


def _walk_numpy(items):
    """The packets walked by upb (the lite schema) and numpy: the reference for :func:`_walk_native`."""
    nb = len(items)
    ev_bytes: list[bytes] = []
    ev_count = np.zeros(nb, np.int64)
    cols: dict[str, list[bytes]] = {c: [] for c in wire.COMPACT}
    slow = np.zeros(nb, bool)
    for k, (b, raw) in enumerate(items):
        lite = wire.LitePacket.FromString(raw).ftrace_events
        evs = list(lite.event)
        if len(evs) != event_count(b):
            slow[k] = True
        ev_bytes += evs
        ev_count[k] = len(evs)
        cs = lite.compact_sched
        for c in wire.COMPACT:
            cols[c].append(b"".join(getattr(cs, c)))
    compact = {}
    for c, chunks in cols.items():
        values, counts = wire.packed(chunks)
        compact[c] = (values, np.array(counts, np.int64))
    for k, (view, _) in enumerate(items):
        b = upb_bundle(view)
        if b.HasField("compact_sched"):
            full = b.compact_sched
            for c in wire.COMPACT:
                if compact[c][1][k] != len(getattr(full, c)):
                    slow[k] = True  # not packed as Perfetto writes it: read by the generated classes
            if (len(full.switch_next_pid) < len(full.switch_timestamp)
                    or len(full.waking_pid) < len(full.waking_timestamp)):
                slow[k] = True  # a short column: the event-by-event reader drops the packet
    lens = np.fromiter(map(len, ev_bytes), np.int64, len(ev_bytes))
    joined = b"".join(ev_bytes)
    buf = np.frombuffer(joined + bytes(wire.PAD), np.uint8)
    end = np.cumsum(lens)
    start = end - lens
    f = wire.fields_numpy(buf, start, end, {1: 0, 2: 0})
    nlen, kind_no, k_off, k_len = f[-1]
    return {"slow": slow, "compact": compact, "ev_count": ev_count, "joined": joined, "buf": buf,
            "ts": f[1][1], "pid": f[2][1], "nlen": nlen, "kind_no": kind_no, "k_off": k_off, "k_len": k_len}


def _kind_fields(dec, sel: np.ndarray, wanted: dict[int, int]):
    return wire.fields(dec["buf"], dec["k_off"][sel], dec["k_end"][sel], wanted, last=False)


def _strings(dec, off: np.ndarray, ln: np.ndarray) -> list:
    return wire.strings(dec["joined"], off, ln)


def _apply(state, items, dec, b0: int, b1: int) -> None:
    """Bundles ``b0:b1`` (none of them slow) into ``state``, in arrival order."""
    e0 = int(dec["ev_first"][b0])
    e1 = int(dec["ev_first"][b1 - 1] + dec["ev_count"][b1 - 1])
    kind = dec["kind"][e0:e1]
    ts_all, pid_all, bundle_all = dec["ts"][e0:e1], dec["pid"][e0:e1], dec["bundle_of"][e0:e1]
    # sort keys: (bundle, phase, position, sub) in one int64; phase 0 compact switches,
    # 1 compact wakings, 2 events
    def key(bundle, phase, pos, sub=0):
        return (bundle.astype(np.int64) << 40) | (phase << 38) | (pos.astype(np.int64) << 1) | sub

    sched_rows: list[tuple] = []  # (key, tid, ts, code, arg) arrays
    for k in range(b0, b1):
        state.cpu.cpus.add(items[k][0].cpu)
    namer = _compact(state, items, dec, b0, b1, key, sched_rows)

    def where(name):
        return np.flatnonzero(kind == _NUM[name])

    pos_all = np.arange(e0, e1) - dec["ev_first"][bundle_all]  # position in its bundle
    # --- scheduler: blocked reasons ---
    sel = where("sched_blocked_reason")
    if len(sel):
        g = e0 + sel
        f = _kind_fields(dec, g, {1: 0, 3: 0})
        bpid = wire.as_int32(f[1][1])
        ok = (bpid != 0) & f[3][0]
        if ok.any():
            state.blocked_reasons += int(ok.sum())
            sched_rows.append((key(bundle_all[sel][ok], 2, pos_all[sel][ok]), bpid[ok], ts_all[sel][ok],
                               np.full(int(ok.sum()), BLOCKED, np.int8), (f[3][1][ok] != 0).astype(np.int64)))
    # --- binder ---
    bt = np.flatnonzero((kind == _NUM["binder_transaction"]) | (kind == _NUM["binder_transaction_received"]))
    if len(bt):
        # sends and receipts in arrival order, as columns (perfetto_binder.BinderState), read in
        # one pass; a receipt's fields 5 and 7 (none in its schema) are not read as reply / flags
        f = _kind_fields(dec, e0 + bt, {1: 0, 5: 0, 7: 0})
        send = kind[bt] == _NUM["binder_transaction"]
        state.binder.extend_columns(
            ts_all[bt], np.where(send, _SEND, _RECV), pid_all[bt], wire.as_int32(f[1][1]),
            (send & (wire.as_int32(f[5][1]) != 0)).astype(np.int64), np.where(send, wire.as_uint32(f[7][1]), 0))
    # --- CPU frequency and idle ---
    for name, table in (("cpu_frequency", state.cpu.frequency), ("cpu_idle", state.cpu.idle)):
        sel = where(name)
        if not len(sel):
            continue
        f = _kind_fields(dec, e0 + sel, {1: 0, 2: 0})
        cpu_id = wire.as_uint32(f[2][1])
        order = _stable_order(cpu_id)  # per CPU, in arrival order
        lo, hi = _runs(cpu_id[order])
        state.cpu.dropped += table.extend_runs(CPU_MAX_POINTS, cpu_id[order[lo]].tolist(), order[lo], lo, hi,
                                               ts_all[sel][order], wire.as_uint32(f[1][1])[order])
    # --- rss_stat ---
    sel = where("rss_stat")
    if len(sel):
        f = _kind_fields(dec, e0 + sel, {1: 0, 2: 0, 3: 0, 4: 0})
        _rss(state.memory, ts_all[sel], pid_all[sel], wire.as_int32(f[1][1]), wire.as_int64(f[2][1]),
             wire.as_uint32(f[3][1]) != 0, f[4][0], wire.as_uint32(f[4][1]))
    # --- atrace (print, zero), new tasks, renames ---
    at_rows: list[tuple] = []  # (key, tid, ts, code, arg) arrays
    _atrace(state, dec, e0, where, ts_all, pid_all, bundle_all, pos_all, namer, b0, b1, at_rows, sched_rows,
            key)
    if at_rows:
        k = np.concatenate([r[0] for r in at_rows])
        o = np.argsort(k, kind="stable")
        state.atrace.extend(*(np.concatenate([r[c] for r in at_rows])[o] for c in (1, 2, 3, 4)))
    if sched_rows:
        k = np.concatenate([r[0] for r in sched_rows])
        o = np.argsort(k, kind="stable")
        state.sched.extend(*(np.concatenate([r[c] for r in sched_rows])[o] for c in (1, 2, 3, 4)))


def _rss(memory, ts, tid, member, size, curr, has_mm, mm) -> None:
    """``rss_stat`` events in arrival order, as ``MemoryState.rss_values`` reads them one by one:
    the owner of an mm_id is whoever last reported it as its own (``curr``)."""
    valid = (member >= 0) & (member < len(_RSS_MEMBERS))
    setter = valid & curr & has_mm
    query = valid & ~curr
    n = len(ts)
    owner = np.where(curr, tid, -1)
    q = np.flatnonzero(query)
    if len(q):
        qmm = np.where(has_mm, mm, 0)
        both = np.flatnonzero(setter | query)
        order = both[np.lexsort((both, qmm[both]))]  # by mm_id, then arrival
        is_set = setter[order]
        grp = qmm[order]
        start = np.ones(len(order), bool)
        start[1:] = grp[1:] != grp[:-1]
        last = np.maximum.accumulate(np.where(is_set | start, np.arange(len(order)), 0))
        found = is_set[last]
        got = np.where(found, tid[order][last], -1)
        qs = ~is_set
        res = got[qs]
        at = order[qs]
        missing = np.flatnonzero(res < 0)
        if len(missing):
            before = memory.mm_owner
            res[missing] = [before.get(m, -1) for m in qmm[at[missing]].tolist()]
        owner[at] = res
    if setter.any():
        memory.mm_owner.update(_last_words(mm[setter], tid[setter]))
    unowned = query & (owner < 0)
    memory.rss_unowned += int(unowned.sum())
    keep = np.flatnonzero(valid & (owner >= 0))
    if not len(keep):
        return
    # one stable sort by (owner, member): owner is a tid (>= 0, under 2^32), member < 2^8
    series = (owner[keep] << 8) | member[keep]
    o = np.argsort(series, kind="stable")
    order = keep[o]
    lo, hi = _runs(series[o])
    names = [(int(k >> 8), _RSS_MEMBERS[int(k & 0xFF)]) for k in series[o][lo].tolist()]
    memory.dropped += memory.rss_by_tid.extend_runs(MEMORY_MAX_POINTS, names, order[lo], lo, hi, ts[order],
                                                    size[order] / 1048576.0)


def _stable_order(keys: np.ndarray) -> np.ndarray:
    """``np.argsort(keys, kind="stable")``; keys that fit 16 bits (CPU numbers) as uint16, which
    numpy sorts by radix (~5x faster than its timsort of int64 here)."""
    if len(keys) and int(keys.min()) >= 0 and int(keys.max()) < 1 << 16:
        return np.argsort(keys.astype(np.uint16), kind="stable")
    return np.argsort(keys, kind="stable")


def _last_words(keys: np.ndarray, values: np.ndarray):
    """``zip(keys, values)`` as ``dict.update`` takes it, one pair per distinct key: the keys in
    order of first appearance (where a new key enters the dict), each with its last value (what
    stays). A batch's ~10 k rss_stat owners name a few dozen mm_ids."""
    first_keys, first = np.unique(keys, return_index=True)
    last = len(keys) - 1 - np.unique(keys[::-1], return_index=True)[1]
    o = np.argsort(first, kind="stable")
    return zip(first_keys[o].tolist(), values[last[o]].tolist())


def _runs(sorted_keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where each run of equal values of ``sorted_keys`` starts and ends."""
    cut = np.flatnonzero(sorted_keys[1:] != sorted_keys[:-1]) + 1
    return np.concatenate(([0], cut)), np.concatenate((cut, [len(sorted_keys)]))


class _Staging(AtraceLog):
    """An AtraceLog that also notes, for each row, the event it came from (``cur``)."""

    def __init__(self) -> None:
        super().__init__()
        self.cur = 0
        self.at: list[int] = []

    def push(self, tid: int, ts: int, code: int, arg: int = 0) -> None:
        super().push(tid, ts, code, arg)
        self.at.append(self.cur)


def _atrace(state, dec, e0, where, ts_all, pid_all, bundle_all, pos_all, namer, b0, b1, at_rows,
            sched_rows, key) -> None:
    """Print and zero events of the run: the strict ``B``/``E``/``C`` shapes and the zero begins,
    ends and counters as columns (``columns.split``: one C pass, or its numpy reference); every
    other line, new tasks and renames one by one in arrival order (``_ordered_loop``), together
    with what of the columns that loop can see.

    The columns' effects that depend on order are placed in that loop at the event they come
    from: the first begin of each thread not yet in ``tgid_of`` (first wins, and a new task
    reads its parent's entry) and the first begin of each name not yet interned (name ids are
    given in order of first appearance). Counter points keep arrival order per series and
    series are created in order of first point; when a line left to the loop is a counter
    (``C`` not in the strict form) all counters of the run go through the loop instead, so the
    two never interleave out of order.
    """
    joined, buf = dec["joined"], dec["buf"]
    names = state.names
    none = np.zeros(0, np.int64)
    parts: list[tuple] = []  # (events, tag, payloads) for the ordered loop
    pr = where("print")
    state.prints += len(pr)
    boff = blen = none
    if len(pr):
        fp = _kind_fields(dec, e0 + pr, {2: 2})
        boff, blen = fp[2][2], fp[2][3]
    zr = where("zero")
    z = (none,) * 7
    if len(zr):
        f = _kind_fields(dec, e0 + zr, {1: 0, 2: 2, 3: 0, 4: 0})
        z = (zr, wire.as_int64(f[1][1]), f[2][2], f[2][3], pid_all[zr], wire.as_int64(f[3][1]), wire.as_int64(f[4][1]))
    s = columns.split(joined, buf, (pr, boff, blen, pid_all[pr]), z, names, state.tgid_of, _EMPTY)
    shape, ends = s["shape"], s["ends"]
    if len(ends):
        at_rows.append((key(bundle_all[ends], 2, pos_all[ends]), pid_all[ends], ts_all[ends],
                        np.full(len(ends), 2, np.int8), np.zeros(len(ends), np.int64)))
    counters_here = s["rest_c"] == 0
    if len(pr):
        rest = np.flatnonzero(shape == columns.REST)
        if not counters_here:
            rest = np.union1d(rest, np.flatnonzero(shape == columns.COUNTER))
        parts.append((pr[rest], 0, [joined[o:o + n].decode("utf-8", "replace")
                                    for o, n in zip(boff[rest].tolist(), blen[rest].tolist())]))
    if not counters_here:  # the zero counters go through the loop too
        zc = s["c_ev"][s["c_zero"] == 1]
        if len(zc):
            at = np.searchsorted(zr, zc)
            flag, zpid = (wire.as_int32(z[k][at].view(np.uint64)).tolist() for k in (1, 5))
            listed = s["listed"]
            names_c = [listed[v] for v in s["c_vid"][s["c_zero"] == 1].tolist()]
            parts.append((zc, 1, list(zip(flag, names_c, zpid, s["c_value"][s["c_zero"] == 1].tolist()))))
    b_ev = s["b_ev"]
    if len(b_ev):
        parts.append((s["t_ev"], 4, s["t_pairs"]))
        parts.append((s["n_ev"], 5, s["n_names"]))
    nt = where("task_newtask")
    if len(nt):
        f = _kind_fields(dec, e0 + nt, {1: 0, 2: 2, 3: 0})
        parts.append((nt, 2, list(zip(wire.as_int32(f[1][1]).tolist(), _strings(dec, f[2][2], f[2][3]),
                                      wire.as_int64(f[3][1]).tolist()))))
    rn = where("task_rename")
    if len(rn):
        f = _kind_fields(dec, e0 + rn, {1: 0, 3: 2})
        parts.append((rn, 3, list(zip(wire.as_int32(f[1][1]).tolist(), _strings(dec, f[3][2], f[3][3])))))
    loop = np.concatenate([p[0] for p in parts]) if parts else none
    staging = _Staging()
    c_ev = s["c_ev"] if counters_here else none

    def store_counters(n: int) -> None:
        """The run's first ``n`` counter points into ``state.counters``."""
        columns.counters(state.counters, s["listed"], s["c_tgid"][:n], s["c_vid"][:n], ts_all[c_ev[:n]],
                         s["c_value"][:n], MAX_COUNTER_POINTS)

    try:
        if len(loop) or namer is not None:
            tag = np.concatenate([np.full(len(p[0]), p[1], np.int64) for p in parts]) if parts else loop
            payload = [x for p in parts for x in p[2]]
            order = np.argsort(loop, kind="stable")
            _ordered_loop(state, staging, loop[order], tag[order], [payload[i] for i in order.tolist()], ts_all,
                          pid_all, bundle_all, pos_all, namer, b0, b1, at_rows, sched_rows, key)
    except Exception:
        store_counters(int(np.searchsorted(c_ev, staging.cur)))  # what came before the failure stays
        raise
    store_counters(len(c_ev))
    if len(b_ev):
        listed = s["listed"]
        ids = np.fromiter(map(names.get, listed, repeat(-1, len(listed))), np.int64, len(listed))
        at_rows.append((key(bundle_all[b_ev], 2, pos_all[b_ev]), s["b_tid"], ts_all[b_ev],
                        np.full(len(b_ev), 1, np.int8), ids[s["b_vid"]]))


def _ordered_loop(state, staging, loop, tag, payload, ts_all, pid_all, bundle_all, pos_all, namer, b0, b1,
                  at_rows, sched_rows, key):
    """Atrace lines, zero events, new tasks and renames, one by one in arrival order; each
    bundle's compact-sched thread names (``namer``, a :class:`_Names` or None) before its events,
    written with those of the new tasks and renames in one step at the end (or at a failing
    line, what the event-by-event reader named before it). Tags: 0 a line,
    1 a zero event, 2 a new task, 3 a rename, 4 a thread's first begin (tid, tgid), 5 a name's
    first begin."""
    real, state.atrace = state.atrace, staging
    at_pos = staging.at
    nt_rows: list[tuple[int, int, int]] = []  # (event, tid, ts)
    comm = state.comm
    tgid_of = state.tgid_of
    bundles = bundle_all[loop].tolist() if len(loop) else []
    ts_l = ts_all[loop].tolist()
    pid_l = pid_all[loop].tolist()
    tag_l = tag.tolist()
    loop_l = loop.tolist()
    named: list[tuple] = []  # (bundle, pid, name) of new tasks and renames, for write_names

    def write_names(b: int) -> None:
        """What the run names in the bundles before ``b`` into ``comm`` (see :class:`_Names`)."""
        if namer is not None:
            namer.write(b, named)
        else:
            comm.update((pid, name) for _, pid, name in named)

    j = 0
    try:
        for j in range(len(loop_l)):
            t, tid, what, pl = ts_l[j], pid_l[j], tag_l[j], payload[j]
            staging.cur = loop_l[j]
            if what == 0:
                state._atrace_line(t, tid, pl)
            elif what == 4:
                tgid_of.setdefault(*pl)
            elif what == 5:
                state._name_id(pl)
            elif what == 1:
                fl, nm, zp, v = pl
                state._zero_values(t, tid, fl, nm, zp, v)
            elif what == 2:
                npid, c, cf = pl
                if c:
                    named.append((bundles[j], npid, c))
                if npid:
                    state._sched_seen(t)
                    nt_rows.append((loop_l[j], npid, t))
                if cf & _CLONE_THREAD:
                    tgid_of.setdefault(npid, tgid_of.get(tid, tid))
                else:
                    tgid_of.setdefault(npid, npid)
            else:
                rp, c = pl
                if c:
                    named.append((bundles[j], rp, c))
    except Exception:
        # what the event-by-event reader named before the failing event: its bundle's names
        # and the events before it
        write_names(bundles[j] + 1 if bundles else b0)
        raise
    finally:
        state.atrace = real
    write_names(b1)
    if at_pos:
        p = np.array(at_pos, np.int64)
        at_rows.append((key(bundle_all[p], 2, pos_all[p]), *staging.columns()))
    if nt_rows:
        p = np.array([r[0] for r in nt_rows], np.int64)
        sched_rows.append((key(bundle_all[p], 2, pos_all[p]), np.array([r[1] for r in nt_rows], np.int64),
                           np.array([r[2] for r in nt_rows], np.int64), np.full(len(p), NEW, np.int8),
                           np.zeros(len(p), np.int64)))


def _compact(state, items, dec, b0, b1, key, sched_rows) -> _Names | None:
    """Compact sched of bundles b0:b1: scheduler rows and counts; returns the thread names it
    sets (None: none), for the ordered loop to write."""
    compact = dec["compact"]

    def col(name):
        """The column over bundles b0:b1, and each value's bundle."""
        values, counts = compact[name]
        lo, hi = int(counts[:b0].sum()), int(counts[:b1].sum())
        return values[lo:hi], np.repeat(np.arange(b0, b1), counts[b0:b1]), counts[b0:b1]

    def times(deltas, owner, counts):
        """Delta-encoded times → absolute, restarting at each bundle (wrapping sums are exact:
        every bundle's own total is under 2^61, checked in _decode)."""
        run = np.cumsum(deltas)  # uint64, wraps
        first = np.cumsum(counts) - counts
        base = np.concatenate(([np.uint64(0)], run))[first]
        return (run - base[owner - b0]).astype(np.int64)

    deltas, sw_b, sw_n = col("switch_timestamp")
    wdeltas, wk_b, wk_n = col("waking_timestamp")
    if not len(deltas) and not len(wdeltas):
        return None
    no_rows = np.zeros(0, np.int64)
    sw_rows = wk_rows = (no_rows, no_rows, no_rows)  # (bundle, pid, intern index) that may name a thread
    first_in: dict[int, int] = {}  # cpu → the bundle whose switch was its first (this segment)
    n = len(deltas)
    if n:
        t = times(deltas, sw_b, sw_n)
        nxt = wire.as_int32(col("switch_next_pid")[0])
        # a bundle's columns line up from its first switch (_decode checked next_pid's length)
        sw_first = np.cumsum(sw_n) - sw_n
        nxt_all, nxt_n = nxt, col("switch_next_pid")[2]
        nxt = np.concatenate([nxt_all[o:o + c] for o, c in zip((np.cumsum(nxt_n) - nxt_n).tolist(), sw_n.tolist())]) \
            if (nxt_n != sw_n).any() else nxt_all
        ps_all, _, ps_n = col("switch_prev_state")
        ps_all = wire.as_int64(ps_all)
        idx_all, _, idx_n = col("switch_next_comm_index")
        idx_all = wire.as_uint32(idx_all)
        prev_state = np.ones(n, np.int64)
        idx = np.full(n, -1, np.int64)
        pos = np.arange(n) - sw_first[sw_b - b0]  # position within its bundle
        for arr, src, cnt in ((prev_state, ps_all, ps_n), (idx, idx_all, idx_n)):
            if (cnt == sw_n).all():
                arr[:] = src
            else:  # a column shorter (or longer) than the times: what it has, in order
                src_first = np.cumsum(cnt) - cnt
                have = pos < cnt[sw_b - b0]
                arr[have] = src[src_first[sw_b - b0][have] + pos[have]]
        state.compact_switches += n
        state._sched_seen(int(t.min()))
        state._sched_seen(int(t.max()))
        prev = np.empty(n, np.int64)
        prev[1:] = nxt[:-1]
        skip = np.zeros(n, bool)
        for b, o, c in zip(range(b0, b1), sw_first.tolist(), sw_n.tolist()):
            if not c:
                continue
            cpu = items[b][0].cpu
            if cpu in state._cpu_current:
                prev[o] = state._cpu_current[cpu]
            else:
                state._cpu_first_switch[cpu] = int(t[o])
                first_in.setdefault(cpu, b)
                skip[o] = True  # the CPU's first switch: who ran before is unknown
            state._cpu_current[cpu] = int(nxt[o + c - 1])
            state._cpu_first_switch.setdefault(cpu, int(t[o]))
        named = np.flatnonzero((idx >= 0) & (nxt != 0))
        sw_rows = (sw_b[named] - b0, nxt[named], idx[named])
        use = np.flatnonzero(~skip)
        m = len(use)
        if m:
            tid = np.stack([prev[use], nxt[use]], 1).ravel()
            keep = tid != 0  # tid 0 is the idle task: not a thread anyone asks about
            k = key(sw_b[use], 0, pos[use])
            k = np.stack([k, k | 1], 1).ravel()  # the leaving task (sub 0), then the one coming in (1)
            sched_rows.append((k[keep], tid[keep], np.repeat(t[use], 2)[keep],
                               np.tile(np.array([OUT, IN], np.int8), m)[keep],
                               np.stack([prev_state[use], np.zeros(m, np.int64)], 1).ravel()[keep]))
    nw = len(wdeltas)
    if nw:
        t = times(wdeltas, wk_b, wk_n)
        pids_all, _, pid_n = col("waking_pid")
        pids_all = wire.as_int32(pids_all)
        wk_first = np.cumsum(wk_n) - wk_n
        wpos = np.arange(nw) - wk_first[wk_b - b0]
        pid_first = np.cumsum(pid_n) - pid_n
        pids = pids_all[pid_first[wk_b - b0] + wpos]
        widx_all, _, widx_n = col("waking_comm_index")
        widx_all = wire.as_uint32(widx_all)
        widx = np.full(nw, -1, np.int64)
        have = wpos < widx_n[wk_b - b0]
        widx[have] = widx_all[(np.cumsum(widx_n) - widx_n)[wk_b - b0][have] + wpos[have]]
        first_t = np.full(b1 - b0, np.iinfo(np.int64).max, np.int64)
        for b in range(b0, b1):
            cpu = items[b][0].cpu
            ft = state._cpu_first_switch.get(cpu)
            if ft is not None and wk_n[b - b0] and first_in.get(cpu, b) <= b:
                first_t[b - b0] = ft
        ok = t >= first_t[wk_b - b0]
        state.compact_wakings_skipped += int(nw - ok.sum())
        ok &= pids != 0
        sel = np.flatnonzero(ok)
        if len(sel):
            state.wakings += len(sel)
            state._sched_seen(int(t[sel].min()))
            state._sched_seen(int(t[sel].max()))
            named = sel[widx[sel] >= 0]
            wk_rows = (wk_b[named] - b0, pids[named], widx[named])
            sched_rows.append((key(wk_b[sel], 1, wpos[sel]), pids[sel], t[sel],
                               np.full(len(sel), WAKE, np.int8), np.zeros(len(sel), np.int64)))
    if not len(sw_rows[0]) and not len(wk_rows[0]):
        return None
    return _Names(state.comm, items, b0, b1, sw_rows, wk_rows)


class _Names:
    """The thread names compact sched sets in bundles ``b0:b1``, for :func:`_ordered_loop` to
    write into ``comm`` together with those of the run's new tasks and renames, in one step
    (``_wirec.name_threads``, or :func:`_name_threads_python`): nothing else in the run reads
    ``comm``. Rows: (bundle - b0, pid, intern index)."""

    def __init__(self, comm: dict, items: list, b0: int, b1: int, sw_rows: tuple, wk_rows: tuple):
        self.comm, self.items, self.b0 = comm, items, b0
        self.sw = tuple(np.ascontiguousarray(c, np.int64) for c in sw_rows)
        self.wk = tuple(np.ascontiguousarray(c, np.int64) for c in wk_rows)
        self.native = getattr(wire.NATIVE, "name_threads", None)  # None: no extension, or one built before it

    def write(self, b: int, events: list) -> None:
        """The names of the bundles before ``b`` and ``events`` [(bundle, pid, name)] (new
        tasks and renames in those bundles, in arrival order) into ``comm``."""
        hi = b - self.b0
        sz, wz = np.searchsorted(self.sw[0], hi), np.searchsorted(self.wk[0], hi)
        ev = [np.array([e[k] for e in events], np.int64) - (self.b0 if k == 0 else 0) for k in (0, 1)]
        rows = (*(c[:sz] for c in self.sw), *(c[:wz] for c in self.wk), *ev, [e[2] for e in events])
        bundles = self.items[self.b0:b]
        if self.native is not None:  # the intern tables read from the packets' bytes, in C
            self.native(self.comm, [raw for _, raw in bundles], 0, *rows, _compact_spans(bundles))
        else:
            used = set(rows[0].tolist()) | set(rows[3].tolist())
            tables = [[wire.text(n) for n in bundles[k][0].compact_sched.intern_table] if k in used else []
                      for k in range(hi)]
            _name_threads_python(self.comm, tables, 0, *rows)


def _compact_spans(items: list) -> np.ndarray:
    """Per packet, where its one compact_sched is — (offset, length), as the bundle check found
    it in a plain packet (perfetto_bundle_view.BundleView: one bundle, one compact_sched, nothing
    else that a walk could stumble on), (0, 0) when it has none — or (-1, -1): _wirec.name_threads
    walks the packet for its intern tables. A plain packet's intern tables are those strings."""
    spans = np.full((len(items), 2), -1, np.int64)
    for k, (b, _) in enumerate(items):
        if isinstance(b, BundleView) and b.seq >= 0:
            spans[k] = (b._cs_off, b._cs_len) if b._cs_off >= 0 else (0, 0)
    return spans


def _name_threads_python(comm: dict, tables: list[list], base: int, sw_b, sw_pid, sw_idx, wk_b, wk_pid,
                         wk_idx, ev_b, ev_pid, ev_name: list) -> None:
    """The thread names a run of bundles sets, written into ``comm`` bundle by bundle as
    FtraceState.bundle writes them: from compact-sched switch rows (b, next_pid, intern index)
    ``comm[pid]`` assigned, then from waking rows (b, pid, intern index) a pid not yet in
    ``comm`` named by a non-empty name, then from the events' rows (b, pid, name: new tasks and
    renames) ``comm[pid] = name``; rows in arrival order, ``tables[b - base]`` bundle b's intern
    table. An index outside its table names nothing. The reference for _wirec.name_threads
    (nodes/perf/parsers/_wirec.c), which reads the tables from the packets' bytes instead of
    upb's objects; the same ValueError, before ``comm`` is written, for rows out of range or
    order."""
    sw = list(zip(*(c.tolist() for c in (sw_b, sw_pid, sw_idx))))
    wk = list(zip(*(c.tolist() for c in (wk_b, wk_pid, wk_idx))))
    ev = list(zip(ev_b.tolist(), ev_pid.tolist(), ev_name))
    for rows in (sw, wk, ev):
        bs = [r[0] for r in rows]
        if any(not 0 <= b - base < len(tables) for b in bs) or bs != sorted(bs):
            raise ValueError("name_threads: bundle out of range or out of order")
    i = j = n = 0
    for k, table in enumerate(tables):
        while i < len(sw) and sw[i][0] - base == k:
            _, pid, at = sw[i]
            if 0 <= at < len(table):
                comm[pid] = table[at]
            i += 1
        while j < len(wk) and wk[j][0] - base == k:
            _, pid, at = wk[j]
            if 0 <= at < len(table) and table[at] and pid not in comm:
                comm[pid] = table[at]
            j += 1
        while n < len(ev) and ev[n][0] - base == k:
            comm[ev[n][1]] = ev[n][2]
            n += 1
