"""A name that is not UTF-8 is still a name: one bad byte in a string never fails the read.

upb hands a proto2 string field that is not UTF-8 back as ``bytes`` — a kernel comm cut at 16
bytes inside a character does that on real devices. Each case below damages one name of a real
capture (one byte set to 0xFF, the first time the name occurs) in a different kind of packet or
event, and the whole analysis must still come back — not as "could not read", not as a
traceback out of the metrics — with that name decoded as the reader decodes every string
(``perfetto_wire.text``: errors="replace"), and the same from the C parts and the pure-Python
path (``PERFSCOUT_PURE_PYTHON_WIRE=1``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.analyze_cmd import to_json
from nodes.perf.analysis import analyze_file
from nodes.perf.parsers import perfetto
from nodes.perf.parsers.perfetto_wire import text

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "perfetto"

#: (capture, the name damaged, where the reader meets it first, whether that spelling is kept: a
#: comm a later event renames, a counter of a process whose series are not written out
#: (perfetto.py ``_counters``), an interned name its sequence defines again are read, not kept)
CASES = [
    ("api32_startup_warm.perfetto-trace", b"dm_cpu_cl0", "a kernel zero event's counter name", False),
    ("api32_startup_warm.perfetto-trace", b"kblockd", "a process_tree cmdline", True),
    ("api32_startup_warm.perfetto-trace", b"com.google.android.apps.messag", "a process name", True),
    ("ms_android12_emulator_sched_cpusampling.pftrace", b"Binder:582_B0", "a thread's comm", False),
    ("chrome_fcp_lcp_navigations.pftrace", b"sendTouchEvent", "an interned track event name", True),
    ("chrome_fcp_lcp_navigations.pftrace", b"didSwapFrame", "an interned track event name", False),
]
_IDS = [f"{c.split('.')[0]}-{n.decode()[:16]}" for c, n, _, _ in CASES]


def _damaged(tmp_path: Path, capture: str, name: bytes) -> tuple[Path, str]:
    """The capture with one byte of ``name`` (its third) set to 0xFF, and that name as read."""
    raw = bytearray((DATA / capture).read_bytes())
    at = raw.find(name)
    assert at >= 0, f"{name!r} is not in {capture}"
    raw[at + 2] = 0xFF
    path = tmp_path / f"damaged-{capture}"
    path.write_bytes(bytes(raw))
    return path, text(bytes(raw[at:at + len(name)]))


def _names(pd) -> set[str]:
    """Every name the reader kept: processes, threads, slices, counters, memory and async tracks."""
    out = set(pd.processes.values()) | {t.name for t in pd.threads.values() if t.name} | set(pd.strings)
    out |= set(pd.counters) | {n for _, n in pd.memory} | {track for _, track in pd.async_slices}
    return out


def test_text_decodes_what_is_not_utf8_and_keeps_what_is():
    assert text(b"RenderThread") == "RenderThread"
    assert text("RenderThread") == "RenderThread"
    assert text(b"Bi\xffder") == "Bi\ufffdder"
    assert text("Bi\ufffdder".encode()) == "Bi\ufffdder"
    assert text(b"\xe6\x97\xa5\xe6\x9c") == "\u65e5\ufffd"  # a comm cut inside its second character


@pytest.mark.parametrize("capture,name,where,kept", CASES, ids=_IDS)
def test_one_damaged_name_does_not_fail_the_analysis(tmp_path, capture, name, where, kept):
    path, read_as = _damaged(tmp_path, capture, name)
    assert "\ufffd" in read_as
    pd, whole = perfetto.parse(str(path)), perfetto.parse(str(DATA / capture))
    # nothing dropped for it: no packet skipped, no warning the undamaged capture does not give
    assert (pd.skipped_events, pd.partial, pd.warnings) == (whole.skipped_events, whole.partial, whole.warnings)
    names = _names(pd)
    assert all(isinstance(n, str) for n in names), f"{where}: bytes kept as a name"
    assert any(read_as in n for n in names) == kept, f"{where}: {read_as!r} among the names read"
    result = analyze_file(str(path))
    json.dumps(to_json(result))  # what `perfscout analyze --json` prints, whole


_BOTH = """
import hashlib, json, sys
from app.analyze_cmd import to_json
from nodes.perf.analysis import analyze_file
for p in sys.argv[1:]:
    print(hashlib.sha256(json.dumps(to_json(analyze_file(p)), sort_keys=True).encode()).hexdigest())
"""


def test_c_and_pure_python_read_the_damaged_names_alike(tmp_path):
    paths = []
    for i, (capture, name, _, _) in enumerate(CASES):
        sub = tmp_path / str(i)
        sub.mkdir()
        paths.append(str(_damaged(sub, capture, name)[0]))
    runs = {}
    for value in ("0", "1"):
        env = {**os.environ, "PERFSCOUT_PURE_PYTHON_WIRE": value}
        runs[value] = subprocess.run([sys.executable, "-c", _BOTH, *paths], cwd=ROOT, env=env,
                                     capture_output=True, text=True, check=True).stdout.split()
    assert len(runs["0"]) == len(CASES)
    assert runs["0"] == runs["1"]
