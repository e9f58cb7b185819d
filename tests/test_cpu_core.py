"""cpu._core (numpy) gives what cpu._core_loop (one point at a time) gives: frequency min, max
and time-weighted mean, idle residency per state, its total and share, on random points with
repeated times, exits without an entry, deeper states without an exit, points past the end
and NaN (which takes the loop)."""
import msgspec
import numpy as np
import pytest

from nodes.perf.metrics import cpu
from nodes.perf.parsers.perfetto_cpu import IDLE_EXIT


def _points(rng, n, nan: bool):
    ts = np.sort(rng.integers(0, 200, n)).astype(float) * rng.choice([1.0, 0.37])
    freq = [(t, float(k)) for t, k in zip(ts.tolist(), rng.choice([300000.0, 1804800.0, 2419200.0, 0.0], n).tolist())]
    its = np.sort(rng.integers(0, 200, n)).astype(float) * 1.3
    idle = [(t, int(s)) for t, s in zip(its.tolist(), rng.choice([0, 1, 2, IDLE_EXIT, IDLE_EXIT], n).tolist())]
    if nan and n:
        freq[n // 2] = (freq[n // 2][0], float("nan"))
    return freq, idle


@pytest.mark.parametrize("seed", range(24))
def test_core_equals_the_loop(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 60))
    freq, idle = _points(rng, n, nan=seed % 6 == 5)
    end = float(rng.choice([0.0, 150.0, 400.0]))
    for f, i in ((freq, idle), (freq, []), ([], idle)):
        got = cpu._core(3, f, i, end, 250.0)
        want = cpu._core_loop(3, f, i, end, 250.0)
        assert msgspec.json.encode(got) == msgspec.json.encode(want)
