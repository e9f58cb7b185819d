"""Readers fill ``PerfData`` through its methods and its stores' methods only (issue 26 item 5).

The docstring of ``nodes.perf.model.PerfData`` says so; this test reads every module under
``nodes/perf/parsers/`` (its syntax tree, nothing is imported or run) and fails on a reader
that instead

* touches a private name of the model (``pd._string_ids``),
* assigns an attribute of the model (``pd.start_us = …``, ``pd.skipped_events += 1``) — the
  typed facts record's fields (``pd.facts.kernel = …``) are its API and allowed,
* writes into a store: a subscript assignment (``pd.meta["k"] = …``), a list or dict mutator
  (``pd.instants.append``, ``pd.processes.setdefault``, ``cols.ts.append``), or an attribute
  of something read out of one (``for _, info in pd.threads.items(): info.name = …``).

A model reference is a name ``pd`` / ``data`` (or an attribute ``.pd`` / ``.data``, or a
parameter annotated ``PerfData``); what is read out of one of its stores, or returned by
``thread`` / ``slice_columns``, is followed through local names within a function.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from nodes.perf.model import PerfData

ROOT = Path(__file__).resolve().parent.parent
PARSERS = ROOT / "nodes" / "perf" / "parsers"
#: The model's readers, which never write it at all (this check finds the writes it knows).
READERS_OF_THE_MODEL = (ROOT / "nodes" / "perf" / "metrics", ROOT / "nodes" / "perf" / "findings")

#: Methods that change a list, dict, set or array in place.
MUTATORS = frozenset({
    "append", "extend", "insert", "pop", "remove", "clear", "setdefault", "update", "sort", "reverse",
    "popitem", "discard", "frombytes", "fromlist", "fromunicode", "byteswap", "__setitem__",
    "__delitem__", "__iadd__",
})
#: PerfData methods that hand a reader a record to fill through the record's own methods.
HANDS_OUT = frozenset({"thread", "slice_columns"})
MODEL_NAMES = frozenset({"pd", "data"})


def _fields() -> set[str]:
    return set(vars(PerfData("x", "x", max_events=1)))


FIELDS = _fields()
#: The typed record of facts: its fields are assigned by the reader that knows them.
FACTS = "facts"


def _is_model(node: ast.AST, annotated: set[str]) -> bool:
    if isinstance(node, ast.Name):
        return node.id in MODEL_NAMES or node.id in annotated
    return isinstance(node, ast.Attribute) and node.attr in MODEL_NAMES


def _store_root(node: ast.AST, annotated: set[str], aliases: set[str]) -> bool:
    """``node`` reads a store of the model, something inside one, or a local name that does."""
    while True:
        if isinstance(node, ast.Name):
            return node.id in aliases
        if isinstance(node, ast.Attribute):
            if _is_model(node.value, annotated):
                return node.attr in FIELDS and node.attr != FACTS
            node = node.value
        elif isinstance(node, ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Attribute) and _is_model(f.value, annotated):
                return f.attr in HANDS_OUT
            if not isinstance(f, ast.Attribute):
                return False
            node = f.value
        else:
            return False


def _names(target: ast.AST) -> list[str]:
    """The local names a target binds (not ``self.x``: that is no alias of a store)."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for e in target.elts for n in _names(e)]
    if isinstance(target, ast.Starred):
        return _names(target.value)
    return []


class _Checker(ast.NodeVisitor):
    def __init__(self, where: str):
        self.where = where
        self.problems: list[str] = []
        self.annotated: set[str] = set()
        self.aliases: set[str] = set()

    def _bad(self, node: ast.AST, what: str) -> None:
        self.problems.append(f"{self.where}:{node.lineno}: {what}: {ast.unparse(node)[:90]}")

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        saved = (self.annotated, self.aliases)
        self.annotated = set(saved[0])
        self.aliases = set()
        for a in node.args.args + node.args.kwonlyargs + node.args.posonlyargs:
            if a.annotation is not None and "PerfData" in ast.unparse(a.annotation):
                self.annotated.add(a.arg)
        self.generic_visit(node)
        self.annotated, self.aliases = saved

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr.startswith("_") and not node.attr.startswith("__") and (
                _is_model(node.value, self.annotated) or _store_root(node.value, self.annotated, self.aliases)):
            self._bad(node, "a private name of the model")
        self.generic_visit(node)

    def _target(self, t: ast.AST) -> None:
        if isinstance(t, (ast.Tuple, ast.List)):
            for e in t.elts:
                self._target(e)
        elif isinstance(t, ast.Attribute):
            if _is_model(t.value, self.annotated):
                if t.attr in FIELDS:
                    self._bad(t, "assigns an attribute of the model")
            elif _store_root(t.value, self.annotated, self.aliases):
                self._bad(t, "assigns an attribute of something in a store")
        elif isinstance(t, ast.Subscript) and _store_root(t.value, self.annotated, self.aliases):
            self._bad(t, "writes into a store by subscript")

    def visit_Assign(self, node: ast.Assign) -> None:
        for t in node.targets:
            self._target(t)
        if _store_root(node.value, self.annotated, self.aliases):
            for t in node.targets:
                self.aliases.update(_names(t))
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._target(node.target)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._target(node.target)
        if node.value is not None and _store_root(node.value, self.annotated, self.aliases):
            self.aliases.update(_names(node.target))
        self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> None:
        for t in node.targets:
            self._target(t)
        self.generic_visit(node)

    def visit_For(self, node: ast.For) -> None:
        if _store_root(node.iter, self.annotated, self.aliases):
            self.aliases.update(_names(node.target))
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr in MUTATORS and not _is_model(f.value, self.annotated) \
                and _store_root(f.value, self.annotated, self.aliases):
            self._bad(node, f"changes a store with .{f.attr}()")
        self.generic_visit(node)


def problems_in(source: str, where: str = "<source>") -> list[str]:
    checker = _Checker(where)
    checker.visit(ast.parse(source))
    return checker.problems


def test_no_reader_writes_the_model_behind_its_methods():
    found: list[str] = []
    files = sorted(PARSERS.rglob("*.py"))
    assert len(files) > 20
    for path in files:
        found += problems_in(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    assert not found, "readers must fill PerfData through its methods:\n" + "\n".join(found)


def test_metrics_and_findings_do_not_write_the_model():
    found: list[str] = []
    for folder in READERS_OF_THE_MODEL:
        for path in sorted(folder.rglob("*.py")):
            found += problems_in(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    assert not found, "metrics read PerfData, they do not change it:\n" + "\n".join(found)


@pytest.mark.parametrize("source", [
    "def f(pd):\n    pd.instants.append((0.0, 1, 1, 'x'))",
    "def f(pd):\n    pd.meta['k'] = 'v'",
    "def f(self):\n    self.pd.skipped_events += 1",
    "def f(data):\n    data.start_us = 0.0",
    "def f(pd):\n    ids = pd._string_ids",
    "def f(pd):\n    pd.strings.ids['x'] = 3",
    "def f(pd):\n    info = pd.thread(1, 2)\n    info.name = 'main'",
    "def f(pd):\n    for (pid, tid), info in pd.threads.items():\n        info.is_main = True",
    "def f(pd):\n    cols = pd.slice_columns(1, 2)\n    cols.ts.append(1.0)",
    "def f(sink):\n    cols = sink.pd.slices.get((1, 2))\n    cols.dur.frombytes(b'')",
    "def f(pd):\n    fs = pd.frame_summary\n    fs['x'] = 1.0",
    "def f(out: PerfData):\n    out.processes.setdefault(1, 'p')",
    "def f(pd):\n    pd.counters.setdefault('c', []).append((0.0, 1.0))",
])
def test_the_check_catches_each_kind_of_write(source):
    assert problems_in(source)


@pytest.mark.parametrize("source", [
    "def f(pd):\n    pd.instants.add(0.0, 1, 1, 'x')\n    pd.meta.note('k', 'v')\n    pd.facts.kernel = 'Linux'",
    "def f(pd):\n    cols = pd.slice_columns(1, 2)\n    add_ts, add_dur, add_name = cols.appenders()\n    add_ts(1.0)",
    "def f(pd):\n    for (pid, tid), info in pd.threads.items():\n        if not info.name:\n"
    "            pd.set_thread_name(pid, tid, 'x')",
    "def f(pd):\n    n = len(pd.instants) + pd.strings.ids.get('x', 0)\n    pd.extend_bounds(0.0, 1.0)",
    "def f(data):\n    out = []\n    out.append(data.strings[0])",
])
def test_the_check_allows_the_methods(source):
    assert problems_in(source) == []


#: Float fields of the result types that are no time and carry no unit suffix, and why.
UNITLESS = {
    ("FrameStats", "fps"): "frames per second: the name is the unit",
    ("PageVitals", "lcp_size"): "px², as Chrome reports the LCP candidate's size",
    ("PageVitals", "cls"): "a layout-shift score (Lighthouse): no unit",
    ("PageVitals", "cls_main_frame"): "a layout-shift score (Lighthouse): no unit",
    ("SlowReason", "observed"): "a count or a share, as its ``expected`` text says",
}
UNIT_SUFFIXES = ("_ms", "_us", "_uws", "_uw", "_mhz", "_mb", "_mah", "_pct", "_ratio", "_share")


def _float_fields(tp, seen: set) -> list[tuple[type, str]]:
    import typing

    import msgspec

    if tp in seen:
        return []
    seen.add(tp)
    out = []
    for name, hint in typing.get_type_hints(tp).items():
        stack = [hint]
        while stack:
            t = stack.pop()
            if typing.get_args(t):
                stack += typing.get_args(t)
            elif isinstance(t, type) and issubclass(t, msgspec.Struct):
                out += _float_fields(t, seen)
        if hint in (float, float | None):
            out.append((tp, name))
    return out


def test_every_result_number_is_ms_or_names_its_unit():
    """The module docstring's unit rule, for every float of an AnalysisResult."""
    from nodes.perf.model import AnalysisResult

    fields = _float_fields(AnalysisResult, set())
    assert len(fields) > 60
    wrong = [f"{tp.__name__}.{name}" for tp, name in fields
             if not name.endswith(UNIT_SUFFIXES) and not name.startswith("share_of_")
             and "unit" not in tp.__struct_fields__ and (tp.__name__, name) not in UNITLESS]
    assert not wrong, f"name the unit of these (or convert them to ms): {wrong}"
    assert all(any(t.__name__ == k[0] and n == k[1] for t, n in fields) for k in UNITLESS)


def test_facts_are_shown_with_the_notes_in_the_order_the_reader_gave_them():
    from nodes.perf.model import PerfStatTarget

    pd = PerfData("x", "x", max_events=10)
    pd.meta.note("android_build", "google/x")
    pd.facts.android_sdk = 33
    pd.facts.kernel = "Linux 5.10"
    pd.meta.note("perfetto_version", "v25")
    pd.meta.note("package", "from the header")
    pd.facts.package = "com.demo.shop"  # a fact under a note's name: its text, the note's place
    pd.facts.perf_stat = [PerfStatTarget("pid", "7708"), PerfStatTarget("command", "./a.out", repeats=5)]
    assert list(pd.shown_meta().items()) == [
        ("android_build", "google/x"), ("android_sdk", "33"), ("kernel", "Linux 5.10"),
        ("perfetto_version", "v25"), ("package", "com.demo.shop"), ("runs", "2"), ("run 1 pid", "7708"),
        ("run 2 command", "./a.out"), ("run 2 repeats", "5"),
    ]
    assert "android_sdk" not in pd.meta and pd.facts.android_sdk == 33


def test_process_and_thread_names_are_one_string_per_name():
    """Names read again and again (a process tree per snapshot) are held once each; a name
    that is not a plain str is kept as given."""

    class Name(str):
        pass

    pd = PerfData("x", "x", max_events=10)
    pd.set_process_name(1, "".join(["app", ".x"]))
    pd.set_process_name(2, "".join(["app", ".", "x"]))
    pd.set_thread_name(1, 1, "".join(["Render", "Thread"]))
    pd.thread(2, 3)
    pd.name_threads({3: "".join(["Render", "Thr", "ead"])})
    assert pd.processes[1] == pd.processes[2] == "app.x" and pd.processes[1] is pd.processes[2]
    assert pd.threads[(1, 1)].name is pd.threads[(2, 3)].name == "RenderThread"
    odd = Name("app.x")
    pd.set_process_name(3, odd)
    assert pd.processes[3] is odd


def test_bulk_thread_adds_share_the_callers_key():
    """add_thread_state_totals and add_slice_rows create each new thread on the caller's own
    (pid, tid) tuple: the threads dict holds it once, not a copy beside each table's."""
    import numpy as np

    pd = PerfData("x", "x", max_events=100)
    key = (10**6, 10**6 + 1)  # ints beyond the small-int cache: distinct objects unless shared
    pd.add_thread_state_totals([key], [[5000, 0, 0]], ("running", "runnable", "sleeping"))
    [(k, info)] = pd.threads.items()
    assert k is key and info.pid is key[0] and info.tid is key[1]
    assert next(iter(pd.thread_states)) is key and pd.thread_states[key] == {"running": 5.0}
    pd.add_slice_rows(np.array([7]), np.array([8]), np.array([1.0]), np.array([2.0]), np.array([0]), ["n"])
    k2 = list(pd.threads)[1]
    assert k2 == (7, 8) and next(k for k in pd.slices if k == (7, 8)) is k2
