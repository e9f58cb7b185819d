"""Which device to talk to: ``adb devices -l``, the user's ``--serial``, and what the device is.

The choice has four outcomes, each a type the node turns into a state update: a device, a
typed skip (nothing usable is attached, and how to fix it), a question (several devices and
none chosen), or a ToolFailure from the adb call itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from graph.enums import ErrorKind
from nodes.android.adb import Adb
from nodes.framework.errors import ToolFailure

#: Keys adb appends to a line of ``adb devices -l``; a state ("no permissions (...)") may
#: itself contain spaces, so the state is everything before the first of these.
_PROP_KEYS = ("usb:", "product:", "model:", "device:", "transport_id:")

#: What to do about each non-ready state, as the user reads it.
FIXES = {
    "unauthorized": "unlock the phone and accept the \u201cAllow USB debugging?\u201d prompt "
    "(if it never appears: Developer options \u2192 Revoke USB debugging authorizations, then reconnect)",
    "offline": "reconnect the USB cable, or run `adb reconnect` (or `adb kill-server` and try again)",
    "authorizing": "wait a moment and accept the prompt on the phone, then try again",
    "connecting": "wait a moment for the connection to finish, then try again",
    "no permissions": "the USB device is not accessible to this user: add a udev rule for it "
    "(or join the plugdev group) and reconnect",
    "recovery": "the device is in recovery mode: reboot it to Android",
    "sideload": "the device is in sideload mode: reboot it to Android",
    "bootloader": "the device is in the bootloader: reboot it to Android",
}

NO_DEVICE_FIX = (
    "connect a phone with USB debugging on (Settings \u2192 Developer options \u2192 USB debugging) "
    "or start an emulator, then check `adb devices`"
)


@dataclass
class Device:
    serial: str
    state: str
    props: dict[str, str] = field(default_factory=dict)

    @property
    def ready(self) -> bool:
        return self.state == "device"

    @property
    def label(self) -> str:
        model = self.props.get("model")
        return f"{self.serial} ({model.replace('_', ' ')})" if model else self.serial


@dataclass
class DeviceInfo:
    """What a device says about itself (``getprop``)."""

    serial: str
    model: str | None = None
    manufacturer: str | None = None
    release: str | None = None
    sdk: int | None = None
    abi: str | None = None

    def describe(self) -> str:
        name = " ".join(p for p in (self.manufacturer, self.model) if p) or "unknown model"
        ver = f"Android {self.release}" if self.release else "Android (version unknown)"
        api = f", API {self.sdk}" if self.sdk else ""
        return f"{self.serial}: {name}, {ver}{api}"


class DeviceUnavailable(Exception):
    """Nothing usable is attached: a typed skip whose message says which and how to fix it."""


@dataclass
class NeedSerial(Exception):
    """Several usable devices and none chosen: ask the user which."""

    choices: list[str]
    labels: list[str]

    def __str__(self) -> str:
        return "several devices are attached: " + ", ".join(self.labels)


def parse_devices(text: str) -> list[Device]:
    """The devices of ``adb devices -l`` output (daemon chatter and blank lines ignored)."""
    out: list[Device] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("*") or line.lower().startswith("list of devices"):
            continue
        if line.startswith(("adb server", "error:", "adb:")):
            continue
        parts = line.split(None, 1)
        if len(parts) < 2:
            continue
        serial, rest = parts
        cut = len(rest)
        for key in _PROP_KEYS:
            m = re.search(r"(?:^|\s)" + re.escape(key), rest)
            if m and m.start() < cut:
                cut = m.start()
        state = rest[:cut].strip()
        props = {}
        for tok in rest[cut:].split():
            k, sep, v = tok.partition(":")
            if sep:
                props[k] = v
        out.append(Device(serial, state, props))
    return out


def list_devices(adb: Adb) -> list[Device]:
    res = adb.run(["devices", "-l"])
    if res.rc != 0:
        raise ToolFailure(
            ErrorKind.UNAVAILABLE,
            f"`{res.command}` failed with exit code {res.rc}: {(res.stderr or res.stdout).strip()[:300]}",
        )
    return parse_devices(res.stdout)


def _state_key(state: str) -> str:
    s = state.lower()
    return "no permissions" if s.startswith("no permissions") else s


def explain(device: Device) -> str:
    key = _state_key(device.state)
    fix = FIXES.get(key, "check the device and `adb devices`, then try again")
    return f"device {device.serial} is {key}: {fix}"


def choose(devices: list[Device], serial: str | None) -> Device:
    """The device to use, or DeviceUnavailable / NeedSerial saying why there is none."""
    if serial:
        for d in devices:
            if d.serial == serial:
                if d.ready:
                    return d
                raise DeviceUnavailable(explain(d))
        ready = [d for d in devices if d.ready]
        if ready:
            raise NeedSerial([d.serial for d in ready], [d.label for d in ready])
        attached = ", ".join(f"{d.serial} ({_state_key(d.state)})" for d in devices) or "none"
        raise DeviceUnavailable(f"device {serial} is not attached (attached: {attached}); {NO_DEVICE_FIX}")
    ready = [d for d in devices if d.ready]
    if len(ready) == 1:
        return ready[0]
    if len(ready) > 1:
        raise NeedSerial([d.serial for d in ready], [d.label for d in ready])
    if not devices:
        raise DeviceUnavailable(f"no device attached: {NO_DEVICE_FIX}")
    raise DeviceUnavailable("; ".join(explain(d) for d in devices))


_PROP_LINE = re.compile(r"^\[([^\]]+)\]:\s*\[(.*)\]\s*$")


def parse_getprop(text: str) -> dict[str, str]:
    props: dict[str, str] = {}
    for line in text.splitlines():
        m = _PROP_LINE.match(line.strip())
        if m:
            props[m.group(1)] = m.group(2)
    return props


def device_info(adb: Adb) -> DeviceInfo:
    """Model and Android version from one ``getprop`` call."""
    res = adb.shell(["getprop"])
    props = parse_getprop(res.stdout)
    if not props:
        raise ToolFailure(ErrorKind.VALIDATION, f"`{res.command}` printed no [key]: [value] lines")
    sdk = props.get("ro.build.version.sdk", "")
    return DeviceInfo(
        serial=adb.serial or "",
        model=props.get("ro.product.model") or None,
        manufacturer=props.get("ro.product.manufacturer") or None,
        release=props.get("ro.build.version.release") or None,
        sdk=int(sdk) if sdk.isdigit() else None,
        abi=props.get("ro.product.cpu.abi") or None,
    )
