"""The command line documents itself (issue 28 item 5): every option and argument of every
command has help text, the help survives Rich's markup, `--version` works, and `threads list`
lines up its columns."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer.main

from app.cli import app
from app.threads import ThreadSummary
from app.threads_cmd import format_list

PERFSCOUT = Path(sys.executable).with_name("perfscout")


def _commands(group, prefix: str = ""):
    for name, cmd in group.commands.items():
        if getattr(cmd, "hidden", False):
            continue
        if hasattr(cmd, "commands"):  # a group (typer ships its own click: no isinstance)
            yield from _commands(cmd, f"{prefix}{name} ")
        else:
            yield f"{prefix}{name}", cmd


def test_every_option_and_argument_has_help():
    root = typer.main.get_command(app)
    missing = [f"{name} {p.name}" for name, cmd in _commands(root) for p in cmd.params
               if not getattr(p, "help", None)]
    assert missing == []
    assert all(cmd.help for _, cmd in _commands(root))


def _run(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PERFSCOUT_", "OPENAI_"))}
    env.update(COLUMNS="200", TERM="dumb")
    return subprocess.run([str(PERFSCOUT), *args], capture_output=True, text=True, env=env, timeout=60)


@pytest.mark.skipif(not PERFSCOUT.exists(), reason="the perfscout console script is not installed")
def test_version_and_markup_in_help():
    from importlib.metadata import version

    p = _run("--version")
    assert p.returncode == 0 and p.stdout.strip() == f"perfscout {version('perfscout')}"
    text = _run("check", "--help").stdout
    assert "[budgets]" in text and "[tool.perfscout.budgets]" in text


def test_threads_list_columns_line_up_whatever_the_id_lengths():
    rows = [ThreadSummary(thread_id="t1", updated="2026-12-01T10:00:00", status="done", route="analyze",
                          last_request="解读一下 a.json"),
            ThreadSummary(thread_id="a-much-longer-thread-id", updated="2026-12-01T10:01:00", status="needs_input",
                          route="end", last_request="x"),
            ThreadSummary(thread_id="crash", updated="2026-12-01T10:02:00", status="incomplete",
                          stopped_before="collector", route="full_analysis", last_request="y")]
    lines = format_list(rows).splitlines()
    assert lines[0].split() == ["thread", "updated", "status", "route", "request"]
    for word in ("updated", "status", "route", "request"):
        col = lines[0].index(word)
        assert all(line[col - 2:col] == "  " and line[col] != " " for line in lines[1:]), (word, lines)


def test_the_readme_command_table_names_every_option():
    """README "Command line": each command's row(s) name every option it takes."""
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    table = readme.split("\n## Command line\n", 1)[1].split("\n### ", 1)[0]
    root = typer.main.get_command(app)
    missing = []
    for name, cmd in _commands(root):
        rows = [ln for ln in table.splitlines() if f"perfscout {name}" in ln]
        if not rows:
            missing.append(name)
            continue
        for p in cmd.params:
            if p.param_type_name == "option" and p.opts[0] != "--help" and not any(p.opts[0] in r for r in rows):
                missing.append(f"{name} {p.opts[0]}")
    assert missing == []
