"""A rich, synthetic AnalysisResult for the reporter's tests (every section filled);
tests/test_report_sample.py checks it.

Built directly from the model so the reporter's tests do not depend on any parser; the real
captures in tests/data/report/ cover the parsers' output.
"""

from __future__ import annotations

import math
import random

from nodes.perf.model import (
    AnalysisResult,
    CounterSummary,
    Evidence,
    Finding,
    FrameStats,
    Hotspot,
    ImportEntry,
    LongTask,
    StackWeight,
    StartupPhase,
    StartupRun,
    StartupStats,
    ThreadStat,
    WorstFrame,
)

SOURCE = "traces/shop_scroll.json"


def sample_analysis(seed: int = 7) -> AnalysisResult:
    rnd = random.Random(seed)
    budget = 16.67
    starts, durs = [], []
    t = 5.0
    for i in range(600):
        d = rnd.gauss(11.0, 2.5)
        if i % 37 == 0:
            d = rnd.uniform(30, 70)
        elif i % 11 == 0:
            d = rnd.uniform(17, 28)
        d = max(2.0, d)
        starts.append(round(t, 3))
        durs.append(round(d, 3))
        t += max(budget, d)
    srt = sorted(durs)
    jank = sum(1 for d in durs if d > budget)
    worst_idx = sorted(range(len(durs)), key=lambda i: -durs[i])[:8]
    frames = FrameStats(
        count=len(durs),
        fps=round(1000 * len(durs) / t, 2),
        jank_count=jank,
        jank_ratio=jank / len(durs),
        budget_ms=budget,
        budget_source="vsync period",
        p50_ms=srt[len(srt) // 2],
        p90_ms=srt[int(0.9 * len(srt))],
        p99_ms=srt[int(0.99 * len(srt))],
        max_ms=srt[-1],
        durations_ms=durs,
        starts_ms=starts,
        worst=[WorstFrame(start_ms=starts[i], dur_ms=durs[i], jank_type="App Deadline Missed", ran=["RecyclerView#onBindView", "inflate"]) for i in worst_idx],
    )
    stacks = [
        StackWeight(frames=["main", "Looper.loop", "Choreographer.doFrame", "RecyclerView.onLayout", "Adapter.onBind", "ImageDecoder.decode"], weight_ms=420.0, thread="main"),
        StackWeight(frames=["main", "Looper.loop", "Choreographer.doFrame", "RecyclerView.onLayout", "LayoutInflater.inflate"], weight_ms=260.0, thread="main"),
        StackWeight(frames=["main", "Looper.loop", "Choreographer.doFrame", "View.draw", "Canvas.drawText"], weight_ms=150.0, thread="main"),
        StackWeight(frames=["main", "Looper.loop", "Handler.dispatch", "JSON.parse"], weight_ms=90.0, thread="main"),
        StackWeight(frames=["RenderThread", "DrawFrame", "syncFrameState"], weight_ms=200.0, thread="RenderThread"),
        StackWeight(frames=["RenderThread", "DrawFrame", "flush", "eglSwapBuffers"], weight_ms=120.0, thread="RenderThread"),
    ]
    hotspots = [
        Hotspot(name="ImageDecoder.decode", file="app/src/main/java/shop/ImageDecoder.kt", line=88, self_ms=420.0, total_ms=420.0, self_pct=33.6, total_pct=33.6, count=120, thread="main", kind="sample"),
        Hotspot(name="LayoutInflater.inflate", self_ms=260.0, total_ms=260.0, self_pct=20.8, total_pct=20.8, count=75, thread="main", kind="sample"),
        Hotspot(name="syncFrameState", self_ms=200.0, total_ms=200.0, self_pct=16.0, total_pct=16.0, count=60, thread="RenderThread", kind="sample"),
        Hotspot(name="Canvas.drawText", self_ms=150.0, total_ms=150.0, self_pct=12.0, total_pct=12.0, count=44, thread="main", kind="sample"),
        Hotspot(name="JSON.parse | fast", file="lib/json.py", line=12, self_ms=90.0, total_ms=90.0, self_pct=7.2, total_pct=7.2, count=30, thread="main", kind="sample"),
    ]
    pts_cpu = [(i * 100.0, 35 + 30 * math.sin(i / 6.0) + rnd.uniform(-5, 5)) for i in range(100)]
    pts_rss = [(i * 100.0, 180 + i * 0.9 + rnd.uniform(-2, 2)) for i in range(100)]

    def summ(name: str, unit: str, pts: list[tuple[float, float]]) -> CounterSummary:
        vs = [v for _, v in pts]
        return CounterSummary(name=name, unit=unit, min=min(vs), max=max(vs), mean=sum(vs) / len(vs), last=vs[-1], points=pts)

    imports = [
        ImportEntry(module="encodings.utf_8", self_us=300, cumulative_us=300, depth=2),
        ImportEntry(module="encodings", self_us=1200, cumulative_us=1500, depth=1),
        ImportEntry(module="numpy.core._multiarray_umath", self_us=21000, cumulative_us=21000, depth=3),
        ImportEntry(module="numpy.core", self_us=4000, cumulative_us=25000, depth=2),
        ImportEntry(module="numpy", self_us=9000, cumulative_us=34000, depth=1),
        ImportEntry(module="shop.app", self_us=2500, cumulative_us=2500, depth=1),
    ]
    startup = StartupStats(
        runs=[StartupRun(index=i + 1, total_ms=v, wait_ms=v + 12, kind="cold" if i == 0 else "warm", command="am start -W -n com.demo.shop/.Main")
              for i, v in enumerate([912.0, 640.5, 655.1, 631.9, 700.2])],
        median_ms=655.1, min_ms=631.9, max_ms=912.0, spread_ms=280.1, first_ms=912.0, kind="cold",
        phases=[StartupPhase(name="bindApplication", start_ms=0, dur_ms=210, thread="main"),
                StartupPhase(name="activityStart", start_ms=215, dur_ms=180, thread="main"),
                StartupPhase(name="inflate", start_ms=250, dur_ms=90, thread="main"),
                StartupPhase(name="Choreographer#doFrame (first)", start_ms=400, dur_ms=95, thread="main"),
                StartupPhase(name="reportFullyDrawn", start_ms=600, dur_ms=4, thread="main")],
        imports=imports,
    )
    return AnalysisResult(
        format="chrome-json",
        source=SOURCE,
        duration_ms=t,
        hotspots=hotspots,
        threads=[ThreadStat(pid=100, tid=100, name="main", process="com.demo.shop", busy_ms=2100.0, slice_count=5200, is_main=True, running_ms=2050.0, runnable_ms=120.0, sleeping_ms=7000.0),
                 ThreadStat(pid=100, tid=120, name="RenderThread", process="com.demo.shop", busy_ms=900.0, slice_count=1300)],
        long_tasks=[LongTask(name="Adapter.onBind", thread="main", start_ms=starts[i], dur_ms=durs[i] + 30) for i in worst_idx[:5]]
        + [LongTask(name="GC", thread="HeapTaskDaemon", start_ms=2000.0, dur_ms=75.0)],
        frames=frames,
        startup=startup,
        counters=[summ("cpu.process", "%", pts_cpu), summ("mem.rss", "MB", pts_rss)],
        stats={"task-clock": 1234.5, "context-switches": 321},
        meta={"device": "Pixel 6a", "command": "perfscout collect --target com.demo.shop"},
        findings=[
            Finding(title="Janky scrolling", severity="high", detail=f"{jank} of {len(durs)} frames missed the 16.67 ms budget.",
                    evidence=Evidence(source=SOURCE, start_ms=starts[0], end_ms=t, events=["DrawFrame", "Choreographer#doFrame"]),
                    metric={"jank_ratio": round(jank / len(durs), 4)}),
            Finding(title="Image decoding on the main thread", severity="medium", detail="ImageDecoder.decode holds 33.6 % of main-thread samples.",
                    evidence=Evidence(source=SOURCE, events=["ImageDecoder.decode"]), metric={"self_pct": 33.6}),
            Finding(title="Slow cold start", severity="medium", detail="The first launch took 912 ms.", evidence=Evidence(command="am start -W -n com.demo.shop/.Main"), metric={"first_ms": 912.0}),
            Finding(title="GC pause", severity="low", detail="A 75 ms GC on HeapTaskDaemon.", evidence=Evidence(start_ms=2000.0, end_ms=2075.0)),
        ],
        warnings=["skipped 3 events with a negative duration"],
        stacks=stacks,
    )


SAMPLE_ATTRIBUTION = [
    {"name": "ImageDecoder.decode", "status": "found", "file": "app/src/main/java/shop/ImageDecoder.kt", "line": 88,
     "excerpt": "86  fun decode(bytes: ByteArray): Bitmap {\n87      // decodes on the caller's thread\n88      return BitmapFactory.decodeByteArray(bytes, 0, bytes.size)\n89  }", "reason": "defined here"},
    {"name": "LayoutInflater.inflate", "status": "system", "file": None, "line": None, "excerpt": None, "reason": "Android framework"},
    {"name": "Canvas.drawText", "status": "not_found", "file": None, "line": None, "excerpt": None, "reason": "no definition in the workspace"},
]
