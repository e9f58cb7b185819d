"""How every Android failure reads to the stage runner: one mapping for android_expert and startup.

So "adb missing", "no device", "which device?" and "the device went away" read the same whichever
stage met them, and none escapes as a traceback. Pure translation: the stage runner
(nodes/framework/stage.py) turns the result into the typed skip, question or error.
"""

from __future__ import annotations

from graph.enums import ErrorKind
from nodes.android.adb import AdbMissing
from nodes.android.devices import DeviceUnavailable, NeedSerial
from nodes.android.names import InvalidName
from nodes.framework.errors import NeedsAnswer, StageSkipped, ToolFailure


class NeedPackage(Exception):
    """The request needs an app and none is named or in the foreground."""


#: The exceptions a device stage translates (``except ANDROID_ERRORS as e: raise as_stage_error(e)``).
ANDROID_ERRORS = (AdbMissing, DeviceUnavailable, NeedSerial, NeedPackage, InvalidName, OSError)


def as_stage_error(e: BaseException) -> Exception:
    """The skip, question or typed failure an Android exception stands for."""
    if isinstance(e, (AdbMissing, DeviceUnavailable)):
        return StageSkipped(str(e))
    if isinstance(e, NeedSerial):
        return NeedsAnswer(
            "serial",
            f"Several Android devices are attached: {', '.join(e.labels)}. Which one? Give its serial. "
            f"连接了多台设备，请给出要用的设备序列号。",
            e.choices,
        )
    if isinstance(e, NeedPackage):
        return NeedsAnswer("package", f"{e} Give the app's package name (for example com.demo.shop). 请给出应用包名。")
    if isinstance(e, InvalidName):
        return ToolFailure(ErrorKind.VALIDATION, str(e))
    if isinstance(e, OSError):
        # The run folder could not be written (permissions, disk full): this machine's problem.
        where = f" {e.filename}" if getattr(e, "filename", None) else ""
        return ToolFailure(ErrorKind.UNAVAILABLE, f"cannot write the collected data{where}: {e.strerror or e}")
    return e if isinstance(e, Exception) else RuntimeError(str(e))
