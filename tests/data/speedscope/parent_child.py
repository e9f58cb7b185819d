"""A parent that burns CPU, then runs a child Python process that burns CPU too.

Profiled with ``py-spy record --subprocesses`` so the capture holds two processes, each of whose
stacks starts with py-spy's ``process <pid>:"<command line>"`` root frame.
"""

import subprocess
import sys
import time


def spin(seconds: float) -> int:
    end = time.perf_counter() + seconds
    n = 0
    while time.perf_counter() < end:
        n += 1
    return n


def child_work() -> None:
    spin(0.4)


def parent_work() -> None:
    spin(0.4)
    subprocess.run([sys.executable, __file__, "child"], check=True)


if __name__ == "__main__":
    child_work() if sys.argv[1:] == ["child"] else parent_work()
