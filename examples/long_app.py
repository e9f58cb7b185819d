"""A program that runs for minutes: a CPU loop in ``work`` beside a child process (``sleep``,
not Python, so py-spy's stacks are the loop's).

For trying Ctrl-C and the run limit (docs/collector.md): ``perfscout ask "帮我全面分析一下
examples/long_app.py" --allow-run`` is stopped at the limit (``PERFSCOUT_RUN_TIMEOUT``, default
30 s) and profiled for it. With ``LONG_APP_PIDS=FILE`` in its environment it writes its child's
pid and its own there once running, so tests/test_stop_and_limit.py and benchmarks/ctrl_c.py can
check the whole tree is gone.
"""

import os
import subprocess
import time

child = subprocess.Popen(["sleep", "600"])
if os.environ.get("LONG_APP_PIDS"):
    with open(os.environ["LONG_APP_PIDS"], "w") as f:
        f.write(f"{child.pid} {os.getpid()}")


def work(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


t0 = time.time()
while time.time() - t0 < 600:
    work(200000)
