"""Headless Chromium over the DevTools protocol on a pipe, and the page checker the report
and comparison tests share (tests/test_report_browser.py says what it checks and why)."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]  # tests/
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
