"""Generated, seeded captures with a known planted change, for the comparison tests.

Each builder writes ``n`` runs of one build into a folder; jitter is drawn from a seeded
``numpy`` generator, so a side is the same every time and the planted change is the only
systematic difference between two sides built with different parameters.

* :func:`trace_event_runs` — Chrome Trace Event JSON: a main thread calling ``parse_rows`` and
  ``render_page`` (plant: a slower ``parse_rows``) and drawing ``Choreographer#doFrame`` frames
  (plant: extra frames over the 16.7 ms budget).
* :func:`perfetto_startup_runs` — Perfetto protobuf built with the ``perfetto`` package's
  TraceProtoBuilder (as tests/test_perfetto_reader.py does): one cold launch of an app through
  atrace markers, ``launching:`` on system_server, ``bindApplication`` → ``activityStart`` →
  ``activityResume`` → first ``Choreographer#doFrame`` on the app's main thread and its
  ``DrawFrame`` on RenderThread (plant: a longer ``bindApplication``).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

PID, TID = 4242, 4242
APP = "com.example.planted"


def trace_event_runs(folder: Path, n: int, *, seed: int, parse_ms: float = 30.0, render_ms: float = 20.0,
                     frames: int = 60, janky_frames: int = 3, jitter: float = 0.03) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    paths = []
    for i in range(n):
        ev: list[dict] = [
            {"ph": "M", "name": "process_name", "pid": PID, "tid": TID, "args": {"name": APP}},
            {"ph": "M", "name": "thread_name", "pid": PID, "tid": TID, "args": {"name": "main"}},
        ]
        t = 1000.0
        for _ in range(5):  # five iterations of the work, each slice jittered on its own
            for name, ms in (("parse_rows", parse_ms), ("render_page", render_ms)):
                dur = ms * 1000.0 * float(rng.lognormal(0.0, jitter))
                ev.append({"ph": "X", "name": name, "pid": PID, "tid": TID, "ts": t, "dur": dur, "cat": "app"})
                t += dur + 500.0
        jank_at = set(rng.choice(frames, size=janky_frames, replace=False).tolist()) if janky_frames else set()
        for f in range(frames):
            ms = (30.0 if f in jank_at else 8.0) * float(rng.lognormal(0.0, jitter))
            ev.append({"ph": "X", "name": f"Choreographer#doFrame {f}", "pid": PID, "tid": TID, "ts": t,
                       "dur": ms * 1000.0, "cat": "gfx"})
            t += max(ms, 16.67) * 1000.0 + 100.0
        p = folder / f"run{i:02d}.json"
        p.write_text(json.dumps({"traceEvents": ev, "displayTimeUnit": "ms"}))
        paths.append(p)
    return paths


def perfetto_startup_runs(folder: Path, n: int, *, seed: int, bind_ms: float = 40.0, jitter: float = 0.03) -> list[Path]:
    from perfetto.trace_builder.proto_builder import TraceProtoBuilder

    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    ms = 1_000_000
    seq = 7
    paths = []
    for i in range(n):
        b = TraceProtoBuilder()
        pkt = b.add_packet()
        pkt.trusted_packet_sequence_id = seq
        for pid, name in ((1000, "system_server"), (200, APP)):
            pr = pkt.process_tree.processes.add()
            pr.pid = pid
            pr.cmdline.append(name)
        for tid, tgid, name in ((200, 200, "planted"), (201, 200, "RenderThread")):
            th = pkt.process_tree.threads.add()
            th.tid, th.tgid, th.name = tid, tgid, name

        def prints(cpu: int, events: list[tuple[int, int, str]]) -> None:
            p = b.add_packet()
            p.trusted_packet_sequence_id = seq
            p.ftrace_events.cpu = cpu
            for ts, tid, line in events:
                e = p.ftrace_events.event.add()
                e.timestamp, e.pid = ts, tid
                e.print.buf = line + "\n"

        def j(v: float) -> int:
            return int(v * ms * float(rng.lognormal(0.0, jitter)))

        t = 10 * ms
        bind = j(bind_ms)
        start = j(15)
        resume = j(10)
        frame = j(12)
        app_events = [(t, 200, "B|200|bindApplication"), (t + bind, 200, "E|200")]
        t += bind + 2 * ms
        app_events += [(t, 200, "B|200|activityStart"), (t + start, 200, "E|200")]
        t += start
        app_events += [(t, 200, "B|200|activityResume"), (t + resume, 200, "E|200")]
        t += resume + 3 * ms
        app_events += [(t, 200, "B|200|Choreographer#doFrame 1"), (t + frame, 200, "E|200")]
        t += frame
        draw = j(4)
        render = [(t, 201, "B|200|DrawFrame 1"), (t + draw, 201, "E|200")]
        t += draw
        prints(0, [(0, 1001, f"S|1000|launching: {APP}|7")])
        prints(1, app_events)
        prints(2, render)
        prints(0, [(t + 1 * ms, 1001, f"F|1000|launching: {APP}|7")])
        p = folder / f"launch{i:02d}.perfetto-trace"
        p.write_bytes(b.serialize())
        paths.append(p)
    return paths
