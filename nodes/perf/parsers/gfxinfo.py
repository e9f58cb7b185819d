"""``adb shell dumpsys gfxinfo <package> [framestats]``: Android's own frame statistics.

Three things can be in one dump, and all three are read:

* the summary HWUI keeps since the last reset (total and janky frames, percentiles, missed
  vsync, slow UI thread …, the HISTOGRAM, and GPU percentiles on Android 10+) — kept as
  ``frame_summary``, the tool's own numbers, never recomputed;
* ``---PROFILEDATA---`` blocks (with ``framestats``): one CSV row of nanosecond timestamps per
  frame. The header names the columns, so the Android 12+ layout (``FrameTimelineVsyncId``,
  ``FrameDeadline``, ``FrameInterval`` …, 23 columns on Android 13/14) and the older 14-17
  column layouts are read by name. A frame lasts ``FrameCompleted - IntendedVsync``; its budget
  is its own ``FrameInterval`` when the row has one, else the device refresh period the
  collector recorded, else one 60 Hz vsync (said so in ``budget_source``). Rows with non-zero
  ``Flags`` are skipped, as Android's documentation says (layout changes, skipped frames);
* the legacy ``Profile data in ms`` table (Draw / Prepare / Process / Execute per frame),
  which has durations but no timestamps.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field

from nodes.perf.errors import PerfDataError
from nodes.perf.model import DEFAULT_BUDGET_MS, Frame, PerfData
from nodes.perf.parsers import android_capture

FORMAT = "gfxinfo"

#: Android's "no value" for a timestamp column (Long.MAX_VALUE).
_UNSET = 9_000_000_000_000_000_000
DEFAULT_BUDGET_NS = round(DEFAULT_BUDGET_MS * 1e6)
_DEFAULT_BUDGET_SOURCE = f"default {DEFAULT_BUDGET_MS:.2f} ms (refresh period unknown)"
_MAX_BYTES = 64 * 1024 * 1024

_GFX_HEADER = re.compile(r"\*\* Graphics info for pid (\d+) \[([^\]]+)\] \*\*")
_WINDOW = re.compile(r"^\s*Window:\s*(\S.*?)\s*$")
_VIEWROOT = re.compile(r"^\s*(\S+/\S*android\.view\.ViewRootImpl@[0-9a-fA-F]+)")
_COUNT_PCT = re.compile(r"^\s*(Janky frames(?: \(legacy\))?):\s*(\d+)\s*\(([\d.,]+)%\)")
_PERCENTILE = re.compile(r"^\s*(\d+)th (gpu )?percentile:\s*([\d.]+)\s*ms", re.I)
_NUMBER = re.compile(r"^\s*Number ([A-Za-z][A-Za-z ()]*?):\s*(\d+)\s*$")
_TOTAL = re.compile(r"^\s*Total frames rendered:\s*(\d+)")
_SINCE = re.compile(r"^\s*Stats since:\s*(\d+)\s*ns")
_HISTOGRAM = re.compile(r"^\s*(GPU )?HISTOGRAM:\s*(.*)$")
_BUCKET = re.compile(r"(\d+)ms=(\d+)")
_LEGACY_COLUMNS = {"Draw", "Prepare", "Process", "Execute", "Misc"}

#: (stage name, start column, end column) of a PROFILEDATA row, after Android's documentation.
_STAGES = (
    ("input", "HandleInputStart", "AnimationStart"),
    ("animation", "AnimationStart", "PerformTraversalsStart"),
    ("measure_layout", "PerformTraversalsStart", "DrawStart"),
    ("draw", "DrawStart", "SyncQueued"),
    ("sync", "SyncStart", "IssueDrawCommandsStart"),
    ("issue_draw_commands", "IssueDrawCommandsStart", "FrameCompleted"),
)


@dataclass
class GfxinfoReport:
    """Everything one dump says, before it becomes PerfData (the node reads this too)."""

    package: str | None = None
    pid: int | None = None
    summary: dict[str, float] = field(default_factory=dict)
    histogram: list[tuple[int, int]] = field(default_factory=list)
    gpu_histogram: list[tuple[int, int]] = field(default_factory=list)
    windows: list[str] = field(default_factory=list)
    #: (layer, {column: value}) for each PROFILEDATA row, in file order.
    profile_rows: list[tuple[str | None, dict[str, int]]] = field(default_factory=list)
    profile_header: list[str] = field(default_factory=list)
    #: (layer, column names, rows of ms) for each legacy table.
    legacy_tables: list[tuple[str | None, list[str], list[list[float]]]] = field(default_factory=list)
    meta: dict[str, object] = field(default_factory=dict)
    no_process: str | None = None

    @property
    def empty(self) -> bool:
        return not (self.summary or self.profile_rows or self.legacy_tables)


def _snake(s: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", s.lower()).strip("_")


def _buckets(s: str) -> list[tuple[int, int]]:
    return [(int(a), int(b)) for a, b in _BUCKET.findall(s)]


def read_text(text: str) -> GfxinfoReport:
    """Parse a gfxinfo dump (with or without PerfScout's meta line). Never raises."""
    meta, body = android_capture.split(text)
    rep = GfxinfoReport(meta=meta)
    layer: str | None = None
    in_profile = False
    header: list[str] | None = None
    legacy_cols: list[str] | None = None
    legacy_rows: list[list[float]] = []

    def close_legacy() -> None:
        nonlocal legacy_cols, legacy_rows
        if legacy_cols is not None and legacy_rows:
            rep.legacy_tables.append((layer, legacy_cols, legacy_rows))
        legacy_cols, legacy_rows = None, []

    for raw in body.splitlines():
        line = raw.rstrip()
        stripped = line.strip()
        if stripped == "---PROFILEDATA---":
            in_profile = not in_profile
            header = None
            continue
        if in_profile:
            if not stripped:
                continue
            cells = [c.strip() for c in stripped.rstrip(",").split(",")]
            if header is None:
                if cells and cells[0] == "Flags":
                    header = cells
                    if not rep.profile_header:
                        rep.profile_header = list(cells)
                continue
            if len(cells) < len(header):
                continue
            try:
                row = {name: int(cells[i]) for i, name in enumerate(header)}
            except ValueError:
                continue
            rep.profile_rows.append((layer, row))
            continue
        if legacy_cols is not None:
            cells = stripped.split()
            if cells and len(cells) == len(legacy_cols):
                try:
                    legacy_rows.append([float(c) for c in cells])
                    continue
                except ValueError:
                    pass
            close_legacy()
        cells = stripped.split()
        if len(cells) >= 3 and set(cells) <= _LEGACY_COLUMNS and "Draw" in cells:
            legacy_cols = cells
            continue
        m = _GFX_HEADER.search(line)
        if m:
            if rep.pid is None:
                rep.pid, rep.package = int(m.group(1)), m.group(2)
            continue
        if stripped.startswith("No process found for:"):
            rep.no_process = stripped.split(":", 1)[1].strip()
            continue
        m = _WINDOW.match(line)
        if m:
            layer = m.group(1)
            if layer not in rep.windows:
                rep.windows.append(layer)
            continue
        m = _VIEWROOT.match(line)
        if m:
            layer = m.group(1)
            if layer not in rep.windows:
                rep.windows.append(layer)
            continue
        _summary_line(rep, line)
    close_legacy()
    return rep


def _summary_line(rep: GfxinfoReport, line: str) -> None:
    """First value wins: the process-wide block comes before the per-window ones."""
    s = rep.summary

    def put(key: str, value: float) -> None:
        s.setdefault(key, value)

    m = _TOTAL.match(line)
    if m:
        put("total_frames", int(m.group(1)))
        return
    m = _SINCE.match(line)
    if m:
        put("stats_since_ns", int(m.group(1)))
        return
    m = _COUNT_PCT.match(line)
    if m:
        key = "janky_frames_legacy" if "legacy" in m.group(1) else "janky_frames"
        put(key, int(m.group(2)))
        put(key.replace("frames", "pct"), float(m.group(3).replace(",", ".")))
        return
    m = _PERCENTILE.match(line)
    if m:
        put(f"{'gpu_' if m.group(2) else ''}p{m.group(1)}_ms", float(m.group(3)))
        return
    m = _NUMBER.match(line)
    if m:
        put(_snake(m.group(1)), int(m.group(2)))
        return
    m = _HISTOGRAM.match(line)
    if m:
        target = rep.gpu_histogram if m.group(1) else rep.histogram
        if not target:
            target.extend(_buckets(m.group(2)))


def _refresh_period_ns(meta: dict[str, object]) -> int | None:
    v = meta.get("refresh_period_ns")
    try:
        n = int(float(v)) if v is not None else 0
    except (TypeError, ValueError):
        return None
    return n if 1_000_000 <= n <= 200_000_000 else None


def to_perfdata(rep: GfxinfoReport, source: str) -> PerfData:
    """PerfData from a report. Raises PerfDataError when the dump holds no frame data."""
    if rep.no_process and rep.empty:
        raise PerfDataError(source, f"gfxinfo found no process for {rep.no_process} (is the app running?)")
    if rep.empty:
        raise PerfDataError(
            source, "no gfxinfo summary, ---PROFILEDATA--- rows or Draw/Prepare/Process/Execute table found"
        )
    pd = PerfData(FORMAT, source)
    pd.meta.note_all(android_capture.meta_strings(rep.meta))
    if rep.package:
        pd.facts.package = rep.package
    if rep.pid is not None:
        pd.facts.pid = rep.pid
        if rep.package:
            pd.set_process_name(rep.pid, rep.package)
    if rep.windows:
        pd.meta.note("windows", "; ".join(rep.windows[:20]))
    fs = pd.frame_summary
    for k, v in rep.summary.items():
        fs.set(k, v)
    if rep.histogram:
        fs.set("histogram", " ".join(f"{ms}ms={n}" for ms, n in rep.histogram if n))
    if rep.gpu_histogram:
        fs.set("gpu_histogram", " ".join(f"{ms}ms={n}" for ms, n in rep.gpu_histogram if n))

    device_period = _refresh_period_ns(rep.meta)
    if rep.profile_rows:
        _add_profile_frames(pd, rep, device_period)
    elif rep.legacy_tables:
        _add_legacy_frames(pd, rep, device_period)
    else:
        fs.set("frame_source", "summary only")
    return pd


def _add_profile_frames(pd: PerfData, rep: GfxinfoReport, device_period: int | None) -> None:
    fs = pd.frame_summary
    flagged = invalid = 0
    own_interval = 0
    stages: dict[str, list[float]] = {name: [] for name, _, _ in _STAGES}
    pid = rep.pid
    for layer, row in rep.profile_rows:
        if row.get("Flags", 0) != 0:
            flagged += 1
            continue
        iv, done = row.get("IntendedVsync", 0), row.get("FrameCompleted", 0)
        if not (0 < iv < _UNSET and 0 < done < _UNSET and done >= iv):
            invalid += 1
            continue
        interval = row.get("FrameInterval", 0)
        if 0 < interval < _UNSET:
            budget_ns = interval
            own_interval += 1
        else:
            budget_ns = device_period or DEFAULT_BUDGET_NS
        deadline = row.get("FrameDeadline", 0)
        janky = (done > deadline) if 0 < deadline < _UNSET else None
        pd.add_frame(
            Frame(
                ts_us=iv / 1000.0,
                dur_us=(done - iv) / 1000.0,
                budget_us=budget_ns / 1000.0,
                janky=janky,
                jank_type="deadline missed" if janky else None,
                pid=pid,
                tid=pid,
                layer=layer,
            )
        )
        for name, a, b in _STAGES:
            va, vb = row.get(a, 0), row.get(b, 0)
            if 0 < va < _UNSET and 0 < vb < _UNSET and vb >= va:
                stages[name].append((vb - va) / 1e6)
    if not pd.frames:
        raise PerfDataError(
            pd.source,
            f"---PROFILEDATA--- has {len(rep.profile_rows)} rows but no usable frame "
            f"({flagged} flagged, {invalid} without IntendedVsync/FrameCompleted)",
        )
    fs.set("frame_source", "framestats")
    fs.set("profile_columns", len(rep.profile_header))
    fs.set("frames_flagged_skipped", flagged)
    fs.set("frames_invalid_skipped", invalid)
    if own_interval == len(pd.frames):
        fs.set("budget_source", "FrameInterval column")
    elif device_period:
        fs.set("budget_source", "device refresh period")
    else:
        fs.set("budget_source", _DEFAULT_BUDGET_SOURCE)
    for name, values in stages.items():
        if values:
            pd.add_stat(f"frame_stage_{name}_p50", statistics.median(values), "ms")
            pd.add_stat(f"frame_stage_{name}_max", max(values), "ms")


def _add_legacy_frames(pd: PerfData, rep: GfxinfoReport, device_period: int | None) -> None:
    """Frames from the Draw/Prepare/Process/Execute table: durations only, laid end to end."""
    budget_us = (device_period or DEFAULT_BUDGET_NS) / 1000.0
    t = 0.0
    sums: dict[str, list[float]] = {}
    for layer, cols, rows in rep.legacy_tables:
        for r in rows:
            dur_us = sum(r) * 1000.0
            pd.add_frame(Frame(ts_us=t, dur_us=dur_us, budget_us=budget_us, pid=rep.pid, tid=rep.pid, layer=layer))
            t += dur_us
            for c, v in zip(cols, r):
                sums.setdefault(c, []).append(v)
    fs = pd.frame_summary
    fs.set("frame_source", "legacy profile table")
    fs.set("budget_source", "device refresh period" if device_period else _DEFAULT_BUDGET_SOURCE)
    for c, values in sums.items():
        pd.add_stat(f"frame_stage_{c.lower()}_p50", statistics.median(values), "ms")
        pd.add_stat(f"frame_stage_{c.lower()}_max", max(values), "ms")
    pd.warn(
        "the legacy gfxinfo table has per-frame durations but no timestamps: frames are laid end "
        "to end, so durations and jank are exact and any rate derived from their timeline is not"
    )


def sniff(head: bytes, name: str) -> bool:
    text = head[:65536].decode("utf-8", "replace")
    if "** Graphics info for pid" in text or "Applications Graphics Acceleration Info" in text:
        return True
    if "---PROFILEDATA---" in text and "IntendedVsync" in text:
        return True
    return "Total frames rendered:" in text and "Janky frames:" in text


def parse(path: str) -> PerfData:
    text = android_capture.read_text(path, _MAX_BYTES, "a gfxinfo text dump")
    return to_perfdata(read_text(text), path)
