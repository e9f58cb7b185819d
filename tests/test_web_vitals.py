"""Web vitals (nodes/perf/metrics/web.py): FCP, LCP, CLS, TBT as Lighthouse observes them.

* A page load recorded here with Lighthouse's own gatherer (tests/data/web/SOURCES.md) is
  checked against Lighthouse 12.2.3 itself, run offline through its Node API on the same trace
  and DevTools log (tests/web/lighthouse_metrics.mjs); and FCP/LCP against a plain-json
  reading of the marks.
* Chrome's page-load spans in a Perfetto trace against trace_processor's own expected output.
* Each rule of the definitions on small traces built here (session windows, recent input,
  invalidated LCP, blocking-time clipping, overlapping tasks, TTI not reached, navigations).
"""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from nodes.perf.analysis import analyze_file
from nodes.perf.containers import is_container
from nodes.perf.findings import web as web_rules
from nodes.perf.metrics import web
from tests.helpers.env import scrubbed_environ
from tests.helpers.references import TRACE_PROCESSOR_PAGE_LOADS

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).parent / "data" / "web"
TRACE = DATA / "webvitals.trace.json.gz"
DEVTOOLS_LOG = DATA / "webvitals.devtoolslog.json.gz"
PERFETTO_PAGES = Path(__file__).parent / "data" / "perfetto" / "chrome_fcp_lcp_navigations.pftrace"
NODE_DIR = Path(__file__).parent / "web"


# --- the recorded page load against Lighthouse ------------------------------------------


def _lighthouse_installed() -> bool:
    return (NODE_DIR / "node_modules" / "lighthouse" / "package.json").exists()


NODE, NPM = shutil.which("node"), shutil.which("npm")
#: The only reason the Lighthouse comparison does not run: no Node.js (and its npm) here.
needs_node = pytest.mark.skipif(not (NODE and NPM), reason="node/npm not installed: Lighthouse (an npm package) cannot run")


@pytest.fixture(scope="module")
def lighthouse() -> dict:
    """Lighthouse's observed metrics for the recorded trace; installs the locked package when it
    is not there yet (CI does it in .ci/run). A failed install fails the test: with Node here,
    the comparison must run."""
    node, npm = NODE, NPM
    if not _lighthouse_installed():
        p = subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--prefer-offline"], cwd=NODE_DIR,
                           capture_output=True, text=True, timeout=600)
        if p.returncode != 0 or not _lighthouse_installed():
            why = (p.stderr or p.stdout).strip().splitlines()[-1:] or ["?"]
            pytest.fail(f"npm ci of tests/web failed: {why[0]}")
    p = subprocess.run([node, "lighthouse_metrics.mjs", str(TRACE), str(DEVTOOLS_LOG)], cwd=NODE_DIR,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def ours():
    return analyze_file(str(TRACE))


@needs_node
def test_recorded_page_matches_lighthouse(lighthouse, ours):
    page = ours.page
    assert page is not None and not ours.pages  # one navigation
    assert lighthouse["lighthouse"] == "12.2.3"
    assert page.frame == lighthouse["main_frame"] and page.pid == lighthouse["main_pid"]
    for key in ("fcp_ms", "lcp_ms", "tti_ms", "tbt_ms"):
        assert isinstance(lighthouse[key], (int, float)), (key, lighthouse[key])
        assert getattr(page, key) == pytest.approx(lighthouse[key], abs=0.002), key
    assert page.cls == pytest.approx(lighthouse["cls"], abs=1e-6)
    assert page.cls_main_frame == pytest.approx(lighthouse["cls_main_frame"], abs=1e-6)
    assert not page.missing


def test_recorded_page_has_what_the_page_was_built_to_show(ours):
    """page.html: text first, a late image as LCP, shifts, three long tasks after FCP."""
    page = ours.page
    assert page.lcp_type == "image" and "hero" in (page.lcp_node or "")
    assert page.lcp_ms > page.fcp_ms
    assert page.layout_shifts == 3 and page.cls > 0.1
    assert page.blocking_tasks == 3 and page.tbt_ms > 0
    titles = [f.title for f in ours.findings]
    assert any(t.startswith("Cumulative Layout Shift") for t in titles)
    cls_finding = next(f for f in ours.findings if f.title.startswith("Cumulative Layout Shift"))
    assert cls_finding.suggestion and cls_finding.link.startswith("https://web.dev/")


def test_a_page_load_is_judged_by_its_page_rules_not_as_an_android_launch(ours):
    """The load event came 1.28 s after navigationStart (over the 1 s 'other' launch threshold),
    but a page is judged by FCP/LCP/CLS/TBT: no "Slow startup" with Android vitals' advice."""
    assert ours.startup.kind == "page load" and ours.startup.median_ms > 1000
    assert not [f for f in ours.findings if f.title.startswith("Slow startup")]
    assert any(f.title.startswith("Total Blocking Time") for f in ours.findings)


def test_recorded_fcp_lcp_from_the_marks_read_plainly(ours):
    """An independent reading with json: the main frame's navigationStart, its first
    firstContentfulPaint after it, its last LCP candidate."""
    events = json.load(gzip.open(TRACE))["traceEvents"]
    started = next(e for e in events if e["name"] == "TracingStartedInBrowser")
    frame = next(f["frame"] for f in started["args"]["data"]["frames"] if not f.get("parent"))
    mine = sorted((e for e in events if e.get("args", {}).get("frame") == frame), key=lambda e: e["ts"])
    nav = [e for e in mine if e["name"] == "navigationStart"][-1]
    fcp = next(e for e in mine if e["name"] == "firstContentfulPaint" and e["ts"] > nav["ts"])
    lcp = [e for e in mine if e["name"] == "largestContentfulPaint::Candidate"][-1]
    assert ours.page.fcp_ms == pytest.approx((fcp["ts"] - nav["ts"]) / 1000, abs=1e-3)
    assert ours.page.lcp_ms == pytest.approx((lcp["ts"] - nav["ts"]) / 1000, abs=1e-3)


def test_cli_json_has_the_page_keys(tmp_path):
    env = scrubbed_environ(PERFSCOUT_HOME=str(tmp_path / "home"))
    p = subprocess.run([sys.executable, "-m", "app.cli", "analyze", str(TRACE), "--json"], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert p.returncode == 0, p.stderr
    page = json.loads(p.stdout)["page"]
    for key in ("fcp_ms", "lcp_ms", "cls", "tbt_ms"):
        assert isinstance(page[key], (int, float)), key


# --- Perfetto: Chrome's page-load metric spans ------------------------------------------



def test_perfetto_page_loads_match_trace_processor():
    res = analyze_file(str(PERFETTO_PAGES))
    got = [(p.fcp_ms, p.lcp_ms) for p in res.pages]
    want = [(f / 1e6, None if lcp is None else lcp / 1e6) for f, lcp in TRACE_PROCESSOR_PAGE_LOADS]
    assert got == want
    assert res.page == res.pages[-1]
    assert res.page.missing["lcp_ms"] and res.page.cls is None and "cls" in res.page.missing
    starts = [p.start_ms for p in res.pages]
    assert starts == sorted(starts)


# --- the definitions, on small traces ---------------------------------------------------

FRAME = "F1"
PID, TID, BROWSER = 10, 11, 1


def _trace(tmp_path, events: list[dict], name: str = "t.json") -> str:
    head = [
        {"ph": "M", "pid": PID, "tid": TID, "ts": 0, "name": "thread_name", "args": {"name": "CrRendererMain"}},
        {"ph": "I", "pid": BROWSER, "tid": BROWSER, "ts": 0, "name": "TracingStartedInBrowser", "s": "t",
         "args": {"data": {"frames": [{"frame": FRAME, "processId": PID, "url": "about:blank"}]}}},
    ]
    path = tmp_path / name
    path.write_text(json.dumps({"traceEvents": head + events}))
    return str(path)


def _mark(name: str, ts_ms: float, **data) -> dict:
    return {"ph": "R", "pid": PID, "tid": TID, "ts": ts_ms * 1000, "name": name, "args": {"frame": FRAME, "data": data}}


def _nav(ts_ms: float, url: str = "https://example.test/") -> dict:
    return _mark("navigationStart", ts_ms, documentLoaderURL=url, isLoadingMainFrame=True)


def _shift(ts_ms: float, score: float, recent: bool = False, main: bool = True) -> dict:
    return {"ph": "I", "pid": PID, "tid": TID, "ts": ts_ms * 1000, "name": "LayoutShift", "s": "t",
            "args": {"frame": FRAME, "data": {"is_main_frame": main, "weighted_score_delta": score, "score": score,
                                              "had_recent_input": recent}}}


def _task(start_ms: float, dur_ms: float) -> dict:
    return {"ph": "X", "pid": PID, "tid": TID, "ts": start_ms * 1000, "dur": dur_ms * 1000, "name": "RunTask"}


def _lcp(ts_ms: float, size: float) -> dict:
    return _mark("largestContentfulPaint::Candidate", ts_ms, size=size, type="text", isMainFrame=True)


def test_cls_is_the_largest_session_window(tmp_path):
    ev = [_nav(1000), _mark("firstContentfulPaint", 1100),
          _shift(1200, 0.10), _shift(1900, 0.10),  # one session: 0.20
          _shift(3500, 0.15),  # > 1 s gap: a new session
          _task(9000, 1)]
    # a session is cut at 5 s: shifts every 0.9 s for 9 s, 0.05 each → at most 6 per session
    ev += [_shift(20000 + 900 * i, 0.05) for i in range(10)]
    page = analyze_file(_trace(tmp_path, ev)).page
    assert page.cls == pytest.approx(0.30)  # 6 × 0.05 in the first 5 s window beats 0.20
    assert page.layout_shifts == 13


def test_recent_input_shifts_count_only_near_the_first_viewport_change(tmp_path):
    ev = [_nav(1000), _mark("firstContentfulPaint", 1100),
          {"ph": "I", "pid": PID, "tid": TID, "ts": 1050e3, "name": "viewport", "s": "t",
           "args": {"data": {"frameID": FRAME, "width": 400, "height": 800}}},
          _shift(1300, 0.2, recent=True),  # within 500 ms of the viewport change: counted
          _shift(1500, 0.1),  # input-free: from here on had_recent_input is respected
          _shift(1520, 0.4, recent=True)]  # dropped although within 500 ms
    page = analyze_file(_trace(tmp_path, ev)).page
    assert page.cls == pytest.approx(0.3)
    assert page.layout_shifts == 2
    late = [_nav(1000), _mark("firstContentfulPaint", 1100), _shift(1700, 0.2, recent=True)]
    assert analyze_file(_trace(tmp_path, late, "late.json")).page.cls == 0.0  # 700 ms after the origin


def test_lcp_is_the_last_candidate_and_an_invalidate_removes_it(tmp_path):
    ev = [_nav(1000), _mark("firstContentfulPaint", 1100), _lcp(1100, 5000), _lcp(1800, 9000), _lcp(1900, 100)]
    page = analyze_file(_trace(tmp_path, ev)).page
    assert page.lcp_ms == pytest.approx(900.0) and page.lcp_size == 100  # the frame's last candidate
    ev.append(_mark("largestContentfulPaint::Invalidate", 2000))
    page = analyze_file(_trace(tmp_path, ev, "inv.json")).page
    assert page.lcp_ms is None and "invalidated" in page.missing["lcp_ms"]


def test_tbt_clips_to_fcp_and_tti_and_tti_needs_five_quiet_seconds(tmp_path):
    ev = [_nav(1000), _mark("domContentLoadedEventEnd", 1050), _mark("firstContentfulPaint", 1200),
          _task(1150, 100),  # starts before FCP: clipped to 50 ms after it → blocks 0
          _task(1300, 40),  # short: nothing
          _task(1400, 130),  # blocks 80
          _task(2000, 90),  # blocks 40; the last long task: TTI = its end
          _task(8000, 1)]  # the trace goes on ≥ 5 s after it
    page = analyze_file(_trace(tmp_path, ev)).page
    assert page.tti_ms == pytest.approx(1090.0)  # 2090 − 1000
    assert page.tbt_ms == pytest.approx(120.0) and page.blocking_tasks == 2
    short = [e for e in ev if e.get("ts") != 8000e3]
    page = analyze_file(_trace(tmp_path, short, "short.json")).page
    assert page.tbt_ms is None and page.tti_ms is None and "5 s" in page.missing["tbt_ms"]


def test_an_overlapping_task_is_cut_before_the_next_one():
    tasks = [web.Task(0.0, 200.0, 200.0), web.Task(100.0, 180.0, 80.0)]
    # Lighthouse's fix for overlapping RunTasks: the first ends 1 µs before the second starts
    # (top_level_tasks does it); blocking_time then clips [start, end] but thresholds on duration
    tasks[0].end = 100.0 - 0.001
    total, n = web.blocking_time(tasks, 0.0, 1000.0)
    assert total == pytest.approx((100.0 - 0.001 - 50.0) + (80.0 - 50.0)) and n == 2


def test_busy_page_in_the_network_gives_no_tti(tmp_path):
    reqs = []
    for i in range(3):  # three requests in flight for the whole trace: never network-quiet
        reqs.append({"ph": "I", "pid": PID, "tid": TID, "ts": 1001e3 + i, "name": "ResourceSendRequest", "s": "t",
                     "args": {"data": {"requestId": f"r{i}", "requestMethod": "GET", "url": f"https://example.test/{i}",
                                       "frame": FRAME}}})
        reqs.append({"ph": "I", "pid": PID, "tid": TID, "ts": 20000e3, "name": "ResourceFinish", "s": "t",
                     "args": {"data": {"requestId": f"r{i}", "finishTime": 19.0, "didFail": False}}})
    ev = [_nav(1000), _mark("domContentLoadedEventEnd", 1050), _mark("firstContentfulPaint", 1200),
          _task(1400, 100), _task(20000, 1)] + reqs
    page = analyze_file(_trace(tmp_path, ev)).page
    assert page.tbt_ms is None and "network" in page.missing["tbt_ms"]


def test_each_navigation_is_a_page_and_the_last_is_the_main_one(tmp_path):
    ev = [_nav(1000, "https://a.test/"), _mark("firstContentfulPaint", 1300), _lcp(1400, 10),
          _nav(5000, "https://b.test/"), _mark("firstContentfulPaint", 5200), _lcp(5600, 10),
          _nav(7000, "about:blank")]  # not a navigation of interest (Lighthouse's URL rule)
    res = analyze_file(_trace(tmp_path, ev))
    assert [(p.url, p.fcp_ms, p.lcp_ms) for p in res.pages] == [("https://a.test/", 300.0, 400.0),
                                                               ("https://b.test/", 200.0, 600.0)]
    assert res.page == res.pages[-1]


def test_without_the_loading_category_cls_and_paints_are_missing_not_zero(tmp_path):
    ev = [_nav(1000), _task(1100, 80)]
    page = analyze_file(_trace(tmp_path, ev)).page
    assert page.fcp_ms is None and page.cls is None and page.tbt_ms is None
    assert {"fcp_ms", "lcp_ms", "cls", "tbt_ms"} <= set(page.missing)
    assert "devtools.timeline" in page.missing["cls"]


def test_a_file_url_navigation_is_named_not_measured(tmp_path):
    ev = [_nav(1000, "file:///home/me/page.html"), _mark("firstContentfulPaint", 1100)]
    page = analyze_file(_trace(tmp_path, ev)).page
    assert page.url == "file:///home/me/page.html" and page.fcp_ms is None
    assert "http" in page.missing["fcp_ms"] and set(page.missing) == {"fcp_ms", "lcp_ms", "cls", "tbt_ms"}
    # and the answer to "is this page fast?" gives that reason, not "the data has no navigation"
    from nodes.perf.lens_readers import page as page_reading

    lead = page_reading(analyze_file(_trace(tmp_path, ev))).lead
    assert lead == f"This data cannot tell the page load: {page.missing['fcp_ms']}."


def test_a_trace_without_navigation_marks_has_no_page(tmp_path):
    path = tmp_path / "plain.json"
    path.write_text(json.dumps({"traceEvents": [_task(0, 80)]}))
    res = analyze_file(str(path))
    assert res.page is None and res.pages == []


def test_web_rules_fire_by_band():
    from nodes.perf.model import PageVitals

    good = PageVitals(fcp_ms=1000, lcp_ms=2000, cls=0.05, tbt_ms=100)
    assert not (web_rules.slow_fcp(good, None) + web_rules.slow_lcp(good, None)
                + web_rules.layout_shifts(good, None) + web_rules.blocking_time(good, None))
    mid = PageVitals(lcp_ms=3000, cls=0.2, tbt_ms=300)
    assert [f.severity for f in web_rules.slow_lcp(mid, None) + web_rules.layout_shifts(mid, None)
            + web_rules.blocking_time(mid, None)] == ["medium"] * 3
    poor = PageVitals(fcp_ms=web_rules.FCP_POOR_MS + 1, lcp_ms=web_rules.LCP_POOR_MS + 1)
    assert [f.severity for f in web_rules.slow_fcp(poor, None) + web_rules.slow_lcp(poor, None)] == ["high", "high"]
    assert web_rules.layout_shifts(PageVitals(), None) == []  # no CLS measured: no finding


def test_a_task_that_never_ended_is_no_hot_spot_or_long_task(ours):
    """The trace's 7 ``B`` events have no ``E`` (one is PrefetchMatchResolver::UnblockInternal on
    CrBrowserMain, 12 s before the end). trace_processor gives them no duration (dur = -1), so
    they are not time: the top hot spot is the one a plain-json reading of the ended slices gives
    (X events, nested per thread by containment; self = own time minus direct children; task
    runners such as RunTask are not ranked, nodes/perf/containers.py)."""
    events = json.load(gzip.open(TRACE))["traceEvents"]
    assert not [e for e in events if e.get("ph") == "E"]
    unended = [e for e in events if e.get("ph") == "B"]
    per_thread: dict[tuple, list[tuple[float, float, str]]] = {}
    for e in events:
        if e.get("ph") == "X":
            per_thread.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e.get("dur", 0), e["name"]))
    self_us: dict[str, float] = {}
    for slices in per_thread.values():
        stack: list[list] = []  # [end, name, own]
        def close(item):
            self_us[item[1]] = self_us.get(item[1], 0.0) + item[2]
        for ts, dur, name in sorted(slices, key=lambda s: (s[0], -s[1])):
            while stack and ts >= stack[-1][0]:
                close(stack.pop())
            if stack:
                stack[-1][2] -= dur
            stack.append([ts + dur, name, dur])
        while stack:
            close(stack.pop())
    want_name, want_us = max(((n, v) for n, v in self_us.items() if not is_container(n)), key=lambda kv: kv[1])
    top = next(h for h in ours.hotspots if h.overall)
    assert (top.name, top.self_ms) == (want_name, pytest.approx(want_us / 1000, rel=1e-6))
    never = {e["name"] for e in unended}
    assert not never & {h.name for h in ours.hotspots if h.self_ms > 1000}
    assert not [t for t in ours.long_tasks if t.dur_ms > 1000]
    assert f"{len(unended)} B events never ended: left out of durations" in " ".join(ours.warnings)
    assert not [f for f in ours.findings if "PrefetchMatchResolver" in f.title]
