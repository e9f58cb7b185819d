"""What every finding rule shares: building a Finding with its evidence, and the order of
severities."""

from __future__ import annotations

from nodes.perf.units import SEVERITY_ORDER  # noqa: F401
from nodes.perf.model import Evidence, Finding



def finding(title: str, severity: str, detail: str, source: str | None, *, metric: dict | None = None,
            suggestion: str | None = None, link: str | None = None, family: str | None = None,
            **evidence) -> Finding:
    """A Finding whose evidence names ``source`` plus the given time range / events / command."""
    return Finding(title=title, severity=severity, detail=detail,
                   evidence=Evidence(source=source, **evidence), metric=metric or {},
                   suggestion=suggestion, link=link, family=family)
