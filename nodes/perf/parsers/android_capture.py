"""The one line PerfScout adds on top of a device's output when it saves it: where it came from.

``dumpsys`` and ``am start`` outputs do not say which device, which command or which refresh
period they were taken with, yet the readers need the refresh period (the jank budget of
pre-Android-12 frames) and a report should name the device. The collector writes
``# perfscout-meta: {json}`` as the first line and the device's bytes unchanged after it; the
readers accept files with or without it, so a dump a user saved by hand reads the same way.
"""

from __future__ import annotations

import gzip
import json
import zlib

from nodes.perf.errors import PerfDataError

PREFIX = "# perfscout-meta: "


def header(meta: dict[str, object]) -> str:
    clean = {k: v for k, v in meta.items() if v is not None}
    return PREFIX + json.dumps(clean, ensure_ascii=False, sort_keys=True) + "\n"


def split(text: str) -> tuple[dict[str, object], str]:
    """(meta, body): the header's fields (empty when there is none) and the device's text."""
    if not text.startswith(PREFIX):
        return {}, text
    first, _, body = text.partition("\n")
    try:
        meta = json.loads(first[len(PREFIX):])
    except ValueError:
        return {}, body
    return (meta if isinstance(meta, dict) else {}), body


def meta_strings(meta: dict[str, object]) -> dict[str, str]:
    """The header's fields as PerfData.meta strings."""
    return {str(k): str(v) for k, v in meta.items() if isinstance(v, (str, int, float))}


def read_text(path: str, limit: int, what: str) -> str:
    """A device dump as text (gzipped or not), at most ``limit`` bytes, or PerfDataError."""
    try:
        with open(path, "rb") as f:
            magic = f.read(2)
            f.seek(0)
            stream = gzip.GzipFile(fileobj=f) if magic == b"\x1f\x8b" else f
            data = stream.read(limit + 1)
    except (OSError, EOFError, zlib.error) as e:
        raise PerfDataError(path, f"cannot read: {getattr(e, 'strerror', None) or e}") from None
    if len(data) > limit:
        raise PerfDataError(path, f"larger than {limit // (1024 * 1024)} MB: not {what}")
    if b"\x00" in data[:4096]:
        raise PerfDataError(path, f"binary data, not {what}")
    if not data.strip():
        raise PerfDataError(path, f"empty: no {what}")
    return data.decode("utf-8", "replace")
