"""Reading a file, or a range of its lines, from inside the workspace.

Bounded on purpose: an answer quotes source, it does not dump it. Binary files (a NUL byte in
the first block, or text that is not UTF-8) and files over the size limit are described, not
shown.
"""

from __future__ import annotations

import os
from typing import Any

from nodes.code.rg import MAX_FILE_BYTES, clip
from nodes.code.sandbox import read_bytes_inside, regular_file_inside, relative_name, workspace_root

#: Lines shown when no range is asked for, and the most one read returns.
DEFAULT_LINES = 60
MAX_LINES = 200
#: Lines shown on each side of a single asked-for line ("第 40 行").
AROUND_LINE = 8
#: Bytes inspected for a NUL to call a file binary.
BINARY_SNIFF = 8192


def read_lines(
    root: str | os.PathLike[str],
    path: str,
    start: int | None = None,
    end: int | None = None,
) -> dict[str, Any]:
    """Lines ``start``..``end`` (1-based, inclusive) of ``path``, clamped to the file.

    Returns ``{"file", "start", "end", "total_lines", "lines": [{"line", "text"}], "truncated",
    "note"}``; a binary or oversized file comes back with no lines and a note saying why.
    """
    base = workspace_root(root)
    real = regular_file_inside(base, path)
    rel = relative_name(base, real)
    data, size = read_bytes_inside(base, rel, MAX_FILE_BYTES + 1)
    result: dict[str, Any] = {
        "file": rel,
        "start": 0,
        "end": 0,
        "total_lines": 0,
        "lines": [],
        "truncated": False,
        "note": None,
    }
    if size > MAX_FILE_BYTES:
        result["note"] = f"{size:,} bytes, over the {MAX_FILE_BYTES:,}-byte limit: not shown"
        return result
    if b"\x00" in data[:BINARY_SNIFF]:
        result["note"] = f"binary file ({size:,} bytes): not shown"
        return result
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        result["note"] = f"not UTF-8 text ({size:,} bytes): not shown"
        return result
    lines = text.splitlines()
    total = len(lines)
    result["total_lines"] = total
    if total == 0:
        result["note"] = "empty file"
        return result
    asked = start
    if start is None and end is None:
        start, end = 1, DEFAULT_LINES
    elif end is None:
        # One line asked for ("第 40 行"): show it with a few lines on each side.
        start, end = start - AROUND_LINE, start + AROUND_LINE  # type: ignore[operator]
    elif start is None:
        start = end - DEFAULT_LINES + 1
        asked = start
    assert start is not None and end is not None
    if asked is not None and asked > total:
        result["note"] = f"line {asked} is past the end: the file has {total} lines"
        start, end = max(1, total - 2 * AROUND_LINE), total
    start = max(1, start)
    end = min(total, max(start, end))
    if end - start + 1 > MAX_LINES:
        end = start + MAX_LINES - 1
        result["truncated"] = True
    if asked is None and end < total:
        result["truncated"] = True
    result.update(
        start=start,
        end=end,
        lines=[{"line": n, "text": clip(lines[n - 1])} for n in range(start, end + 1)],
    )
    return result


def excerpt(root: str | os.PathLike[str], path: str, line: int, around: int = 3) -> list[dict[str, Any]]:
    """The lines around ``line`` (for attribution); empty when the file cannot be shown."""
    r = read_lines(root, path, max(1, line - around), line + around)
    return r["lines"]
