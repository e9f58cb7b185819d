"""The decision log: one JSON line per routing decision, appended by any number of processes.

Each record is written with a single ``write`` on a file opened with ``O_APPEND`` while holding
an exclusive ``flock``, so lines from concurrent processes never interleave. A crash can still
leave a torn last line; the next append cuts it off (under the same lock) before writing, and
readers skip a line that does not parse instead of treating it as a record.
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path
from typing import Any, Iterator

import orjson


def _repair_tail(fd: int) -> None:
    """Truncate a torn last line (no trailing newline) back to the last complete one."""
    size = os.fstat(fd).st_size
    if size == 0:
        return
    os.lseek(fd, size - 1, os.SEEK_SET)
    if os.read(fd, 1) == b"\n":
        return
    # Scan backwards for the last newline.
    pos = size
    chunk = 4096
    while pos > 0:
        start = max(0, pos - chunk)
        os.lseek(fd, start, os.SEEK_SET)
        buf = os.read(fd, pos - start)
        i = buf.rfind(b"\n")
        if i >= 0:
            os.ftruncate(fd, start + i + 1)
            return
        pos = start
    os.ftruncate(fd, 0)


class DecisionLog:
    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path)

    def append(self, record: dict[str, Any]) -> None:
        rec = {"time": time.time(), **record}
        line = orjson.dumps(rec, default=str) + b"\n"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            _repair_tail(fd)
            os.write(fd, line)
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    __call__ = append

    def records(self) -> Iterator[dict[str, Any]]:
        """Complete records only; a torn or corrupt line is skipped, never parsed as a record."""
        if not self.path.exists():
            return
        with open(self.path, "rb") as f:
            for raw in f:
                if not raw.endswith(b"\n"):
                    break
                try:
                    rec = orjson.loads(raw)
                except orjson.JSONDecodeError:
                    continue
                if isinstance(rec, dict):
                    yield rec
