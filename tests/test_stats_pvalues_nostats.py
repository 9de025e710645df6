"""pvalues' chi-square, Poisson, binomial and Kolmogorov-Smirnov p-values without scipy.stats
(docs/statistics.md, Speed): the same bits as scipy.stats gives, on many arguments (the KS
p-value within 1e-9: tests/test_stats_kolmogorov.py), and a run leaves scipy.stats out."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from scipy import stats

from rngcheck.stats import practrand_kinds, pvalues


def _same(a, b) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[key], b[key]) for key in a)
    return (a != a and b != b) or a == b


def _chi2_before(statistic, df):
    """pvalues.chi2 as it was, on scipy.stats."""
    p = float(stats.chi2.sf(statistic, df))
    log10_p = pvalues._log_gammaincc(df / 2.0, statistic / 2.0) / pvalues.LN10 if p < pvalues.TINY else None
    return pvalues._record(p, float(stats.chi2.cdf(statistic, df)), log10_p, "two-sided-chi2")


def _poisson_before(observed, mean):
    p = float(stats.poisson.sf(observed - 1, mean))
    log10_p = float(stats.poisson.logpmf(observed, mean)) / pvalues.LN10 if p < pvalues.TINY else None
    return pvalues._record(p, float(stats.poisson.cdf(observed, mean)), log10_p, "two-sided-count")


def _binomial_before(successes, trials, prob):
    return pvalues._record(float(stats.binom.sf(successes - 1, trials, prob)),
                           float(stats.binom.cdf(successes, trials, prob)), None, "two-sided-count")


def test_chi2_is_scipy_stats_bit_for_bit():
    rng = np.random.default_rng(44)
    dfs = [1, 2, 3, 5, 9, 11, 24, 26, 255, 1023, 65535, 0.5, 7.5]
    for df in dfs:
        xs = np.concatenate([rng.gamma(df / 2, 2, 200), [0.0, -1.0, 1e-300, df, 50 * df + 1000, np.inf, np.nan]])
        for x in xs:
            assert _same(pvalues.chi2(float(x), df), _chi2_before(float(x), df)), (df, x)


def test_poisson_is_scipy_stats_bit_for_bit():
    rng = np.random.default_rng(45)
    for mean in (0.0, 0.5, 4.0, 64.0, 1e3, 65536.0, 4.0 * 2 ** 14):
        for k in np.concatenate([rng.poisson(mean, 100), [0, 1, int(mean * 3 + 50), int(mean * 10 + 2000)]]):
            k = int(k)
            assert _same(pvalues.poisson(k, mean), _poisson_before(k, mean)), (mean, k)


def test_binomial_is_scipy_stats_bit_for_bit():
    rng = np.random.default_rng(46)
    for trials, prob in ((1, 0.5), (32, 0.5), (1000, 0.5), (1 << 20, 0.5), (100, 0.01), (5000, 0.25)):
        for k in np.concatenate([rng.binomial(trials, prob, 100), [0, 1, trials - 1, trials, trials + 1]]):
            k = int(k)
            assert _same(pvalues.binomial(k, trials, prob), _binomial_before(k, trials, prob)), (trials, prob, k)


@pytest.mark.parametrize("bits", [32 << level for level in range(0, 14)] + [33, 100, 777])
def test_weight_classes_are_the_ppf_cut(bits):
    dist = stats.binom(bits, 0.5)
    lower = int(dist.ppf(1 / 3))
    if dist.cdf(lower) > 1 / 3:
        lower -= 1
    got = practrand_kinds._weight_classes(bits)
    assert got[0] == lower and got[1] == bits - lower
    assert got[2][0] == float(dist.cdf(lower))
    assert practrand_kinds._word_class_p()[0] == float(stats.binom(32, 0.5).cdf(practrand_kinds.WORD_CUTS[0]))


def test_ks_uniform_is_scipy_kstest():
    """The statistic is kstest's bit for bit, the p-value within 1e-9 relative (kolmogorov.py
    computes it without scipy.stats), on uniform and far from uniform samples of every size the
    battery makes (the method changes at n = 140 and with n d^2), ties, 0 and 1, values outside
    [0, 1]; NaN where kstest says NaN."""
    rng = np.random.default_rng(47)
    samples = []
    for n in (1, 2, 3, 5, 10, 32, 100, 139, 140, 141, 200, 512, 1000, 2048, 4096, 20000):
        samples += [rng.random(n), rng.beta(1.1, 1.0, n), rng.beta(2.0, 2.0, n), rng.random(n) ** 3,
                    np.round(rng.random(n), 2), np.full(n, 0.5), np.linspace(0, 1, n), rng.random(n) * 0.01]
    samples += [[0.0], [1.0], [0.0, 1.0], [0.0] * 7, [1.0] * 9, [0.5, 1.5], [-0.1, 0.3]]
    for values in samples:
        statistic, p = pvalues.ks_uniform(values)
        expected = stats.kstest(np.sort(np.asarray(values, dtype=float)), "uniform", method="auto")
        assert statistic == float(expected.statistic), len(values)
        assert abs(p.p - float(expected.pvalue)) <= 1e-9 * float(expected.pvalue), (len(values), p.p, expected)
    statistic, p = pvalues.ks_uniform([0.2, np.nan, 0.4])
    assert statistic != statistic and p.p != p.p


def test_the_counting_leaves_scipy_special_out():
    """In a fresh process: the battery's import and a whole standard-tier reading (every test's
    counting, as a forked worker does it) import no scipy.special; the p-values then load its
    compiled ufuncs, and not the package around them."""
    code = ("import sys\n"
            "from rngcheck.stats import battery\n"
            "from rngcheck.stats.streams import philox_source\n"
            "group = battery.stream_groups(philox_source(3), 'standard', 16 << 20, False)[0]\n"
            "accs, got = battery.feed(group.source, group.factories, group.words)\n"
            "print(got, 'scipy.special' in sys.modules, len(accs))\n"
            "results = [entry for acc in accs for entry in acc.result()]\n"
            "print('scipy.special._ufuncs' in sys.modules, 'scipy.special' in sys.modules, len(results) > len(accs))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    read, results = out.stdout.splitlines()
    words, loaded, tests = read.split()
    assert int(words) == 4 << 20 and loaded == "False" and int(tests) > 30, out.stdout
    assert results == "True False True", out.stdout  # its compiled ufuncs only (rngcheck.stats.special)


def test_a_whole_run_leaves_scipy_stats_out():
    """In a fresh process: the battery's import and a whole run, second levels and the two-process
    reading included, import no scipy.stats (0.57 s of CPU)."""
    code = ("import sys\n"
            "from rngcheck.stats import battery\n"
            "from rngcheck.stats.streams import philox_source\n"
            "before = 'scipy.stats' in sys.modules\n"
            "battery.PARALLEL_MIN_WORDS = 1 << 16\n"
            "doc = battery.run(philox_source(3), tier='smoke', nbytes=4 << 20, workers=2)\n"
            "levels = sum(e['level'] == 'second-level' for e in doc['results'])\n"
            "print(before, 'scipy.stats' in sys.modules, levels > 10)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False False True", out
