"""Processes a test started or watches."""

from __future__ import annotations

import psutil


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie — exited, not yet reaped — does not)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
