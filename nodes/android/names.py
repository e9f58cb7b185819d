"""Package and component names checked against Android's grammar before they reach a shell.

A name a user typed ends up inside ``adb shell "<command>"``, which the device's shell parses
again. Validating the grammar rejects injection attempts with a clear message; ``shlex.quote``
is still applied when the command line is built, so a grammar gap cannot become a shell hole.
"""

from __future__ import annotations

import re
import shlex
from typing import Iterable

#: Android's applicationId grammar: two or more dot-separated segments, each starting with a
#: letter and continuing with letters, digits or underscores.
_PACKAGE = re.compile(r"[A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z][A-Za-z0-9_]*)+")
#: A Java class name as used after the slash of a component (``.Main``, ``a.b.Main$Inner``).
_CLASS = re.compile(r"\.?[A-Za-z_$][A-Za-z0-9_$]*(?:\.[A-Za-z_$][A-Za-z0-9_$]*)*")
_MAX_PACKAGE_LEN = 255


class InvalidName(ValueError):
    """A package or component name that does not follow Android's grammar."""


def check_package(name: str | None) -> str:
    """The package name if it is valid; otherwise a one-line InvalidName saying why."""
    raw = (name or "").strip()
    if not raw:
        raise InvalidName("no Android package name given")
    if len(raw) > _MAX_PACKAGE_LEN or not _PACKAGE.fullmatch(raw):
        raise InvalidName(
            f"{raw!r} is not a valid Android package name (expected segments like com.demo.shop: "
            "letters, digits and underscores, each segment starting with a letter)"
        )
    return raw


def check_component(component: str) -> str:
    """``package/Activity`` (``.Activity`` is relative to the package), validated."""
    raw = (component or "").strip()
    pkg, sep, cls = raw.partition("/")
    if not sep or not cls:
        raise InvalidName(f"{raw!r} is not an Android component (expected package/.Activity)")
    check_package(pkg)
    if len(cls) > 512 or not _CLASS.fullmatch(cls):
        raise InvalidName(f"{raw!r}: {cls!r} is not a valid activity class name")
    return raw


def shell_line(args: Iterable[str]) -> str:
    """One remote command line, every argument quoted for the device's shell."""
    return " ".join(shlex.quote(str(a)) for a in args)
