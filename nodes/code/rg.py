"""Running ripgrep: finding the binary, building a safe command line, parsing ``--json``.

The binary comes from the ``ripgrep`` PyPI package, so it sits next to the interpreter in a
fresh install; PATH is the fallback. Every command line is built here so that none can leave
the workspace: rg runs with the workspace as its working directory, is handed only paths the
sandbox resolved, never gets ``--follow`` (so symlinks met while walking are not entered), and
ignores any user config file (``--no-config``) that could add flags behind our back.
"""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import orjson

from graph.enums import ErrorKind
from nodes.framework.errors import ToolFailure

#: Files bigger than this are skipped by rg and never dumped by the read tool.
MAX_FILE_BYTES = 1_000_000
#: Longest line text kept in a result; longer lines are cut with an ellipsis.
MAX_LINE_CHARS = 300
#: Wall-clock limit of one rg run, in seconds.
RG_TIMEOUT_S = 20.0


def find_rg(explicit: str | None = None) -> str:
    """The rg binary: ``explicit`` if given, else next to ``sys.executable``, else PATH."""
    if explicit:
        if os.path.isfile(explicit) and os.access(explicit, os.X_OK):
            return explicit
        raise ToolFailure(ErrorKind.UNAVAILABLE, f"ripgrep not found at {explicit}")
    beside = Path(sys.executable).parent / "rg"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which("rg")
    if found:
        return found
    raise ToolFailure(
        ErrorKind.UNAVAILABLE,
        "ripgrep (rg) is not installed: `pip install ripgrep` puts it next to the Python interpreter",
    )


def clip(text: str, limit: int = MAX_LINE_CHARS) -> str:
    text = text.rstrip("\r\n")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def base_args(rg: str) -> list[str]:
    """Flags every run shares: no config file, .gitignore honoured even outside a git repo."""
    return [
        rg,
        "--no-config",
        "--no-require-git",
        "--no-messages",
        f"--max-filesize={MAX_FILE_BYTES}",
    ]


@dataclass
class RgLine:
    line: int
    text: str
    is_match: bool


@dataclass
class RgFile:
    path: str
    lines: list[RgLine] = field(default_factory=list)


def _text(obj: dict) -> str:
    if "text" in obj:
        return obj["text"]
    try:
        return base64.b64decode(obj.get("bytes", "")).decode("utf-8", "replace")
    except ValueError:
        return ""


def run_json(cmd: list[str], cwd: Path, *, max_matches: int, per_file: int | None = None) -> tuple[list[RgFile], bool]:
    """Run an rg ``--json`` command; files with their match and context lines, and truncation.

    Output is streamed and rg is stopped once ``max_matches`` matches arrived, so a pattern
    that matches everywhere costs no more than one that matches a little.
    """
    files: list[RgFile] = []
    truncated = False
    matches = 0
    for msg in _stream(cmd, cwd):
        kind = msg.get("type")
        data = msg.get("data") or {}
        if kind == "begin":
            files.append(RgFile(path=_text(data.get("path") or {})))
        elif kind in ("match", "context") and files:
            is_match = kind == "match"
            if is_match and per_file is not None and sum(x.is_match for x in files[-1].lines) >= per_file:
                is_match = False
            if is_match:
                if matches >= max_matches:
                    truncated = True
                    break
                matches += 1
            files[-1].lines.append(
                RgLine(int(data.get("line_number") or 0), clip(_text(data.get("lines") or {})), is_match)
            )
    return [f for f in files if any(x.is_match for x in f.lines)], truncated


def run_lines(cmd: list[str], cwd: Path, *, max_lines: int) -> tuple[list[str], bool]:
    """Run an rg command printing one path a line (``--files``); at most ``max_lines`` of them."""
    out: list[str] = []
    truncated = False
    for raw in _stream_raw(cmd, cwd):
        if len(out) >= max_lines:
            truncated = True
            break
        out.append(raw.decode("utf-8", "replace").rstrip("\n"))
    return out, truncated


def _stream(cmd: list[str], cwd: Path) -> Iterator[dict]:
    for raw in _stream_raw(cmd, cwd):
        try:
            yield orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue


def _stream_raw(cmd: list[str], cwd: Path) -> Iterator[bytes]:
    try:
        proc = subprocess.Popen(
            cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL
        )
    except FileNotFoundError:
        raise ToolFailure(ErrorKind.UNAVAILABLE, f"ripgrep not found at {cmd[0]}") from None
    except PermissionError:
        raise ToolFailure(ErrorKind.UNAVAILABLE, f"ripgrep at {cmd[0]} cannot be executed") from None
    timed_out = threading.Event()

    def _expire() -> None:
        timed_out.set()
        proc.kill()

    timer = threading.Timer(RG_TIMEOUT_S, _expire)
    timer.daemon = True
    timer.start()
    finished = False
    try:
        assert proc.stdout is not None
        for raw in proc.stdout:
            yield raw
        finished = True
    finally:
        if not finished:
            proc.kill()
        _, err = proc.communicate()
        timer.cancel()
    if timed_out.is_set():
        raise ToolFailure(ErrorKind.TIMEOUT, f"ripgrep took longer than {RG_TIMEOUT_S:.0f} s")
    # rg exits 1 for "no match"; 2 means an error, which matters only when nothing was printed
    # for it to be worth reporting (a bad pattern, a bad glob).
    if proc.returncode == 2 and err:
        text = " ".join(err.decode("utf-8", "replace").split())[:300]
        if "regex" in text.lower() or "glob" in text.lower():
            raise ToolFailure(ErrorKind.VALIDATION, f"invalid search pattern: {text}")
        raise ToolFailure(ErrorKind.RETRYABLE, f"ripgrep failed: {text}")
