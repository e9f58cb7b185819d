"""Dependencies point one way: the policies and the toolkits import no framework.

graph.enums, graph.policy, graph.stages, graph.payloads and every module of the toolkits
(nodes/perf, collect, code, android, report, routing) are imported in a fresh interpreter;
none may load LangGraph or LangChain. A model-calling module (the router's model tier, the
explorer's planner, the attribution pick, the narrative) imports LangChain only when it calls
a model. State updates are built in nodes/*.py only; toolkits raise nodes.errors exceptions.
"""

from __future__ import annotations

import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FRAMEWORK = ("langgraph", "langchain_core", "langchain_openai", "langchain")
TOOLKITS = ["nodes.perf", "nodes.collect", "nodes.code", "nodes.android", "nodes.report", "nodes.routing"]


def _modules(package: str) -> list[str]:
    path = REPO / package.replace(".", "/")
    return [package] + [f"{package}.{m.name}" for m in pkgutil.walk_packages([str(path)], "") if not m.name.startswith("_")]


def _loaded_framework(modules: list[str]) -> list[str]:
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}:\n"
        "    importlib.import_module(m)\n"
        f"print(sorted({{m.split('.')[0] for m in sys.modules if m.split('.')[0] in {FRAMEWORK!r}}}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return eval(out.stdout.strip())  # noqa: S307 - our own printed list


@pytest.mark.parametrize("modules", [["graph.enums", "graph.policy", "graph.stages", "graph.payloads"]], ids=["graph"])
def test_the_policies_import_no_framework(modules):
    assert _loaded_framework(modules) == []


@pytest.mark.parametrize("package", TOOLKITS)
def test_each_toolkit_imports_no_framework(package):
    assert _loaded_framework(_modules(package)) == [], f"{package} loads the framework at import"


@pytest.mark.parametrize("package", TOOLKITS)
def test_toolkits_build_no_state_updates(package):
    """The shapes of a state update (stamp, failure, skip, say) are nodes/common.py's, used by
    node modules only; a toolkit that needs one raises a nodes.errors exception instead."""
    offenders = []
    for py in (REPO / package.replace(".", "/")).rglob("*.py"):
        text = py.read_text(encoding="utf-8")
        if "from nodes.common import" in text or "import nodes.common" in text:
            offenders.append(str(py.relative_to(REPO)))
    assert offenders == []
