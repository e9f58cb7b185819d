"""Differential test of the speedscope reader: every real capture, and variants made from them
that take its rarer branches, read and analysed now give exactly what the reader gave before
its speed work (issue 25 item 4).

For each speedscope profile in tests/data and each variant below, two things are compared with
files committed under tests/data/expected/speedscope/ (as tests/test_perfetto_differential.py
does for Perfetto): the JSON ``perfscout analyze --json`` prints, with the file's path replaced
by its name, and a digest of the reader's whole output (``PerfData``). A float that moves in its
last bit fails. ``python -m tests.test_speedscope_differential --regenerate`` rewrites them, in
a commit of its own that says why.

The variants (built from tests/data/attrib/profiles/sortedcontainers.speedscope.json, 1,526
samples, and tests/data/speedscope/pyspy-subprocesses.speedscope.json):

* ``gzip`` — the same bytes gzipped;
* ``malformed`` — an out-of-range frame index, a non-list sample, a negative and a ``true``
  weight, a stack deeper than the reader's depth cap, an empty stack;
* ``bad_frames`` — out-of-range frame indexes, a stack deeper than the depth cap, empty stacks
  and a zero weight, in samples that are otherwise well-formed (the vectorised path's own
  handling, where ``malformed`` sends the file to the per-sample reader);
* ``no_weights`` / ``short_weights`` — weights absent, and one too few (each sample counted as 1);
* ``two_profiles_one_thread`` — the profile twice under the same thread name (sums continue);
* ``duplicate_frames`` — shared.frames holding each frame twice, samples using both copies;
* ``capped`` — read with an event cap that stops it in the middle of the samples;
* ``no_pid_subprocesses`` — py-spy's process frames, in profiles named without a pid;
* ``milliseconds`` — another unit.
"""

from __future__ import annotations

import copy
import gzip
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
EXPECTED = DATA / "expected" / "speedscope"
SORTED = DATA / "attrib" / "profiles" / "sortedcontainers.speedscope.json"
SUBPROC = DATA / "speedscope" / "pyspy-subprocesses.speedscope.json"
#: The event cap of the capped variant: below the distinct stacks + frames of SORTED.
CAPPED_EVENTS = 300


def real_profiles() -> dict[str, Path]:
    """name → path of every speedscope capture in tests/data."""
    return {p.name: p for p in sorted(DATA.rglob("*.speedscope.json")) if "expected" not in p.parts}


def _write(doc: dict, path: Path) -> Path:
    path.write_text(json.dumps(doc, separators=(",", ":")))
    return path


def _variant(name: str, tmp: Path) -> tuple[Path, int | None]:
    doc = json.loads(SORTED.read_text())
    prof = doc["profiles"][0]
    path = tmp / f"{name}.speedscope.json"
    if name == "gzip":
        path = tmp / "gzip.speedscope.json.gz"
        path.write_bytes(gzip.compress(SORTED.read_bytes(), mtime=0))
        return path, None
    if name == "malformed":
        s, w = prof["samples"], prof["weights"]
        s[3] = s[3] + [len(doc["shared"]["frames"])]
        s[10] = 7
        w[20] = -0.004
        w[30] = True
        s[40] = (s[40] * 300)[:1500]
        s[50] = []
        s[60] = [1, "x"]
    elif name == "bad_frames":
        s, w = prof["samples"], prof["weights"]
        s[3] = s[3] + [len(doc["shared"]["frames"])]
        s[5] = [-1] + s[5]
        s[40] = (s[40] * 300)[:1500]
        s[50] = []
        s[51] = []
        w[52] = 0
    elif name == "no_weights":
        del prof["weights"]
    elif name == "short_weights":
        prof["weights"] = prof["weights"][:-1]
    elif name == "two_profiles_one_thread":
        doc["profiles"].append(copy.deepcopy(prof))
        doc["profiles"][1]["weights"] = [x * 3 for x in prof["weights"]]
    elif name == "duplicate_frames":
        n = len(doc["shared"]["frames"])
        doc["shared"]["frames"] = doc["shared"]["frames"] * 2
        prof["samples"] = [[f + n * ((i + k) % 2) for k, f in enumerate(st)] for i, st in enumerate(prof["samples"])]
    elif name == "capped":
        return _write(doc, path), CAPPED_EVENTS
    elif name == "no_pid_subprocesses":
        doc = json.loads(SUBPROC.read_text())
        for p in doc["profiles"]:
            p["name"] = p["name"].split(" ", 2)[2]  # 'Thread <tid> ""'
    elif name == "milliseconds":
        prof["unit"] = "milliseconds"
        prof["weights"] = [x * 1000 for x in prof["weights"]]
    else:
        raise KeyError(name)
    return _write(doc, path), None


VARIANTS = ("gzip", "malformed", "bad_frames", "no_weights", "short_weights", "two_profiles_one_thread", "duplicate_frames",
            "capped", "no_pid_subprocesses", "milliseconds")


def outputs(path: Path, max_events: int | None) -> tuple[dict, dict]:
    """(analyze --json output with the path made relative, PerfData digest), read the way
    ``perfscout analyze`` reads it (nodes/perf/formats.py ``load``)."""
    from app.analyze_cmd import to_json
    from nodes.perf import limits
    from nodes.perf.formats import load
    from nodes.perf.metrics import compute
    from tests.helpers.differential import perfdata_digest

    changes = {} if max_events is None else {"max_events": max_events}
    with limits.using(**changes):
        pd = load(str(path))
        assert pd.format == "speedscope"
        digest = perfdata_digest(pd)
        result = to_json(compute(pd))
    text = json.dumps(result, ensure_ascii=False).replace(str(path), path.name)
    return json.loads(text), digest


def _cases() -> list[str]:
    return sorted(real_profiles()) + list(VARIANTS)


def _path_cap(name: str, tmp: Path) -> tuple[Path, int | None]:
    real = real_profiles()
    return (real[name], None) if name in real else _variant(name, tmp)


@pytest.mark.parametrize("name", _cases())
def test_reader_and_analysis_unchanged(name, tmp_path):
    analysis, digest = outputs(*_path_cap(name, tmp_path))
    want_analysis = json.loads(gzip.decompress((EXPECTED / f"{name}.analyze.json.gz").read_bytes()))
    want_digest = json.loads((EXPECTED / f"{name}.perfdata.json").read_text())
    for key in want_digest:
        assert digest.get(key) == want_digest[key], f"{name}: PerfData.{key} differs"
    assert digest.keys() == want_digest.keys()
    for key in want_analysis:
        assert analysis.get(key) == want_analysis[key], f"{name}: analysis[{key!r}] differs"
    assert analysis == want_analysis


def test_every_case_has_expected_outputs_and_the_variants_take_their_branches(tmp_path):
    names = {p.name.split(".analyze.json.gz")[0] for p in EXPECTED.glob("*.analyze.json.gz")}
    assert set(_cases()) <= names and len(real_profiles()) >= 5
    # The variants do what their names say (else the comparison would prove less).
    malformed = json.loads(gzip.decompress((EXPECTED / "malformed.analyze.json.gz").read_bytes()))
    capped = json.loads((EXPECTED / "capped.perfdata.json").read_text())
    assert capped["stopped_at_cap"] and capped["partial"]
    assert json.loads((EXPECTED / "malformed.perfdata.json").read_text())["skipped_events"] == 5
    assert any("malformed" in w for w in malformed["warnings"])
    bad_frames = json.loads((EXPECTED / "bad_frames.perfdata.json").read_text())
    assert bad_frames["skipped_events"] == 2 and bad_frames["meta"].get("empty samples 14650") == "5"  # 3 in the capture
    short = json.loads((EXPECTED / "short_weights.perfdata.json").read_text())
    assert any("weights do not match" in w for w in short["warnings"])


def regenerate() -> None:
    import tempfile

    EXPECTED.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name in _cases():
            analysis, digest = outputs(*_path_cap(name, Path(tmp)))
            with gzip.GzipFile(EXPECTED / f"{name}.analyze.json.gz", "wb", mtime=0) as f:
                f.write(json.dumps(analysis, ensure_ascii=False, indent=1).encode())
            (EXPECTED / f"{name}.perfdata.json").write_text(json.dumps(digest, indent=1, ensure_ascii=False) + "\n")
            print("written", name)


if __name__ == "__main__":
    if sys.argv[1:] == ["--regenerate"]:
        sys.path.insert(0, str(ROOT))
        regenerate()
    else:
        print(__doc__)
