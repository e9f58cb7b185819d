"""How every Android failure becomes a state update the policies understand.

One mapping for the android_expert and startup nodes, so "adb missing", "no device", "which
device?" and "the device went away" read the same whichever node met them, and none of them
escapes as a traceback.
"""

from __future__ import annotations

from typing import Any, Callable

from graph.enums import ErrorKind
from nodes.android.adb import AdbMissing
from nodes.android.devices import DeviceUnavailable, NeedSerial
from nodes.android.names import InvalidName
from nodes.common import ToolFailure, failure, skip


class NeedPackage(Exception):
    """The request needs an app and none is named or in the foreground."""


def ask(node: str, field: str, prompt: str, choices: list[str] | None = None) -> dict[str, Any]:
    q: dict[str, Any] = {"field": field, "prompt": prompt, "for_node": node}
    if choices:
        q["choices"] = choices
    # A result kept from an earlier turn must not pass for this turn's evidence.
    return {"missing": [field], "question": q, "collected": None, "answer": None}


def guarded(node: str, work: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """``work()``'s update, or the typed skip / question / failure its exception stands for."""
    try:
        return work()
    except AdbMissing as e:
        return skip(node, str(e))
    except DeviceUnavailable as e:
        return skip(node, str(e))
    except NeedSerial as e:
        return ask(
            node,
            "serial",
            f"Several Android devices are attached: {', '.join(e.labels)}. Which one? Give its serial. "
            f"连接了多台设备，请给出要用的设备序列号。",
            e.choices,
        )
    except NeedPackage as e:
        return ask(node, "package", f"{e} Give the app's package name (for example com.demo.shop). 请给出应用包名。")
    except InvalidName as e:
        return failure(node, ToolFailure(ErrorKind.VALIDATION, str(e)))
    except ToolFailure as e:
        return failure(node, e)
    except OSError as e:
        # The run folder could not be written (permissions, disk full): this machine's problem.
        where = f" {e.filename}" if getattr(e, "filename", None) else ""
        return failure(node, ToolFailure(ErrorKind.UNAVAILABLE, f"cannot write the collected data{where}: {e.strerror or e}"))
