"""Dependencies point one way: the policies and the toolkits import no framework.

graph.enums, graph.policy, graph.stages, graph.payloads and every module of the toolkits
(nodes/perf, collect, code, android, report, routing) are imported in a fresh interpreter;
none may load LangGraph or LangChain. A model-calling module (the router's model tier, the
explorer's planner, the attribution pick, the narrative) imports LangChain only when it calls
a model. State updates are built in nodes/*.py only; toolkits raise nodes.framework.errors exceptions.
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
    """The shapes of a state update (stamp, failure, skip, say) are nodes/framework/common.py's, used by
    node modules only; a toolkit that needs one raises a nodes.framework.errors exception instead."""
    offenders = []
    for py in (REPO / package.replace(".", "/")).rglob("*.py"):
        text = py.read_text(encoding="utf-8")
        if "from nodes.framework.common import" in text or "import nodes.framework.common" in text:
            offenders.append(str(py.relative_to(REPO)))
    assert offenders == []


def test_the_analyze_path_imports_no_pydantic():
    """`perfscout analyze` is a quick command (issue 15: ≤ 0.5 s wall on a 100 KB trace);
    pydantic and its models cost ~200 ms to import, so the analysis result types are msgspec
    Structs (nodes/perf/result.py). Checked by analysing real data of five readers, text and
    JSON output, in a fresh interpreter."""
    traces = [str(REPO / "tests" / "data" / p) for p in (
        "perf/viztracer-multithread.json", "perfetto/api24_startup_cold.perfetto-trace", "speedscope/pyspy-subprocesses.speedscope.json",
        "perf/importtime-json-csv-argparse.log", "perf/collection-slow_app/psutil-series.json")]
    code = (
        "import io, sys\n"
        "import nodes.perf.analysis, app.analyze_cmd\n"
        "before = sorted(m for m in sys.modules if m.split('.')[0] in ('pydantic', 'pydantic_core'))\n"
        f"for t in {traces!r}:\n"
        "    for as_json in (True, False):\n"
        "        assert app.analyze_cmd.run(t, as_json=as_json, out=io.StringIO(), err=sys.stderr) == 0, t\n"
        "print(before, sorted(m for m in sys.modules if m.split('.')[0] in ('pydantic', 'pydantic_core')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["[]", "[]"]


def test_offline_routing_imports_no_numpy_and_no_http_client(tmp_path):
    """`perfscout route --offline` is the other quick command: the classifier scores in plain
    Python from its numpy-free cache (numpy and sklearn load only to train) and httpx loads only
    with a model configured. Checked through the command's own code path, trained cache first."""
    code = (
        "import io, sys\n"
        "from app.cli import main\n"
        "sys.argv = ['perfscout', 'route', '--offline', 'dump meminfo of com.demo.shop']\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as e:\n"
        "    assert e.code in (0, None), e.code\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'numpy', 'sklearn', 'httpx', 'pydantic', 'langgraph'}),"
        " file=sys.stderr)\n"
    )
    env = {"PERFSCOUT_CACHE_DIR": str(tmp_path), "PERFSCOUT_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"}
    train = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300, env=env)
    assert train.returncode == 0, train.stderr
    assert "numpy" in train.stderr.splitlines()[-1]  # the first use trains, with numpy and sklearn
    warm = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120, env=env)
    assert warm.returncode == 0, warm.stderr
    assert warm.stderr.strip().splitlines()[-1] == "[]"
    assert '"route": "android"' in warm.stdout
