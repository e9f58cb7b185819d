"""``perfscout compare A B``: what changed from A to B, and whether it is real.

A and B are each the runs of one build: a capture, a report folder, an analysis JSON, a folder or
glob of several runs, or a thread name (its newest report). The comparison
(:mod:`nodes.compare.diff`) is printed as a Markdown table (or, ``--json``, as one JSON document)
and written like any report — ``compare.md``, ``compare.html``, ``compare.json`` in a fresh folder
(``--out`` or ``<runs>/compare/<time>/``), each file atomic. Bad input — a side that cannot be
read, sides of different kinds — is one line naming it, exit 2.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, TextIO

import orjson

from nodes.compare.diff import Comparison, MismatchError, compare_sides
from nodes.compare.render import render_markdown, to_json_bytes, write_comparison
from nodes.compare.sides import SideError, load_side
from nodes.report.output import report_dir

from app.exit_codes import ExitCode



class CompareError(ValueError):
    """One line for the user (exit 2)."""


def build(a: str, b: str, runs_dir: str | None) -> Comparison:
    try:
        return compare_sides(load_side(a, runs_dir=runs_dir), load_side(b, runs_dir=runs_dir))
    except (SideError, MismatchError) as e:
        raise CompareError(str(e)) from None


def run(a: str, b: str, *, runs_dir: str, out: str | None = None, as_json: bool = False,
        stdout: TextIO | None = None) -> dict[str, Any]:
    """Compare, write the files, print the table (or the JSON). Raises CompareError."""
    stdout = stdout or sys.stdout
    cmp = build(a, b, runs_dir)
    folder = Path(out) if out else report_dir(None, runs_dir, "compare")
    written = write_comparison(cmp, folder)
    if as_json:
        doc = orjson.loads(to_json_bytes(cmp))
        doc["report"] = written
        stdout.write(orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        stdout.write(render_markdown(cmp) + f"\nReport: {written['html']}\n")
    return written
