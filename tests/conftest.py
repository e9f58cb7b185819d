"""Fixtures several test modules share (the helpers they share are in tests/helpers/)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.env import scrub


@pytest.fixture
def perfscout_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A scrubbed environment (tests/helpers/env.py) whose PerfScout state folder is
    ``tmp_path/home``: no model, no outside checkpoint store, no inherited setting."""
    return scrub(monkeypatch, tmp_path / "home")
