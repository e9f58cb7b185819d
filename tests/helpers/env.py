"""The environment a test runs PerfScout in: none of the user's own model or store settings.

A developer's shell may set ``OPENAI_API_KEY`` (a test would call a real model), a
``PERFSCOUT_CHECKPOINT_URL`` (it would write into their store) or any other ``PERFSCOUT_*``
setting (a cap, a timeout) that changes what a test measures; a ``LANGSMITH_API_KEY`` would
send every run to LangSmith. Every test that runs PerfScout,
in its own process or in a child, starts from the same scrubbed environment.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

#: Variables no test inherits: the model's (langchain-openai), PerfScout's settings, and
#: LangSmith/LangChain tracing (a key there would upload every run).
SCRUBBED_PREFIXES = ("OPENAI_", "PERFSCOUT_", "LANGSMITH_", "LANGCHAIN_")


def scrubbed_environ(**extra: str) -> dict[str, str]:
    """For a child process: this process's environment without the scrubbed variables, plus
    ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(SCRUBBED_PREFIXES)}
    env.update(extra)
    return env


def scrub(monkeypatch: pytest.MonkeyPatch, home: Path) -> Path:
    """For this process: unset the scrubbed variables (restored after the test) and give
    PerfScout ``home`` as its state folder (PERFSCOUT_HOME). Returns ``home``."""
    for var in [k for k in os.environ if k.startswith(SCRUBBED_PREFIXES)]:
        monkeypatch.delenv(var)
    monkeypatch.setenv("PERFSCOUT_HOME", str(home))
    return home
