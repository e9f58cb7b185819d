"""Where a report goes and how it is written: a fresh folder, each file replaced atomically.

A report is never half-written: each file is written to a temporary name in the same folder,
flushed, and moved over its final name with ``os.replace`` (atomic on one filesystem). A rerun
never overwrites an earlier report: a folder that already holds one gets a new, unique subfolder,
and folder creation is exclusive (``mkdir`` fails if another process took the name first).
"""

from __future__ import annotations

import os
import re
import tempfile
from datetime import datetime, timezone
from pathlib import Path

#: A file with this name marks a folder as holding a report already.
MARKER = "report.md"

_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_component(name: str) -> str:
    """A thread id as one harmless path component (no separators, no '..')."""
    s = _SAFE.sub("_", name).strip("._") or "local"
    return s[:80]


def stamp_name(now: datetime | None = None) -> str:
    now = now or datetime.now(timezone.utc)
    return now.strftime("%Y%m%dT%H%M%S") + f".{now.microsecond // 1000:03d}Z"


def _claim(parent: Path, base: str) -> Path:
    parent.mkdir(parents=True, exist_ok=True)
    for i in range(1, 1000):
        cand = parent / (base if i == 1 else f"{base}-{i}")
        try:
            cand.mkdir()
            return cand
        except FileExistsError:
            continue
    raise FileExistsError(f"{parent}: no free folder name for {base}")


def report_dir(run_dir: str | None, runs_dir: str, thread_id: str | None, now: datetime | None = None) -> Path:
    """The folder this report goes to, created: the turn's run folder if it holds no report yet."""
    if run_dir:
        d = Path(run_dir)
        if not (d / MARKER).exists():
            d.mkdir(parents=True, exist_ok=True)
            return d
        return _claim(d, "report-" + stamp_name(now))
    return _claim(Path(runs_dir) / safe_component(thread_id or "local"), stamp_name(now))


def write_atomic(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(prefix="." + path.name + ".", suffix=".tmp", dir=str(path.parent))
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
