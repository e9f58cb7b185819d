"""``perfscout route``: classify messages without running the graph, one JSON object each.

It exists so anyone can measure the router on their own labelled file: every output line
carries the tier that actually decided (``rule`` / ``classifier`` / ``llm`` / ``default``),
and, when the input line had a ``route``, the expected label beside it. A bad input line gets
an error object for that line and the run goes on: one bad line must not hide the others.

Input is read line by line in bounded pieces (``MAX_LINE_BYTES``): memory stays flat whatever
arrives, a FIFO is read as a stream, and ``/dev/zero`` or a directory is refused in one line.
"""

from __future__ import annotations

import json
import os
import select
import stat
import sys
from typing import Any, BinaryIO, Iterable, Iterator, TextIO

from nodes.routing import route_message
from nodes.routing.llm_tier import DEFAULT_TIMEOUT_S

MAX_TEXT_CHARS = 10_000
#: The longest input line read (bytes, newline included): 10 000 characters of CJK text are
#: 30 000 bytes of UTF-8, 60 000 as JSON \u escapes; a longer line is that line's error.
MAX_LINE_BYTES = 128 * 1024
#: A line with no newline within this many bytes ends the input (``/dev/zero`` on stdin).
MAX_SKIP_BYTES = 64 * 1024 * 1024
#: How long a FIFO may stay without data or a writer before ``--jsonl FIFO`` gives up.
FIFO_WAIT_S = 5.0


class RouteInputError(ValueError):
    """The command's input as a whole cannot be read (missing file, no input at all)."""


def _line_text(raw: str) -> tuple[Any, dict[str, Any]]:
    """The text of one input line (plain text or a JSON object with "text") and its extras."""
    stripped = raw.strip()
    if stripped.startswith("{"):
        try:
            obj = json.loads(stripped)
        except json.JSONDecodeError as exc:
            raise ValueError(f"invalid JSON: {exc.msg} at column {exc.colno}") from None
        if not isinstance(obj, dict) or "text" not in obj:
            raise ValueError('a JSON line must be an object with a "text" field')
        extras = {"expected": obj["route"]} if isinstance(obj.get("route"), str) else {}
        return obj["text"], extras
    return stripped, {}


def check_text(text: Any) -> str | None:
    """Why this text cannot be routed, or None when it can."""
    if not isinstance(text, str):
        return f'"text" must be a string, got {type(text).__name__}'
    if not text.strip():
        return "empty text"
    if len(text) > MAX_TEXT_CHARS:
        return f"text has {len(text)} characters, more than {MAX_TEXT_CHARS}"
    return None


def _route_record(number: int, raw: str, llm: Any, timeout_s: float) -> dict[str, Any] | None:
    if not raw.strip():
        # A blank line in a JSONL file is no record; a line of spaces in plain text is no text.
        return None
    try:
        text, extras = _line_text(raw)
    except ValueError as exc:
        return {"line": number, "error": str(exc)}
    except RecursionError:
        return {"line": number, "error": "JSON nested too deeply"}
    problem = check_text(text)
    if problem:
        return {"line": number, "error": problem}
    info = route_message(text, llm=llm, timeout_s=timeout_s)
    return {"line": number, **info, **extras}


def route_lines(lines: Iterable[str], llm: Any = None, timeout_s: float = DEFAULT_TIMEOUT_S) -> Iterator[dict[str, Any]]:
    """One result object per non-blank input line, numbered from 1."""
    for number, raw in enumerate(lines, start=1):
        rec = _route_record(number, raw, llm, timeout_s)
        if rec is not None:
            yield rec


def bounded_lines(f: BinaryIO, name: str, max_line: int = MAX_LINE_BYTES,
                  max_skip: int = MAX_SKIP_BYTES) -> Iterator[tuple[int, str | None, str | None]]:
    """``(number, text, problem)`` per line of ``f``, never holding more than ``max_line`` bytes.

    Python's own line iteration reads until a newline however far away it is (``/dev/zero``
    has none: it grew past 10 GB). Here a longer line is skipped in bounded reads and reported
    as that line's problem; one with no end in sight (more than ``max_skip`` bytes) ends the
    input with RouteInputError, since it is not a file of lines. Bytes that are not UTF-8
    are that line's problem too: one bad line must not hide the others.
    """
    number = 0
    while True:
        raw = f.readline(max_line + 1)
        if not raw:
            return
        number += 1
        if len(raw) > max_line and not raw.endswith(b"\n"):
            skipped = len(raw)
            while True:
                more = f.readline(1 << 20)
                if not more:
                    break
                skipped += len(more)
                if more.endswith(b"\n"):
                    break
                if skipped > max_skip:
                    raise RouteInputError(
                        f"{name}: line {number} is longer than {max_skip} bytes with no end: not a file of lines"
                    )
            yield number, None, f"line longer than {max_line} bytes ({skipped} bytes); skipped"
            continue
        try:
            yield number, raw.decode("utf-8"), None
        except UnicodeDecodeError as exc:
            yield number, None, f"not UTF-8 text ({exc.reason} at byte {exc.start})"


def route_stream(f: BinaryIO, name: str, llm: Any = None, timeout_s: float = DEFAULT_TIMEOUT_S) -> Iterator[dict[str, Any]]:
    """``route_lines`` over a binary stream read with :func:`bounded_lines`."""
    for number, text, problem in bounded_lines(f, name):
        if problem is not None:
            yield {"line": number, "error": problem}
            continue
        rec = _route_record(number, text or "", llm, timeout_s)
        if rec is not None:
            yield rec


def route_one(text: str, llm: Any = None, timeout_s: float = DEFAULT_TIMEOUT_S) -> dict[str, Any]:
    problem = check_text(text)
    if problem:
        return {"error": problem}
    return route_message(text, llm=llm, timeout_s=timeout_s)


def _wait_for_writer(fd: int, name: str, wait_s: float) -> None:
    """A FIFO opened without blocking: wait up to ``wait_s`` for data or a writer's hang-up."""
    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLHUP)
    if not poller.poll(max(0.0, wait_s) * 1000):
        raise RouteInputError(f"{name}: a FIFO with no data and no writer for {wait_s:g} s; nothing to read")


def open_lines(jsonl: str, fifo_wait_s: float = FIFO_WAIT_S) -> tuple[BinaryIO, BinaryIO | None]:
    """The binary stream to read (stdin for ``-``) and what to close afterwards.

    A regular file or a FIFO is read; anything else (a directory, ``/dev/zero``, a socket) is
    refused with one line before a byte is read. A FIFO is opened without blocking (a plain
    ``open`` waits forever for a writer) and read once a writer sends data or hangs up.
    """
    if jsonl == "-":
        return sys.stdin.buffer, None
    try:
        st = os.stat(jsonl)
    except OSError as exc:
        raise RouteInputError(f"cannot read {jsonl}: {exc.strerror or exc}") from None
    if stat.S_ISDIR(st.st_mode):
        raise RouteInputError(f"{jsonl}: is a directory, not a file of messages")
    fifo = stat.S_ISFIFO(st.st_mode)
    if not fifo and not stat.S_ISREG(st.st_mode):
        raise RouteInputError(f"{jsonl}: is not a regular file or a FIFO (a device?); refusing to read it")
    try:
        fd = os.open(jsonl, os.O_RDONLY | (os.O_NONBLOCK if fifo else 0))
    except OSError as exc:
        raise RouteInputError(f"cannot read {jsonl}: {exc.strerror or exc}") from None
    try:
        if fifo:
            _wait_for_writer(fd, jsonl, fifo_wait_s)
            os.set_blocking(fd, True)
        fh = os.fdopen(fd, "rb", buffering=1 << 16)
    except BaseException:
        os.close(fd)
        raise
    return fh, fh


def _load_classifier_first(err: TextIO = sys.stderr) -> None:
    """Load (or, the first time, train and cache) the routing classifier before any message is
    timed, and say what it cost on stderr: ``latency_ms`` is then the routing alone, not a
    one-off load that a first message would otherwise carry (40 ms from the cache, seconds when
    it is trained — once per data version, cached in PERFSCOUT_CACHE_DIR)."""
    import time

    from nodes.routing import cascade

    t0 = time.perf_counter()
    model = cascade.get_model()
    took_ms = (time.perf_counter() - t0) * 1000
    if model is None or (model.meta.get("source") != "trained" and took_ms < 100):
        return  # a quick load from the cache: nothing worth a line
    how = "trained and cached" if model.meta.get("source") == "trained" else "loaded from the cache"
    where = model.meta.get("cache_path") or model.meta.get("cache_error") or ""
    err.write(f"routing classifier {how} in {took_ms:.0f} ms ({where}); latency_ms below excludes it\n")


def run(text: str | None, jsonl: str | None, llm: Any, out: TextIO = sys.stdout,
        timeout_s: float = DEFAULT_TIMEOUT_S) -> int:
    """Write one JSON object per input to ``out``; 0 when every input routed, 2 otherwise."""
    if (text is None) == (jsonl is None):
        raise RouteInputError("give either TEXT or --jsonl FILE (use - for stdin)")
    ok = True
    _load_classifier_first()
    if text is not None:
        results: Iterable[dict[str, Any]] = [route_one(text, llm, timeout_s)]
        close = None
    else:
        fh, close = open_lines(jsonl)  # type: ignore[arg-type]
        results = route_stream(fh, "stdin" if jsonl == "-" else str(jsonl), llm, timeout_s)
    try:
        for res in results:
            ok &= "error" not in res
            out.write(json.dumps(res, ensure_ascii=False) + "\n")
            out.flush()
    finally:
        if close is not None:
            close.close()
    return 0 if ok else 2


def route_in_thread(text: str, state: dict[str, Any], thread: str, llm: Any = None,
                    timeout_s: float = DEFAULT_TIMEOUT_S) -> dict[str, Any]:
    """What a turn of ``thread`` (its checkpointed ``state``) would decide for ``text``: the route
    with the orchestrator's overrides (docs/ROUTING.md rule 8) and the lens. Runs no node."""
    from nodes.orchestrator import route_turn

    problem = check_text(text)
    if problem:
        return {"error": problem}
    turn = route_turn(text, state, llm, timeout_s)
    analysis = state.get("analysis") or {}
    return {**turn.info, "thread": thread, "thread_data": turn.thread_data,
            "thread_analysis": analysis.get("source") if analysis else None}


__all__ = ["run", "route_in_thread", "route_lines", "route_stream", "bounded_lines", "route_one", "check_text", "RouteInputError",
           "MAX_TEXT_CHARS", "MAX_LINE_BYTES"]
