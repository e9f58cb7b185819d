"""Web vitals of a Chrome DevTools trace: FCP, LCP, CLS, TBT as Lighthouse *observes* them.

Lighthouse 12's definitions (read from the npm package ``lighthouse@12.2.3``), implemented on
the reader's page marks (``PerfData.marks``: instants with their args) and the main thread's
``RunTask`` slices:

* Main frame and its renderer main thread — ``TraceProcessor.findMainFrameIds`` /
  ``findMainFramePidTids`` (core/lib/tracehouse/trace-processor.js): the parentless frame of
  ``TracingStartedInBrowser`` (else ``TracingStartedInPage``'s page), its processes from
  ``FrameCommittedInBrowser`` / ``ProcessReadyInBrowser``, the ``CrRendererMain`` thread of each
  (else ``CrBrowserMain``). The frame tree: frames of those events, resolved to their roots.
* Time origin — ``computeTimeOrigin('auto')``: the main frame's ``navigationStart`` whose
  ``documentLoaderURL`` is http(s)/chrome. Lighthouse keeps the last; we report every one
  (``pages``) and the last as ``page``.
* FCP — the main frame's first ``firstContentfulPaint`` after the origin
  (``computeNavigationTimingsForFrame``); ``fcp_all_frames_ms`` over the frame tree.
* LCP — ``computeValidLCPAllFrames`` on the main frame's events: walking back from the end to
  the origin, the frame's last ``largestContentfulPaint::Candidate`` or ``::Invalidate``; a
  final Invalidate means no LCP.
* CLS — core/computed/metrics/cumulative-layout-shift.js: ``LayoutShift`` events of the frame
  tree with ``is_main_frame`` set, each ``weighted_score_delta``; one with ``had_recent_input``
  is dropped unless it comes within 500 ms of the first ``viewport`` event (emulation) and no
  input-free shift came before it; sessions end after a 1 s gap or 5 s; CLS is the largest
  session's sum.
* TBT — core/computed/metrics/total-blocking-time.js and lantern's TBTUtils: over the main
  thread's top-level tasks (``RunTask`` and its older names; a task that overlaps the next is
  cut 1 µs before it), the part of each task beyond 50 ms, clipped to [FCP, TTI].
* TTI — core/computed/metrics/interactive.js: the first 5 s window after FCP that is quiet for
  the CPU (no top-level task ≥ 50 ms) and the network (≤ 2 GET requests in flight, failed,
  ≥ 400 and non-network schemes ignored); TTI = max(its CPU-quiet start, FCP, DCL).

Where we differ (docs/analyzer.md, "Web vitals"): Lighthouse reads the requests for TTI from
the DevTools log; we read the trace's ``ResourceSendRequest`` / ``ResourceReceiveResponse`` /
``ResourceFinish`` (same requests, same clock). With several navigations each page is bounded
by the next ``navigationStart`` (Lighthouse analyses only the last and counts every shift in
the trace). A metric the trace cannot give is None with a reason in ``missing``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable, NamedTuple

import numpy as np

from nodes.perf.model import PageVitals, PerfData

#: Lighthouse's names of a main-thread top-level task (TraceProcessor.isScheduleableTask).
SCHEDULABLE_TASKS = (
    "RunTask",
    "ThreadControllerImpl::RunTask",
    "ThreadControllerImpl::DoWork",
    "TaskQueueManager::ProcessTaskFromWorkQueue",
)
#: ACCEPTABLE_NAVIGATION_URL_REGEX of trace-processor.js.
NAVIGATION_URL = re.compile(r"^(chrome|https?):")
#: TBTUtils.BLOCKING_TIME_THRESHOLD: the part of a task beyond this blocks input.
BLOCKING_MS = 50.0
#: interactive.js: TTI needs this long a quiet window, with at most this many requests in flight.
QUIET_WINDOW_MS = 5000.0
ALLOWED_CONCURRENT_REQUESTS = 2
#: cumulative-layout-shift.js: shifts flagged had_recent_input still count this soon after the
#: first viewport change (Chrome flags emulation as input).
RECENT_INPUT_WINDOW_MS = 500.0
#: CLS session windows: a new session after this gap, or once a session is this long.
CLS_GAP_US = 1_000_000.0
CLS_LIMIT_US = 5_000_000.0
#: UrlUtils NON_NETWORK_SCHEMES (core/lib/url-utils.js), plus web sockets (network-monitor.js).
NON_NETWORK_SCHEMES = frozenset({"blob", "data", "intent", "file", "filesystem", "chrome-extension", "ws", "wss"})

#: How to record a trace that has what is missing.
CAPTURE_HINT = (
    "record the page load with the DevTools Performance panel (reload), or with Lighthouse / "
    "Tracing.start using the categories devtools.timeline, loading, blink.user_timing and "
    "disabled-by-default-devtools.timeline"
)

class Mark(NamedTuple):
    """One page mark (``PerfData.marks``): an instant the reader kept with its decoded args."""

    ts: float  # µs
    pid: int
    tid: int
    name: str
    args: dict | None


def _data(args: dict | None) -> dict:
    d = args.get("data") if isinstance(args, dict) else None
    return d if isinstance(d, dict) else {}


def frame_of(args: dict | None) -> str | None:
    """TraceProcessor.getFrameId: ``args.data.frame`` || ``args.data.frameID`` || ``args.frame``."""
    d = _data(args)
    f = d.get("frame") or d.get("frameID") or (args.get("frame") if isinstance(args, dict) else None)
    return f if isinstance(f, str) else None


@dataclass
class MainFrame:
    frame: str
    #: renderer pid → its main thread's tid
    threads: dict[int, int]
    #: every frame id whose root is the main frame (its frame tree), or None when the trace
    #: has no frame tree (Lighthouse then uses the main frame's events alone)
    tree: set[str] | None
    urls: dict[str, str] = field(default_factory=dict)


def find_main_frame(pd: PerfData, marks: list[Mark]) -> MainFrame | None:
    """findMainFrameIds + findMainFramePidTids + the frame tree of processTrace."""
    frame = pid = None
    started = next((m for m in marks if m.name == "TracingStartedInBrowser"), None)
    frames = _data(started.args).get("frames") if started else None
    if isinstance(frames, list):
        main = next((f for f in frames if isinstance(f, dict) and not f.get("parent")), None)
        if main and main.get("frame") and main.get("processId"):
            frame, pid = main["frame"], main["processId"]
    if frame is None:
        in_page = next((m for m in marks if m.name == "TracingStartedInPage"), None)
        page = _data(in_page.args).get("page") if in_page else None
        if isinstance(page, str) and page:
            frame, pid = page, in_page.pid
    if frame is None:
        nav = next((m for m in marks if _nav_of_interest(m) and _data(m.args).get("isLoadingMainFrame")), None)
        send = next((m for m in marks if m.name == "ResourceSendRequest"), None)
        if nav and send and (send.pid, send.tid) == (nav.pid, nav.tid) and isinstance((nav.args or {}).get("frame"), str):
            frame, pid = nav.args["frame"], nav.pid
    if frame is None or not isinstance(pid, int):
        return None
    pids = [
        _data(m.args).get("processId")
        for m in marks
        if m.name in ("FrameCommittedInBrowser", "ProcessReadyInBrowser")
        and _data(m.args).get("frame") == frame
        and _data(m.args).get("processId")
    ] or [pid]
    threads: dict[int, int] = {}
    for p in dict.fromkeys(pids):
        if not isinstance(p, int):
            continue
        named = {info.name: t for (pp, t), info in sorted(pd.threads.items()) if pp == p and info.name}
        tid = named.get("CrRendererMain") or named.get("CrBrowserMain")
        if tid:
            threads[p] = tid
    # the frame tree: TracingStartedInBrowser's frames, updated by every commit
    parent: dict[str, str | None] = {}
    urls: dict[str, str] = {}
    for f in frames if isinstance(frames, list) else ():
        if isinstance(f, dict) and isinstance(f.get("frame"), str):
            parent[f["frame"]] = f.get("parent")
            urls[f["frame"]] = str(f.get("url") or "")
    for m in marks:
        d = _data(m.args)
        if m.name == "FrameCommittedInBrowser" and isinstance(d.get("frame"), str) and "url" in d:
            parent[d["frame"]] = d.get("parent")
            urls[d["frame"]] = str(d.get("url") or "")
    tree: set[str] | None = None
    if frame in parent:
        tree = set()
        for f in parent:
            cur, seen = f, set()
            while parent.get(cur) and cur not in seen:
                seen.add(cur)
                cur = parent[cur]
            if cur == frame:
                tree.add(f)
    return MainFrame(frame=frame, threads=threads, tree=tree, urls=urls)


def _nav_of_interest(m: Mark) -> bool:
    """TraceProcessor._isNavigationStartOfInterest."""
    if m.name != "navigationStart":
        return False
    d = _data(m.args)
    if "documentLoaderURL" not in d:
        return True  # pre-M67 traces
    url = d.get("documentLoaderURL")
    return bool(url) and isinstance(url, str) and bool(NAVIGATION_URL.match(url))


@dataclass
class Task:
    """A main-thread top-level task in absolute ms (as getMainThreadTopLevelEvents, minus the origin)."""

    start: float
    end: float
    duration: float


def top_level_tasks(pd: PerfData, threads: dict[int, int], origin_us: float) -> list[Task]:
    """TraceProcessor.getMainThreadTopLevelEvents: schedulable tasks of the main thread(s) that
    end after the origin, in start order (longer first on ties), each overlapping task cut 1 µs
    before the next one starts. Times are absolute ms (µs / 1000)."""
    ids = [pd.strings.ids[n] for n in SCHEDULABLE_TASKS if n in pd.strings.ids]
    if not ids:
        return []
    ts_all, dur_all = [], []
    for pid, tid in threads.items():
        cols = pd.slices.get((pid, tid))
        if cols is None or not len(cols):
            continue
        name = np.frombuffer(cols.name, dtype=np.dtype(cols.name.typecode))
        keep = np.isin(name, ids)
        ts_all.append(np.frombuffer(cols.ts, dtype=np.float64)[keep])
        dur_all.append(np.frombuffer(cols.dur, dtype=np.float64)[keep])
    if not ts_all:
        return []
    ts = np.concatenate(ts_all)
    dur = np.concatenate(dur_all)
    keep = (dur > 0) & (ts + dur >= origin_us)  # `!event.dur` and `end < startTime` skip
    ts, dur = ts[keep], dur[keep]
    order = np.lexsort((-dur, ts))
    out: list[Task] = []
    prev: Task | None = None
    for t, d in zip(ts[order].tolist(), dur[order].tolist()):
        start, end = t / 1000.0, (t + d) / 1000.0
        if prev is not None and start < prev.end:
            prev.end = start - 0.001
        prev = Task(start, end, d / 1000.0)
        out.append(prev)
    return out


def blocking_time(tasks: Iterable[Task], start_ms: float, end_ms: float) -> tuple[float, int]:
    """TBTUtils.calculateSumOfBlockingTime over top-level tasks (absolute ms); also how many
    tasks contributed more than nothing."""
    if end_ms <= start_ms:
        return 0.0, 0
    total, n = 0.0, 0
    for t in tasks:
        if t.duration < BLOCKING_MS or t.end < start_ms or t.start > end_ms:
            continue
        clipped = min(t.end, end_ms) - max(t.start, start_ms)
        if clipped < BLOCKING_MS:
            continue
        total += clipped - BLOCKING_MS
        n += clipped > BLOCKING_MS
    return total, n


@dataclass
class Request:
    start_ms: float
    end_ms: float | None
    get: bool
    failed: bool
    status: int
    url: str


def requests(marks: list[Mark]) -> list[Request]:
    """Network requests from the trace's Resource* events, by requestId."""
    by: dict[Any, dict] = {}
    for ts, _pid, _tid, name, args in marks:
        if name not in ("ResourceSendRequest", "ResourceReceiveResponse", "ResourceFinish"):
            continue
        d = _data(args)
        rid = d.get("requestId")
        if rid is None:
            continue
        r = by.setdefault(rid, {})
        if name == "ResourceSendRequest":
            r.setdefault("start", ts / 1000.0)
            r["method"] = d.get("requestMethod", "GET")
            r["url"] = str(d.get("url") or "")
        elif name == "ResourceReceiveResponse":
            if isinstance(d.get("statusCode"), (int, float)):
                r["status"] = int(d["statusCode"])
        else:
            ft = d.get("finishTime")
            r["end"] = ft * 1000.0 if isinstance(ft, (int, float)) and ft > 0 else ts / 1000.0
            r["failed"] = bool(d.get("didFail"))
    out = []
    for r in by.values():
        if "start" not in r:
            continue
        out.append(Request(r["start"], r.get("end"), r.get("method") == "GET", r.get("failed", False),
                           r.get("status", -1), r.get("url", "")))
    return out


def network_quiet_periods(reqs: list[Request], end_ms: float) -> list[tuple[float, float]]:
    """Interactive._findNetworkQuietPeriods + NetworkMonitor.findNetworkQuietPeriods."""
    bounds: list[tuple[float, bool]] = []
    for r in reqs:
        if r.end_ms is None or not r.get or r.failed or r.status >= 400:
            continue
        scheme = r.url.split(":", 1)[0].lower() if ":" in r.url else ""
        if scheme in NON_NETWORK_SCHEMES:
            continue
        bounds.append((r.start_ms, True))
        bounds.append((r.end_ms, False))
    bounds = sorted((b for b in bounds if b[0] <= end_ms), key=lambda b: b[0])
    inflight, quiet_start = 0, 0.0
    out: list[tuple[float, float]] = []
    for t, is_start in bounds:
        if is_start:
            if inflight == ALLOWED_CONCURRENT_REQUESTS:
                out.append((quiet_start, t))
            inflight += 1
        else:
            inflight -= 1
            if inflight == ALLOWED_CONCURRENT_REQUESTS:
                quiet_start = t
    if inflight <= ALLOWED_CONCURRENT_REQUESTS:
        out.append((quiet_start, end_ms))
    return out


def cpu_quiet_periods(long_tasks: list[Task], end_ms: float) -> list[tuple[float, float]]:
    """Interactive._findCPUQuietPeriods (absolute ms)."""
    if not long_tasks:
        return [(0.0, end_ms)]
    out = [(0.0, long_tasks[0].start)]
    for i, t in enumerate(long_tasks):
        out.append((t.end, long_tasks[i + 1].start if i + 1 < len(long_tasks) else end_ms))
    return out


def interactive(tasks: list[Task], reqs: list[Request], fcp_abs: float, dcl_abs: float,
                end_ms: float) -> tuple[float | None, str | None]:
    """Interactive.computeObservedMetric → (TTI absolute ms, or None and why)."""
    def long_enough(p: tuple[float, float]) -> bool:
        return p[1] > fcp_abs + QUIET_WINDOW_MS and p[1] - p[0] >= QUIET_WINDOW_MS

    net = [p for p in network_quiet_periods(reqs, end_ms) if long_enough(p)]
    cpu = [p for p in cpu_quiet_periods([t for t in tasks if t.duration >= BLOCKING_MS], end_ms) if long_enough(p)]
    ci = ni = 0
    while ci < len(cpu) and ni < len(net):
        c, n = cpu[ci], net[ni]
        if c[0] >= n[0]:
            if n[1] >= c[0] + QUIET_WINDOW_MS:
                return max(c[0], fcp_abs, dcl_abs), None
            ni += 1
        else:
            if c[1] >= n[0] + QUIET_WINDOW_MS:
                return max(c[0], fcp_abs, dcl_abs), None
            ci += 1
    if ci < len(cpu):
        return None, "no 5 s network-quiet window (≤ 2 requests in flight) after FCP"
    return None, "no 5 s window without a 50 ms main-thread task after FCP"


def layout_shift_score(shifts: list[Mark], viewport_ts: float) -> tuple[float | None, float | None, int, str | None]:
    """CumulativeLayoutShift.getLayoutShiftEvents + calculate → (all frames, main frame, shifts
    counted, why None)."""
    kept: list[tuple[float, bool, float]] = []
    must_respect = False
    for ts, _pid, _tid, _name, args in shifts:
        d = _data(args)
        if "is_main_frame" not in d:
            continue
        w = d.get("weighted_score_delta")
        if not isinstance(w, (int, float)):
            return None, None, 0, "LayoutShift events without weighted_score_delta (Chrome before M90)"
        if d.get("had_recent_input"):
            if (ts - viewport_ts) / 1000.0 > RECENT_INPUT_WINDOW_MS or must_respect:
                continue
        else:
            must_respect = True
        kept.append((ts, bool(d.get("is_main_frame")), float(w)))
    return _sessions(kept), _sessions([k for k in kept if k[1]]), len(kept), None


def _sessions(events: list[tuple[float, bool, float]]) -> float:
    best = cur = 0.0
    first = prev = float("-inf")
    for ts, _main, w in events:
        if ts - first > CLS_LIMIT_US or ts - prev > CLS_GAP_US:
            first = ts
            cur = 0.0
        prev = ts
        cur += w
        best = max(best, cur)
    return best


def _lcp(frame_events: list[Mark], origin: float) -> tuple[Mark | None, bool]:
    """computeValidLCPAllFrames on the main frame's events → (the LCP candidate, invalidated)."""
    final: dict[str, Mark] = {}
    for m in reversed(frame_events):
        if m.name not in ("largestContentfulPaint::Candidate", "largestContentfulPaint::Invalidate"):
            continue
        f = (m.args or {}).get("frame")
        if not f:
            continue
        if m.ts <= origin:
            break
        final.setdefault(f, m)
    best = None
    for m in final.values():
        size = _data(m.args).get("size")
        if m.name == "largestContentfulPaint::Candidate" and size is not None:
            if best is None or size > _data(best.args).get("size"):
                best = m
    return best, best is None and bool(final)


@dataclass
class Navigation:
    """One navigation of the main frame: its origin, where the next one starts, and the marks
    between them — the main frame's (``frame``) and its frame tree's (``tree``)."""

    origin: float  # µs, the navigationStart
    next_origin: float  # µs, the next navigationStart of the main frame, or infinity
    end_ms: float  # absolute ms: the end of the trace or the next navigation
    frame: list[Mark]
    tree: list[Mark]
    #: the main frame's marks of the whole trace (the viewport event may precede the origin)
    all_frame: list[Mark]
    first_navigation: bool

    def rel(self, ts: float) -> float:
        """ms from the origin."""
        return round((ts - self.origin) / 1000.0, 3)


def _first(name: str, events: Iterable[Mark]) -> Mark | None:
    return next((m for m in events if m.name == name), None)


def first_contentful_paint(p: PageVitals, nav: Navigation) -> Mark | None:
    """FCP as Lighthouse observes it: core/lib/tracehouse/trace-processor.js
    ``computeNavigationTimingsForFrame`` — the main frame's first ``firstContentfulPaint`` after
    the time origin; ``fcp_all_frames_ms`` the first of the whole frame tree
    (``firstContentfulPaintAllFrames``). Also DCL and load, the same way. Returns the FCP mark."""
    fcp = _first("firstContentfulPaint", nav.frame)
    fcp_all = _first("firstContentfulPaint", (m for m in nav.tree if m.ts > nav.origin))
    dcl = _first("domContentLoadedEventEnd", nav.frame)
    load = _first("loadEventEnd", nav.frame)
    p.fcp_ms = nav.rel(fcp.ts) if fcp else None
    p.fcp_all_frames_ms = nav.rel(fcp_all.ts) if fcp_all else None
    p.dcl_ms = nav.rel(dcl.ts) if dcl else None
    p.load_ms = nav.rel(load.ts) if load else None
    if fcp is None:
        p.missing["fcp_ms"] = f"no firstContentfulPaint of the main frame after navigationStart: {CAPTURE_HINT}"
    return fcp


def largest_contentful_paint(p: PageVitals, nav: Navigation) -> Mark | None:
    """LCP as Lighthouse observes it: trace-processor.js ``computeValidLCPAllFrames`` on the
    main frame's marks — walking back from the end to the origin, each frame's last
    ``largestContentfulPaint::Candidate`` or ``::Invalidate``; the largest candidate wins, a
    final Invalidate means no LCP. Returns the LCP mark."""
    lcp, invalidated = _lcp(nav.frame, nav.origin)
    if lcp is not None:
        d = _data(lcp.args)
        p.lcp_ms = nav.rel(lcp.ts)
        p.lcp_size = float(d["size"]) if isinstance(d.get("size"), (int, float)) else None
        p.lcp_type = d.get("type") if isinstance(d.get("type"), str) else None
        p.lcp_node = d.get("nodeName") if isinstance(d.get("nodeName"), str) else None
    else:
        p.missing["lcp_ms"] = ("the page's last LCP candidate was invalidated (largestContentfulPaint::Invalidate)"
                               if invalidated else
                               f"no largestContentfulPaint::Candidate of the main frame (Chrome 78 or later): {CAPTURE_HINT}")
    return lcp


def cumulative_layout_shift(p: PageVitals, nav: Navigation, painted: bool) -> None:
    """CLS as Lighthouse computes it: core/computed/metrics/cumulative-layout-shift.js
    (:func:`layout_shift_score`) over the frame tree's ``LayoutShift`` marks, with the main
    frame's first ``viewport`` change (else the origin) as the start of the recent-input window.
    ``LayoutShift`` is in the "loading" category, as the paint marks are: with paints recorded
    (``painted``) and no shift, the page did not shift — CLS 0 is measured, not assumed."""
    viewport = _first("viewport", (m for m in nav.all_frame
                                   if m.ts < nav.next_origin and (nav.first_navigation or m.ts >= nav.origin)))
    shifts = [m for m in nav.tree if m.name == "LayoutShift"]
    if not shifts and not painted:
        p.missing["cls"] = f"no LayoutShift or paint events ('loading' category not recorded): {CAPTURE_HINT}"
        return
    cls, cls_main, n, why = layout_shift_score(shifts, viewport.ts if viewport else nav.origin)
    p.cls = None if cls is None else round(cls, 6)
    p.cls_main_frame = None if cls_main is None else round(cls_main, 6)
    p.layout_shifts = n
    if why:
        p.missing["cls"] = why


def total_blocking_time(p: PageVitals, nav: Navigation, pd: PerfData, main: MainFrame, reqs: list[Request],
                        fcp: Mark | None) -> None:
    """TBT as Lighthouse computes it: core/computed/metrics/total-blocking-time.js with lantern's
    TBTUtils (:func:`blocking_time`) — the part beyond 50 ms of each main-thread top-level task,
    clipped to [FCP, TTI]; TTI from core/computed/metrics/interactive.js (:func:`interactive`)."""
    dcl = _first("domContentLoadedEventEnd", nav.frame)
    if not main.threads:
        p.missing["tbt_ms"] = "the main frame's renderer main thread (CrRendererMain) is not named in the trace"
        return
    if fcp is None:
        p.missing["tbt_ms"] = "TBT starts at FCP, which the trace does not have"
        return
    if dcl is None:
        p.missing["tbt_ms"] = "TTI (TBT's end) needs domContentLoadedEventEnd, which the trace does not have"
        return
    tasks = top_level_tasks(pd, main.threads, nav.origin)
    if not tasks:
        p.missing["tbt_ms"] = ("no RunTask events on the main thread: record with the "
                               "disabled-by-default-devtools.timeline and toplevel categories")
        return
    tti_abs, why = interactive(tasks, reqs, fcp.ts / 1000.0, dcl.ts / 1000.0, nav.end_ms)
    if tti_abs is None:
        p.missing["tbt_ms"] = f"TTI (TBT's end) not reached: {why}; keep recording until the page has been idle for 5 s"
        return
    p.tti_ms = round(tti_abs - nav.origin / 1000.0, 3)
    tbt, n = blocking_time(tasks, fcp.ts / 1000.0, tti_abs)
    p.tbt_ms = round(tbt, 3)
    p.blocking_tasks = n


def pages(pd: PerfData, t0_us: float) -> list[PageVitals]:
    """Every navigation of the main frame, in order, with FCP, LCP, CLS and TBT; [] when the
    trace has none."""
    if not pd.marks:
        return []
    marks = sorted(map(Mark._make, pd.marks), key=lambda m: m.ts)  # stable: Lighthouse's filteredTraceSort
    main = find_main_frame(pd, marks)
    if main is None:
        return []
    frame_events = [m for m in marks if frame_of(m.args) == main.frame]
    tree_events = ([m for m in marks if frame_of(m.args) in main.tree]
                   if main.tree is not None else frame_events)
    navs = [m for m in frame_events if _nav_of_interest(m)]
    if not navs:
        other = _first("navigationStart", frame_events)
        if other is None:
            return []  # a profile or a timespan, not a page load
        # a navigation Lighthouse does not measure (file://, about:, data: …): say so
        url = _data(other.args).get("documentLoaderURL")
        why = (f"the main frame's navigation is to {str(url)[:80]!r}: Lighthouse measures only http(s) "
               "and chrome:// navigations (ACCEPTABLE_NAVIGATION_URL_REGEX); serve the page over http, "
               "e.g. python -m http.server, and record again")
        return [PageVitals(url=url if isinstance(url, str) else None, frame=main.frame,
                           start_ms=round((other.ts - t0_us) / 1000.0, 3),
                           missing={k: why for k in ("fcp_ms", "lcp_ms", "cls", "tbt_ms")})]
    trace_end_ms = (pd.end_us or 0.0) / 1000.0
    reqs = requests(marks)
    pid_tid = next(iter(main.threads.items()), (None, None))
    out = []
    for i, start in enumerate(navs):
        origin = start.ts
        nxt = navs[i + 1].ts if i + 1 < len(navs) else float("inf")
        nav = Navigation(origin=origin, next_origin=nxt, end_ms=min(trace_end_ms, nxt / 1000.0),
                         frame=[m for m in frame_events if origin < m.ts < nxt],
                         tree=[m for m in tree_events if origin <= m.ts < nxt],
                         all_frame=frame_events, first_navigation=i == 0)
        url = _data(start.args).get("documentLoaderURL") or main.urls.get(main.frame)
        p = PageVitals(url=url if isinstance(url, str) else None, frame=main.frame, pid=pid_tid[0],
                       tid=pid_tid[1], start_ms=round((origin - t0_us) / 1000.0, 3))
        fcp = first_contentful_paint(p, nav)
        lcp = largest_contentful_paint(p, nav)
        cumulative_layout_shift(p, nav, painted=p.fcp_all_frames_ms is not None or lcp is not None)
        total_blocking_time(p, nav, pd, main, reqs, fcp)
        out.append(p)
    return out


#: Chrome's own page-load metrics (UKM/UMA, browser side), as async spans from the navigation
#: start: what Perfetto's ``chrome_page_loads`` table reads
#: (src/trace_processor/perfetto_sql/stdlib/chrome/page_loads.sql). The span's dur is the metric.
PAGE_LOAD_SPANS = {
    "fcp_ms": "PageLoadMetrics.NavigationToFirstContentfulPaint",
    "lcp_ms": "PageLoadMetrics.NavigationToLargestContentfulPaint",
    "dcl_ms": "PageLoadMetrics.NavigationToDOMContentLoadedEventFired",
    "load_ms": "PageLoadMetrics.NavigationToMainFrameOnLoad",
}
NO_LAB_METRICS = ("not in Chrome's page-load metrics (Perfetto's chrome_page_loads has FCP and LCP only): "
                  "record a DevTools trace (JSON) of the load for Lighthouse's CLS and TBT")


def page_load_spans(pd: PerfData, t0_us: float) -> list[PageVitals]:
    """chrome_page_loads from a Perfetto trace: one page per FCP span, joined to the other
    metrics' spans of the same browser process and navigation start (the stdlib joins on
    page_load.navigation_id, which our reader does not keep; the spans of one navigation all
    start at its navigationStart)."""
    spans: dict[str, dict[tuple[int, float], float]] = {k: {} for k in PAGE_LOAD_SPANS}
    for (pid, track), cols in pd.async_slices.items():
        for key, name in PAGE_LOAD_SPANS.items():
            if track != name:
                continue
            for t, d, n in zip(cols.ts, cols.dur, cols.name):
                if pd.strings[n] == name:
                    spans[key].setdefault((pid, t), d)
    out = []
    for (pid, t), fcp in sorted(spans["fcp_ms"].items(), key=lambda kv: kv[0][1]):
        p = PageVitals(pid=pid, start_ms=round((t - t0_us) / 1000.0, 3), fcp_ms=round(fcp / 1000.0, 3))
        for key in ("lcp_ms", "dcl_ms", "load_ms"):
            d = spans[key].get((pid, t))
            setattr(p, key, None if d is None else round(d / 1000.0, 3))
        if p.lcp_ms is None:
            p.missing["lcp_ms"] = "no PageLoadMetrics.NavigationToLargestContentfulPaint span for this navigation"
        p.missing["cls"] = NO_LAB_METRICS
        p.missing["tbt_ms"] = NO_LAB_METRICS
        out.append(p)
    return out


def web(ctx) -> tuple[PageVitals | None, list[PageVitals]]:
    """The family's entry: (the main navigation — Lighthouse's, the last — and all of them when
    there are several). DevTools traces: Lighthouse's observed metrics from the page marks;
    Perfetto traces without them: Chrome's page-load metric spans."""
    found = pages(ctx.pd, ctx.t0) or page_load_spans(ctx.pd, ctx.t0)
    if not found:
        return None, []
    return found[-1], (found if len(found) > 1 else [])
