"""`perfscout analyze` loads numpy with OpenBLAS kept to one thread (app/cli.py
``_import_numpy_one_blas_thread``): no BLAS threads spinning beside the reader, nothing left in
the environment for a child to inherit, and a user's own ``OPENBLAS_NUM_THREADS`` respected.

Each case runs in a fresh interpreter (numpy loads once per process) and reports the process's
threads from /proc, the only place the BLAS threads show."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.env import scrubbed_environ

ROOT = Path(__file__).resolve().parent.parent
TRACE = str(ROOT / "tests/data/perfetto/api32_startup_warm.perfetto-trace")

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="needs Linux /proc to count threads")

#: What the process looks like right after numpy loads: its threads and the variable.
_REPORT = "import json, os; print(json.dumps([len(os.listdir('/proc/self/task')), os.environ.get('OPENBLAS_NUM_THREADS')]))"

#: `perfscout analyze FILE` as the console script runs it, the analysis replaced by the report,
#: so what is seen is the state the real analysis would start in.
_ANALYZE = f"""
import sys
import app.analyze_cmd
def run(paths, as_json, **options):
    import numpy  # loaded already, or loaded here as the analysis would load it
    {_REPORT}
    return 0
app.analyze_cmd.run = run
from app.cli import main
sys.argv = ["perfscout", "analyze", {TRACE!r}]
main()
"""


def _child(code: str, **env: str) -> list:
    environ = scrubbed_environ(**env)
    if "OPENBLAS_NUM_THREADS" not in env:
        environ.pop("OPENBLAS_NUM_THREADS", None)
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=environ, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="OpenBLAS starts one thread per core: one core shows nothing")
def test_plain_numpy_starts_blas_threads_here():
    """The control: without the helper, numpy brings threads of its own on this machine, so the
    cases below can tell the difference."""
    threads, var = _child(f"import numpy\n{_REPORT}")
    assert threads > 1 and var is None


def test_analyze_starts_with_numpy_loaded_on_one_thread_and_the_variable_gone():
    threads, var = _child(_ANALYZE)
    assert threads == 1
    assert var is None  # a program a later step starts does not inherit it


def test_a_users_own_setting_is_kept():
    threads, var = _child(f"from app.cli import _import_numpy_one_blas_thread as f\nf()\nimport numpy\n{_REPORT}",
                          OPENBLAS_NUM_THREADS="2")
    assert var == "2"
    assert threads == min(2, os.cpu_count() or 1)
