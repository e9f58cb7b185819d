"""Writes tiny_trace.json: a small Trace Event Format file the notebooks analyse.

Written for PerfScout (no third-party data): 1.2 s of a renderer with 16.7 ms frames, one
95 ms task around frame 20 (inside it, ``parse_rows`` takes 80 ms), so the analysis has a clear
long task, missed frames and a top hot spot. Run it again to regenerate the file byte for byte.
"""

from __future__ import annotations

import json
from pathlib import Path

FRAME_US = 16_667
PID, MAIN, COMPOSITOR = 1, 1, 2


def events() -> list[dict]:
    ev: list[dict] = [
        {"ph": "M", "name": "process_name", "pid": PID, "tid": MAIN, "args": {"name": "Renderer"}},
        {"ph": "M", "name": "thread_name", "pid": PID, "tid": MAIN, "args": {"name": "CrRendererMain"}},
        {"ph": "M", "name": "thread_name", "pid": PID, "tid": COMPOSITOR, "args": {"name": "Compositor"}},
    ]
    t = 0
    frame = 0
    while t < 1_200_000:
        slow = frame == 20
        work = 95_000 if slow else 5_000
        ev.append({"ph": "X", "name": "RunTask", "pid": PID, "tid": MAIN, "ts": t, "dur": work, "cat": "toplevel"})
        if slow:
            ev.append({"ph": "X", "name": "parse_rows", "pid": PID, "tid": MAIN, "ts": t + 1_000, "dur": 80_000})
        ev.append({"ph": "X", "name": "Layout", "pid": PID, "tid": MAIN, "ts": t + work - 4_000, "dur": 2_000})
        ev.append({"ph": "X", "name": "Paint", "pid": PID, "tid": MAIN, "ts": t + work - 2_000, "dur": 1_500})
        draw = t + work
        ev.append({"ph": "X", "name": "DrawFrame", "pid": PID, "tid": COMPOSITOR, "ts": draw, "dur": 1_200})
        # The next frame starts at the next vsync after this one was drawn.
        t = ((draw // FRAME_US) + 1) * FRAME_US
        frame += 1
    return ev


if __name__ == "__main__":
    out = Path(__file__).with_name("tiny_trace.json")
    out.write_text(json.dumps({"traceEvents": events(), "displayTimeUnit": "ms"}, separators=(",", ":")) + "\n")
    print(f"wrote {out} ({out.stat().st_size} bytes)")
