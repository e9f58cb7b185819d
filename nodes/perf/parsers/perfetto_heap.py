"""Freed memory given back to the system between the reader's big steps.

The Perfetto reader's end (FtraceState.finish, MemoryState.finish) builds and drops hundreds
of MB of temporaries: the slice pairing's and the scheduler replay's columns, the memory
series' sort. Those under glibc's mmap threshold (up to 32 MB once it has grown) are freed
into the heap, where they stay resident among the live small objects until something calls
``malloc_trim`` — protobuf's upb does, when one of its arenas is freed, so the process's RSS
drops at odd times (tools: strace -k -e madvise). Calling it at the ends of those steps lowers
the peak of the next: at 1 GB read whole the reader's finish peaked ~100 MB lower.

A no-op where the C library has no ``malloc_trim`` (not glibc) or ctypes cannot load it.
"""

from __future__ import annotations

import ctypes
import sys
from functools import cache


@cache
def _trim():
    if not sys.platform.startswith("linux"):
        return None
    try:
        fn = ctypes.CDLL(None).malloc_trim  # the process's own symbols: libc's (no find_library: it runs ldconfig)
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_size_t]
    fn.restype = ctypes.c_int
    return fn


def give_back() -> None:
    """``malloc_trim(0)``: the heap's free pages handed back (~5-20 ms at 1 GB)."""
    fn = _trim()
    if fn is not None:
        fn(0)
