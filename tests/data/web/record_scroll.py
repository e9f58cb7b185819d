"""Record a Chromium trace of a scrolled page over the DevTools protocol (Tracing.start,
Input.synthesizeScrollGesture), for the scroll lens's reference captures.

    python record_scroll.py OUT.json            # Chrome's JSON trace (Tracing.dataCollected)
    python record_scroll.py OUT.pftrace --proto # the same scroll as a Perfetto protobuf trace
                                                # (transferMode ReturnAsStream, streamFormat proto)
"""
import asyncio, base64, json, subprocess, sys, tempfile, time, urllib.request, pathlib
import websockets

PORT = 9333
URL = "file://" + str(pathlib.Path(__file__).with_name("scroll_page.html"))
CATS = ["input", "benchmark", "latencyInfo", "input.scrolling", "graphics.pipeline", "cc"]


async def main(out, proto=False):
    prof = tempfile.mkdtemp()
    p = subprocess.Popen(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                          f"--remote-debugging-port={PORT}", f"--user-data-dir={prof}", "--window-size=412,900",
                          "about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                tabs = json.load(urllib.request.urlopen(f"http://127.0.0.1:{PORT}/json"))
                break
            except Exception:
                time.sleep(0.1)
        page = next(t for t in tabs if t["type"] == "page")
        async with websockets.connect(page["webSocketDebuggerUrl"], max_size=1 << 30) as ws:
            n = 0
            async def call(method, **params):
                nonlocal n
                n += 1
                await ws.send(json.dumps({"id": n, "method": method, "params": params}))
                me = n
                while True:
                    m = json.loads(await ws.recv())
                    if m.get("id") == me:
                        return m
                    if m.get("method") == "Tracing.dataCollected":
                        events.extend(m["params"]["value"])
            events = []
            await call("Page.enable")
            await call("Page.navigate", url=URL)
            await asyncio.sleep(1.5)
            if proto:
                await call("Tracing.start", traceConfig={"includedCategories": CATS},
                           transferMode="ReturnAsStream", streamFormat="proto")
            else:
                await call("Tracing.start", traceConfig={"includedCategories": CATS}, transferMode="ReportEvents")
            await asyncio.sleep(0.3)
            for _ in range(3):
                await call("Input.synthesizeScrollGesture", x=200, y=600, yDistance=-1500, speed=2000, gestureSourceType="mouse")
            await asyncio.sleep(0.5)
            await ws.send(json.dumps({"id": 99999, "method": "Tracing.end"}))
            while True:
                m = json.loads(await ws.recv())
                if m.get("method") == "Tracing.dataCollected":
                    events.extend(m["params"]["value"])
                elif m.get("method") == "Tracing.tracingComplete":
                    stream = m["params"].get("stream")
                    break
            if proto:  # the trace is a stream handle: read it to its end (IO.read), then close it
                chunks = []
                while True:
                    r = (await call("IO.read", handle=stream, size=1 << 20))["result"]
                    chunks.append(base64.b64decode(r["data"]) if r.get("base64Encoded") else r["data"].encode("latin-1"))
                    if r.get("eof"):
                        break
                await call("IO.close", handle=stream)
                data = b"".join(chunks)
                open(out, "wb").write(data)
                print(len(data), "bytes")
                return
        json.dump({"traceEvents": events}, open(out, "w"))
        print(len(events), "events")
    finally:
        p.terminate(); p.wait(5)

asyncio.run(main(sys.argv[1], proto="--proto" in sys.argv[2:]))
