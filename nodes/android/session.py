"""One collection on one device: the adb to use, the device, what it is, and where files go.

Opening a session is the part every Android request shares (locate adb → list devices → pick
one → read model and version → make the run folder), so its failures surface as the same
typed outcomes whatever was asked.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from nodes.android.adb import DEFAULT_TIMEOUT_S, Adb
from nodes.android.devices import Device, DeviceInfo, choose, device_info, list_devices
from nodes.framework.context import thread_id as current_thread
from nodes.collect.rundir import open_run_dir
from nodes.framework.context import NodeContext


@dataclass
class Session:
    adb: Adb
    device: Device
    info: DeviceInfo
    run_dir: Path

    @property
    def serial(self) -> str:
        return self.device.serial

    def source(self, rest: str) -> str:
        """How a person would reproduce a collection step: ``adb -s SERIAL <rest>``."""
        return f"adb -s {self.serial} {rest}"


def adb_timeout(ctx: NodeContext) -> float:
    return DEFAULT_TIMEOUT_S if ctx.adb_timeout_s is None else float(ctx.adb_timeout_s)


def host_adb(ctx: NodeContext) -> Adb:
    """adb for host-side calls. Raises AdbMissing with the package to install."""
    return Adb.locate(ctx.adb_path, timeout_s=adb_timeout(ctx))


def open_session(
    state: Mapping[str, Any], ctx: NodeContext, thread_id: str | None = None
) -> Session:
    """Raises AdbMissing, DeviceUnavailable, NeedSerial or ToolFailure; never a traceback."""
    host = host_adb(ctx)
    device = choose(list_devices(host), (state.get("serial") or "").strip() or None)
    adb = host.for_device(device.serial)
    info = device_info(adb)
    return Session(adb, device, info, run_folder(state, ctx, thread_id))


def run_folder(state: Mapping[str, Any], ctx: NodeContext, thread_id: str | None = None) -> Path:
    """The collector's run-folder rule, shared: ``state.run_dir``, else ``<runs_dir>/<thread>/<UTC>/``."""
    return open_run_dir(state.get("run_dir"), ctx.runs_dir, thread_id or current_thread(), "android")
