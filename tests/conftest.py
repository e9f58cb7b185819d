"""Fixtures several test modules share (the helpers they share are in tests/helpers/)."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from tests.helpers.env import scrub

# A suite started as a background job of a non-interactive shell (`make test &`, nohup … &)
# begins with SIGINT ignored, and every program it starts inherits that: the Ctrl-C tests
# (tests/test_collect_runner.py, tests/test_collect_guard.py, tests/test_stop_and_limit.py)
# would then send a SIGINT nobody can receive. A handler of our own is reset to the default in
# each program exec'd, so they get Ctrl-C as a user's terminal would deliver it.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture
def perfscout_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A scrubbed environment (tests/helpers/env.py) whose PerfScout state folder is
    ``tmp_path/home``: no model, no outside checkpoint store, no inherited setting."""
    return scrub(monkeypatch, tmp_path / "home")
