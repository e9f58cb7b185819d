"""The optional C parts (setup.py builds them; each has a Python/numpy reference that gives the
same results): :func:`compiled` loads one, or says to use the reference. Its own module, without
imports of its own, so that the metrics ask for theirs without loading the Perfetto reader."""

from __future__ import annotations

import importlib
import os


def compiled(module: str):
    """The C part ``module`` (a dotted name, e.g. ``nodes.perf.parsers._wirec``), or None: not
    built, or ``PERFSCOUT_PURE_PYTHON_WIRE=1`` — then the caller uses its Python reference. The
    one place that switch is read, for every C part."""
    if os.environ.get("PERFSCOUT_PURE_PYTHON_WIRE") == "1":
        return None
    try:
        return importlib.import_module(module)
    except ImportError:
        return None
