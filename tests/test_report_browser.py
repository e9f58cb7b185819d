"""report.html in a real browser: headless Chromium draws every chart, logs nothing, fetches nothing.

Chromium is driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``: fd 3 in,
fd 4 out, NUL-separated JSON), so no websocket library and no port are needed. The checks:

* every ``svg.chart`` has a non-zero box and drawn data marks (``getBBox`` > 0, a ``data-v``);
* a screenshot, decoded by the same browser in a blank tab, has coloured pixels inside every
  chart's box (the SVG really painted, in more than one colour);
* no console message, no JavaScript exception, no log entry (a CSP violation — a fetch the page
  tried — lands there), and no network request but the page itself;
* the page fits a 390 px phone width without sideways scrolling, and follows dark mode.

The checker is itself checked: a page with an injected remote image, and a chart with no data,
must fail it. Screenshots are kept in ``$PERFSCOUT_SCREENSHOT_DIR`` when that is set.
"""

from __future__ import annotations

import base64
import importlib.util
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from nodes.report.render import write_report
from nodes.report.view import build_view
try:  # tests/ is not a package today; stay importable if it becomes one
    from test_report_sample import SAMPLE_ATTRIBUTION, sample_analysis
except ImportError:  # pragma: no cover
    from tests.test_report_sample import SAMPLE_ATTRIBUTION, sample_analysis

HERE = Path(__file__).resolve().parent
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
EXPECTED_CHARTS = {"hotspots", "icicle", "frame-histogram", "timeline", "startup-runs", "startup-waterfall", "import-tree", "counter"}


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser"):
        p = shutil.which(name)
        if p:
            return p
    if os.geteuid() == 0 and shutil.which("apt-get"):
        subprocess.run(["sh", str(HERE / "setup_chromium.sh")], check=False, timeout=900)
        for name in ("chromium", "chromium-browser"):
            p = shutil.which(name)
            if p:
                return p
    return None


CHROMIUM = _chromium()
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed and cannot be installed here (needs root and apt)")


class Browser:
    """A minimal DevTools-protocol client over Chromium's pipe transport."""

    def __init__(self, binary: str):
        self.profile = tempfile.mkdtemp(prefix="perfscout-chromium-")
        r_in, w_in = os.pipe()
        r_out, w_out = os.pipe()

        def wire_fds() -> None:
            os.dup2(r_in, 3)
            os.dup2(w_out, 4)

        self.proc = subprocess.Popen(
            [binary, *FLAGS, f"--user-data-dir={self.profile}", "--remote-debugging-pipe", "about:blank"],
            pass_fds=(3, 4),
            preexec_fn=wire_fds,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(r_in)
        os.close(w_out)
        self._w = w_in
        self._r = r_out
        self._buf = b""
        self._id = 0
        self.events: list[dict] = []

    def call(self, method: str, params: dict | None = None, session: str | None = None, timeout: float = 60.0) -> dict:
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            while b"\0" not in self._buf:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"no answer to {method}")
                chunk = os.read(self._r, 1 << 20)
                if not chunk:
                    raise RuntimeError("chromium closed the DevTools pipe")
                self._buf += chunk
            raw, self._buf = self._buf.split(b"\0", 1)
            m = json.loads(raw)
            if m.get("id") == self._id:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result", {})
            self.events.append(m)

    def new_page(self, width: int, dark: bool) -> str:
        tid = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        sid = self.call("Target.attachToTarget", {"targetId": tid, "flatten": True})["sessionId"]
        for m in ("Page.enable", "Runtime.enable", "Log.enable", "Network.enable"):
            self.call(m, session=sid)
        self.call("Emulation.setDeviceMetricsOverride", {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": width < 600}, sid)
        self.call("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark" if dark else "light"}]}, sid)
        return sid

    def open(self, sid: str, url: str) -> None:
        start = len(self.events)
        self.call("Page.navigate", {"url": url}, sid)
        deadline = time.monotonic() + 30
        while not any(e.get("method") == "Page.loadEventFired" and e.get("sessionId") == sid for e in self.events[start:]):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{url} did not load")
            self.call("Runtime.evaluate", {"expression": "0"}, sid)
            time.sleep(0.05)

    def eval(self, sid: str, expr: str, await_promise: bool = False):
        r = self.call("Runtime.evaluate", {"expression": expr, "returnByValue": True, "awaitPromise": await_promise}, sid)
        if "exceptionDetails" in r:
            raise RuntimeError(f"evaluate failed: {r['exceptionDetails']}")
        return r["result"].get("value")

    def close(self) -> None:
        try:
            self.call("Browser.close", timeout=10)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
        os.close(self._w)
        os.close(self._r)
        shutil.rmtree(self.profile, ignore_errors=True)


AUDIT_JS = r"""
JSON.stringify((() => {
  const charts = [];
  for (const svg of document.querySelectorAll('svg.chart')) {
    const r = svg.getBoundingClientRect();
    const marks = [...svg.querySelectorAll('.mark')];
    const drawn = marks.filter(m => {
      const b = m.getBBox(); const cs = getComputedStyle(m);
      return (b.width > 0 || b.height > 0) && cs.display !== 'none' && cs.visibility !== 'hidden'
             && m.dataset.v !== undefined && isFinite(parseFloat(m.dataset.v));
    });
    charts.push({kind: svg.dataset.chart, x: r.left + scrollX, y: r.top + scrollY, w: r.width, h: r.height,
                 marks: marks.length, drawn: drawn.length});
  }
  return {charts, scrollW: document.documentElement.scrollWidth, innerW: innerWidth,
          height: document.documentElement.scrollHeight, bg: getComputedStyle(document.body).backgroundColor};
})())
"""

# Decode a PNG in a blank tab and count, inside each box, pixels unlike the box's corner colour.
PIXELS_JS = r"""
new Promise((resolve, reject) => {
  const img = new Image();
  img.onload = () => {
    const c = document.createElement('canvas'); c.width = img.width; c.height = img.height;
    const g = c.getContext('2d'); g.drawImage(img, 0, 0);
    const out = [];
    for (const b of BOXES) {
      const x = Math.max(0, Math.floor(b.x)), y = Math.max(0, Math.floor(b.y));
      const w = Math.max(1, Math.min(img.width - x, Math.floor(b.w))), h = Math.max(1, Math.min(img.height - y, Math.floor(b.h)));
      const d = g.getImageData(x, y, w, h).data;
      const bg = [d[0], d[1], d[2]];
      let ink = 0; const colours = new Set();
      for (let i = 0; i < d.length; i += 4) {
        const diff = Math.abs(d[i] - bg[0]) + Math.abs(d[i+1] - bg[1]) + Math.abs(d[i+2] - bg[2]);
        if (diff > 40) { ink++; colours.add((d[i] >> 4) + ',' + (d[i+1] >> 4) + ',' + (d[i+2] >> 4)); }
      }
      out.push({ink, colours: colours.size, area: w * h});
    }
    resolve(JSON.stringify({w: img.width, h: img.height, boxes: out}));
  };
  img.onerror = () => reject(new Error('png did not decode'));
  img.src = 'data:image/png;base64,' + PNG;
})
"""


def inspect_page(br: Browser, html: Path, width: int, dark: bool, shot_name: str) -> dict:
    """Load ``html`` and return the audit, the pixel counts, and every problem the browser reported."""
    sid = br.new_page(width, dark)
    start = len(br.events)
    url = html.resolve().as_uri()
    br.open(sid, url)
    audit = json.loads(br.eval(sid, AUDIT_JS))
    png = br.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True}, sid, timeout=120)["data"]
    keep = os.environ.get("PERFSCOUT_SCREENSHOT_DIR")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        (Path(keep) / shot_name).write_bytes(base64.b64decode(png))
    time.sleep(0.2)
    br.call("Runtime.evaluate", {"expression": "0"}, sid)  # flush late events
    evs = [e for e in br.events[start:] if e.get("sessionId") == sid]
    problems = []
    for e in evs:
        m = e.get("method")
        if m == "Runtime.consoleAPICalled":
            problems.append(f"console.{e['params'].get('type')}: {e['params'].get('args')}")
        elif m == "Runtime.exceptionThrown":
            problems.append(f"exception: {e['params'].get('exceptionDetails', {}).get('text')}")
        elif m == "Log.entryAdded":
            entry = e["params"]["entry"]
            problems.append(f"log {entry.get('level')}: {entry.get('text')}")
    requests = [e["params"]["request"]["url"] for e in evs if e.get("method") == "Network.requestWillBeSent"]
    blank = br.new_page(1280, False)
    boxes = [{"x": c["x"], "y": c["y"], "w": c["w"], "h": c["h"]} for c in audit["charts"]]
    expr = PIXELS_JS.replace("BOXES", json.dumps(boxes)).replace("PNG", json.dumps(png))
    pixels = json.loads(br.eval(blank, expr, await_promise=True))
    return {"audit": audit, "pixels": pixels, "problems": problems, "requests": requests, "url": url}


@pytest.fixture(scope="module")
def browser():
    br = Browser(CHROMIUM)
    yield br
    br.close()


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("report")
    view = build_view(
        sample_analysis(),
        attribution=SAMPLE_ATTRIBUTION,
        collected={"kind": "trace", "paths": {"trace": "traces/shop_scroll.json"}, "source": "traces/shop_scroll.json"},
        route="full_analysis",
        question="帮我全面分析一下这个页面的性能",
    )
    return Path(write_report(view, folder)["html"])


def _luminance(css_rgb: str) -> float:
    r, g, b = (int(x) for x in css_rgb[css_rgb.index("(") + 1 : css_rgb.index(")")].split(",")[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _assert_drawn(result: dict) -> None:
    audit, pixels = result["audit"], result["pixels"]
    kinds = {c["kind"] for c in audit["charts"]}
    assert EXPECTED_CHARTS <= kinds, f"missing charts: {EXPECTED_CHARTS - kinds}"
    for c, px in zip(audit["charts"], pixels["boxes"]):
        assert c["w"] > 100 and c["h"] > 40, c
        assert c["drawn"] >= 1 and c["drawn"] == c["marks"], c
        # painted: a real share of the box is ink, in at least two colours (marks + axes/labels)
        assert px["ink"] > 0.01 * px["area"], (c["kind"], px)
        assert px["colours"] >= 2, (c["kind"], px)
    assert result["problems"] == [], result["problems"]
    assert result["requests"] == [result["url"]], result["requests"]


def test_charts_draw_at_desktop_width_in_light_mode(browser, report):
    r = inspect_page(browser, report, 1280, dark=False, shot_name="report-1280-light.png")
    _assert_drawn(r)
    assert r["audit"]["scrollW"] <= r["audit"]["innerW"]
    assert _luminance(r["audit"]["bg"]) > 200


def test_charts_draw_at_phone_width_in_dark_mode(browser, report):
    r = inspect_page(browser, report, 390, dark=True, shot_name="report-390-dark.png")
    _assert_drawn(r)
    # the page itself never scrolls sideways on a phone; wide charts and tables scroll in their box
    assert r["audit"]["scrollW"] <= r["audit"]["innerW"], r["audit"]
    assert _luminance(r["audit"]["bg"]) < 60


REAL = ["api32_startup_warm.perfetto-trace", "chrome-android-thread-time.json.gz"]
HAS_ANALYSIS = importlib.util.find_spec("nodes.perf.analysis") is not None


@pytest.mark.parametrize("name", REAL)
def test_real_capture_reports_draw_and_fit(browser, tmp_path, name):
    from nodes.perf.analysis import analyze_file

    src = HERE / "data" / "report" / name
    view = build_view(analyze_file(str(src)), collected={"kind": "file", "paths": {"data": str(src)}, "source": str(src)})
    html = Path(write_report(view, tmp_path)["html"])
    for width, dark in ((1280, False), (390, True)):
        r = inspect_page(browser, html, width, dark=dark, shot_name=f"{name}-{width}.png")
        assert r["audit"]["charts"], "a real capture with no chart"
        for c, px in zip(r["audit"]["charts"], r["pixels"]["boxes"]):
            assert c["drawn"] >= 1 and c["drawn"] == c["marks"], c
            assert px["ink"] > 0.005 * px["area"] and px["colours"] >= 2, (c["kind"], px)
        assert r["problems"] == [] and r["requests"] == [r["url"]]
        # long real names (HIDL::IWifiStaIface::…) must wrap, not widen the page
        assert r["audit"]["scrollW"] <= r["audit"]["innerW"], (width, r["audit"]["scrollW"])


def test_checker_catches_a_fetch_and_an_empty_chart(browser, report, tmp_path):
    html = report.read_text(encoding="utf-8")
    bad = html.replace(
        "<main>",
        '<main><img src="https://example.invalid/pixel.png" alt="">'
        '<svg class="chart" data-chart="empty" viewBox="0 0 720 100"><g></g></svg>',
        1,
    )
    page = tmp_path / "bad.html"
    page.write_text(bad, encoding="utf-8")
    r = inspect_page(browser, page, 1280, dark=False, shot_name="bad.png")
    assert any("Content Security Policy" in p or "example.invalid" in p for p in r["problems"]), r["problems"]
    empty = [c for c in r["audit"]["charts"] if c["kind"] == "empty"]
    assert empty and empty[0]["drawn"] == 0
    with pytest.raises(AssertionError):
        _assert_drawn(r)


LENS_CAPTURES = {"perfetto/ms_android12_emulator_sched_cpusampling.pftrace": {"cpu-processes", "cpu-threads", "memory-rss"},
                 "web/scroll.trace.json.gz": {"scroll-latency"}}


@pytest.mark.parametrize("name", sorted(LENS_CAPTURES))
def test_lens_charts_draw(browser, tmp_path, name):
    """The lens sections' charts (nodes/report/lens_charts.py) paint every mark, at desktop width."""
    from nodes.perf.analysis import analyze_paths

    src = HERE / "data" / name
    html = Path(write_report(build_view(analyze_paths([str(src)])), tmp_path)["html"])
    r = inspect_page(browser, html, 1280, dark=False, shot_name=f"lens-{src.name}.png")
    kinds = {c["kind"] for c in r["audit"]["charts"]}
    assert LENS_CAPTURES[name] <= kinds, kinds
    for c, px in zip(r["audit"]["charts"], r["pixels"]["boxes"]):
        assert c["drawn"] >= 1 and c["drawn"] == c["marks"], c
        assert px["ink"] > 0.005 * px["area"] and px["colours"] >= 2, (c["kind"], px)
    assert r["problems"] == [] and r["requests"] == [r["url"]]
    assert r["audit"]["scrollW"] <= r["audit"]["innerW"]
