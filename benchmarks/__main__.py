"""Runs every benchmark module in this folder, one subprocess each (isolated peak memory)."""

from __future__ import annotations

import pkgutil
import subprocess
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    here = Path(__file__).parent
    names = sorted(m.name for m in pkgutil.iter_modules([str(here)]) if not m.name.startswith("_"))
    if argv:
        names = [n for n in names if n in argv]
    failed = []
    for name in names:
        print(f"\n=== benchmarks.{name} ===", flush=True)
        rc = subprocess.call([sys.executable, "-m", f"benchmarks.{name}"], cwd=here.parent)
        if rc:
            failed.append(name)
    if failed:
        print(f"\nfailed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
