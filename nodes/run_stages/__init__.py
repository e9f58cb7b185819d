"""What the two stages that run programs (the collector and startup nodes) share, beside them:
permission for the exact program, the question back, the run folder and the measurement
(``local_run``), and the startup stage's two-program race (``startup_ab``). These build state
updates (``nodes/framework/common.py``), so they are node code, not a toolkit.
"""
