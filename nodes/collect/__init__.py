"""Plain tools that run a program on this machine and record what it did.

The collector and startup nodes call these; nothing here knows about the graph. Every program
runs as an argv list under a wall-clock limit, in its own session so its whole process tree can
be stopped, with its output captured up to a bound (``runner``). Around it: py-spy for Python
stacks (``pyspy``), a psutil time series of the process tree (``sampler``), ``perf stat``
counters where perf works (``perfstat``), and repeated launches for start-up time (``launches``).
Failures are raised as ``nodes.framework.errors.ToolFailure`` with the ``ErrorKind`` the retry policy reads.
"""
