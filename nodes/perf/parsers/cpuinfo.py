"""CPU use on a device: ``dumpsys cpuinfo`` and ``top -b -n 1`` (toybox and the older top).

The two tools count differently and the stat names keep them apart:

* ``dumpsys cpuinfo`` — shares of *all* cores over the last sampling window (``TOTAL`` is at
  most 100 %): ``cpuinfo.total``, ``cpuinfo.user`` …, ``cpuinfo.process:<name>``, and the load
  averages;
* ``top`` — one snapshot, each process as a percentage of *one* core (toybox prints the
  capacity, e.g. ``800%cpu`` on eight cores): ``top.capacity``, ``top.idle`` …,
  ``top.process:<name>``.
A file may hold both (the collector saves them together).
"""

from __future__ import annotations

import re

from nodes.perf.errors import PerfDataError
from nodes.perf.model import PerfData
from nodes.perf.parsers import android_capture

FORMAT = "cpuinfo"
_MAX_BYTES = 16 * 1024 * 1024
_TOP_PROCESSES = 15

#: A decimal number as dumpsys prints it ("7.41", "15", ".5"); never a lone "." (the fuzzer's
#: find: ``[\d.]+`` took "." for a number and float() raised).
_NUM = r"(\d+(?:\.\d+)?|\.\d+)"
_LOAD = re.compile(rf"^\s*Load:\s*{_NUM}\s*/\s*{_NUM}\s*/\s*{_NUM}")
_PROC = re.compile(rf"^\s*[+-]?{_NUM}%\s+(\d+)/([^:]+):\s*(.*)$")
_TOTAL = re.compile(rf"^\s*{_NUM}%\s+TOTAL:\s*(.*)$")
_PART = re.compile(rf"{_NUM}%\s+([a-z]+)")
_WINDOW = re.compile(r"CPU usage from (\d+)ms to (\d+)ms ago")
_TOYBOX_CPU = re.compile(r"^\s*(\d+)%cpu\s+(.*)$")
_OLD_TOP_CPU = re.compile(r"^\s*User (\d+)%, System (\d+)%, IOW (\d+)%, IRQ (\d+)%")


def read_text(text: str, source: str) -> PerfData:
    meta, body = android_capture.split(text)
    pd = PerfData(FORMAT, source)
    pd.meta.note_all(android_capture.meta_strings(meta))
    lines = body.splitlines()
    _dumpsys(pd, lines)
    _top(pd, lines)
    if not pd.stats:
        raise PerfDataError(source, "no `dumpsys cpuinfo` TOTAL/process lines and no `top` table found")
    return pd


def _dumpsys(pd: PerfData, lines: list[str]) -> None:
    shown = 0
    for line in lines:
        m = _LOAD.match(line)
        if m:
            for i, span in enumerate(("1min", "5min", "15min")):
                pd.add_stat(f"cpuinfo.load_{span}", float(m.group(i + 1)))
            continue
        m = _WINDOW.search(line)
        if m:
            pd.add_stat("cpuinfo.window", int(m.group(1)) - int(m.group(2)), "ms")
            continue
        m = _TOTAL.match(line)
        if m:
            pd.add_stat("cpuinfo.total", float(m.group(1)), "%")
            for value, part in _PART.findall(m.group(2)):
                pd.add_stat(f"cpuinfo.{part}", float(value), "%")
            continue
        m = _PROC.match(line)
        if m and shown < _TOP_PROCESSES:
            name = m.group(3).strip()
            pd.add_stat(f"cpuinfo.process:{name}", float(m.group(1)), "%")
            pd.set_process_name(int(m.group(2)), name)
            shown += 1


def _top(pd: PerfData, lines: list[str]) -> None:
    header: list[str] | None = None
    shown = 0
    for line in lines:
        m = _TOYBOX_CPU.match(line)
        if m:
            pd.add_stat("top.capacity", float(m.group(1)), "%")
            for value, part in re.findall(r"(\d+)%([a-z]+)", m.group(2)):
                pd.add_stat(f"top.{part}", float(value), "%")
            continue
        m = _OLD_TOP_CPU.match(line)
        if m:
            for i, part in enumerate(("user", "sys", "iow", "irq")):
                pd.add_stat(f"top.{part}", float(m.group(i + 1)), "%")
            continue
        cells = line.split()
        if header is None:
            if "PID" in cells and any("CPU" in c for c in cells):
                header = _top_columns(cells)
            continue
        if not cells or not cells[0].isdigit():
            continue
        row = _top_row(header, cells)
        if row is None or shown >= _TOP_PROCESSES:
            continue
        pid, name, cpu = row
        pd.add_stat(f"top.process:{name}", cpu, "%")
        pd.set_process_name(pid, name, replace=False)
        shown += 1


def _top_columns(cells: list[str]) -> list[str]:
    """Header cells, with toybox's ``S[%CPU]`` split into its two columns."""
    out: list[str] = []
    for c in cells:
        if c.startswith("S[") and c.endswith("]"):
            out += ["S", c[2:-1]]
        else:
            out.append(c)
    return out


def _top_row(header: list[str], cells: list[str]) -> tuple[int, str, float] | None:
    cpu_i = next((i for i, h in enumerate(header) if "CPU" in h), None)
    name_i = next((i for i, h in enumerate(header) if h in ("ARGS", "Name", "CMD", "COMMAND", "NAME")), None)
    if cpu_i is None or name_i is None or len(cells) <= cpu_i:
        return None
    try:
        cpu = float(cells[cpu_i].rstrip("%"))
    except ValueError:
        return None
    if name_i != len(header) - 1:
        name = cells[name_i] if len(cells) > name_i else ""
    elif len(cells) >= len(header):
        # toybox's ARGS is a command line: the name column runs to the end of the row.
        name = " ".join(cells[name_i:])
    else:
        # The old top leaves PCY empty for kernel threads: the name is still the last cell.
        name = cells[-1]
    if not name:
        return None
    return int(cells[0]), name, cpu


def sniff(head: bytes, name: str) -> bool:
    text = head[:65536].decode("utf-8", "replace")
    if "CPU usage from" in text and "TOTAL:" in text:
        return True
    if bool(re.search(r"^\s*\d+%cpu\s", text, re.M)) and "PID" in text:
        return True
    # The older top (Android 7 and before): "User 5%, System 3%, IOW 0%, IRQ 0%" and a CPU% column.
    return bool(re.search(_OLD_TOP_CPU.pattern, text, re.M) and re.search(r"^\s*PID\b.*\bCPU%", text, re.M))


def parse(path: str) -> PerfData:
    return read_text(android_capture.read_text(path, _MAX_BYTES, "cpuinfo/top output"), path)
