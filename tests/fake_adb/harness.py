"""Scripting the stand-in adb: which argv gets which recorded output, and what adb received.

Usage in a test: ``fake = FakeAdb(tmp_path, monkeypatch)``, then ``fake.device(...)`` for a
ready device, ``fake.shell(serial, "dumpsys …", out)`` for a device command, and
``fake.calls()`` to assert the exact commands sent. The stand-in is put first on PATH, so the
code under test finds it the way it would find a real adb.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path
from typing import Any

SCRIPT = Path(__file__).with_name("adb")
DATA = Path(__file__).resolve().parents[1] / "data" / "android"


def getprop(model: str, release: str, sdk: int, manufacturer: str = "Google") -> str:
    return (
        "[ro.build.version.release]: [%s]\n[ro.build.version.sdk]: [%d]\n"
        "[ro.product.cpu.abi]: [arm64-v8a]\n[ro.product.manufacturer]: [%s]\n"
        "[ro.product.model]: [%s]\n[persist.sys.timezone]: [Asia/Shanghai]\n"
    ) % (release, sdk, manufacturer, model)


class FakeAdb:
    def __init__(self, tmp_path: Path, monkeypatch: Any):
        self.dir = tmp_path / "fake-adb"
        bindir = self.dir / "bin"
        bindir.mkdir(parents=True)
        self.binary = bindir / "adb"
        shutil.copyfile(SCRIPT, self.binary)
        self.binary.chmod(self.binary.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        self.log = self.dir / "calls.jsonl"
        self.scenario = self.dir / "scenario.json"
        self.rules: list[dict[str, Any]] = []
        monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")
        monkeypatch.setenv("FAKE_ADB_LOG", str(self.log))
        monkeypatch.setenv("FAKE_ADB_SCENARIO", str(self.scenario))
        self._save()

    def _save(self) -> None:
        self.scenario.write_text(json.dumps({"rules": self.rules}), encoding="utf-8")

    def on(self, argv: list[str], *responses: str | dict[str, Any]) -> "FakeAdb":
        resp = [r if isinstance(r, dict) else {"stdout": r} for r in responses] or [{"stdout": ""}]
        self.rules = [r for r in self.rules if r["argv"] != argv]
        self.rules.append({"argv": argv, "responses": resp})
        self._save()
        return self

    def shell(self, serial: str, line: str, *responses: str | dict[str, Any]) -> "FakeAdb":
        return self.on(["-s", serial, "shell", line], *responses)

    def devices(self, *lines: str) -> "FakeAdb":
        return self.on(["devices", "-l"], "List of devices attached\n" + "".join(l + "\n" for l in lines) + "\n")

    def device(self, serial: str = "emulator-5554", model: str = "Pixel 6", release: str = "13", sdk: int = 33) -> "FakeAdb":
        """One ready device: ``adb devices -l`` lists it and ``getprop`` describes it."""
        self.devices(f"{serial:<22} device product:oriole model:{model.replace(' ', '_')} device:oriole transport_id:1")
        return self.shell(serial, "getprop", getprop(model, release, sdk))

    def calls(self) -> list[list[str]]:
        if not self.log.exists():
            return []
        return [json.loads(l)["argv"] for l in self.log.read_text(encoding="utf-8").splitlines() if l.strip()]

    def stdin_of(self, argv: list[str]) -> str:
        for l in self.log.read_text(encoding="utf-8").splitlines():
            rec = json.loads(l)
            if rec["argv"] == argv:
                return rec["stdin"]
        raise AssertionError(f"adb was never called with {argv!r}")
