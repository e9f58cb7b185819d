"""Which reader a file needs, decided from its content; transparent gzip; the reader registry.

Every parser module in :data:`REGISTRY` exposes::

    FORMAT: str                                   # the name shown to users ("trace_event", …)
    def sniff(head: bytes, name: str) -> bool     # head = first 64 KiB, already decompressed
    def parse(path: str) -> PerfData              # raises PerfDataError (and nothing else) on bad input

Modules are imported lazily, by name, in registry order: a module that is missing or fails to
import is reported as "format X not available" instead of breaking every other format. The
order puts specific formats first: the ``perfscout`` JSON files before speedscope before the
generic Trace Event JSON; binary formats whose signature is strict (pstats) before the ones
whose signature is loose (Perfetto protobuf), which come after every text format so a text
file that happens to start with a newline is never taken for protobuf.
"""

from __future__ import annotations

import gzip
import importlib
import io
import os
import stat
import zlib
from types import ModuleType
from typing import IO, Callable, Sequence

from nodes.perf import limits
from nodes.perf.limits import ReadLimits, applied
from nodes.perf.errors import PerfDataError
from nodes.perf.model import CapacityReached, PerfData

#: How much of the (decompressed) start of a file ``sniff`` sees.
HEAD_BYTES = 64 * 1024

#: Upper bound on the bytes a compressed input may expand to (a gzip bomb stops here).
#: The setting PERFSCOUT_MAX_DECOMPRESSED (bytes; app/settings.py) overrides it, through
#: nodes/perf/limits.py.
DEFAULT_MAX_DECOMPRESSED = limits.DEFAULT.max_inflated_bytes

#: Upper bound for readers that need the whole input in memory (speedscope, pstats, …).
#: The setting PERFSCOUT_MAX_WHOLE_FILE (bytes) overrides it.
DEFAULT_MAX_WHOLE_FILE = limits.DEFAULT.max_whole_file_bytes

GZIP_MAGIC = b"\x1f\x8b"

#: (module, the format it reads), most specific first. Sniffing stops at the first match.
REGISTRY: tuple[tuple[str, str], ...] = (
    ("nodes.perf.parsers.perfscout_json", "perfscout_json"),
    ("nodes.perf.parsers.speedscope", "speedscope"),
    ("nodes.perf.parsers.trace_event", "trace_event"),
    ("nodes.perf.parsers.pstats", "pstats"),
    ("nodes.perf.parsers.perfstat", "perfstat"),
    ("nodes.perf.parsers.importtime", "importtime"),
    ("nodes.perf.parsers.gfxinfo", "gfxinfo"),
    ("nodes.perf.parsers.amstart", "amstart"),
    ("nodes.perf.parsers.meminfo", "meminfo"),
    ("nodes.perf.parsers.cpuinfo", "cpuinfo"),
    ("nodes.perf.parsers.perf_script", "perf_script"),
    ("nodes.perf.parsers.atrace", "atrace"),
    ("nodes.perf.parsers.perfetto", "perfetto"),
)


def max_decompressed() -> int:
    """The inflate cap in force (``PERFSCOUT_MAX_DECOMPRESSED``; nodes/perf/limits.py ``applied``)."""
    return limits.current().max_inflated_bytes


def max_whole_file() -> int:
    return limits.current().max_whole_file_bytes


# ======================================================================================
# Opening inputs
# ======================================================================================


class _CappedReader(io.RawIOBase):
    """A read-only stream over a decompressing one that refuses to produce more than ``cap``
    bytes, and turns the decompressor's errors into PerfDataError."""

    def __init__(self, inner: IO[bytes], path: str, cap: int):
        self._inner = inner
        self._path = path
        self._cap = cap
        self._count = 0

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:  # type: ignore[override]
        try:
            data = self._inner.read(len(b))
        except (OSError, EOFError, zlib.error) as e:
            raise PerfDataError(self._path, f"corrupt or truncated gzip data ({e})") from None
        n = len(data)
        self._count += n
        if self._count > self._cap:
            raise PerfDataError(
                self._path,
                f"decompresses to more than {limits.size_text(self._cap)}, the inflate cap "
                "PERFSCOUT_MAX_DECOMPRESSED; refusing (a gzip bomb?). Raise it if the data is genuine",
            )
        b[:n] = data
        return n

    def close(self) -> None:
        try:
            self._inner.close()
        finally:
            super().close()


#: What a path that is not a regular file is, in the refusal (``stat`` never opens it, so a
#: FIFO with no writer or /dev/zero cannot block or flood a reader).
_KINDS = (
    (stat.S_ISDIR, "is a directory, not a data file"),
    (stat.S_ISFIFO, "is a FIFO (named pipe), not a data file: PerfScout reads regular files; save the data to a file first"),
    (stat.S_ISCHR, "is a character device, not a data file"),
    (stat.S_ISBLK, "is a block device, not a data file"),
    (stat.S_ISSOCK, "is a socket, not a data file"),
)


def not_regular(st: os.stat_result) -> str | None:
    """Why a file with this ``stat`` is not a data file (None for a regular file)."""
    if stat.S_ISREG(st.st_mode):
        return None
    for test, problem in _KINDS:
        if test(st.st_mode):
            return problem
    return "is not a regular file"


def check_data_file(path: str) -> os.stat_result:
    """``stat`` of ``path`` when it is a regular file; else PerfDataError saying what it is."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise PerfDataError(path, "no such file") from None
    except OSError as e:
        raise PerfDataError(path, f"cannot open ({e.strerror or e})") from None
    problem = not_regular(st)
    if problem:
        raise PerfDataError(path, problem)
    return st


_check_file = check_data_file


def is_gzip(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(2) == GZIP_MAGIC
    except OSError as e:
        raise PerfDataError(path, f"cannot open ({e.strerror or e})") from None


def open_input(path: str, cap: int | None = None) -> IO[bytes]:
    """Open ``path`` for binary reading, decompressing gzip transparently (by content, not by
    extension). A 0-byte ``.gz`` is refused; decompression stops with PerfDataError beyond
    ``cap`` bytes (default :func:`max_decompressed`)."""
    st = _check_file(path)
    if st.st_size == 0:
        if path.endswith(".gz"):
            raise PerfDataError(path, "empty gzip file (0 bytes): the capture was not written")
        raise PerfDataError(path, "empty file (0 bytes)")
    try:
        f = open(path, "rb")
    except OSError as e:
        raise PerfDataError(path, f"cannot open ({e.strerror or e})") from None
    magic = f.read(2)
    f.seek(0)
    if magic != GZIP_MAGIC:  # content decides: a plain file named .gz is read as it is
        return f
    gz = gzip.GzipFile(fileobj=f, mode="rb")
    reader = _CappedReader(gz, path, cap or max_decompressed())
    return io.BufferedReader(reader, buffer_size=1 << 20)  # type: ignore[arg-type]


def read_head(path: str, n: int = HEAD_BYTES) -> bytes:
    """The first ``n`` bytes of the (decompressed) content."""
    with open_input(path) as f:
        head = f.read(n)
    if not head:
        raise PerfDataError(path, "empty after decompression")
    return head


def read_all(path: str, limit: int | None = None) -> bytes:
    """The whole (decompressed) content, for readers that need it in memory; bounded."""
    limit = limit or max_whole_file()
    with open_input(path, cap=max(limit, 1) + 1) as f:
        try:
            data = f.read(limit + 1)
        except PerfDataError as e:
            if "refusing" in e.problem:
                raise PerfDataError(path, f"larger than {limit} bytes: too large for this reader "
                                    "(raise PERFSCOUT_MAX_WHOLE_FILE)") from None
            raise
    if len(data) > limit:
        raise PerfDataError(path, f"larger than {limit} bytes: too large for this reader "
                            "(raise PERFSCOUT_MAX_WHOLE_FILE)")
    if not data:
        raise PerfDataError(path, "empty after decompression")
    return data


#: The longest line a text reader is given (characters). Text captures (atrace, importtime,
#: perf stat, gfxinfo …) have lines of a few hundred characters; Python's line iteration reads
#: to the next newline however far it is (a 900 KB gzip holding one 900 MB line peaked at 1.9 GB).
MAX_TEXT_LINE_CHARS = 1 << 20


class _BoundedText(io.TextIOWrapper):
    """A text stream whose lines end at :data:`MAX_TEXT_LINE_CHARS`: a longer one is refused."""

    perf_path = ""

    def __next__(self) -> str:  # type: ignore[override]
        line = self.readline(MAX_TEXT_LINE_CHARS + 1)
        if not line:
            raise StopIteration
        if len(line) > MAX_TEXT_LINE_CHARS:
            raise PerfDataError(self.perf_path, f"a line longer than {MAX_TEXT_LINE_CHARS} characters: "
                                "not a text capture this reader knows")
        return line


def open_text(path: str) -> IO[str]:
    """A text stream over the (decompressed) content: UTF-8, undecodable bytes replaced; its
    lines are bounded (:data:`MAX_TEXT_LINE_CHARS`), so memory is too."""
    f = _BoundedText(open_input(path), encoding="utf-8", errors="replace", newline=None)
    f.perf_path = path
    return f


# ======================================================================================
# Sniffing helpers shared by the parsers
# ======================================================================================


def looks_text(head: bytes) -> bool:
    """True when ``head`` is plausibly text: no NUL bytes, and mostly printable."""
    if not head or b"\x00" in head:
        return False
    sample = head[:4096]
    bad = sum(1 for c in sample if c < 9 or 13 < c < 32)
    return bad * 100 <= len(sample)


def strip_json_start(head: bytes) -> bytes:
    """``head`` without a UTF-8 BOM and leading whitespace."""
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:]
    return head.lstrip()


# ======================================================================================
# The registry
# ======================================================================================

#: Cheap signatures for the formats whose module may be missing, so a user is told
#: "format X not available" rather than "unknown format" (only consulted when the module
#: failed to import).
_FALLBACK_SIGNS: dict[str, Callable[[bytes, str], bool]] = {
    "perfetto": lambda head, name: name.endswith((".perfetto-trace", ".pftrace", ".pb"))
    or (head[:1] == b"\x0a" and not looks_text(head)),
    "gfxinfo": lambda head, name: b"Graphics info for pid" in head or b"---PROFILEDATA---" in head,
    "amstart": lambda head, name: b"TotalTime:" in head and (b"Starting: Intent" in head or b"Status:" in head),
}


class FormatUnavailable(Exception):
    pass


_loaded: dict[str, ModuleType | Exception] = {}


def _module(modname: str) -> ModuleType:
    m = _loaded.get(modname)
    if m is None:
        try:
            m = importlib.import_module(modname)
        except Exception as e:  # missing, or broken: the other formats still work
            m = e
        _loaded[modname] = m
    if isinstance(m, Exception):
        raise FormatUnavailable(f"{type(m).__name__}: {m}")
    return m


def available_formats() -> dict[str, str | None]:
    """format → None when its reader imports, else the reason it does not."""
    out: dict[str, str | None] = {}
    for modname, fmt in REGISTRY:
        try:
            _module(modname)
            out[fmt] = None
        except FormatUnavailable as e:
            out[fmt] = str(e)
    return out


#: Names only Perfetto traces carry (``.pb`` / ``.trace`` are used by other tools too).
_PERFETTO_NAMES = (".perfetto-trace", ".pftrace", ".perfetto")


def detect(path: str, head: bytes | None = None) -> tuple[str, ModuleType]:
    """The format of ``path`` and its reader module, decided from content (and name)."""
    if head is None:
        head = read_head(path)
    name = os.path.basename(path).lower()
    if name.endswith(".gz"):
        name = name[:-3]
    missing: list[tuple[str, str]] = []
    for modname, fmt in REGISTRY:
        try:
            mod = _module(modname)
        except FormatUnavailable as e:
            missing.append((fmt, str(e)))
            continue
        try:
            ok = bool(mod.sniff(head, name))
        except Exception:  # a sniffer must never take the whole load down
            ok = False
        if ok:
            return getattr(mod, "FORMAT", fmt), mod
    if strip_json_start(head)[:1] == b"{" and len(head) >= HEAD_BYTES:
        # a JSON object whose first key is large (a big "metadata"): look further for events
        with open_input(path) as f:
            more = f.read(16 << 20)
        if b'"traceEvents"' in more:
            try:
                mod = _module("nodes.perf.parsers.trace_event")
                return getattr(mod, "FORMAT", "trace_event"), mod
            except FormatUnavailable:
                pass
    for fmt, why in missing:
        sign = _FALLBACK_SIGNS.get(fmt)
        try:
            hit = bool(sign and sign(head, name))
        except Exception:
            hit = False
        if hit:
            raise PerfDataError(path, f"looks like {fmt} data, but format {fmt} is not available ({why})")
    if name.endswith(_PERFETTO_NAMES):
        raise PerfDataError(path, "named like a Perfetto trace, but its first bytes do not frame a TracePacket: "
                                  "damaged at its start, or not a Perfetto trace; record it again")
    if not looks_text(head) and head[:1] not in (b"{", b"["):
        kind = "binary data"
    else:
        kind = "text"
    known = ", ".join(fmt for _, fmt in REGISTRY)
    raise PerfDataError(path, f"unrecognised format ({kind}); readable formats: {known}")


def load(path: str, format: str | None = None, search_path: Sequence[str] | None = None,
         limits: ReadLimits | None = None) -> PerfData:
    """Read ``path`` into PerfData with the reader its content calls for (or ``format``).
    ``search_path`` goes to a reader that looks modules up (``-X importtime``: where the
    imported modules' files are); the others do not use it. ``limits`` bound the read (None:
    the ones in force — the node's, inside the graph)."""
    with applied(limits):
        return _load(os.fspath(path), format, search_path)


def _load(path: str, format: str | None, search_path: Sequence[str] | None) -> PerfData:
    head = read_head(path)
    if format:
        mod = None
        for modname, fmt in REGISTRY:
            if fmt == format:
                try:
                    mod = _module(modname)
                except FormatUnavailable as e:
                    raise PerfDataError(path, f"format {fmt} is not available ({e})") from None
        if mod is None:
            raise PerfDataError(path, f"unknown format {format!r}")
        fmt = format
    else:
        fmt, mod = detect(path, head)
    try:
        data = mod.parse_with(path, search_path=search_path) if search_path is not None and hasattr(mod, "parse_with") \
            else mod.parse(path)
    except CapacityReached as full:
        # The reader stopped at the event cap without finishing itself: what it stored is kept,
        # marked partial (the warning names the cap and PERFSCOUT_MAX_EVENTS).
        data = full.data
    except PerfDataError:
        raise
    except MemoryError:
        raise PerfDataError(path, f"out of memory while reading it as {fmt}") from None
    except RecursionError:
        raise PerfDataError(path, f"nested too deeply to read as {fmt}") from None
    except Exception as e:  # a reader bug must still end in one line, not a traceback
        msg = str(e).splitlines()[0] if str(e) else ""
        raise PerfDataError(path, f"could not read as {fmt}: {type(e).__name__}: {msg}"[:300]) from None
    if not isinstance(data, PerfData):
        raise PerfDataError(path, f"reader for {fmt} returned no data")
    return data
