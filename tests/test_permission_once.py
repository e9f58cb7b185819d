"""Permission is decided once (issue 26 item 2): graph/permission.py ``decide``.

The run gate, the allowlist and the device test used to be re-derived in the collector's and
the start-up race's stage code and in the API (which also copied the policy's device test), and
could drift apart. These checks read the source of app/, graph/ and nodes/ and fail when a copy
reappears: a branch on a proposal's gate, a device test, or an allowlist lookup anywhere but the
places that feed ``decide``. Then ``decide`` itself, over its whole input space, against the rules
of docs/permission.md written out here.
"""

from __future__ import annotations

import ast
import itertools
from pathlib import Path

from graph.enums import Permission, RunGate
from graph.permission import decide, is_device_target, needs_permission

ROOT = Path(__file__).resolve().parent.parent
PERMISSION = "graph/permission.py"
#: The one place the allowlist is looked up for a decision (it reads the file system).
ALLOWLIST_LOOKUP = "nodes/run_stages/local_run.py"


def _sources():
    for pkg in ("app", "graph", "nodes"):
        for path in sorted((ROOT / pkg).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            yield rel, ast.parse(path.read_text(encoding="utf-8"), filename=rel)


def test_no_stage_or_shell_branches_on_a_proposals_gate_itself():
    """``RunGate.PROPOSED / DECLINED / FORBIDDEN`` are read by ``decide`` only."""
    found = []
    for rel, tree in _sources():
        if rel in (PERMISSION, "graph/enums.py"):
            continue
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "RunGate"
                    and node.attr in ("PROPOSED", "DECLINED", "FORBIDDEN")):
                found.append(f"{rel}:{node.lineno} RunGate.{node.attr}")
    assert not found, f"permission re-derived outside {PERMISSION}: {found}"


def test_the_device_test_is_written_once():
    """``package and not target`` (a device measurement runs nothing here) lives in graph/permission.py."""
    found = []
    for rel, tree in _sources():
        if rel == PERMISSION:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and "device_target" in node.name:
                found.append(f"{rel}:{node.lineno} def {node.name}")
            if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
                text = ast.unparse(node)
                if "'package'" in text and "not" in text and "'target'" in text:
                    found.append(f"{rel}:{node.lineno} {text}")
    assert not found, f"a copy of graph/permission.py is_device_target: {found}"


def test_the_allowlist_is_looked_up_in_one_place():
    calls = []
    for rel, tree in _sources():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                fn = node.func
                name = fn.id if isinstance(fn, ast.Name) else fn.attr if isinstance(fn, ast.Attribute) else ""
                if name == "is_allowlisted":
                    calls.append(rel)
    assert calls == [ALLOWLIST_LOOKUP], calls


def test_decide_over_its_whole_input_space():
    seen = set()
    for gate, allow_run, allowlisted in itertools.product(RunGate, (False, True), (False, True)):
        got = decide(gate, allow_run=allow_run, allowlisted=allowlisted)
        seen.add(got)
        if gate is RunGate.FORBIDDEN:
            want = Permission.REFUSED_SHAPE  # never, confirmed or not, whatever the flags
        elif gate is RunGate.DECLINED:
            want = Permission.DECLINED
        elif gate is RunGate.PROPOSED:
            want = Permission.CONFIRM  # --allow-run and the allowlist never confirm a proposal
        elif gate is RunGate.CONFIRMED:
            want = Permission.RUN  # the confirmation is the permission
        elif allow_run:
            want = Permission.RUN
        else:
            want = Permission.ALLOWLISTED if allowlisted else Permission.REFUSED
        assert got is want, (gate, allow_run, allowlisted, got)
    assert seen == set(Permission)  # every verdict is reachable, none is dead


def test_a_device_measurement_needs_no_permission():
    assert is_device_target({"package": "com.demo.shop"})
    assert is_device_target({"package": "com.demo.shop", "target": "  "})
    assert not is_device_target({"package": "com.demo.shop", "target": "app.py"})
    assert not is_device_target({"target": "app.py"})
    assert not needs_permission(True, {"package": "com.demo.shop"})
    assert needs_permission(True, {"target": "app.py"}) and not needs_permission(False, {"target": "app.py"})
