"""A small frame-log parser with two deliberate hot spots, profiled by the attributor tests.

``parse_frames`` decodes a synthetic frame log line by line and ``find_janky`` compares every
frame with every other one (quadratic on purpose), so a sampling profiler attributes most of
the time to a handful of known lines.
"""

import sys
import time


class FrameLog:
    """Frames as (index, duration in ms) pairs."""

    def __init__(self, text):
        self.frames = parse_frames(text)

    def find_janky(self, factor=2.0):
        janky = []
        for i, d in self.frames:
            slower = 0
            for _, other in self.frames:
                if d > factor * other:
                    slower += 1
            if slower > len(self.frames) // 2:
                janky.append(i)
        return janky


def make_log(n):
    return "\n".join(f"frame={i} dur={(i * 37) % 50 + 1}.{i % 10}ms vsync={i * 16}" for i in range(n))


def parse_frames(text):
    frames = []
    for line in text.splitlines():
        fields = dict(part.split("=", 1) for part in line.split())
        frames.append((int(fields["frame"]), float(fields["dur"].rstrip("ms"))))
    return frames


def main(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        log = FrameLog(make_log(60000))
        FrameLog(make_log(1200)).find_janky()
        del log


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 3.0)
