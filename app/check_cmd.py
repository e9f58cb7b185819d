"""``perfscout check RUN_OR_TRACE``: gate a build on performance budgets (exit 1 when one fails).

RUN_OR_TRACE is what ``compare`` accepts as a side: a capture, an analysis or report, a folder or
glob of several traces (parsed in parallel, one process per core, and checked trace by trace), or
a thread. Budgets are found as :mod:`nodes.compare.budgets` says (``--budgets FILE``, else
``perfscout.toml``, else ``pyproject.toml``). With ``--baseline B``, ``regression.max_pct`` compares
the runs, pooled, with B's.

Exit codes: 0 every budget holds; 1 at least one fails (a missing metric fails unless
``--allow-missing``); 2 bad usage — an unknown budget key, an unreadable file, a baseline of
another kind — as one line naming it. ``--junit FILE`` writes one testcase per budget and run.
"""

from __future__ import annotations

import os
import sys
from typing import Any, TextIO

import orjson

from nodes.compare import junit
from nodes.compare.budgets import BudgetError, Budgets, Result, check_regression, check_run, failed, load_budgets
from nodes.compare.diff import MismatchError, check_kinds, side_samples
from nodes.compare.samples import extract
from nodes.compare.sides import Side, SideError, load_side

from app.exit_codes import ExitCode



class CheckError(ValueError):
    """Bad usage (exit 2): one line."""


def evaluate(side: Side, budgets: Budgets, baseline: Side | None, allow_missing: bool) -> list[Result]:
    """Every budget on every run, then the regression budget on the pooled runs."""
    results: list[Result] = []
    labels = [r.label for r in side.runs]
    for run in side.runs:
        label = run.label if labels.count(run.label) == 1 else run.source
        results += check_run(label, extract(run.analysis), budgets, allow_missing)
    if budgets.regression_max_pct is not None:
        if baseline is None:
            raise CheckError(f"{budgets.source}: regression.max_pct needs --baseline")
        cur, base = side_samples(side), side_samples(baseline)
        try:
            check_kinds(baseline, side, base, cur)
        except MismatchError as e:
            raise CheckError(str(e)) from None
        pooled = side.spec if len(side.runs) > 1 else side.runs[0].label
        results += check_regression(cur, base, budgets, pooled, allow_missing)
    return results


def table(results: list[Result], allow_missing: bool) -> str:
    rows = [("status", "budget", "value")]
    for r in results:
        st = {"pass": "PASS", "fail": "FAIL", "missing": "skip" if allow_missing else "MISSING"}[r.status]
        rows.append((st, r.name, r.message))
    w0 = max(len(r[0]) for r in rows)
    w1 = min(70, max(len(r[1]) for r in rows))
    return "\n".join(f"{a:<{w0}}  {b:<{w1}}  {c}" for a, b, c in rows)


def run(target: str, *, baseline: str | None = None, budgets_file: str | None = None, junit_path: str | None = None,
        allow_missing: bool = False, as_json: bool = False, runs_dir: str | None = None, cwd: str | None = None,
        stdout: TextIO | None = None) -> int:
    """The whole command; returns its exit code. Raises CheckError on bad usage."""
    stdout = stdout or sys.stdout
    try:
        budgets = load_budgets(budgets_file, cwd or os.getcwd())
        side = load_side(target, runs_dir=runs_dir)
        base = load_side(baseline, runs_dir=runs_dir) if baseline else None
    except (BudgetError, SideError) as e:
        raise CheckError(str(e)) from None
    results = evaluate(side, budgets, base, allow_missing)
    bad = failed(results, allow_missing)
    if junit_path:
        try:
            junit.write(junit_path, results, allow_missing)
        except OSError as e:
            raise CheckError(f"{junit_path}: cannot write the JUnit file ({e.strerror or e})") from None
    if as_json:
        doc: dict[str, Any] = {"budgets": budgets.source, "target": target, "baseline": baseline,
                               "passed": not bad, "results": [r.to_dict() for r in results]}
        stdout.write(orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        n_fail = sum(1 for r in results if r.status == "fail" or (r.status == "missing" and not allow_missing))
        stdout.write(table(results, allow_missing) + "\n")
        stdout.write(f"{len(results) - n_fail} of {len(results)} budgets hold ({budgets.source})"
                     + (f"; {n_fail} failed\n" if n_fail else "\n"))
    return ExitCode.FAILED if bad else ExitCode.OK
