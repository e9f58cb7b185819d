"""docs/mcp.md: every JSON config snippet parses and starts `perfscout mcp` the way the server's
CLI accepts (the clients themselves — Claude Code, Cursor, VS Code — cannot run here)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "mcp.md"


def snippets(text: str) -> list[str]:
    return re.findall(r"```json\n(.*?)```", text, flags=re.S)


def servers(config: dict) -> dict:
    """The server table of either format: Claude Code / Cursor (mcpServers), VS Code (servers)."""
    assert ("mcpServers" in config) != ("servers" in config), config
    return config.get("mcpServers") or config["servers"]


def test_the_doc_has_a_snippet_per_client():
    text = DOC.read_text(encoding="utf-8")
    assert len(snippets(text)) >= 3
    assert "claude mcp add perfscout -- /abs/path/.venv/bin/perfscout mcp --workspace /abs/project" in text
    assert "## 中文说明" in text
    assert "write a script into the workspace and then profile it" in text


@pytest.mark.parametrize("snippet", snippets(DOC.read_text(encoding="utf-8")))
def test_each_json_snippet_parses_and_starts_perfscout_mcp(snippet):
    config = json.loads(snippet)
    entry = servers(config)["perfscout"]
    assert entry["command"].endswith("/perfscout") and Path(entry["command"]).is_absolute()
    args = entry["args"]
    assert args[0] == "mcp" and args[args.index("--workspace") + 1]
    assert entry.get("type", "stdio") == "stdio"
    assert all(isinstance(v, str) for v in entry.get("env", {}).values())


def test_the_documented_flags_are_the_command_s_flags():
    from typer.testing import CliRunner

    from app.cli import app

    out = CliRunner().invoke(app, ["mcp", "--help"], env={"COLUMNS": "200"}).output
    for flag in ("--workspace", "--allow-run", "--allow", "--offline"):
        assert flag in out
