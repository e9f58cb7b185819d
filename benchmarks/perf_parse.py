"""Trace Event JSON parsing: throughput against a json.load + loop baseline, and growth to 500 MB.

Run: ``python -m benchmarks.perf_parse`` (all points, a few minutes) or
``python -m benchmarks.perf_parse --quick`` (10 MB and the real 8 MB trace only).

1. Throughput, in one run, on the same files: the baseline is what a straightforward reader
   does — ``json.load`` of the whole file and one loop aggregating X-slice durations by name —
   against ``nodes.perf.parsers.trace_event.parse`` (full reader: every phase, B/E matching,
   columnar store). Files: the real 8.3 MB Chrome-for-Android trace from ``tests/data/perf`` (copied from shared/traces)
   (uncompressed into a temp dir) and a generated 10 MB trace. Reported: MB/s and the ratio.
2. Growth: generated traces of 10, 50, 100, 250 and 500 MB, each read in a fresh subprocess
   that reports wall and CPU time and peak RSS (``VmHWM``; also minus its RSS before the
   read), and analysed (read + metrics) in another; the baseline's peak RSS is measured the
   same way up to 100 MB (above that it needs several GB). Results are printed as a table and
   written to ``benchmarks/results/perf_parse.json``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: The project's own copy (with its attribution in tests/data/perf/SOURCES.md).
REAL_TRACE = ROOT / "tests" / "data" / "perf" / "chrome-android-thread-time.json.gz"

NAMES = [
    "MessageLoop::RunTask", "ThreadControllerImpl::DoWork", "V8.Execute", "v8.callFunction",
    "FunctionCall", "ParseHTML", "UpdateLayoutTree", "Layout", "Paint", "CompositeLayers",
    "RasterTask", "ImageDecodeTask", "ProxyMain::BeginMainFrame", "LayerTreeHost::UpdateLayers",
    "ScheduledAction::execute", "EventDispatch", "HitTest", "Looper.dispatchMessage",
    "Choreographer#doFrame", "traversal", "measure", "layout", "draw", "RenderThread::DrawFrame",
    "GPUTask", "CommandBufferStub::OnAsyncFlush", "SimpleCacheEntry::ReadData", "ResourceLoad",
] + [f"app::module{i}::function{j}" for i in range(20) for j in range(20)]
CATS = ["toplevel", "v8", "blink", "cc", "gpu", "disabled-by-default-devtools.timeline", "Java"]


def generate(path: str | os.PathLike, target_mb: float, seed: int = 1) -> int:
    """Write a Chrome-like ``{"traceEvents": [...]}`` trace of about ``target_mb`` MB.

    Mix: complete X slices nested three deep (~75 %), B/E pairs (~10 %), instants incl. frame
    markers, counters, async b/e, and metadata for 4 processes × 8 threads; events come in
    per-thread runs of 5–60 tasks, as Chrome's per-thread trace chunks do. Returns the event count.
    """
    rnd = random.Random(seed)
    target = int(target_mb * 1e6)
    threads = [(1000 + p, 1000 + p * 100 + t) for p in range(4) for t in range(8)]
    clock = {k: 1_000_000.0 for k in threads}
    out = open(path, "w", encoding="utf-8", buffering=1 << 20)
    written = 0
    n = 0
    out.write('{"traceEvents": [\n')
    head = []
    for p in range(4):
        head.append(f'{{"ph":"M","pid":{1000 + p},"tid":0,"ts":0,"name":"process_name","args":{{"name":"Renderer{p}"}}}}')
    for pid, tid in threads:
        tname = "CrRendererMain" if tid % 100 == 0 else f"Worker{tid % 100}"
        head.append(f'{{"ph":"M","pid":{pid},"tid":{tid},"ts":0,"name":"thread_name","args":{{"name":"{tname}"}}}}')
    s = ",\n".join(head)
    out.write(s)
    written += len(s)
    n += len(head)
    buf: list[str] = []
    burst = 0
    pid, tid = threads[0]
    while written < target:
        # Chrome writes its trace buffer in per-thread chunks: events come in runs per thread
        if burst <= 0:
            pid, tid = threads[rnd.randrange(len(threads))]
            burst = rnd.randrange(5, 60)
        burst -= 1
        t = clock[(pid, tid)]
        top = rnd.choice(NAMES[:28])
        cat = rnd.choice(CATS)
        d1 = rnd.uniform(50, 3000)
        buf.append(
            f'{{"pid":{pid},"tid":{tid},"ts":{t:.0f},"ph":"X","cat":"{cat}","name":"{top}",'
            f'"args":{{"src_file":"../../base/task/sequence_manager.cc","src_func":"PostTask"}},'
            f'"dur":{d1:.0f},"tdur":{d1 * 0.8:.0f},"tts":{t / 3:.0f}}}'
        )
        inner = t + d1 * 0.1
        for _ in range(rnd.randrange(1, 4)):
            d2 = d1 * rnd.uniform(0.05, 0.25)
            name = rnd.choice(NAMES)
            buf.append(
                f'{{"pid":{pid},"tid":{tid},"ts":{inner:.0f},"ph":"X","cat":"{cat}","name":"{name}",'
                f'"args":{{}},"dur":{d2:.0f},"tdur":{d2:.0f},"tts":{inner / 3:.0f}}}'
            )
            buf.append(
                f'{{"pid":{pid},"tid":{tid},"ts":{inner + 1:.0f},"ph":"X","cat":"{cat}","name":"{rnd.choice(NAMES)}",'
                f'"args":{{"data":{{"frame":"0x1f2e","url":"https://example.com/app.js"}}}},"dur":{d2 / 3:.0f}}}'
            )
            inner += d2 + 5
        r = rnd.random()
        if r < 0.25:
            b = t + d1 + 10
            buf.append(f'{{"pid":{pid},"tid":{tid},"ts":{b:.0f},"ph":"B","cat":"Java","name":"Looper.dispatchMessage","args":{{}}}}')
            buf.append(f'{{"pid":{pid},"tid":{tid},"ts":{b + 300:.0f},"ph":"E","cat":"Java","name":"Looper.dispatchMessage","args":{{}}}}')
        elif r < 0.35:
            nm = "DrawFrame" if tid % 100 == 1 else "BeginFrame"
            buf.append(f'{{"pid":{pid},"tid":{tid},"ts":{t + d1:.0f},"ph":"I","cat":"cc","name":"{nm}","s":"t","args":{{"layerTreeId":1}}}}')
        elif r < 0.40:
            buf.append(f'{{"pid":{pid},"tid":0,"ts":{t:.0f},"ph":"C","cat":"v8","name":"JSHeap","args":{{"usedJSHeapSize":{rnd.randrange(10**6, 10**8)}}}}}')
        elif r < 0.43:
            aid = rnd.randrange(1 << 30)
            buf.append(f'{{"pid":{pid},"tid":{tid},"ts":{t:.0f},"ph":"b","cat":"loading","name":"ResourceFetch","id":"0x{aid:x}","args":{{}}}}')
            buf.append(f'{{"pid":{pid},"tid":{tid},"ts":{t + 5000:.0f},"ph":"e","cat":"loading","name":"ResourceFetch","id":"0x{aid:x}","args":{{}}}}')
        clock[(pid, tid)] = t + d1 + rnd.uniform(400, 4000)
        if len(buf) >= 2000:
            s = ",\n" + ",\n".join(buf)
            out.write(s)
            written += len(s)
            n += len(buf)
            buf = []
    if buf:
        s = ",\n" + ",\n".join(buf)
        out.write(s)
        n += len(buf)
    out.write('\n],\n"metadata": {"source": "benchmarks.perf_parse", "seed": %d}}\n' % seed)
    out.close()
    return n


# --- the two readers under test --------------------------------------------------------


def baseline(path: str) -> int:
    """json.load + one aggregation loop (X slice durations by name)."""
    with open(path, "rb") as f:
        doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    agg: dict[str, float] = {}
    for e in events:
        if e.get("ph") == "X":
            agg[e["name"]] = agg.get(e["name"], 0.0) + e.get("dur", 0)
    return len(agg)


def ours(path: str) -> int:
    from nodes.perf.parsers.trace_event import parse

    return parse(path).slice_count


def analyze(path: str) -> int:
    """The whole analyzer: read + metrics (hot spots, threads, frames, findings …)."""
    from nodes.perf.analysis import analyze_file

    return len(analyze_file(path).hotspots)


def _rss_kb(field: str = "VmRSS") -> int:
    """Current RSS (VmRSS) or its high-water mark (VmHWM) in kB, from Linux /proc.

    VmHWM, not ``ru_maxrss``: Linux carries ru_maxrss across fork+exec, so a child would
    report at least its parent's size."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def _child(which: str, path: str) -> None:
    """Subprocess body: import first, then measure the parse alone."""
    fn = {"ours": ours, "baseline": baseline, "analyze": analyze}[which]
    if which != "baseline":
        import nodes.perf.analysis  # noqa: F401  (import cost out of the timing)
        import nodes.perf.parsers.trace_event  # noqa: F401
    before = _rss_kb()
    t0 = time.perf_counter()
    c0 = time.process_time()
    fn(path)
    dt = time.perf_counter() - t0
    cpu = time.process_time() - c0
    peak = _rss_kb("VmHWM") or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"seconds": dt, "cpu_seconds": cpu, "peak_rss_mb": peak / 1024, "growth_mb": (peak - before) / 1024}))


def measure_in_subprocess(which: str, path: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.perf_parse", "--child", which, path],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def throughput(path: str, repeats: int = 5) -> dict:
    """Both readers on one file in this process, interleaved, best of ``repeats``.

    CPU time of the process (``time.process_time``) is the measure: these machines are shared,
    and wall time swings with the other jobs; CPU time of a single-threaded parse does not.
    Wall time is recorded too."""
    size = os.path.getsize(path) / 1e6
    readers = (("baseline", baseline), ("ours", ours))
    for _, fn in readers:
        fn(path)  # warm the page cache and imports
    cpu = {name: [] for name, _ in readers}
    wall = {name: [] for name, _ in readers}
    for _ in range(repeats):
        for name, fn in readers:
            c0, w0 = time.process_time(), time.perf_counter()
            fn(path)
            cpu[name].append(time.process_time() - c0)
            wall[name].append(time.perf_counter() - w0)
    res: dict = {"size_mb": size}
    for name, _ in readers:
        best = min(cpu[name])
        res[name] = {"cpu_seconds": best, "mb_per_s": size / best, "wall_seconds": min(wall[name]),
                     "wall_mb_per_s": size / min(wall[name])}
    res["ratio"] = res["ours"]["mb_per_s"] / res["baseline"]["mb_per_s"]
    res["wall_ratio"] = res["ours"]["wall_mb_per_s"] / res["baseline"]["wall_mb_per_s"]
    return res


BASELINE_SCRIPT = (
    "import json, sys\n"
    "with open(sys.argv[1], 'rb') as f:\n"
    "    doc = json.load(f)\n"
    "events = doc['traceEvents'] if isinstance(doc, dict) else doc\n"
    "agg = {}\n"
    "for e in events:\n"
    "    if e.get('ph') == 'X':\n"
    "        agg[e['name']] = agg.get(e['name'], 0.0) + e.get('dur', 0)\n"
)


def _perfscout() -> list[str]:
    exe = Path(sys.executable).with_name("perfscout")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "app.cli"]


def _process(cmd: list[str]) -> dict:
    """One whole process: wall time, its CPU (user + sys) and peak RSS, from wait4."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    err = p.stderr.read().decode(errors="replace") if p.stderr else ""
    p.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{cmd[0]} failed: {err.strip()[-300:]}")
    return {"seconds": wall, "cpu_seconds": ru.ru_utime + ru.ru_stime, "peak_rss_mb": ru.ru_maxrss / 1024}


def end_to_end(path: str, repeats: int = 2) -> dict:
    """The issue's measure, in one run on one file: the whole ``perfscout analyze FILE --json``
    process against a ``json.load`` + one loop process, interleaved, best of ``repeats`` by CPU.
    Both are full processes (interpreter start and imports included)."""
    size = os.path.getsize(path) / 1e6
    cmds = {"baseline": [sys.executable, "-c", BASELINE_SCRIPT, path],
            "perfscout analyze --json": _perfscout() + ["analyze", path, "--json"]}
    runs: dict[str, list[dict]] = {k: [] for k in cmds}
    for _ in range(repeats):
        for k, cmd in cmds.items():
            runs[k].append(_process(cmd))
    res: dict = {"size_mb": size}
    for k, rs in runs.items():
        best = min(rs, key=lambda r: r["cpu_seconds"])
        res[k] = dict(best, mb_per_s=size / best["cpu_seconds"], wall_mb_per_s=size / best["seconds"],
                      all_cpu_seconds=[r["cpu_seconds"] for r in rs])
    ours = res["perfscout analyze --json"]
    res["ratio"] = ours["mb_per_s"] / res["baseline"]["mb_per_s"]
    res["wall_ratio"] = ours["wall_mb_per_s"] / res["baseline"]["wall_mb_per_s"]
    return res


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.perf_parse")
    ap.add_argument("--quick", action="store_true", help="throughput only, 10 MB")
    ap.add_argument("--sizes", default="10,50,100,250,500", help="growth sizes in MB")
    ap.add_argument("--e2e", type=float, metavar="MB", default=None,
                    help="only the end-to-end comparison (perfscout analyze --json vs json.load) on a generated trace of MB")
    ap.add_argument("--child", nargs=2, metavar=("WHICH", "PATH"), help=argparse.SUPPRESS)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "perf_parse.json"))
    args = ap.parse_args(argv)
    if args.child:
        _child(*args.child)
        return 0
    sys.path.insert(0, str(ROOT))
    if args.e2e:
        with tempfile.TemporaryDirectory(prefix="perf_parse_") as tmp:
            path = os.path.join(tmp, f"gen{args.e2e:g}.json")
            events = generate(path, args.e2e)
            r = end_to_end(path)
        r["events"] = events
        b, o = r["baseline"], r["perfscout analyze --json"]
        print(f"{r['size_mb']:.1f} MB, {events:,} events: json.load + loop {b['cpu_seconds']:.2f} s CPU "
              f"({b['seconds']:.2f} s wall, peak {b['peak_rss_mb']:.0f} MB); perfscout analyze --json "
              f"{o['cpu_seconds']:.2f} s CPU ({o['seconds']:.2f} s wall, peak {o['peak_rss_mb']:.0f} MB); "
              f"ratio {r['ratio']:.2f}× (wall {r['wall_ratio']:.2f}×)")
        out = Path(args.out).with_name("perf_parse_e2e.json")
        out.write_text(json.dumps(r, indent=2))
        print(f"written: {out}")
        return 0
    report: dict = {"python": sys.version.split()[0], "cpus": os.cpu_count(), "throughput": {}, "growth": []}
    with tempfile.TemporaryDirectory(prefix="perf_parse_") as tmp:
        files = {}
        if REAL_TRACE.exists():
            real = os.path.join(tmp, "chrome-android-thread-time.json")
            with gzip.open(REAL_TRACE) as src, open(real, "wb") as dst:
                dst.write(src.read())
            files["real 8.3 MB Chrome trace"] = real
        gen10 = os.path.join(tmp, "gen10.json")
        generate(gen10, 10)
        files["generated 10 MB"] = gen10
        print(f"{'file':28} {'MB':>6} {'json.load MB/s':>15} {'ours MB/s':>10} {'ratio':>6}")
        for label, path in files.items():
            r = throughput(path)
            report["throughput"][label] = r
            print(f"{label:28} {r['size_mb']:6.1f} {r['baseline']['mb_per_s']:15.1f} "
                  f"{r['ours']['mb_per_s']:10.1f} {r['ratio']:6.2f}×", flush=True)
        if not args.quick:
            print(f"\n{'size MB':>8} {'events':>10} {'read s':>7} {'CPU s':>6} {'MB/s':>6} {'peak RSS MB':>12} "
                  f"{'growth MB':>10} {'analyze s':>10} {'analyze peak MB':>16} {'json.load s':>12} {'json.load peak MB':>18}")
            for mb in [float(x) for x in args.sizes.split(",") if x]:
                path = os.path.join(tmp, f"gen{mb:g}.json")
                events = generate(path, mb)
                size = os.path.getsize(path) / 1e6
                o = measure_in_subprocess("ours", path)
                row = {"size_mb": size, "events": events, "ours": o, "analyze": measure_in_subprocess("analyze", path)}
                if mb <= 100:
                    row["baseline"] = measure_in_subprocess("baseline", path)
                report["growth"].append(row)
                b = row.get("baseline")
                a = row["analyze"]
                print(f"{size:8.1f} {events:10d} {o['seconds']:7.2f} {o['cpu_seconds']:6.2f} "
                      f"{size / o['cpu_seconds']:6.1f} {o['peak_rss_mb']:12.0f} {o['growth_mb']:10.0f} "
                      f"{a['seconds']:10.2f} {a['peak_rss_mb']:16.0f} "
                      f"{(b['seconds'] if b else float('nan')):12.2f} {(b['peak_rss_mb'] if b else float('nan')):18.0f}",
                      flush=True)
                os.unlink(path)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=2))
    print(f"\nwritten: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
