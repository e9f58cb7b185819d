"""The adb client, device choice and name checks: against the stand-in adb, and the real one where installed."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time

import pytest

from fake_adb.harness import FakeAdb
from graph.enums import ErrorKind
from nodes.android.adb import INSTALL_HINT, Adb, AdbMissing
from nodes.android.devices import DeviceUnavailable, NeedSerial, choose, device_info, list_devices, parse_devices
from nodes.android.names import InvalidName, check_component, check_package, shell_line
from nodes.framework.errors import ToolFailure
from nodes.framework.context import NodeContext

# --------------------------------------------------------------------------------------
# Names
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("ok", ["com.demo.shop", "a.b", "com.Demo_2.x9", "org.chromium.chrome"])
def test_valid_package_names(ok):
    assert check_package(ok) == ok


@pytest.mark.parametrize(
    "bad",
    ["shop", "com.demo.shop; reboot", "com.demo.shop && rm -rf /", "$(id).a", "com..shop", "1com.shop",
     "com.demo.shop\nreboot", "com.demo-shop.app", "com.demo.shop ", "'com.a'", "com.a`id`", "", "a." + "b" * 300],
)
def test_invalid_package_names_are_refused(bad):
    if bad == "com.demo.shop ":
        assert check_package(bad) == "com.demo.shop"  # surrounding blanks are not part of a name
        return
    with pytest.raises(InvalidName):
        check_package(bad)


def test_component_and_quoting():
    assert check_component("com.demo.shop/.MainActivity") == "com.demo.shop/.MainActivity"
    assert check_component("com.demo.shop/com.demo.shop.ui.Main$Inner")
    for bad in ("com.demo.shop", "com.demo.shop/", "com.demo.shop/.Main;reboot", "x/.Main"):
        with pytest.raises(InvalidName):
            check_component(bad)
    assert shell_line(["dumpsys", "gfxinfo", "a.b", "framestats"]) == "dumpsys gfxinfo a.b framestats"
    assert shell_line(["echo", "a b", "$(id)"]) == "echo 'a b' '$(id)'"


# --------------------------------------------------------------------------------------
# adb devices -l
# --------------------------------------------------------------------------------------

DEVICES = """* daemon not running; starting now at tcp:5037
* daemon started successfully
List of devices attached
emulator-5554          device product:sdk_gphone64_x86_64 model:sdk_gphone64_x86_64 device:emu64xa transport_id:1
R58M123ABC             unauthorized usb:1-1 transport_id:2
0123456789ABCDEF       offline transport_id:3
ZX1G22                 no permissions (user in plugdev group; are your udev rules wrong?); see [http://developer.android.com/tools/device.html] usb:1-2 transport_id:4
192.168.1.20:5555      device product:oriole model:Pixel_6 device:oriole transport_id:5

"""


def test_parse_devices_states_and_props():
    ds = parse_devices(DEVICES)
    assert [(d.serial, d.state) for d in ds] == [
        ("emulator-5554", "device"), ("R58M123ABC", "unauthorized"), ("0123456789ABCDEF", "offline"),
        ("ZX1G22", "no permissions (user in plugdev group; are your udev rules wrong?); see [http://developer.android.com/tools/device.html]"),
        ("192.168.1.20:5555", "device"),
    ]
    assert ds[0].props["model"] == "sdk_gphone64_x86_64" and ds[4].label == "192.168.1.20:5555 (Pixel 6)"


def test_choose_the_only_one_the_named_one_or_ask():
    ds = parse_devices(DEVICES)
    with pytest.raises(NeedSerial) as e:
        choose(ds, None)
    assert e.value.choices == ["emulator-5554", "192.168.1.20:5555"]
    assert choose(ds, "192.168.1.20:5555").serial == "192.168.1.20:5555"
    assert choose([ds[0], ds[1]], None).serial == "emulator-5554"  # the only ready one
    with pytest.raises(DeviceUnavailable, match="R58M123ABC is unauthorized: unlock the phone and accept"):
        choose(ds, "R58M123ABC")
    with pytest.raises(DeviceUnavailable, match="offline: reconnect the USB cable"):
        choose([ds[2]], None)
    with pytest.raises(DeviceUnavailable, match="no permissions: .*udev"):
        choose([ds[3]], None)
    with pytest.raises(DeviceUnavailable, match="no device attached: connect a phone with USB debugging"):
        choose([], None)
    with pytest.raises(DeviceUnavailable, match="device nope is not attached"):
        choose([ds[1]], "nope")


# --------------------------------------------------------------------------------------
# The client against the stand-in
# --------------------------------------------------------------------------------------


def test_missing_adb_is_adbmissing_naming_the_package(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # a PATH with no adb on it
    with pytest.raises(AdbMissing) as e:
        Adb.locate()
    assert "apt install adb" in str(e.value) and str(e.value) == INSTALL_HINT
    with pytest.raises(AdbMissing, match="is not an executable file"):
        Adb.locate(str(tmp_path / "adb"))


def test_exact_argv_and_getprop(tmp_path, monkeypatch):
    fake = FakeAdb(tmp_path, monkeypatch).device("emulator-5554", "Pixel 6", "13", 33)
    host = Adb.locate()
    assert host.binary == str(fake.binary)
    [d] = list_devices(host)
    info = device_info(host.for_device(d.serial))
    assert info.describe() == "emulator-5554: Google Pixel 6, Android 13, API 33"
    assert fake.calls() == [["devices", "-l"], ["-s", "emulator-5554", "shell", "getprop"]]


def test_lost_device_is_retryable_and_a_hang_is_a_timeout(tmp_path, monkeypatch):
    fake = FakeAdb(tmp_path, monkeypatch)
    fake.shell("S1", "dumpsys cpuinfo", {"stderr": "error: device 'S1' not found\n", "rc": 1})
    fake.shell("S1", "dumpsys battery", {"sleep": 30, "stdout": "late"})
    # The stand-in is a Python script (~0.1–0.5 s to start on a loaded machine): the lost-device
    # call gets room, the hang a short limit that only a hang can reach.
    with pytest.raises(ToolFailure) as e:
        Adb.locate(timeout_s=20).for_device("S1").shell(["dumpsys", "cpuinfo"])
    assert e.value.kind is ErrorKind.RETRYABLE and "device S1 disconnected during `adb -s S1 shell 'dumpsys cpuinfo'`" in e.value.message
    adb = Adb.locate(timeout_s=2).for_device("S1")
    t0 = time.monotonic()
    with pytest.raises(ToolFailure) as e:
        adb.shell(["dumpsys", "battery"])
    assert e.value.kind is ErrorKind.TIMEOUT and "within 2 s" in e.value.message
    assert time.monotonic() - t0 < 25  # the hung adb (30 s) was killed, not waited for


def test_a_refused_command_is_validation_not_retry(tmp_path, monkeypatch):
    fake = FakeAdb(tmp_path, monkeypatch)
    fake.shell("S1", "atrace --list_categories", {"stdout": "/system/bin/sh: atrace: inaccessible or not found\n", "rc": 127})
    with pytest.raises(ToolFailure) as e:
        Adb.locate().for_device("S1").shell(["atrace", "--list_categories"])
    assert e.value.kind is ErrorKind.VALIDATION and "exit code 127" in e.value.message


# --------------------------------------------------------------------------------------
# The real adb (Debian's `adb` package), where installed: no device → the typed skip.
# --------------------------------------------------------------------------------------

REAL_ADB = next((p for p in ("/usr/bin/adb", "/usr/lib/android-sdk/platform-tools/adb") if os.access(p, os.X_OK)), None)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.skipif(REAL_ADB is None, reason="Debian's adb is not installed here (apt install adb)")
def test_real_adb_with_no_device_gives_the_typed_skip(tmp_path, monkeypatch):
    from graph.enums import Node
    from langchain_core.messages import HumanMessage

    from nodes import android_expert

    # A private server port: the test starts and stops its own adb server, nobody else's.
    port = str(_free_port())
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", port)
    monkeypatch.setenv("HOME", str(tmp_path))  # adb keeps its keys under $HOME/.android
    try:
        node = android_expert.make(NodeContext(adb_path=REAL_ADB, runs_dir=str(tmp_path / "runs")))
        out = node({"messages": [HumanMessage("测一下 com.demo.shop 的 FPS")], "package": "com.demo.shop"})
        assert out["skipped"]["node"] == Node.ANDROID_EXPERT.value
        assert out["skipped"]["reason"].startswith("no device attached: connect a phone with USB debugging")
        assert "last_error" in out and out["last_error"] is None
    finally:
        subprocess.run([REAL_ADB, "kill-server"], timeout=20, capture_output=True,
                       env={**os.environ, "ANDROID_ADB_SERVER_PORT": port})
