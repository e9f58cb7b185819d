"""A fuzz target per perf-data parser: bad bytes end in ``PerfDataError``, never anything else.

Each parser (``nodes/perf/parsers/*``, ``parse(path)``) and the front door
(``nodes.perf.formats.load``) gets inputs made by mutating a real sample of its format — cut,
spliced, bytes flipped, lines duplicated or dropped — plus raw random bytes. The parser must
return ``PerfData`` or raise ``PerfDataError``; a ``KeyError``, ``IndexError``, ``struct.error``
or ``UnicodeDecodeError`` escaping is a bug. Hypothesis runs a fixed number of examples per
parser (a short fixed budget); with atheris installed, a coverage-guided run of a few thousand
inputs per parser also runs, in a subprocess (``python tests/test_reliability_fuzz.py FORMAT``).
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nodes.perf import formats
from nodes.perf.errors import PerfDataError
from nodes.perf.model import PerfData

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
#: Mutating a whole 2 MB capture per example would make the budget a handful of examples.
SEED_BYTES = 24 * 1024
EXAMPLES = int(os.environ.get("PERFSCOUT_FUZZ_EXAMPLES", "60"))
ATHERIS_RUNS = int(os.environ.get("PERFSCOUT_FUZZ_RUNS", "3000"))
#: In the test suite the same examples run every time (a failure is reproducible, never a
#: flake); set PERFSCOUT_FUZZ_RANDOM=1 to explore new ones.
DERANDOMIZE = os.environ.get("PERFSCOUT_FUZZ_RANDOM", "") != "1"
ATHERIS_SEED = 0 if not DERANDOMIZE else 1

#: Seeds that no committed sample covers, written here (each a minimal valid input).
INLINE_SEEDS: dict[str, bytes] = {
    "amstart": b"Starting: Intent { cmp=com.demo.shop/.MainActivity }\nStatus: ok\nLaunchState: COLD\n"
               b"Activity: com.demo.shop/.MainActivity\nTotalTime: 712\nWaitTime: 745\nComplete\n",
    "perfscout_json": b'{"perfscout": "psutil-series", "version": 1, "pid": 1, "interval_s": 0.1, '
                      b'"series": {"cpu_percent": {"unit": "%", "points": [[0.0, 1.0], [0.1, 50.0]]}}, '
                      b'"threads": [{"tid": 1, "name": "main", "user_s": 0.1}]}',
    "trace_event": b'{"traceEvents": [{"name": "a", "ph": "X", "ts": 0, "dur": 10, "pid": 1, "tid": 1},'
                   b'{"name": "b", "ph": "B", "ts": 2, "pid": 1, "tid": 1},{"name": "b", "ph": "E", "ts": 5,'
                   b' "pid": 1, "tid": 1},{"name": "thread_name", "ph": "M", "pid": 1, "tid": 1, '
                   b'"args": {"name": "main"}}]}',
}

#: Parsers outside the sniffing registry (Android dumps read by name), with their sample.
EXTRA_PARSERS = {
    "meminfo": ("nodes.perf.parsers.meminfo", "android/meminfo-app-android13.txt"),
    "cpuinfo": ("nodes.perf.parsers.cpuinfo", "android/cpuinfo.txt"),
}


def _registry_seeds() -> dict[str, list[bytes]]:
    seeds: dict[str, list[bytes]] = {k: [v] for k, v in INLINE_SEEDS.items()}
    for p in sorted(DATA.rglob("*")):  # every depth: perf/flamegraph/ holds perf_script's samples
        if not p.is_file() or p.suffix in (".md", ".py", ".jsonl") or p.name.startswith("LICENSE"):
            continue
        try:
            fmt, _ = formats.detect(str(p))
        except PerfDataError:
            continue
        head = formats.read_head(str(p), SEED_BYTES)
        seeds.setdefault(fmt, []).append(head)
    return seeds


SEEDS = _registry_seeds()


def _parsers() -> dict[str, tuple[str, list[bytes]]]:
    """format → (module, seeds), for every reader: the registry's and ``EXTRA_PARSERS``. Nothing
    is skipped: a reader that no longer imports fails this module at collection (and
    ``test_every_registered_parser_has_a_fuzz_target`` says which), it never drops out of the
    fuzzing and its completeness check together."""
    out: dict[str, tuple[str, list[bytes]]] = {}
    for modname, fmt in formats.REGISTRY:
        out[fmt] = (modname, SEEDS.get(fmt, []))
    for fmt, (modname, sample) in EXTRA_PARSERS.items():
        out[fmt] = (modname, [(DATA / sample).read_bytes()[:SEED_BYTES]])
    return out


PARSERS = _parsers()


# --- mutations -----------------------------------------------------------------------------

@st.composite
def mutated(draw, seeds: list[bytes]) -> bytes:
    data = bytearray(draw(st.sampled_from(seeds)))
    for _ in range(draw(st.integers(0, 6))):
        op = draw(st.sampled_from(["cut", "flip", "insert", "splice", "dup_line", "drop_line", "digits"]))
        n = len(data)
        pos = draw(st.integers(0, max(0, n)))
        if op == "cut":
            del data[pos:]
        elif op == "flip" and n:
            data[min(pos, n - 1)] = draw(st.integers(0, 255))
        elif op == "insert":
            data[pos:pos] = draw(st.binary(min_size=1, max_size=32))
        elif op == "splice":
            data[pos:pos] = draw(st.sampled_from([b"{", b"}", b"[", b"]", b'"', b"\\u0000", b"\x00", b"\xff\xfe",
                                                  b"-1", b"1e309", b"NaN", b"\n", b"|", b":", b"\t\t\t"]))
        elif op in ("dup_line", "drop_line"):
            lines = bytes(data).split(b"\n")
            i = min(pos, len(lines) - 1)
            if op == "dup_line":
                lines.insert(i, lines[i])
            else:
                del lines[i]
            data = bytearray(b"\n".join(lines))
        elif op == "digits":
            data[pos:pos] = str(draw(st.integers(-(2**70), 2**70))).encode()
    return bytes(data)


def _inputs(seeds: list[bytes]):
    return st.one_of(mutated(seeds), st.binary(max_size=512))


#: Bugs the fuzzers found, reported to the parsers' owners, tolerated by the fuzz loop until
#: fixed (else every run would re-find them by chance). Each has a strict-xfail regression test
#: below with the exact input: once fixed, that test turns red and both entries go.
KNOWN_BUGS: dict[str, tuple[tuple[type[BaseException], ...] | str, str]] = {}


def _check(parse, data: bytes, fmt: str | None = None) -> None:
    fd, path = tempfile.mkstemp(suffix=".fuzz")
    known = KNOWN_BUGS.get(fmt or "", (None, ""))[0]
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        try:
            out = parse(path)
        except PerfDataError as e:
            msg = str(e).strip()
            assert msg
            assert known == "multiline" or ("\n" not in msg and "\r" not in msg), f"not a one-line error: {e!r}"
            return
        except Exception as e:
            if isinstance(known, tuple) and type(e) in known:
                return
            raise
        assert isinstance(out, PerfData)
    finally:
        os.unlink(path)


@pytest.mark.parametrize("fmt", sorted(PARSERS))
def test_parser_raises_only_perfdataerror_on_mutated_input(fmt):
    modname, seeds = PARSERS[fmt]
    mod = importlib.import_module(modname)

    @settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=DERANDOMIZE,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(_inputs(seeds))
    def run(data):
        _check(mod.parse, data, fmt)
        if hasattr(mod, "sniff"):
            assert mod.sniff(data[: formats.HEAD_BYTES], "x.fuzz") in (True, False)

    run()


ALL_SEEDS = [s for _, seeds in PARSERS.values() for s in seeds]


@settings(max_examples=EXAMPLES * 2, deadline=None, database=None, derandomize=DERANDOMIZE,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(_inputs(ALL_SEEDS))
def test_load_raises_only_perfdataerror_on_any_input(data):
    _check(formats.load, data)


PERFETTO_HUGE_LENGTH = b"\r\x00\x00\x00\x00*\x80\x80\x80\x80_\x00\x00\x00\x00\x00"
PSTATS_RAW_ERROR = b'\xfb)\x03\xfa;/root/.pyenv/versions/3.11.7/lib/python3.11/re/_compiler.pyi\xb4\x01\x00\x00\xda\x13_get_literal_prefix)\x05\xe9\x05\x00\x00\x00\xe9\x08\x00\x00\x00g\x80t\x84\xe8\x1db\xf4>g\x9c\x9d\xc3\xb7\xdb\xee\xf8>{\xa9\x03r\x01\x00\x00\x00i\xb4\x01\x00\x00r\x02\x00\x00\x00)\x04\xe9\x03\x00\x00\x00r\x06\x00\x00\x00g\xc8\xb3.\xe2\xf9\x14\xc9>g\x9a\xdf\xdd\x88\xf6\xca\xcf>\xa9\x03r\x01\x00\x00\x00i\xff\x01\x00\x00\xda\r_compile_info)\x04r\x03\x00\x00\x00r\x03\x00\x00\x00g\x07\x9e>\xac~?\xf1>g\x9c\x9d\xc3\xb7\xdb\xee\xf8>0)\x03\xfa;/root/.pyenv/versions/3.11.7/lib/python3.11/json/encoder.py\xe9\x01\x00\x00\x00\xfa\x08<module>)\x05r\n\x00\x00\x00gu\x81\xe4\x00n\xd4\x02?g\x96\xba\x10\x1d\x95\xaaC?{\xa9\x03\xfa\x01~\xe9\x00\x00\x00\x00\xfa\x1f-1-1<built-in method builtins.exec>)\x04r\n\x00\x00\x00r\n\x00\x00\x00gu\x81\xe4\x00n\xd4\x02?g\x96\xba\x10\x1d\x95\xaaC?0)\x03\xfa8/root/.pyenv/versions/3.11.7/lib/python3.11/functools.pyiT\x03\x00\x00\xda\x08r'
PERFETTO_LONG_VARINT = b"\xff" * 13 + b"\n"
CPUINFO_CRASH = Path(__file__).resolve().parent / "data" / "fuzz" / "cpuinfo-lone-dot.txt"
#: Found by this fuzzer in CI: a TOTAL line whose parts hold a lone "." before "%".
CPUINFO_LONE_DOT = b"Load: 7.41 / 7.3 / 7.1\n25% TOTAL: 15% user + 0.% kernel + .% softirq\n 4.2% 712/surfaceflinger: 2.5% user + .% kernel\n"


def test_perfetto_packet_longer_than_the_file_is_a_perfdataerror():
    _check(importlib.import_module(PARSERS["perfetto"][0]).parse, PERFETTO_HUGE_LENGTH)


def test_perfetto_overlong_varint_is_a_perfdataerror():
    _check(importlib.import_module(PARSERS["perfetto"][0]).parse, PERFETTO_LONG_VARINT)


def test_cpuinfo_lone_dot_is_no_number():
    _check(importlib.import_module(PARSERS["cpuinfo"][0]).parse, CPUINFO_LONE_DOT)
    _check(importlib.import_module(PARSERS["cpuinfo"][0]).parse, open(CPUINFO_CRASH, "rb").read())


def test_pstats_error_on_garbage_is_one_line():
    """Found by this fuzzer: marshal's error text (a newline, raw control bytes) used to end up in
    the message; fixed by the owner (the stream is pre-walked before marshal sees it)."""
    _check(importlib.import_module(PARSERS["pstats"][0]).parse, PSTATS_RAW_ERROR)


def test_every_registered_parser_has_a_fuzz_target():
    """A parser added to the registry is fuzzed from its first commit on, from a real seed; and
    every one imports (the registry tolerates a reader that does not — the fuzzer must not)."""
    assert {fmt for _, fmt in formats.REGISTRY} | set(EXTRA_PARSERS) == set(PARSERS)
    assert formats.available_formats() == {fmt: None for _, fmt in formats.REGISTRY}
    for fmt, (modname, seeds) in PARSERS.items():
        importlib.import_module(modname)
        assert seeds and all(seeds), f"{fmt}: no seed (add a sample under tests/data or to INLINE_SEEDS)"


# --- atheris (coverage-guided) ---------------------------------------------------------------

def _have_atheris() -> bool:
    try:
        importlib.import_module("atheris")
        return True
    except ImportError:
        return False


@pytest.mark.skipif(not _have_atheris(), reason="atheris is not installed (pip install atheris)")
@pytest.mark.parametrize("fmt", sorted(PARSERS))
def test_atheris_finds_no_crash_in_a_short_run(fmt, tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i, s in enumerate(PARSERS[fmt][1]):
        (corpus / f"seed{i}").write_bytes(s)
    proc = subprocess.run(
        [sys.executable, __file__, fmt, f"-runs={ATHERIS_RUNS}", f"-seed={ATHERIS_SEED}", "-rss_limit_mb=0",
         "-max_len=65536", f"-artifact_prefix={tmp_path}/", str(corpus)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )
    tail = (proc.stderr or "")[-3000:]
    assert proc.returncode == 0, f"atheris found a crash in {fmt}:\n{tail}"
    assert "Done" in tail or "DONE" in tail or "runs in" in tail, tail


def _atheris_main(fmt: str, argv: list[str]) -> None:
    import atheris

    with atheris.instrument_imports():
        mod = importlib.import_module(PARSERS[fmt][0])
    path = os.path.join(tempfile.mkdtemp(prefix="fuzz-"), "input.fuzz")

    def one(data: bytes) -> None:
        with open(path, "wb") as f:
            f.write(data)
        known = KNOWN_BUGS.get(fmt, ((), ""))[0]
        try:
            mod.parse(path)
        except PerfDataError:
            pass
        except Exception as e:
            if not (isinstance(known, tuple) and type(e) in known):
                raise

    atheris.Setup([sys.argv[0], *argv], one)
    atheris.Fuzz()


if __name__ == "__main__":
    _atheris_main(sys.argv[1], sys.argv[2:])

