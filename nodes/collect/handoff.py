"""Which of a run's files go to the analyzer.

``collected["paths"]`` promises the analyzer files it can read. Rather than trusting a list of
names, each file is put through the analyzer's own format detection; a file no reader
recognises stays in ``collected["files"]`` (the user can still open it) with a note why.
"""

from __future__ import annotations

import os


def split_analysable(files: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    """(files the analyzer recognises, notes about the ones it does not)."""
    paths: dict[str, str] = {}
    notes: list[str] = []
    try:
        from nodes.perf.formats import detect
        from nodes.perf.errors import PerfDataError
    except ImportError as e:
        return {}, [f"the analyzer's format detection is not available ({e}); nothing handed over"]
    for name, path in files.items():
        if not path or not os.path.isfile(path) or os.path.getsize(path) == 0:
            continue
        try:
            fmt, _ = detect(path)
        except PerfDataError as e:
            notes.append(f"{name}: kept in the run folder, not analysed ({e.problem})")
            continue
        except Exception as e:  # a reader's sniffer that breaks must not lose the collection
            notes.append(f"{name}: kept in the run folder, not analysed ({type(e).__name__}: {e})")
            continue
        paths[name] = path
    return paths, notes
