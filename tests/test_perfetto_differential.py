"""Differential test of the Perfetto reader: every real capture, read and analysed now, gives
exactly what the reader gave at the commit its speed work started from (issue 25).

For each Perfetto trace in tests/data (and ../shared/traces when it is there; copies of the
same bytes are read once) and for four variants made from the warm-start capture — gzipped,
cut in the middle of a packet, three shifted copies (benchmarks/_perfetto_concat.py), and
read with a small event cap — two things are compared with files committed under
tests/data/expected/perfetto/:

* ``<name>.analyze.json.gz`` — the JSON ``perfscout analyze --json`` prints
  (app/analyze_cmd.py ``to_json``), with the file's path replaced by its name;
* ``<name>.perfdata.json`` — a digest of the reader's whole output (``PerfData``): every
  table in its stored order, hashed per thread so a difference names the thread.

Both must match exactly: a float that moves in its last bit fails. Values that another issue
changes on purpose are regenerated in their own commit, saying so:
``python -m tests.test_perfetto_differential --regenerate``.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import sys
from pathlib import Path

import pytest

from tests.helpers.differential import perfdata_digest

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
EXPECTED = DATA / "expected" / "perfetto"
SHARED = ROOT.parent / "shared" / "traces"
WARM = DATA / "perfetto" / "api32_startup_warm.perfetto-trace"
#: The event cap of the capped variant: small enough to stop the warm start in its first half.
CAPPED_EVENTS = 5000


def real_traces() -> dict[str, Path]:
    """name → path of every distinct Perfetto capture (by content), tests/data first."""
    found: dict[str, Path] = {}
    seen: set[str] = set()
    roots = [DATA] + ([SHARED] if SHARED.is_dir() else [])
    for root in roots:
        for p in sorted(root.rglob("*")):
            if p.name.endswith((".perfetto-trace", ".pftrace")) and p.is_file():
                digest = hashlib.sha256(p.read_bytes()).hexdigest()
                if digest not in seen:
                    seen.add(digest)
                    found[p.name] = p
    return found


def _variant(name: str, tmp: Path) -> tuple[Path, int | None]:
    """The file of one made-up variant of the warm start, and the event cap it is read with."""
    raw = WARM.read_bytes()
    path = tmp / name
    cap: int | None = None
    if name == "warm_gzip.perfetto-trace.gz":
        path.write_bytes(gzip.compress(raw, mtime=0))
    elif name == "warm_cut.perfetto-trace":
        path.write_bytes(raw[: len(raw) // 2])
    elif name == "warm_x3.perfetto-trace":
        sys.path.insert(0, str(ROOT))
        from benchmarks._perfetto_concat import concat

        concat(WARM, path, 3 * len(raw) / 1e6 - 0.01)
    elif name == "warm_capped.perfetto-trace":
        path.write_bytes(raw)
        cap = CAPPED_EVENTS
    else:
        raise KeyError(name)
    return path, cap


VARIANTS = ("warm_gzip.perfetto-trace.gz", "warm_cut.perfetto-trace", "warm_x3.perfetto-trace",
            "warm_capped.perfetto-trace")


def outputs(path: Path, max_events: int | None) -> tuple[dict, dict]:
    """(analyze --json output with the path made relative, PerfData digest) of one file, read
    the way ``perfscout analyze`` reads it (nodes/perf/formats.py ``load``)."""
    from app.analyze_cmd import to_json
    from nodes.perf import limits
    from nodes.perf.formats import load
    from nodes.perf.metrics import compute

    changes = {} if max_events is None else {"max_events": max_events}
    with limits.using(**changes):
        pd = load(str(path))
        assert pd.format == "perfetto"
        digest = perfdata_digest(pd)
        result = to_json(compute(pd))
    text = json.dumps(result, ensure_ascii=False).replace(str(path), path.name)
    return json.loads(text), digest


def _expected(name: str) -> tuple[dict, dict]:
    with gzip.open(EXPECTED / f"{name}.analyze.json.gz", "rt", encoding="utf-8") as f:
        analysis = json.load(f)
    digest = json.loads((EXPECTED / f"{name}.perfdata.json").read_text())
    return analysis, digest


def _cases() -> list[str]:
    return sorted(real_traces()) + list(VARIANTS)


def _path_cap(name: str, tmp: Path) -> tuple[Path, int | None]:
    traces = real_traces()
    if name in traces:
        return traces[name], None
    return _variant(name, tmp)


@pytest.mark.parametrize("name", _cases())
def test_reader_and_analysis_unchanged(name, tmp_path):
    path, cap = _path_cap(name, tmp_path)
    analysis, digest = outputs(path, cap)
    want_analysis, want_digest = _expected(name)
    for key in want_digest:
        assert digest.get(key) == want_digest[key], f"{name}: PerfData.{key} differs"
    assert digest.keys() == want_digest.keys()
    for key in want_analysis:
        assert analysis.get(key) == want_analysis[key], f"{name}: analysis[{key!r}] differs"
    assert analysis == want_analysis


def test_every_capture_in_tests_data_has_expected_outputs():
    names = {p.name.split(".analyze.json.gz")[0] for p in EXPECTED.glob("*.analyze.json.gz")}
    assert set(_cases()) <= names
    assert len(real_traces()) >= 4


def regenerate() -> None:
    import tempfile

    EXPECTED.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name in _cases():
            path, cap = _path_cap(name, Path(tmp))
            analysis, digest = outputs(path, cap)
            with gzip.GzipFile(EXPECTED / f"{name}.analyze.json.gz", "wb", mtime=0) as f:
                f.write(json.dumps(analysis, ensure_ascii=False, indent=1).encode())
            (EXPECTED / f"{name}.perfdata.json").write_text(json.dumps(digest, indent=1, ensure_ascii=False) + "\n")
            print("written", name)


if __name__ == "__main__":
    if sys.argv[1:] == ["--regenerate"]:
        regenerate()
    else:
        print(__doc__)
