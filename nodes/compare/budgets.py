"""Performance budgets: where they are written, what they say, and checking runs against them.

Where (the first that applies): ``--budgets FILE`` (a TOML file with a ``[budgets]`` table, or a
``pyproject.toml`` with ``[tool.perfscout.budgets]``); else ``perfscout.toml``'s ``[budgets]``
in the working folder; else ``[tool.perfscout.budgets]`` of its ``pyproject.toml``.

What: each key names a metric (:mod:`nodes.compare.keys`), quoted or as nested tables alike::

    [budgets]
    "startup.ttid_ms" = 250            # a number is an upper bound
    "frames.fps" = { min = 55 }        # a lower bound (max = … and both work too)
    'hotspots."json.loads".self_pct' = 20
    "regression.max_pct" = 5           # worse than the baseline by more than 5 % fails

    [budgets.frames]                   # the same keys as nested tables
    jank_ratio = 0.05

A metric value is the median of its samples in that run (``startup.ttid_ms``: the median over
the trace's launches). A budget whose metric the data lacks is ``missing``, a failure unless
``allow_missing``. ``regression.max_pct`` compares the checked runs with a baseline on every
budgeted metric (on every directional metric both sides have when no metric is budgeted — less
the rows named by a function, a process or a window, ``hotspots``, ``cpu``, ``power``,
``memory."<process>"``, which only a budget naming them checks); when
both sides have several runs a regression counts only if it is significant
(:mod:`nodes.compare.stats`), with one run on either side the delta alone decides.
A key PerfScout does not know, a bound that is not a number, an unreadable file: BudgetError
(bad usage, exit 2).
"""

from __future__ import annotations

import difflib
import math
import statistics
import tomllib
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from nodes.compare import stats
from nodes.compare.keys import NAMED_FAMILIES, NAMED_SUBTABLES, KeyError_, format_key, info, parse_key
from nodes.compare.samples import Samples

REGRESSION_KEY = "regression.max_pct"


class BudgetError(ValueError):
    """Bad budgets: one line naming the file or key and the problem."""


@dataclass(frozen=True)
class Budget:
    key: str
    max: float | None = None
    min: float | None = None

    def describe(self) -> str:
        if self.min is not None and self.max is not None:
            return f"{_bound(self.min)} ≤ {self.key} ≤ {_bound(self.max)}"
        if self.min is not None:
            return f"{self.key} ≥ {_bound(self.min)}"
        return f"{self.key} ≤ {_bound(self.max)}"


def _bound(v: float) -> str:
    """A budget as its file wrote it, with thousands grouped: ``:g`` printed 1000000 as "1e+06"
    beside the value's "1,197,946" (an energy budget in µWs)."""
    return f"{v:,.0f}" if float(v).is_integer() else f"{v:,}"


@dataclass(frozen=True)
class Budgets:
    source: str
    items: tuple[Budget, ...]
    regression_max_pct: float | None = None


@dataclass
class Result:
    """One budget checked on one run (or on the aggregate, for a regression)."""

    name: str  # the testcase name: "<budget> [run]"
    key: str
    run: str
    status: str  # "pass" | "fail" | "missing"
    value: float | None
    bound: str
    message: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# --- finding and reading the file -----------------------------------------------------------


def _load_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as f:
            return tomllib.load(f)
    except OSError as e:
        raise BudgetError(f"{path}: cannot read it ({e.strerror or e})") from None
    except tomllib.TOMLDecodeError as e:
        raise BudgetError(f"{path}: not valid TOML ({e})") from None
    except UnicodeDecodeError:
        raise BudgetError(f"{path}: not valid TOML (not UTF-8 text)") from None


def _tool_table(doc: Mapping[str, Any]) -> Any:
    return ((doc.get("tool") or {}).get("perfscout") or {}).get("budgets") if isinstance(doc.get("tool"), dict) else None


def find_budgets(budgets_file: str | None, cwd: str = ".") -> tuple[dict[str, Any], str]:
    """The budgets table and where it came from (see the module docstring). Raises BudgetError."""
    if budgets_file:
        p = Path(budgets_file)
        if not p.is_file():
            raise BudgetError(f"{budgets_file}: no such file")
        doc = _load_toml(p)
        table = doc.get("budgets")
        if table is None:
            table = _tool_table(doc)
            where = f"{p} [tool.perfscout.budgets]"
        else:
            where = f"{p} [budgets]"
        if table is None:
            raise BudgetError(f"{budgets_file}: no [budgets] table (nor [tool.perfscout.budgets])")
        if not isinstance(table, dict):
            raise BudgetError(f"{budgets_file}: budgets must be a table")
        return table, where
    own = Path(cwd) / "perfscout.toml"
    if own.is_file():
        doc = _load_toml(own)
        if isinstance(doc.get("budgets"), dict):
            return doc["budgets"], f"{own} [budgets]"
    py = Path(cwd) / "pyproject.toml"
    if py.is_file():
        table = _tool_table(_load_toml(py))
        if isinstance(table, dict):
            return table, f"{py} [tool.perfscout.budgets]"
    raise BudgetError("no budgets: give --budgets FILE, or write a [budgets] table in perfscout.toml "
                      "or [tool.perfscout.budgets] in pyproject.toml")


def _is_bound_table(v: Any) -> bool:
    return isinstance(v, dict) and bool(v) and set(v) <= {"min", "max"}


def _number(v: Any, where: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise BudgetError(f"budget {where}: the bound must be a number, not {v!r}")
    return float(v)


def _is_metric(segs: tuple[str, ...]) -> bool:
    try:
        info(segs)
        return True
    except KeyError_:
        return False


def _flatten(table: Mapping[str, Any], prefix: tuple[str, ...], out: list[tuple[tuple[str, ...], Any]]) -> None:
    for k, v in table.items():
        if (len(prefix) == 1 and prefix[0] in NAMED_FAMILIES) or prefix in NAMED_SUBTABLES:
            segs = prefix + (k,)  # a hot-spot / stat name, taken as written (it may hold dots)
        else:
            try:
                segs = prefix + parse_key(k)
            except KeyError_ as e:
                raise BudgetError(str(e)) from None
        if isinstance(v, dict) and not _is_bound_table(v):
            if _is_metric(segs):
                raise BudgetError(f"budget {format_key(segs)}: a table may hold only min and max, not "
                                  f"{', '.join(sorted(v)) or 'nothing'}")
            _flatten(v, segs, out)
        else:
            out.append((segs, v))


def parse_budgets(table: Mapping[str, Any], source: str = "budgets") -> Budgets:
    """The budgets of a TOML table; BudgetError naming the first bad key."""
    flat: list[tuple[tuple[str, ...], Any]] = []
    _flatten(table, (), flat)
    items: dict[str, Budget] = {}
    regression: float | None = None
    for segs, v in flat:
        key = format_key(segs)
        if segs[0] == "regression":
            if segs != ("regression", "max_pct"):
                raise BudgetError(f"{source}: unknown budget key {key!r} (the regression key is {REGRESSION_KEY!r})")
            regression = _number(v, key)
            if regression < 0:
                raise BudgetError(f"{source}: {key} must be ≥ 0, not {regression:g}")
            continue
        try:
            info(segs)
        except KeyError_ as e:
            raise BudgetError(f"{source}: {e}") from None
        if _is_bound_table(v):
            lo = _number(v["min"], key) if "min" in v else None
            hi = _number(v["max"], key) if "max" in v else None
            if lo is not None and hi is not None and lo > hi:
                raise BudgetError(f"{source}: budget {key}: min {lo:g} is above max {hi:g}")
            b = Budget(key, max=hi, min=lo)
        elif isinstance(v, dict):
            raise BudgetError(f"{source}: budget {key}: a table may hold only min and max, not {', '.join(sorted(v))}")
        else:
            b = Budget(key, max=_number(v, key))
        if key in items:
            raise BudgetError(f"{source}: budget {key} is given twice")
        items[key] = b
    if not items and regression is None:
        raise BudgetError(f"{source}: the budgets table is empty")
    return Budgets(source, tuple(items.values()), regression)


def load_budgets(budgets_file: str | None, cwd: str = ".") -> Budgets:
    table, where = find_budgets(budgets_file, cwd)
    return parse_budgets(table, where)


# --- checking ---------------------------------------------------------------------------------


def _fmt(v: float | None) -> str:
    if v is None:
        return "–"
    return f"{v:.4g}" if abs(v) < 1000 else f"{v:,.0f}"


def _missing(key: str, samples: Samples) -> str:
    """Why a budget's key has no value, and what the data does have that looks like it: a typo
    ("power.measureBlok.energy_uws") is far more often the cause than a metric the data lacks, and
    the user should not have to dump the JSON to find the name (the same metric under another
    window, process or name first)."""
    family, metric = key.split(".", 1)[0], key.rsplit(".", 1)[-1]
    alike = sorted(k for k in samples if k.split(".", 1)[0] == family and k.rsplit(".", 1)[-1] == metric)
    close = difflib.get_close_matches(key, alike or list(samples), n=3, cutoff=0.75)
    if close:
        return f"{key}: the data has no such metric; did you mean {', '.join(close)}?"
    if alike:
        more = f" (+{len(alike) - 5} more)" if len(alike) > 5 else ""
        return f"{key}: the data has no such metric; it has {', '.join(alike[:5])}{more}"
    return f"{key}: the data has no such metric"


def check_run(run: str, samples: Samples, budgets: Budgets, allow_missing: bool = False) -> list[Result]:
    """Every absolute budget on one run's samples."""
    out = []
    for b in budgets.items:
        vals = samples.get(b.key)
        name = f"{b.describe()} [{run}]"
        if not vals:
            out.append(Result(name, b.key, run, "missing", None, b.describe(),
                              _missing(b.key, samples) + (" (allowed)" if allow_missing else "")))
            continue
        v = float(statistics.median(vals))
        ok = (b.max is None or v <= b.max) and (b.min is None or v >= b.min)
        over = "" if ok else (f" > {_bound(b.max)}" if b.max is not None and v > b.max else f" < {_bound(b.min)}")
        many = f" (median of {len(vals)})" if len(vals) > 1 else ""
        out.append(Result(name, b.key, run, "pass" if ok else "fail", v, b.describe(),
                          f"{b.key} = {_fmt(v)}{many}{over}"))
    return out


def regression_keys(budgets: Budgets, current: Samples, baseline: Samples) -> list[str]:
    keys = [b.key for b in budgets.items]
    if keys:
        return keys
    out = []
    for k in sorted(set(current) & set(baseline)):
        segs = parse_key(k)
        if segs[0] in ("hotspots", "stats", "duration_ms", "cpu", "power") or (segs[0] == "memory" and len(segs) > 2):
            continue  # named rows (functions, processes, windows) are checked when budgeted by name
        if info(segs).direction is not None:
            out.append(k)
    return out


def check_regression(current: Samples, baseline: Samples, budgets: Budgets, label: str,
                     allow_missing: bool = False) -> list[Result]:
    """``regression.max_pct`` on the pooled runs against the baseline's."""
    limit = budgets.regression_max_pct
    if limit is None:
        return []
    out = []
    for key in regression_keys(budgets, current, baseline):
        bound = f"{key} not worse than baseline by > {limit:g} %"
        name = f"{bound} [{label}]"
        a, b = baseline.get(key), current.get(key)
        if not a or not b:
            side = "the baseline" if not a else "the checked runs"
            out.append(Result(name, key, label, "missing", None, bound,
                              f"{key}: {side} have no such metric" + (" (allowed)" if allow_missing else "")))
            continue
        direction = info(parse_key(key)).direction
        d = stats.compare(a, b)
        if direction is None:
            out.append(Result(name, key, label, "pass", d.median_b, bound, f"{key}: no direction to regress in"))
            continue
        worse = d.delta if direction == "lower" else -d.delta
        if d.delta_pct is None:  # from 0 (no jank at all) to anything: worse by more than any percentage
            worse_pct = math.inf if worse > 0 else -math.inf if worse < 0 else 0.0
        else:
            worse_pct = d.delta_pct if direction == "lower" else -d.delta_pct
        several = len(a) > 1 and len(b) > 1
        regressed = worse_pct > limit and (d.significant is True if several else True)
        pct = f"{d.delta_pct:+.1f} %" if d.delta_pct is not None else "from 0"
        detail = f"{key}: {_fmt(d.median_a)} → {_fmt(d.median_b)} ({pct})"
        if several:
            detail += (f", p = {d.p_value:.3g}, 95 % CI [{_fmt(d.ci_low)}, {_fmt(d.ci_high)}]"
                       + ("" if d.significant else ", no significant change"))
        else:
            detail += ", one run on a side: the delta alone decides"
        out.append(Result(name, key, label, "fail" if regressed else "pass", d.median_b, bound, detail))
    return out


def failed(results: Sequence[Result], allow_missing: bool) -> bool:
    return any(r.status == "fail" or (r.status == "missing" and not allow_missing) for r in results)
