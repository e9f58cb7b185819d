"""docs/mcp.md against the code it documents: every JSON config snippet parses and starts
`perfscout mcp` the way the server's CLI accepts (the clients themselves — Claude Code, Cursor,
VS Code — cannot run here); the flags the doc uses are the command's and every flag of the command
is documented; the tool table names exactly the tools the server lists, with their arguments."""

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


def _command_flags() -> set[str]:
    from typer.main import get_command

    from app.cli import app

    command = get_command(app).commands["mcp"]  # type: ignore[attr-defined]
    return {o for p in command.params for o in p.opts if o.startswith("--") and o != "--help"}


def _documented_command_lines(text: str) -> list[list[str]]:
    """Every way the doc starts the server: `perfscout mcp …` lines and the JSON snippets' args."""
    lines = [re.findall(r"--[a-z][a-z-]*", m) for m in re.findall(r"perfscout mcp( [^`\n]*)", text)]
    for snippet in snippets(text):
        lines.append(servers(json.loads(snippet))["perfscout"]["args"][1:])
    return lines


def test_every_flag_the_doc_uses_is_one_of_the_command_s_and_every_flag_is_documented():
    text = DOC.read_text(encoding="utf-8")
    flags = _command_flags()
    used = {a for line in _documented_command_lines(text) for a in line if a.startswith("--")}
    assert used and used <= flags, used - flags
    undocumented = {f for f in flags if not re.search(f"`{f}[` ]", text)}  # named as `--flag` or `--flag ARG`
    assert undocumented == set()


def _tool_table(text: str) -> dict[str, str]:
    """The rows of the doc's tool table: tool name → its arguments cell."""
    table = text.split("| tool | arguments | what it returns |", 1)[1].split("\n\n", 1)[0]
    rows = [line.split(" | ") for line in table.splitlines() if line.startswith("| `")]
    return {row[0].strip("| `"): row[1] for row in rows}


def test_the_tool_table_lists_exactly_the_server_s_tools_and_their_arguments(tmp_path):
    import anyio

    from app.mcp.options import ServerOptions
    from app.mcp.server import build_server

    tools = anyio.run(build_server(ServerOptions(workspace=tmp_path)).list_tools)
    documented = _tool_table(DOC.read_text(encoding="utf-8"))
    assert set(documented) == {t.name for t in tools}
    for t in tools:
        args = set(re.findall(r"`(\w+)`", documented[t.name]))
        assert set(t.input_schema["properties"]) <= args, (t.name, set(t.input_schema["properties"]) - args)
