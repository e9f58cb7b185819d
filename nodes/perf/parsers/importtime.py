"""``python -X importtime`` logs (stderr): one line per imported module, children first.

    import time: self [us] | cumulative | imported package
    import time:       130 |        130 |   _io
    import time:       446 |       1030 | site

The indentation of the name (two spaces a level) is the import depth; ``cumulative`` includes
the children. Lines that are not import-time lines (the program's own stderr) are ignored. A
log holding several runs (the header repeated) yields the first run; the other runs' totals
are in ``stats`` (``import total run N``). A first line ``# search path: ["<dir>", …]`` (the
collector writes the script's folder there) puts those folders first in the lookup below.

Each module's file is looked up without importing anything (``importlib.machinery.PathFinder``
on the search path: the log's interpreter may not be this one, and importing user code while
analysing is out of the question); modules that are built in, frozen or not found have none.
The search path is the log's own ``# search path`` line followed by what the caller passes in
(:func:`nodes.perf.analysis.module_search_path`): never this process's ``sys.path`` or current
directory on its own, so the same log reads the same wherever PerfScout runs.
"""

from __future__ import annotations

import importlib.machinery
import json
import os
import re
import sys
from typing import Iterable, Sequence

from nodes.perf.errors import PerfDataError
from nodes.perf.formats import looks_text, open_text
from nodes.perf.model import ImportEntry, PerfData

FORMAT = "importtime"

_LINE = re.compile(r"^\s*import time:\s+(?P<self>\d+)\s+\|\s+(?P<cum>\d+)\s+\| (?P<indent>\s*)(?P<name>\S.*?)\s*$", re.ASCII)
_HEADER = re.compile(r"^\s*import time:\s+self \[us\]")
_SNIFF = re.compile(rb"import time:\s+(?:self \[us\]|\d+\s+\|)")
#: The collector's first line: the folders the program's own modules live in (JSON list).
_HINT = "# search path: "


def sniff(head: bytes, name: str) -> bool:
    return looks_text(head) and bool(_SNIFF.search(head))


def parse(path: str) -> PerfData:
    return parse_with(path)


def parse_with(path: str, search_path: Sequence[str] | None = None, resolve_files: bool = True) -> PerfData:
    """Read an importtime log; module files are looked up on the log's ``# search path`` folders,
    then ``search_path`` (none given: the log's folders only)."""
    hint: list[str] = []
    with open_text(path) as f:
        runs = _runs(f, hint)
    runs = [r for r in runs if r]
    if not runs:
        raise PerfDataError(path, "no 'import time:' lines (run python with -X importtime, keep stderr)")
    pd = PerfData(FORMAT, path)
    entries = runs[0]
    if hint:
        # the collector's "# search path: [...]" line: the program's own folder comes first
        pd.meta.note("search path", json.dumps(hint)[:300])
    resolver = _Resolver(hint + [str(p) for p in (search_path or ()) if p]) if resolve_files else None
    total = 0.0
    for module, self_us, cum_us, depth in entries:
        file = resolver.file_of(module) if resolver else None
        pd.add_import(ImportEntry(module=module, self_us=self_us, cumulative_us=cum_us, depth=depth, file=file))
        if depth == 0:
            total += cum_us
    pd.extend_bounds(0.0, total)
    pd.add_stat("import total", total / 1000.0, "ms")
    pd.add_stat("modules imported", float(len(entries)))
    if len(runs) > 1:
        pd.meta.note("import runs", str(len(runs)))
        pd.warn(f"{len(runs)} runs in the log: the first is analysed, the others' totals are in stats")
        for i, run in enumerate(runs, 1):
            pd.add_stat(f"import total run {i}", sum(c for _, _, c, d in run if d == 0) / 1000.0, "ms")
    return pd


def _runs(lines: Iterable[str], hint: list[str] | None = None) -> list[list[tuple[str, float, float, int]]]:
    runs: list[list[tuple[str, float, float, int]]] = [[]]
    for line in lines:
        if "import time:" not in line:
            if hint is not None and line.startswith(_HINT):
                try:
                    dirs = json.loads(line[len(_HINT):])
                except ValueError:
                    dirs = None
                if isinstance(dirs, list):
                    hint.extend(str(d) for d in dirs if isinstance(d, str) and d)
            continue
        if _HEADER.match(line):
            if runs[-1]:
                runs.append([])
            continue
        m = _LINE.match(line)
        if not m:
            continue
        depth = len(m.group("indent")) // 2
        runs[-1].append((m.group("name"), float(m.group("self")), float(m.group("cum")), depth))
    return runs


class _Resolver:
    def __init__(self, search_path: Sequence[str]):
        self.path = [str(p) for p in search_path]
        self.specs: dict[str, object | None] = {}

    def _spec(self, name: str):
        if name in self.specs:
            return self.specs[name]
        spec = None
        try:
            if "." in name:
                parent = self._spec(name.rpartition(".")[0])
                locs = getattr(parent, "submodule_search_locations", None)
                if locs:
                    spec = importlib.machinery.PathFinder.find_spec(name, list(locs))
            else:
                if name in sys.builtin_module_names:
                    spec = None
                else:
                    spec = importlib.machinery.PathFinder.find_spec(name, self.path)
        except (ImportError, ValueError, OSError, AttributeError, TypeError):
            spec = None
        self.specs[name] = spec
        return spec

    def file_of(self, module: str) -> str | None:
        spec = self._spec(module)
        origin = getattr(spec, "origin", None) if spec is not None else None
        if isinstance(origin, str) and origin not in ("built-in", "frozen") and os.path.isfile(origin):
            return origin
        return None
