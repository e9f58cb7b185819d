"""Benchmarks: speed and quality figures, each measured beside a baseline in the same run.

Run all with ``make bench`` (``python -m benchmarks``) or one with ``python -m benchmarks.<name>``.
Timing never decides a test; these print ratios for the README.
"""
