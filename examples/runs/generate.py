"""Writes the bundled before/after runs (README "Before and after", docs/compare.md, docs/ci.md).

Generated, not recorded: each file is a tiny Perfetto trace of one cold launch of
``com.example.planted`` (atrace markers: ``launching:`` on system_server, ``bindApplication`` →
``activityStart`` → ``activityResume`` → the first frame), built by tests/compare_gen.py with a
seeded jitter. The *after* build has one planted change — ``bindApplication`` takes 55 ms
instead of 40 ms — so a comparison has a known right answer. Run from the repository root:

    .venv/bin/python examples/runs/generate.py

tests/test_docs_blocks.py checks that the files here are what this script writes.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from tests import compare_gen as gen  # noqa: E402

BEFORE_BIND_MS, AFTER_BIND_MS = 40.0, 55.0


def write(root: Path) -> list[Path]:
    """main/ and branch/: five launches a build; before.pftrace and after.pftrace: one each."""
    files = gen.perfetto_startup_runs(root / "main", 5, seed=101, bind_ms=BEFORE_BIND_MS)
    files += gen.perfetto_startup_runs(root / "branch", 5, seed=102, bind_ms=AFTER_BIND_MS)
    with tempfile.TemporaryDirectory() as tmp:
        for name, seed, bind in (("before", 103, BEFORE_BIND_MS), ("after", 104, AFTER_BIND_MS)):
            (one,) = gen.perfetto_startup_runs(Path(tmp) / name, 1, seed=seed, bind_ms=bind)
            files.append(Path(shutil.copyfile(one, root / f"{name}.pftrace")))
    return files


if __name__ == "__main__":
    for f in write(HERE):
        print(f.relative_to(HERE.parents[1]))
