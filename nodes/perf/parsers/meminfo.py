"""``adb shell dumpsys meminfo [<package>]``: an app's memory, or the device's.

For one app the ``App Summary`` block is read (Java heap, native heap, code, stack, graphics,
private other, system — PSS, and RSS where Android 11+ prints a second column), with the
``TOTAL PSS`` / ``TOTAL RSS`` / ``TOTAL SWAP PSS`` line (older versions print ``TOTAL:``), and
the ``Native Heap`` / ``Dalvik Heap`` rows of the main table for heap size and allocation. For
the whole device, ``Total RAM`` / ``Free RAM`` / ``Used RAM`` / ``Lost RAM`` and the largest
entries of ``Total PSS by process``. Values stay in kB, the unit dumpsys prints.
"""

from __future__ import annotations

import re

from nodes.perf.errors import PerfDataError
from nodes.perf.model import PerfData
from nodes.perf.parsers import android_capture

FORMAT = "meminfo"
_MAX_BYTES = 16 * 1024 * 1024
_TOP_PROCESSES = 10

_PID = re.compile(r"\*\* MEMINFO in pid (\d+) \[([^\]]+)\] \*\*")
_SUMMARY_ITEM = re.compile(r"^\s*([A-Za-z][A-Za-z ]*?):\s+\d+(?:\s+\d+)?\s*$")
_TOTALS = re.compile(r"(TOTAL(?: PSS| RSS| SWAP PSS| SWAP \(KB\))?):\s*(\d+)")
_RAM = re.compile(r"^\s*(Total|Free|Used|Lost) RAM:\s*([\d,]+)\s*K", re.I)
_PSS_BY_PROC = re.compile(r"^\s*([\d,]+)K:\s*(.+?)\s*\(pid (\d+)")
_TABLE_ROW = re.compile(r"^\s*(Native Heap|Dalvik Heap)\s+([\d\s]+)$")


def _snake(s: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", s.lower()).strip("_")


def _num(s: str) -> int:
    return int(s.replace(",", ""))


def read_text(text: str, source: str) -> PerfData:
    meta, body = android_capture.split(text)
    pd = PerfData(FORMAT, source)
    pd.meta.note_all(android_capture.meta_strings(meta))
    lines = body.splitlines()
    for line in lines:
        if line.strip().startswith("No process found for:"):
            raise PerfDataError(source, f"meminfo found no process for {line.split(':', 1)[1].strip()} (is the app running?)")
    m = next((_PID.search(l) for l in lines if _PID.search(l)), None)
    if m:
        pd.facts.pid, pd.facts.package = int(m.group(1)), m.group(2)
        pd.set_process_name(int(m.group(1)), m.group(2))
        _app(pd, lines)
    else:
        _device(pd, lines)
    if not pd.stats:
        raise PerfDataError(source, "no meminfo App Summary, TOTAL or RAM lines found")
    return pd


def _summary_columns(header: str, dashes: str) -> list[tuple[str, int]]:
    """(column name, end offset) of the App Summary columns, from the dash row under them."""
    names = ["pss" if "Pss" in h else "rss" for h in re.findall(r"[PR]ss\(KB\)", header)]
    ends = [m.end() for m in re.finditer(r"-+", dashes)]
    return list(zip(names, ends)) if len(ends) == len(names) else [(n, -1) for n in names]


def _app(pd: PerfData, lines: list[str]) -> None:
    in_summary = False
    summary_header = ""
    columns: list[tuple[str, int]] = [("pss", -1)]
    header_cols: list[str] = []
    table_total: int | None = None
    for line in lines:
        s = line.strip()
        if s == "App Summary":
            in_summary = True
            continue
        if in_summary:
            if "Pss(KB)" in s:
                summary_header = line
                columns = [(n, -1) for n in ("pss", "rss") if f"{n.capitalize()}(KB)" in s]
                continue
            if s.startswith("---") and summary_header:
                columns = _summary_columns(summary_header, line)
                continue
            totals = list(_TOTALS.finditer(s))
            for m in totals:
                key = {"TOTAL": "total_pss", "TOTAL PSS": "total_pss", "TOTAL RSS": "total_rss",
                       "TOTAL SWAP PSS": "total_swap_pss", "TOTAL SWAP (KB)": "total_swap"}[m.group(1)]
                pd.add_stat(key, _num(m.group(2)), "kB")
            if totals:
                continue
            m = _SUMMARY_ITEM.match(line)
            if m:
                name = _snake(m.group(1))
                for num in re.finditer(r"\d+", line[m.end(1) + 1:]):
                    end = m.end(1) + 1 + num.end()
                    col = _nearest(columns, end)
                    pd.add_stat(f"{name}_{col}", int(num.group()), "kB")
            elif s and not s.startswith("---"):
                in_summary = False
            continue
        # The main table: two header rows give column names ("Heap" over "Size" …).
        if s.startswith("Pss") and "Private" in s:
            header_cols = s.split()
            continue
        if header_cols and s.startswith("Total") and "Dirty" in s:
            header_cols = [f"{a} {b}" for a, b in zip(header_cols, s.split())]
            continue
        m = _TABLE_ROW.match(line)
        if m and header_cols:
            row = dict(zip(header_cols, m.group(2).split()))
            prefix = _snake(m.group(1))
            for col, key in (("Heap Size", "heap_size"), ("Heap Alloc", "heap_alloc"), ("Heap Free", "heap_free")):
                if col in row and row[col].isdigit():
                    pd.add_stat(f"{prefix}_{key}", int(row[col]), "kB")
        elif s.startswith("TOTAL ") and not s.startswith(("TOTAL PSS", "TOTAL RSS", "TOTAL SWAP")):
            nums = s.split()[1:]
            if nums and nums[0].isdigit() and table_total is None:
                table_total = int(nums[0])  # the table's TOTAL row: the PSS when no summary gives one
    if "total_pss" not in pd.stats and table_total is not None:
        pd.add_stat("total_pss", table_total, "kB")


def _nearest(columns: list[tuple[str, int]], end: int) -> str:
    """The column a right-aligned number belongs to: the one whose right edge is closest."""
    if len(columns) == 1 or any(e < 0 for _, e in columns):
        return columns[0][0]
    return min(columns, key=lambda c: abs(c[1] - end))[0]


def _device(pd: PerfData, lines: list[str]) -> None:
    in_pss = False
    shown = 0
    for line in lines:
        m = _RAM.match(line)
        if m:
            pd.add_stat(f"{m.group(1).lower()}_ram", _num(m.group(2)), "kB")
            continue
        s = line.strip()
        if s.startswith("Total PSS by process"):
            in_pss = True
            continue
        if in_pss:
            m = _PSS_BY_PROC.match(line)
            if m:
                if shown < _TOP_PROCESSES:
                    pd.add_stat(f"process_pss:{m.group(2)}", _num(m.group(1)), "kB")
                    shown += 1
            elif s:
                in_pss = False


def sniff(head: bytes, name: str) -> bool:
    text = head[:65536].decode("utf-8", "replace")
    return "Applications Memory Usage" in text or "** MEMINFO in pid" in text


def parse(path: str) -> PerfData:
    return read_text(android_capture.read_text(path, _MAX_BYTES, "dumpsys meminfo output"), path)
