"""JUnit XML for ``perfscout check``: one ``<testcase>`` per budget and run, as CI systems show tests.

The shape is the common subset GitHub Actions reporters, GitLab and Jenkins read:
``<testsuites><testsuite name tests failures skipped><testcase classname name time>`` with a
``<failure message type>`` child for a failed budget, and ``<skipped message>`` for a missing
metric that ``--allow-missing`` allows (a missing metric that is not allowed is a failure).
Written atomically (nodes/report/output.py), so CI never reads half a file.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Sequence

from nodes.compare.budgets import Result
from nodes.report.output import write_atomic


def to_xml(results: Sequence[Result], allow_missing: bool, suite: str = "perfscout check") -> bytes:
    failures = sum(1 for r in results if r.status == "fail" or (r.status == "missing" and not allow_missing))
    skipped = sum(1 for r in results if r.status == "missing" and allow_missing)
    root = ET.Element("testsuites", name=suite, tests=str(len(results)), failures=str(failures))
    ts = ET.SubElement(root, "testsuite", name=suite, tests=str(len(results)), failures=str(failures),
                       errors="0", skipped=str(skipped))
    for r in results:
        tc = ET.SubElement(ts, "testcase", classname=f"perfscout.budgets.{r.run}", name=r.name, time="0")
        if r.status == "fail":
            f = ET.SubElement(tc, "failure", message=r.message, type="budget")
            f.text = r.message
        elif r.status == "missing":
            if allow_missing:
                ET.SubElement(tc, "skipped", message=r.message)
            else:
                f = ET.SubElement(tc, "failure", message=r.message, type="missing")
                f.text = r.message
        else:
            so = ET.SubElement(tc, "system-out")
            so.text = r.message
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"


def write(path: str, results: Sequence[Result], allow_missing: bool) -> None:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(p, to_xml(results, allow_missing))
