"""The notebooks run headless, top to bottom, so they never rot.

Each is executed in a fresh kernel with nbclient; a cell that raises (including the notebooks'
own asserts on what they show) fails the test. PERFSCOUT_HOME points at a temporary folder and
no model is configured, so the run is offline and leaves nothing in the repository.
"""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from tests.helpers.env import scrub

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"


def execute(name: str, tmp_path: Path, monkeypatch) -> nbformat.NotebookNode:
    scrub(monkeypatch, tmp_path / "home")
    monkeypatch.setenv("PERFSCOUT_OFFLINE", "1")
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    client = NotebookClient(
        nb,
        timeout=120,
        kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOKS)}},
    )
    client.execute()
    return nb


def outputs(nb: nbformat.NotebookNode) -> str:
    text = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            text.append(out.get("text", ""))
            data = out.get("data", {})
            text.append(data.get("text/html", "") + data.get("text/plain", ""))
    return "\n".join(text)


def test_notebooks_are_committed_without_outputs():
    for path in NOTEBOOKS.glob("*.ipynb"):
        nb = nbformat.read(path, as_version=4)
        nbformat.validate(nb)
        assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), path.name


def test_routing_policy_notebook(tmp_path, monkeypatch):
    nb = execute("routing_policy.ipynb", tmp_path, monkeypatch)
    shown = outputs(nb)
    assert "reject" in shown and "delete_everything" in shown
    assert "decisions replayed, 0 differ" in shown
    assert not (ROOT / ".perfscout" / "older-decisions.jsonl").exists()


def test_quickstart_notebook(tmp_path, monkeypatch):
    nb = execute("quickstart.ipynb", tmp_path, monkeypatch)
    shown = outputs(nb)
    assert "done analyze" in shown
    assert "tiny_trace.json" in shown
    assert "<iframe srcdoc=" in shown or "no HTML report" in shown
    assert os.path.isdir(tmp_path / "home")  # its threads went to the temporary home
