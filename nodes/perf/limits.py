"""The bounds every reader works within: inflated bytes, whole-file bytes, stored events.

Hostile input must not decide how much memory PerfScout uses (issue 14: a 3 MB gzip of 1 GiB
of valid tiny events peaked at 6.5 GB). Three numbers bound it, each a setting read by
``app.settings.Settings`` (nothing here reads the environment). They are passed, never
installed for a process: ``Settings.read_limits()`` → the runtime context's ``read_limits``
(nodes/framework/context.py) → the stage runner applies them around each node
(nodes/framework/stage.py); code outside the graph passes them to ``analyze_file`` /
``analyze_paths`` / ``formats.load`` (``limits=``). ``applied`` scopes them to one call in a
context variable, so two ``PerfScout`` objects with different settings — or two threads —
each read with their own, and the readers keep their plain ``parse(path)`` signature. Outside
any ``applied`` call the defaults hold.

* ``max_inflated_bytes`` — what a compressed input may expand to (``PERFSCOUT_MAX_DECOMPRESSED``);
  beyond it the read stops with an error naming the cap and the setting;
* ``max_whole_file_bytes`` — what a reader that needs the whole input in memory (speedscope,
  pstats, atrace HTML) may load (``PERFSCOUT_MAX_WHOLE_FILE``);
* ``max_events`` — how many timeline items (slices, async spans, distinct sampled stacks,
  frames, profile rows) one ``PerfData`` keeps (``PERFSCOUT_MAX_EVENTS``). A reader that
  reaches it stops and returns what it has, marked ``partial``, with a warning that says where
  it stopped and which setting raises the cap. The analysis then costs a bounded amount of
  memory (~180 B per slice measured, docs/reliability.md), so the default keeps the peak of a
  whole analysis under 1 GB.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import Iterator

GiB = 1024**3
MiB = 1024**2


@dataclass(frozen=True)
class ReadLimits:
    #: 1 GiB: at the Trace Event reader's ~35 MB/s that is ~30 s of parsing; a genuine bigger
    #: capture raises PERFSCOUT_MAX_DECOMPRESSED.
    max_inflated_bytes: int = 1 * GiB
    #: 40 MiB: a JSON reader holds ~18 bytes of Python objects per byte of its worst input
    #: (speedscope of empty stacks: 50 MB -> 884 MB measured), so 40 MiB keeps it under 1 GB.
    max_whole_file_bytes: int = 40 * MiB
    #: 3 000 000 items: ~70 MB of columns, ~190 MB peak for the whole analysis of 3 M slices on one
    #: thread (tests/test_reliability_memory_bounds.py, measured), ~206 MB when all 3 M are
    #: top-level slices (tests/test_reliability_hostile.py's 10^7 tiny events).
    max_events: int = 3_000_000


DEFAULT = ReadLimits()
_current: ContextVar[ReadLimits] = ContextVar("perfscout_read_limits", default=DEFAULT)


def current() -> ReadLimits:
    """The limits of the read in progress (the defaults outside ``applied``)."""
    return _current.get()


@contextmanager
def applied(limits: ReadLimits | None) -> Iterator[ReadLimits]:
    """Read with ``limits`` inside the block (None: keep the ones in force)."""
    if limits is None:
        yield _current.get()
        return
    token = _current.set(limits)
    try:
        yield limits
    finally:
        _current.reset(token)


@contextmanager
def using(**changes: int) -> Iterator[ReadLimits]:
    """Change some of the limits in force inside the block (tests): ``with using(max_events=1000): …``."""
    with applied(replace(_current.get(), **changes)) as lim:
        yield lim


def size_text(n: int) -> str:
    """``n`` bytes for a message: "1 GiB (1073741824 bytes)"."""
    for unit, size in (("GiB", GiB), ("MiB", MiB)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit} ({n} bytes)"
    return f"{n} bytes"


__all__ = ["ReadLimits", "DEFAULT", "current", "applied", "using", "size_text"]
