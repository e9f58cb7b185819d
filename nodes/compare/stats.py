"""The statistics of a before/after comparison: difference of medians, its bootstrap interval,
and the Mann–Whitney U test — numpy only, checked against scipy in tests/test_compare_stats.py.

Why these: run-to-run noise in performance data is skewed (a machine hiccup makes one run much
slower, never much faster), so the point statistic is the **median** of each side (what
Macrobenchmark reports) and the test is rank-based (Mann–Whitney U, no normality assumed).
The interval is a percentile bootstrap of the difference of medians, each side resampled on
its own (the runs of A and of B are independent, not paired), seeded so a report is
reproducible. A change is called significant only when both agree: p < ALPHA and the interval
excludes zero; anything else is "no significant change". With one run on each side there is no
noise estimate at all: the delta is reported without interval or p-value, and says so.

The Mann–Whitney p-value follows scipy.stats.mannwhitneyu(method="auto", two-sided): the exact
distribution of U when one side has at most 8 runs and there are no ties, else the normal
approximation with tie and continuity correction.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Sequence

import numpy as np

#: Significance level of the test and (1 - ALPHA) the interval's coverage.
ALPHA = 0.05
#: Bootstrap resamples: the interval's ends move by well under 1 % of its width past this.
N_BOOT = 10_000
#: Seed of the bootstrap (a report shows the same interval every time it is rendered).
SEED = 18
#: Exact U distribution up to this many runs on the smaller side (scipy's "auto" rule).
EXACT_MAX_N = 8
#: Rows resampled at once (bounded memory for sides with many runs).
_CHUNK = 2_000


@dataclass(frozen=True)
class MannWhitney:
    u: float  # U of side A (scipy's ``statistic``)
    p_value: float
    method: str  # "exact" | "asymptotic"


@dataclass(frozen=True)
class Difference:
    """B against A for one metric."""

    n_a: int
    n_b: int
    median_a: float
    median_b: float
    delta: float  # median_b - median_a
    delta_pct: float | None  # delta / |median_a| * 100; None when median_a is 0
    ci_low: float | None = None
    ci_high: float | None = None
    p_value: float | None = None
    test: str | None = None
    #: True / False when the sides have enough runs to tell; None with one run per side.
    significant: bool | None = None
    note: str = ""

    def to_dict(self) -> dict:
        return asdict(self)


def _exact_sf_counts(n1: int, n2: int) -> np.ndarray:
    """Counts of the arrangements of n1 + n2 ranks per value of U1 (the Gaussian binomial).

    dist(m, n)[u] = dist(m-1, n)[u - n] + dist(m, n-1)[u]: the largest rank belongs to A (it
    adds n to U1) or to B (it adds nothing). Floats: the counts overflow int64 for large n.
    """
    m_small, n_big = (n1, n2) if n1 <= n2 else (n2, n1)
    size = m_small * n_big + 1
    # row[n] = distribution for (m, n) for the current m, n = 0..n_big
    prev = [np.zeros(size) for _ in range(n_big + 1)]
    for n in range(n_big + 1):
        prev[n][0] = 1.0  # m = 0: U = 0 in exactly one way
    for m in range(1, m_small + 1):
        cur = [np.zeros(size) for _ in range(n_big + 1)]
        cur[0][0] = 1.0  # n = 0: U = 0
        for n in range(1, n_big + 1):
            shifted = np.zeros(size)
            shifted[n:] = prev[n][: size - n]
            cur[n] = shifted + cur[n - 1]
        prev = cur
    return prev[n_big]  # U's distribution is symmetric, so which side is "A" does not matter


def _ranks(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Average ranks (1-based) and the size of each tie group."""
    order = np.argsort(values, kind="mergesort")
    sorted_v = values[order]
    ranks = np.empty(len(values))
    sizes = []
    i = 0
    while i < len(sorted_v):
        j = i
        while j + 1 < len(sorted_v) and sorted_v[j + 1] == sorted_v[i]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2.0 + 1.0
        sizes.append(j - i + 1)
        i = j + 1
    return ranks, np.asarray(sizes, dtype=float)


def mann_whitney(a: Sequence[float], b: Sequence[float]) -> MannWhitney:
    """Two-sided Mann–Whitney U test of A against B (as scipy's ``mannwhitneyu``, method auto)."""
    x = np.asarray(a, dtype=float)
    y = np.asarray(b, dtype=float)
    n1, n2 = len(x), len(y)
    if n1 == 0 or n2 == 0:
        raise ValueError("Mann–Whitney needs at least one value on each side")
    ranks, ties = _ranks(np.concatenate([x, y]))
    u1 = float(ranks[:n1].sum() - n1 * (n1 + 1) / 2.0)
    u2 = n1 * n2 - u1
    u = max(u1, u2)
    has_ties = bool(np.any(ties > 1))
    if not (n1 > EXACT_MAX_N and n2 > EXACT_MAX_N) and not has_ties:
        counts = _exact_sf_counts(n1, n2)
        sf = counts[int(round(u)):].sum() / counts.sum()  # P(U >= u)
        method = "exact"
        p = 2.0 * sf
    else:
        n = n1 + n2
        tie_term = float(np.sum(ties**3 - ties))
        s = math.sqrt(n1 * n2 / 12.0 * ((n + 1) - tie_term / (n * (n - 1))))
        num = u - n1 * n2 / 2.0 - 0.5
        # every value equal: s = 0 and num = -0.5, so z = -inf and p = 1, as scipy has it
        z = num / s if s > 0 else math.copysign(math.inf, num)
        p = 2.0 * 0.5 * math.erfc(z / math.sqrt(2.0))
        method = "asymptotic"
    return MannWhitney(u=u1, p_value=float(min(1.0, max(0.0, p))), method=method)


def min_p_value(n1: int, n2: int) -> float:
    """The smallest two-sided p-value the rank test can give with these run counts (no ties):
    2 / C(n1 + n2, n1). At or above ALPHA no data could be called a significant change."""
    return min(1.0, 2.0 / math.comb(n1 + n2, n1))


def _boot_medians(values: np.ndarray, rng: np.random.Generator, n_boot: int) -> np.ndarray:
    out = np.empty(n_boot)
    n = len(values)
    if n == 1:
        out.fill(values[0])
        return out
    for start in range(0, n_boot, _CHUNK):
        k = min(_CHUNK, n_boot - start)
        idx = rng.integers(0, n, size=(k, n))
        out[start : start + k] = np.median(values[idx], axis=1)
    return out


def bootstrap_ci(
    a: Sequence[float], b: Sequence[float], *, seed: int = SEED, n_boot: int = N_BOOT, alpha: float = ALPHA,
    ratio: bool = False,
) -> tuple[float, float]:
    """Percentile bootstrap interval of median(B) - median(A) (or median(B) / median(A))."""
    x = np.asarray(a, dtype=float)
    y = np.asarray(b, dtype=float)
    rng = np.random.default_rng(seed)
    ma = _boot_medians(x, rng, n_boot)
    mb = _boot_medians(y, rng, n_boot)
    if ratio:
        with np.errstate(divide="ignore", invalid="ignore"):
            stat = mb / ma
        stat = stat[np.isfinite(stat)]
    else:
        stat = mb - ma
    if len(stat) == 0:
        return (math.nan, math.nan)
    lo, hi = np.percentile(stat, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    return float(lo), float(hi)


def compare(a: Sequence[float], b: Sequence[float], *, seed: int = SEED, n_boot: int = N_BOOT) -> Difference:
    """B against A: medians, delta, and — when either side has several runs — interval and test."""
    x = [float(v) for v in a]
    y = [float(v) for v in b]
    if not x or not y:
        raise ValueError("each side needs at least one value")
    ma, mb = float(np.median(x)), float(np.median(y))
    delta = mb - ma
    pct = delta / abs(ma) * 100.0 if ma != 0 else None
    if len(x) == 1 and len(y) == 1:
        return Difference(1, 1, ma, mb, delta, pct, note="one run per side: a delta without an interval")
    lo, hi = bootstrap_ci(x, y, seed=seed, n_boot=n_boot)
    mw = mann_whitney(x, y)
    excludes_zero = (lo > 0 and hi > 0) or (lo < 0 and hi < 0)
    significant = bool(mw.p_value < ALPHA and excludes_zero)
    note = "" if significant else "no significant change"
    if not significant and min_p_value(len(x), len(y)) >= ALPHA:
        note = (f"no significant change (too few runs to tell: with {len(x)} and {len(y)} runs the test "
                f"cannot go below p = {min_p_value(len(x), len(y)):.2g})")
    return Difference(len(x), len(y), ma, mb, delta, pct, lo, hi, mw.p_value, f"Mann–Whitney U ({mw.method})",
                      significant, note)


@dataclass(frozen=True)
class Ratio:
    """How many times slower B is than A (median B / median A), hyperfine-style, with its interval."""

    ratio: float
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    significant: bool | None


def ratio(a: Sequence[float], b: Sequence[float], *, seed: int = SEED, n_boot: int = N_BOOT) -> Ratio:
    x = [float(v) for v in a]
    y = [float(v) for v in b]
    ma, mb = float(np.median(x)), float(np.median(y))
    r = mb / ma if ma else math.inf
    if len(x) == 1 and len(y) == 1:
        return Ratio(r, None, None, None, None)
    lo, hi = bootstrap_ci(x, y, seed=seed, n_boot=n_boot, ratio=True)
    p = mann_whitney(x, y).p_value
    return Ratio(r, lo, hi, p, bool(p < ALPHA and not (lo <= 1.0 <= hi)))
