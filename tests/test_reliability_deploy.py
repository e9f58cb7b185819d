"""The LangGraph server configuration, checked as far as this machine allows (no Docker engine):
the CLI validates ``langgraph.json`` and generates the server image's Dockerfile offline, and the
team compose file wires the API server to its PostgreSQL and Redis."""

from __future__ import annotations

import subprocess
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
LANGGRAPH = ROOT / ".venv" / "bin" / "langgraph"
COMPOSE = ROOT / "deploy" / "docker-compose.yml"


def _cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    env = {"LANGGRAPH_CLI_NO_ANALYTICS": "1", "LANGGRAPH_NO_VERSION_CHECK": "1", "PATH": "/usr/bin:/bin"}
    return subprocess.run([str(LANGGRAPH), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def test_langgraph_json_is_valid_and_builds_a_dockerfile_for_the_graph(tmp_path):
    v = _cli("validate", "-c", "langgraph.json")
    assert v.returncode == 0 and "is valid" in v.stdout + v.stderr, v.stderr
    out = tmp_path / "Dockerfile"
    d = _cli("dockerfile", "-c", str(ROOT / "langgraph.json"), str(out))
    assert d.returncode == 0, d.stderr
    text = out.read_text()
    assert "FROM langchain/langgraph-api:3.11" in text
    # The image's path is named after the checkout's folder (CI clones into another name).
    assert f'"perfscout": "/deps/{ROOT.name}/app/studio.py:graph"' in text


def test_the_compose_file_wires_the_server_to_postgres_and_redis():
    doc = yaml.safe_load(COMPOSE.read_text())
    svc = doc["services"]
    api = svc["perfscout-api"]
    env = api["environment"]
    assert env["DATABASE_URI"].startswith("postgres://") and "@perfscout-postgres:5432/" in env["DATABASE_URI"]
    assert env["REDIS_URI"].startswith("redis://perfscout-redis:6379")
    assert set(api["depends_on"]) == {"perfscout-postgres", "perfscout-redis"}
    assert all(c["condition"] == "service_healthy" for c in api["depends_on"].values())
    assert svc["perfscout-postgres"]["healthcheck"] and svc["perfscout-redis"]["healthcheck"]
    # The server listens on 8000 in the image; PerfScout's state (decision log, runs) is on a volume.
    assert any(str(p).endswith(":8000") for p in api["ports"])
    assert env["PERFSCOUT_HOME"] == "/perfscout" and any(v.endswith(":/perfscout") for v in api["volumes"])
    # Every variable the compose file reads is documented in the example env file.
    example = (ROOT / "deploy" / "env.example").read_text()
    import re

    for var in set(re.findall(r"\$\{(\w+)", COMPOSE.read_text())):
        assert f"{var}=" in example, var
