"""rngcheck/stats/kolmogorov.py: the two-sided KS distribution without scipy.stats, held to
scipy.stats.kstwo (the same method: Simard and L'Ecuyer 2011) on every branch."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
from scipy import special, stats

from rngcheck.stats import kolmogorov

SIZES = [1, 2, 3, 4, 5, 7, 10, 20, 50, 100, 139, 140, 141, 142, 200, 512, 1000, 2048, 4096, 10000, 65536,
         100000, 100001]


def _statistics(n: int, rng) -> np.ndarray:
    """d over the whole support and densely where the p-values live (d ~ 1/sqrt(n)), with the
    edges of every branch: 1/(2n), 1/n, (n-1)/n, 1/2, n d^2 = 0.754693, 2.2, 4, 18, 370,
    n d^(3/2) = 1.4."""
    edges = [0.5 / n, 1 / n, (n - 1) / n, 0.5, 1.0, 0.0]
    edges += [math.sqrt(c / n) for c in (0.754693, 2.2, 4.0, 18.0, 370.0)] + [(1.4 / n) ** (2 / 3)]
    # scipy.special.smirnov (both sides call it) is a sum of about n terms: fewer points at n > 10^4
    small = n <= 10000
    edges = [e * f for e in edges for f in ((1 - 1e-12, 1.0, 1 + 1e-12) if small else (1.0,)) if 0 <= e * f <= 1]
    many = 200 if small else 5
    return np.concatenate([rng.random(many), rng.random(many + 100 if small else many) * 3 / math.sqrt(n), edges])


@pytest.mark.parametrize("n", SIZES)
def test_sf_is_scipy_kstwo_within_1e_9(n):
    rng = np.random.default_rng(n)
    for d in _statistics(n, rng):
        got, expected = kolmogorov.sf(n, float(d)), float(stats.kstwo.sf(d, n))
        assert 0.0 <= got <= 1.0
        assert abs(got - expected) <= 1e-9 * expected, (n, d, got, expected)


@pytest.mark.parametrize("n", [3, 100, 141, 2048, 100001])
def test_where_both_use_smirnov_the_bits_are_the_same(n):
    """The branches of Miller's approximation and of d >= 1/2 call scipy.special.smirnov as kstwo
    does: the same bits."""
    for d in np.linspace(0.5, 0.99, 20).tolist() + [math.sqrt(c / n) for c in (2.3, 5.0, 30.0) if c / n < 0.25]:
        t = n * d
        if t >= n - 1 or (n <= 140 and t * d <= 4.0 and d < 0.5):
            continue
        assert kolmogorov.sf(n, d) == float(stats.kstwo.sf(d, n)), (n, d)


def test_the_ends_and_nan():
    for n in (1, 5, 2048):
        assert kolmogorov.sf(n, 0.0) == 1.0 and kolmogorov.sf(n, 0.5 / n) == 1.0
        assert kolmogorov.sf(n, 1.0) == 0.0 and kolmogorov.sf(n, 1.5) == 0.0
        assert math.isnan(kolmogorov.sf(n, math.nan))
    # Ruben and Gambino's upper end: 2 (1 - d)^n
    assert kolmogorov.sf(10, 0.95) == 2 * (1 - 0.95) ** 10
    # n = 1: D_1 = max(x, 1 - x) is uniform on [1/2, 1]
    for d in (0.6, 0.75, 0.9):
        assert abs(kolmogorov.sf(1, d) - 2 * (1 - d)) < 1e-15


def test_the_durbin_matrix_is_exact_where_the_distribution_is_known():
    """n = 2: P(D_2 < d) = 2 (2d - 1/2)^2 for 1/4 <= d <= 1/2 (by hand: the two points must lie in
    [1/2 - d, d] and [1 - d, 1/2 + d]); the Durbin matrix gives it, and gives Smirnov's
    one-sided tail doubled, less the probability of crossing both, wherever that is zero."""
    for d in (0.3, 0.4, 0.45):
        assert abs(kolmogorov._durbin_cdf(2, d) - 2 * (2 * d - 0.5) ** 2) < 1e-15
    for n in (20, 60):
        d = 0.49
        assert abs((1 - kolmogorov._durbin_cdf(n, d)) - 2 * special.smirnov(n, d)) < 1e-12


def test_computing_it_imports_no_scipy_stats():
    code = ("import sys\nfrom rngcheck.stats import kolmogorov\n"
            "p = [kolmogorov.sf(n, d) for n in (10, 141, 2048, 200000) for d in (0.01, 0.03, 0.2, 0.7)]\n"
            "print('scipy.stats' in sys.modules, len(p))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False 16"
