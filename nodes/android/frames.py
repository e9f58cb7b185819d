"""FPS and jank: reset ``gfxinfo``, let the user interact for N seconds, read ``framestats``.

The dump is saved as the device printed it (under PerfScout's one meta line, which records the
device refresh period from ``dumpsys SurfaceFlinger --latency`` as the jank budget for frames
whose rows carry no ``FrameInterval``). The summary repeats only numbers the dump holds or that
follow from it and the measured window; the analyzer computes the rest from the file.
"""

from __future__ import annotations

import re
import statistics
import time
from typing import Any, Callable

from graph.enums import CollectionKind, ErrorKind
from graph.payloads import collection
from nodes.android.names import check_package
from nodes.android.session import Session
from nodes.framework.errors import ToolFailure
from nodes.perf.errors import PerfDataError
from nodes.perf.parsers import android_capture, gfxinfo

_RESUMED = re.compile(
    r"(?:mResumedActivity|ResumedActivity|topResumedActivity|mFocusedApp)[:=]\s*"
    r"(?:ActivityRecord|AppWindowToken)\{[0-9a-f]+ u\d+ ([A-Za-z][\w.]*)/",
)


def foreground_package(s: Session) -> str | None:
    """The app in front, from ``dumpsys activity activities`` (None when it names none)."""
    res = s.adb.shell(["dumpsys", "activity", "activities"], check=False)
    m = _RESUMED.search(res.stdout)
    if not m:
        return None
    try:
        return check_package(m.group(1))
    except ValueError:
        return None


def refresh_period_ns(s: Session) -> int | None:
    """The display's vsync period: the first line of ``dumpsys SurfaceFlinger --latency``."""
    res = s.adb.shell(["dumpsys", "SurfaceFlinger", "--latency"], check=False)
    first = res.stdout.strip().splitlines()[0].strip() if res.stdout.strip() else ""
    if res.rc == 0 and first.isdigit():
        n = int(first)
        if 1_000_000 <= n <= 200_000_000:
            return n
    return None


def collect_frames(
    s: Session, package: str, seconds: float, sleep: Callable[[float], None] = time.sleep
) -> dict[str, Any]:
    """The ``collected`` entry for a frame capture. Raises ToolFailure."""
    package = check_package(package)
    s.adb.shell(["dumpsys", "gfxinfo", package, "reset"])
    started = time.monotonic()
    if seconds > 0:
        sleep(seconds)
    res = s.adb.shell(["dumpsys", "gfxinfo", package, "framestats"])
    window_s = max(seconds, time.monotonic() - started)
    period = refresh_period_ns(s)
    rep = gfxinfo.read_text(res.stdout)
    if rep.no_process and rep.empty:
        raise ToolFailure(
            ErrorKind.VALIDATION,
            f"{package} is not running on {s.serial} (`{res.command}` printed \u201cNo process found\u201d): "
            "open the app, then ask again",
        )
    meta = {
        "command": res.command,
        "serial": s.serial,
        "model": s.info.model,
        "android": s.info.release,
        "sdk": s.info.sdk,
        "package": package,
        "window_s": round(window_s, 3),
        "refresh_period_ns": period,
    }
    path = s.run_dir / "gfxinfo-framestats.txt"
    path.write_text(android_capture.header(meta) + res.stdout, encoding="utf-8")
    try:
        pd = gfxinfo.parse(str(path))
    except PerfDataError as e:
        raise ToolFailure(ErrorKind.VALIDATION, f"`{res.command}` output did not parse: {e.problem}") from None
    fs = pd.frame_summary
    summary: dict[str, Any] = {
        "task": "frames",
        "device": s.info.describe(),
        "package": package,
        "window_s": round(window_s, 2),
        "refresh_hz": round(1e9 / period, 2) if period else None,
        "frame_source": fs.get("frame_source"),
        "budget_source": fs.get("budget_source"),
    }
    for key in ("total_frames", "janky_frames", "janky_pct", "p50_ms", "p90_ms", "p95_ms", "p99_ms",
                "missed_vsync", "slow_ui_thread", "frame_deadline_missed"):
        if key in fs:
            summary[f"gfxinfo_{key}"] = fs[key]
    if isinstance(fs.get("total_frames"), (int, float)) and window_s > 0:
        summary["rendered_fps"] = round(float(fs["total_frames"]) / window_s, 2)
    if pd.frames and fs.get("frame_source") == "framestats":
        durs = [f.dur_us / 1000.0 for f in pd.frames if f.dur_us is not None]  # framestats rows all end
        over = sum(1 for f in pd.frames if (f.janky if f.janky is not None else (f.dur_us or 0.0) > (f.budget_us or 0)))
        summary.update(
            {
                "framestats_frames": len(durs),
                "framestats_over_budget": over,
                "framestats_p50_ms": round(statistics.median(durs), 2),
                "framestats_max_ms": round(max(durs), 2),
            }
        )
    return collection(CollectionKind.ANDROID, paths={"framestats": str(path)}, summary=summary,
                      source=s.source(f"shell dumpsys gfxinfo {package} framestats"))


def describe_frames(summary: dict[str, Any]) -> str:
    """One line a person reads; only numbers that are in the summary."""
    parts = [f"{summary.get('package')} on {summary.get('device')}"]
    if "gfxinfo_total_frames" in summary:
        parts.append(f"{int(summary['gfxinfo_total_frames'])} frames in {summary.get('window_s')} s")
    if "rendered_fps" in summary:
        parts.append(f"{summary['rendered_fps']} frames/s rendered")
    if "gfxinfo_janky_frames" in summary:
        parts.append(f"janky {int(summary['gfxinfo_janky_frames'])} ({summary.get('gfxinfo_janky_pct')} %)")
    if "gfxinfo_p90_ms" in summary:
        parts.append(f"p90 {summary['gfxinfo_p90_ms']} ms")
    return "; ".join(parts)
