"""speedscope JSON (https://www.speedscope.app/file-format-schema.json).

Written by py-spy (``py-spy record -f speedscope``: one *sampled* profile per thread, named
``Thread <tid> "<name>"``, unit seconds), pyinstrument, rbspy, and others; *evented* profiles
(``O``/``C`` open/close events) come from instrumenting tools. Sampled profiles become
aggregated stacks (:meth:`PerfData.add_sample`, root first, weights in µs); evented profiles
become nested slices with the frames' file and line.

``py-spy record --subprocesses`` puts a pseudo-frame ``process <pid>:"<command line>"`` (no
file, line 0) at the root of every stack, one per process level (a child's stacks start with
its parent's frame, then its own). That is not code anyone can optimise: the reader strips the
leading run of such frames, names the process after the innermost one's command line, and keeps
the full command lines in ``meta`` — so they are neither hot spots nor stack frames.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec
import numpy as np

from nodes.perf.errors import PerfDataError
from nodes.perf.formats import read_all, strip_json_start
from nodes.perf.model import PerfData
from nodes.perf.parsers import speedscope_samples as vec

FORMAT = "speedscope"

_UNITS = {
    "seconds": 1e6,
    "milliseconds": 1e3,
    "microseconds": 1.0,
    "nanoseconds": 1e-3,
    "none": 1.0,
    "bytes": 1.0,
}
_THREAD = re.compile(r'(?:Process\s+(?P<pid>\d+)\s+)?Thread\s+(?P<tid>\d+)(?:\s+"(?P<name>[^"]*)")?')
_PROCESS_FRAME = re.compile(r'process (?P<pid>\d+):"(?P<cmd>.*)"', re.S)
#: A process name longer than this is cut (the full command line stays in meta).
MAX_PROCESS_NAME = 80
#: A command line kept in meta is cut beyond this.
MAX_COMMAND = 4000
#: Stacks deeper than this are cut (keeps the root side).
MAX_DEPTH = 1024


def sniff(head: bytes, name: str) -> bool:
    h = strip_json_start(head)
    return h[:1] == b"{" and b"speedscope.app/file-format-schema" in head


_NULL = msgspec.Raw(b"null")


class _Profile(msgspec.Struct):
    """A profile as the fast path decodes it: samples and weights left as JSON bytes."""

    type: Any = None
    name: Any = None
    unit: Any = None
    startValue: Any = None
    endValue: Any = None
    samples: msgspec.Raw = _NULL
    weights: msgspec.Raw = _NULL
    events: Any = None


class _Doc(msgspec.Struct):
    shared: Any = None
    profiles: list[_Profile] | None = None
    exporter: Any = None
    name: Any = None


_FAST = msgspec.json.Decoder(_Doc)


def parse(path: str) -> PerfData:
    """Samples aggregated in vectorised passes (nodes/perf/parsers/speedscope_samples.py);
    a file that pass does not handle exactly is read again sample by sample."""
    raw = read_all(path)
    try:
        doc = _FAST.decode(raw)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return _parse(path, raw, None)
    fields = ("type", "name", "unit", "startValue", "endValue", "samples", "weights", "events")
    profiles = None if doc.profiles is None else [{f: getattr(p, f) for f in fields} for p in doc.profiles]
    fast = {"shared": doc.shared, "profiles": profiles, "exporter": doc.exporter, "name": doc.name}
    try:
        return _parse(path, raw, fast)
    except vec.Fallback:
        return _parse(path, raw, None)


def _parse(path: str, raw: bytes, doc: Any) -> PerfData:
    """The reader; ``doc`` is the fast decode (samples as JSON bytes), or None to decode here."""
    if doc is None:
        try:
            doc = msgspec.json.decode(raw)
        except msgspec.DecodeError as e:
            raise PerfDataError(path, f"invalid speedscope JSON ({e})") from None
    if not isinstance(doc, dict):
        raise PerfDataError(path, "speedscope file is not a JSON object")
    shared = doc.get("shared")
    frames_in = shared.get("frames") if isinstance(shared, dict) else None
    profiles = doc.get("profiles")
    if not isinstance(frames_in, list) or not isinstance(profiles, list):
        raise PerfDataError(path, "speedscope file without shared.frames and profiles")
    if not profiles:
        raise PerfDataError(path, "speedscope file holds no profiles")
    pd = PerfData(FORMAT, path)
    exporter = doc.get("exporter")
    if isinstance(exporter, str):
        pd.meta.note("producer", exporter[:80])
    if isinstance(doc.get("name"), str):
        pd.meta.note("name", doc["name"][:200])

    frames: list[tuple[str, str | None, int | None]] = []
    #: frame index → (pid, command line) for py-spy's per-process root frames
    process_frames: dict[int, tuple[int, str]] = {}
    for f in frames_in:
        if not isinstance(f, dict):
            frames.append(("(invalid frame)", None, None))
            continue
        name = f.get("name")
        name = _text(name) if name is not None else "(unnamed)"
        file = f.get("file")
        file = _text(file) if isinstance(file, str) and file else None
        line = f.get("line")
        line = line if isinstance(line, int) and not isinstance(line, bool) and line >= 0 else None
        proc = _process_frame(name, file, line)
        if proc is not None:
            process_frames[len(frames)] = proc
        frames.append((name, file, line))
    fid_cache: dict[int, int] = {}

    def fid(i: Any) -> int | None:
        if not isinstance(i, int) or isinstance(i, bool) or i < 0 or i >= len(frames):
            return None
        r = fid_cache.get(i)
        if r is None:
            r = fid_cache[i] = pd.frame_id(*frames[i])
        return r

    bad = 0
    read_any = False
    for idx, prof in enumerate(profiles):
        if not isinstance(prof, dict):
            bad += 1
            continue
        pid, tid, tname = _thread_of(prof.get("name"), idx)
        unit = prof.get("unit") if isinstance(prof.get("unit"), str) else "none"
        mult = _UNITS.get(unit)
        if mult is None:
            pd.warn(f"profile {idx}: unknown unit {unit!r}; values taken as µs")
            mult = 1.0
        if unit in ("none", "bytes"):
            pd.meta.note("unit", unit)
        start = _f(prof.get("startValue"))
        end = _f(prof.get("endValue"))
        ptype = prof.get("type")
        if ptype == "sampled" and isinstance(prof.get("samples"), msgspec.Raw):
            got, skipped, empty = _sampled_fast(pd, prof["samples"], prof["weights"], idx, frames, fid,
                                                process_frames, pid, tid, mult)
            if got is None:
                bad += 1
                continue
            bad += skipped
            read_any = read_any or got
            if empty:
                pd.meta.note(f"empty samples {tid}", str(empty))
        elif ptype == "sampled":
            samples = prof.get("samples")
            weights = prof.get("weights")
            if not isinstance(samples, list):
                bad += 1
                continue
            if not isinstance(weights, list) or len(weights) != len(samples):
                if weights is not None:
                    pd.warn(f"profile {idx}: weights do not match samples; each sample counted as 1")
                weights = [1.0] * len(samples)
            empty = 0
            for stack, w in zip(samples, weights):
                wv = _f(w)
                if not isinstance(stack, list) or wv is None or wv < 0:
                    bad += 1
                    continue
                if process_frames:
                    stack, proc = _strip_process_frames(stack, process_frames)
                    if proc is not None:
                        pid = _name_process(pd, pid, proc)
                ids = []
                ok = True
                for i in stack[:MAX_DEPTH]:
                    r = fid(i)
                    if r is None:
                        ok = False
                        break
                    ids.append(r)
                if not ok:
                    bad += 1
                    continue
                if not ids:
                    empty += 1  # not in Python code (idle, native): no stack to blame
                    continue
                pd.add_sample(ids, wv * mult, pid, tid)
                read_any = True
            if empty:
                pd.meta.note(f"empty samples {tid}", str(empty))
        elif ptype == "evented":
            events = prof.get("events")
            if not isinstance(events, list):
                bad += 1
                continue
            got, skipped = _evented(pd, events, frames, pid, tid, mult, end)
            bad += skipped
            read_any = read_any or got > 0
        else:
            pd.warn(f"profile {idx}: unknown type {ptype!r}; skipped")
            continue
        info = pd.thread(pid, tid)
        if tname:
            pd.set_thread_name(pid, tid, tname)
        elif pid and tid == pid and pid in pd.processes:
            pd.set_thread_name(pid, tid, "main thread")  # Linux: the thread whose id is the process id
        if tname == "MainThread" or (idx == 0 and info.is_main is None and tname in (None, "", "MainThread")):
            pd.mark_main_thread(pid, tid)
        if start is not None and end is not None and end >= start:
            pd.extend_bounds(start * mult, end * mult)
    if bad:
        pd.skip(bad)
        pd.mark_partial()
        pd.warn(f"{bad} samples/events/profiles were malformed and skipped")
    if not read_any:
        raise PerfDataError(path, "speedscope file holds no usable samples or events")
    return pd


def _sampled_fast(pd: PerfData, samples: msgspec.Raw, weights: msgspec.Raw, idx: int,
                  frames: list, fid: Any, process_frames: dict[int, tuple[int, str]], pid: int, tid: int,
                  mult: float) -> tuple[bool | None, int, int]:
    """One sampled profile through the vectorised pass: (any sample stored — None when
    ``samples`` is no list —, malformed samples, empty ones). The same effects, in the same
    order, as the per-sample loop in ``_parse``; vec.Fallback where it could not be."""
    head = bytes(memoryview(samples)[:1])
    if head == b"n":
        return None, 0, 0
    if head != b"[":
        raise vec.Fallback()
    gids, reps, first_at = vec.distinct_stacks(samples)
    if process_frames and not pid and any(r and r[0] in process_frames for r in reps):
        raise vec.Fallback()  # the sample's pid would come from the frames, sample by sample
    wraw = bytes(memoryview(weights)[:1])
    w: np.ndarray | float
    if wraw == b"n":
        w = 1.0 * mult
    elif wraw == b"[":
        given, _count = vec.weights_of(weights, len(gids), mult)
        if given is None:
            pd.warn(f"profile {idx}: weights do not match samples; each sample counted as 1")
            w = 1.0 * mult
        else:
            w = given
    else:
        raise vec.Fallback()
    state = {"pid": pid}

    def key_of_stack(stack: tuple[int, ...]) -> tuple[int, ...] | None:
        st: Any = list(stack)
        if process_frames:
            st, proc = _strip_process_frames(st, process_frames)
            if proc is not None:
                state["pid"] = _name_process(pd, state["pid"], proc)
        ids = []
        for i in st[:MAX_DEPTH]:
            r = fid(i)
            if r is None:
                return None
            ids.append(r)
        return tuple(ids)

    bad, empty, got = vec.add_profile(pd, gids, reps, first_at, w, (pid, tid), key_of_stack)
    return got, bad, empty


def _evented(
    pd: PerfData,
    events: list,
    frames: list[tuple[str, str | None, int | None]],
    pid: int,
    tid: int,
    mult: float,
    end: float | None,
) -> tuple[int, int]:
    stack: list[tuple[int, float, int]] = []
    closed: list[tuple[int, int, float, float]] = []  # (open order, frame, start, end)
    got = skipped = 0
    last_at = None
    opened = 0
    for ev in events:
        if not isinstance(ev, dict):
            skipped += 1
            continue
        kind = ev.get("type")
        at = _f(ev.get("at"))
        fr = ev.get("frame")
        if at is None or not isinstance(fr, int) or isinstance(fr, bool) or not 0 <= fr < len(frames):
            skipped += 1
            continue
        if last_at is not None and at < last_at:
            skipped += 1  # out of order: speedscope itself rejects these
            continue
        last_at = at
        if kind == "O":
            if len(stack) < MAX_DEPTH:
                stack.append((fr, at, opened))
                opened += 1
        elif kind == "C":
            # close the matching frame, and anything opened above it that was never closed
            pos = next((k for k in range(len(stack) - 1, -1, -1) if stack[k][0] == fr), None)
            if pos is None:
                skipped += 1
                continue
            while len(stack) > pos:
                f, t0, seq = stack.pop()
                closed.append((seq, f, t0, at))
        else:
            skipped += 1
    close = end if end is not None else last_at
    while stack and close is not None:
        f, t0, seq = stack.pop()
        closed.append((seq, f, t0, max(t0, close)))
    # added in the order they were opened: a parent and a child with the same start and
    # end stay parent first (the metrics rebuild nesting from times, stably)
    for _seq, f, t0, t1 in sorted(closed):
        name, file, line = frames[f]
        pd.add_slice(pid, tid, t0 * mult, (t1 - t0) * mult, name, file, line)
        got += 1
    return got, skipped


def _process_frame(name: str, file: str | None, line: int | None) -> tuple[int, str] | None:
    """(pid, command line) when the frame is py-spy's ``process <pid>:"<cmd>"`` pseudo-frame."""
    if file or line or not name.startswith("process "):
        return None
    m = _PROCESS_FRAME.fullmatch(name)
    return (int(m.group("pid")) % (1 << 62), m.group("cmd")) if m else None


def _strip_process_frames(stack: list, process_frames: dict[int, tuple[int, str]]) -> tuple[list, tuple[int, str] | None]:
    """The stack without its leading process frames, and the innermost one (this sample's process)."""
    k = 0
    proc = None
    while k < len(stack) and isinstance(stack[k], int) and stack[k] in process_frames:
        proc = process_frames[stack[k]]
        k += 1
    return (stack[k:] if k else stack), proc


def _name_process(pd: PerfData, pid: int, proc: tuple[int, str]) -> int:
    """Name the sample's process after its command line; returns the pid the sample belongs to.

    The profile's own name (``Process <pid> Thread <tid>``) wins; a profile named without a pid
    takes the one in the frame.
    """
    fpid, cmd = proc
    pid = pid or fpid
    if pid == fpid and pid not in pd.processes:
        pd.set_process_name(pid, _short_command(cmd))
        pd.meta.note(f"process {pid}", _text(cmd)[:MAX_COMMAND])
    return pid


def _short_command(cmd: str) -> str:
    """``/usr/bin/python3 /src/app/main.py --fast`` → ``python3 main.py --fast``."""
    words = [w.rsplit("/", 1)[-1] if "/" in w and not w.startswith("-") else w for w in cmd.split()]
    s = _text(" ".join(w for w in words if w)) or "process"
    return s if len(s) <= MAX_PROCESS_NAME else s[: MAX_PROCESS_NAME - 1] + "…"


def _thread_of(name: Any, idx: int) -> tuple[int, int, str | None]:
    if isinstance(name, str):
        m = _THREAD.search(name)
        if m:
            pid = int(m.group("pid")) if m.group("pid") else 0
            tname = m.group("name")
            return pid, int(m.group("tid")) % (1 << 62), (tname or None)
        return 0, idx + 1, _text(name)[:120] or None
    return 0, idx + 1, None


def _f(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    v = float(v)
    return v if v == v and abs(v) != float("inf") else None


def _text(s: Any) -> str:
    s = str(s)
    try:
        s.encode("utf-8")
        return s
    except UnicodeEncodeError:
        return s.encode("utf-8", "replace").decode("utf-8")
