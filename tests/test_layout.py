"""The tree reads as the README's layout section says (README.md, "Layout").

``nodes/``'s top holds the graph's nodes only — one module per ``graph.enums.Node`` member — so a
newcomer can tell which files are the graph; the node framework and the run stages' helpers are
subpackages beside them. And no checkout may carry a virtual environment: a branch once
committed a ``.venv`` symlink, which breaks every other machine's ``make``.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from graph.enums import Node

REPO = Path(__file__).resolve().parent.parent


def test_the_top_of_nodes_is_one_module_per_node():
    modules = {p.stem for p in (REPO / "nodes").glob("*.py")} - {"__init__"}
    assert modules == {n.value for n in Node}


def test_each_node_module_builds_its_node():
    import importlib

    for n in Node:
        assert callable(getattr(importlib.import_module(f"nodes.{n.value}"), "make")), n


def test_git_tracks_nothing_named_venv():
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    names = [p for p in tracked.decode("utf-8", "surrogateescape").split("\0") if p]
    assert names, "git ls-files listed nothing: is this a checkout?"
    offenders = [p for p in names if any(part in (".venv", "venv") for part in Path(p).parts)]
    assert offenders == []


def test_no_two_tracked_paths_collide_on_a_case_insensitive_checkout():
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    names = [p for p in tracked.decode("utf-8", "surrogateescape").split("\0") if p]
    seen: dict[str, str] = {}
    clashes = []
    for p in names:
        if p.lower() in seen and seen[p.lower()] != p:
            clashes.append((seen[p.lower()], p))
        seen.setdefault(p.lower(), p)
    assert clashes == []
