"""The folder a collection writes into, and the record it leaves there.

A run never writes over an earlier one: the turn's ``run_dir`` is used while it is empty, and a
second collection in the same turn (a retry) gets a fresh folder beside its files. Every run,
failed ones included, leaves ``run.json`` saying what ran, how it ended and where its files
are, so "the run recorded" holds even when nothing useful was measured.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any


def _utc_stamp() -> str:
    t = time.time()
    return time.strftime("%Y%m%dT%H%M%S", time.gmtime(t)) + f".{int((t % 1) * 1e6):06d}Z"


def _fresh(path: Path) -> Path:
    """Create ``path`` (or ``path-2``, ``path-3`` …) and return the one made."""
    candidate, n = path, 1
    while True:
        try:
            candidate.mkdir(parents=True, exist_ok=False)
            return candidate
        except FileExistsError:
            n += 1
            candidate = path.with_name(f"{path.name}-{n}")


def open_run_dir(state_run_dir: str | None, runs_dir: str, thread: str | None, kind: str) -> Path:
    """The folder for this collection, created.

    ``state_run_dir`` (set per turn by the app) when it is new or empty; else a fresh
    ``<kind>-<UTC time>`` inside it; with no ``state_run_dir``,
    ``<runs_dir>/<thread or "local">/<UTC time>``.
    """
    if state_run_dir:
        base = Path(state_run_dir)
        if not base.exists():
            return _fresh(base)
        if base.is_dir() and not any(base.iterdir()):
            return base
        return _fresh(base / f"{kind}-{_utc_stamp()}")
    safe_thread = "".join(c if c.isalnum() or c in "-_." else "_" for c in (thread or "local")) or "local"
    return _fresh(Path(runs_dir) / safe_thread / _utc_stamp())


def write_json(path: Path, doc: Any, *, indent: int | None = 1) -> str:
    """Write ``doc`` atomically (a reader never sees half a file)."""
    tmp = path.with_name(path.name + ".part")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False, indent=indent, default=str)
    os.replace(tmp, path)
    return str(path)


def write_text(path: Path, data: bytes | str) -> str:
    mode = "wb" if isinstance(data, bytes) else "w"
    with open(path, mode, **({} if isinstance(data, bytes) else {"encoding": "utf-8"})) as f:
        f.write(data)
    return str(path)
