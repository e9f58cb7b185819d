"""The comparison's statistics against scipy and numpy on the same numbers (nodes/compare/stats.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

scipy_stats = pytest.importorskip("scipy.stats")

from nodes.compare import stats  # noqa: E402

finite = st.floats(min_value=-1e4, max_value=1e4, allow_nan=False, allow_infinity=False)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(finite, min_size=1, max_size=12), st.lists(finite, min_size=1, max_size=12))
def test_mann_whitney_matches_scipy_small_samples_with_and_without_ties(a, b):
    ours = stats.mann_whitney(a, b)
    ref = scipy_stats.mannwhitneyu(a, b, alternative="two-sided", method="auto")
    assert ours.u == pytest.approx(float(ref.statistic), abs=1e-9)
    assert ours.p_value == pytest.approx(float(ref.pvalue), rel=1e-9, abs=1e-12)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.integers(min_value=9, max_value=60), st.integers(min_value=9, max_value=60), st.integers(0, 2**31))
def test_mann_whitney_matches_scipy_normal_approximation(n1, n2, seed):
    rng = np.random.default_rng(seed)
    a = np.round(rng.normal(100, 10, n1), 1)  # rounding makes ties, which the approximation corrects for
    b = np.round(rng.normal(103, 10, n2), 1)
    ours = stats.mann_whitney(a, b)
    ref = scipy_stats.mannwhitneyu(a, b, alternative="two-sided", method="auto")
    assert ours.method == "asymptotic"
    assert ours.p_value == pytest.approx(float(ref.pvalue), rel=1e-9)


def test_exact_distribution_is_used_up_to_eight_runs_and_matches_scipy_exact():
    a = [10.1, 10.4, 9.8, 10.0, 10.3]
    b = [11.2, 11.0, 10.9, 11.5, 11.1, 10.95, 11.3, 11.05, 11.4, 11.25]
    ours = stats.mann_whitney(a, b)
    ref = scipy_stats.mannwhitneyu(a, b, alternative="two-sided", method="exact")
    assert ours.method == "exact"
    assert ours.p_value == pytest.approx(float(ref.pvalue), rel=1e-12)
    assert ours.p_value < 0.01


def _scipy_boot(a, b, seed):
    def stat(x, y, axis):
        return np.median(y, axis=axis) - np.median(x, axis=axis)

    res = scipy_stats.bootstrap((np.asarray(a), np.asarray(b)), stat, method="percentile", n_resamples=20_000,
                                confidence_level=0.95, rng=np.random.default_rng(seed), vectorized=True)
    return res.confidence_interval.low, res.confidence_interval.high


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_bootstrap_interval_agrees_with_scipy_bootstrap_within_monte_carlo_error(seed):
    rng = np.random.default_rng(seed)
    a = rng.lognormal(np.log(120), 0.05, 15)
    b = rng.lognormal(np.log(132), 0.05, 12)
    lo, hi = stats.bootstrap_ci(a, b, seed=seed, n_boot=20_000)
    slo, shi = _scipy_boot(a, b, seed + 100)
    width = shi - slo
    assert lo == pytest.approx(slo, abs=0.1 * width)
    assert hi == pytest.approx(shi, abs=0.1 * width)
    assert lo < float(np.median(b) - np.median(a)) < hi


def test_bootstrap_is_reproducible_with_its_seed_and_moves_with_another():
    rng = np.random.default_rng(5)
    a, b = rng.normal(10, 1, 40), rng.normal(11, 1, 40)
    assert stats.bootstrap_ci(a, b) == stats.bootstrap_ci(a, b)
    assert stats.bootstrap_ci(a, b, seed=1, n_boot=500) != stats.bootstrap_ci(a, b, seed=2, n_boot=500)


def test_a_clear_shift_is_significant_and_noise_is_not():
    rng = np.random.default_rng(7)
    base = rng.normal(100, 2, 10)
    slower = rng.normal(120, 2, 10)
    same = rng.normal(100, 2, 10)
    d = stats.compare(base, slower)
    assert d.significant is True and d.ci_low > 0 and d.p_value < 0.001
    assert d.median_a == pytest.approx(float(np.median(base)))
    assert d.delta == pytest.approx(float(np.median(slower) - np.median(base)))
    assert d.delta_pct == pytest.approx(d.delta / abs(d.median_a) * 100)
    n = stats.compare(base, same)
    assert n.significant is False and n.note.startswith("no significant change")
    assert n.ci_low < 0 < n.ci_high


def test_one_run_per_side_gives_a_delta_without_interval_and_says_so():
    d = stats.compare([100.0], [110.0])
    assert d.delta == 10.0 and d.delta_pct == pytest.approx(10.0)
    assert d.ci_low is None and d.p_value is None and d.significant is None
    assert "one run per side" in d.note


def test_too_few_runs_can_never_be_significant_and_the_note_says_why():
    # 2 vs 2 runs: the smallest two-sided p the rank test can give is 2 / C(4, 2) = 1/3
    assert stats.min_p_value(2, 2) == pytest.approx(1 / 3)
    assert stats.min_p_value(4, 4) == pytest.approx(2 / math.comb(8, 4))
    d = stats.compare([100.0, 101.0], [200.0, 201.0])
    assert d.significant is False and "too few runs" in d.note


def test_ratio_interval_covers_the_planted_ratio():
    rng = np.random.default_rng(11)
    a = rng.normal(50, 1, 20)
    b = 1.3 * rng.normal(50, 1, 20)
    r = stats.ratio(a, b)
    assert r.ci_low < 1.3 < r.ci_high and r.significant is True
    assert r.ratio == pytest.approx(float(np.median(b) / np.median(a)))
