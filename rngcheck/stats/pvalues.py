"""p-values: exact or scipy survival functions, kept accurate in both tails.

Every first- or second-level result carries:
  * ``p``: the upper-tail probability P(T >= t) under the null hypothesis (scipy's ``sf``,
    never ``1 - cdf``, so tiny values are not lost);
  * ``q``: the lower-tail probability P(T <= t) (scipy's ``cdf``) for statistics where a
    too-good fit is also a defect (a plain counter gives perfectly flat byte counts:
    chi-square near 0, p near 1); ``None`` when only the upper tail means anything;
  * ``log10_p``: log10 of p, finite even when p underflows a double where an asymptotic
    expansion of the tail is known (chi-square, normal, Poisson); null when p underflows
    and none is (a KS p-value below 1e-308), and for degenerate statistics.

``display(p, q)`` renders a p-value without ever rounding to 0 or 1: "< 1e-300",
"1 - 3.2e-12", "0.4213".
"""

from __future__ import annotations

import math

import numpy as np

from . import kolmogorov
from .special import special

TINY = 1e-300
LN10 = math.log(10.0)


class PValue(dict):
    """A p-value record: {"p", "q", "log10_p", "tail"}; a dict so it serialises as JSON."""

    @property
    def p(self) -> float:
        return self["p"]

    @property
    def q(self):
        return self["q"]

    def tail_probability(self) -> float:
        """The probability used for the verdict: the smaller tail (two-sided tests: p itself).

        For a statistic judged on both tails the smaller of p and q is returned; the
        verdict thresholds account for the factor two (see battery.Thresholds).
        """
        if self["q"] is None:
            return self["p"]
        return min(self["p"], self["q"])


def _record(p: float, q, log10_p: float | None = None, tail: str = "upper") -> PValue:
    if p != p:  # NaN: a degenerate statistic; kept as NaN here, the document shows null
        return PValue(p=float("nan"), q=None, log10_p=None, tail=tail)
    p = float(min(max(p, 0.0), 1.0))
    if log10_p is None and p > 0:
        log10_p = math.log10(p)
    if log10_p is not None and not math.isfinite(log10_p):
        log10_p = None  # below the double range and no asymptotic available: "< 1e-300"
    if q is not None and q != q:
        q = None
    return PValue(p=p, q=None if q is None else float(min(max(q, 0.0), 1.0)),
                  log10_p=None if log10_p is None else float(log10_p), tail=tail)


def _log_gammaincc(a: float, x: float) -> float:
    """ln Q(a, x) (regularised upper incomplete gamma) for x far in the upper tail.

    Asymptotic series (Abramowitz & Stegun 6.5.32):
    Q(a,x) ~ x^(a-1) e^-x / Gamma(a) * (1 + (a-1)/x + (a-1)(a-2)/x^2 + ...).
    Only used when scipy's gammaincc underflows to 0, i.e. p < 1e-308.
    """
    series, term = 1.0, 1.0
    for k in range(1, 30):
        term *= (a - k) / x
        if abs(term) < 1e-16:
            break
        series += term
    return (a - 1) * math.log(x) - x - special.gammaln(a) + math.log(max(series, 1e-300))


def chi2(statistic: float, df: float, *, both_tails: bool = True) -> PValue:
    """Chi-square with ``df`` degrees of freedom: p = P(X >= statistic)."""
    statistic = float(statistic)
    p = _chi2_sf(statistic, df)
    log10_p = None
    if p < TINY:  # continue the tail in log space
        log10_p = _log_gammaincc(df / 2.0, statistic / 2.0) / LN10
    q = _chi2_cdf(statistic, df) if both_tails else None
    return _record(p, q, log10_p, "two-sided-chi2" if both_tails else "upper")


# scipy.stats' chi2, poisson and binom sf/cdf without importing scipy.stats (0.45 s of start-up,
# docs/statistics.md, Speed): the same special functions those distributions call, with the same
# answers outside their supports (rv_continuous / rv_discrete .sf and .cdf), so the same bits
# (tests/test_stats_pvalues_nostats.py holds every one to scipy.stats).

def _chi2_sf(x: float, df) -> float:
    if x != x or not df > 0:
        return float("nan")
    return 1.0 if x <= 0 else 0.0 if x == math.inf else float(special.chdtrc(df, x))


def _chi2_cdf(x: float, df) -> float:
    if x != x or not df > 0:
        return float("nan")
    return 0.0 if x <= 0 else 1.0 if x == math.inf else float(special.chdtr(df, x))


def _clip(value) -> float:
    return float(min(max(float(value), 0.0), 1.0))


def _poisson_sf(k: int, mu: float) -> float:
    """P(X > k), X ~ Poisson(mu) (scipy.stats.poisson.sf(k, mu))."""
    if not mu >= 0:
        return float("nan")
    return 1.0 if k < 0 else _clip(special.pdtrc(float(math.floor(k)), mu))


def _poisson_cdf(k: int, mu: float) -> float:
    if not mu >= 0:
        return float("nan")
    return 0.0 if k < 0 else _clip(special.pdtr(float(math.floor(k)), mu))


def igamc(a: float, x: float) -> PValue:
    """NIST's igamc(a, x) = Q(a, x), as a p-value (upper tail only, as NIST uses it)."""
    p = float(special.gammaincc(a, x))
    log10_p = _log_gammaincc(a, x) / LN10 if p < TINY and x > 0 else None
    return _record(p, None, log10_p)


def normal_two_sided(z: float) -> PValue:
    """p = P(|Z| >= |z|) = erfc(|z| / sqrt 2) for a standard normal Z (log-safe)."""
    z = abs(float(z))
    log_p = math.log(2.0) + float(special.log_ndtr(-z))
    return _record(math.exp(log_p), None, log_p / LN10, "two-sided")


def erfc_p(x: float) -> PValue:
    """p = erfc(x), x >= 0 (NIST's frequency, runs and spectral tests): erfc(x) = 2 Phi(-x sqrt 2)."""
    return normal_two_sided(abs(float(x)) * math.sqrt(2.0))


def poisson(observed: int, mean: float) -> PValue:
    """Poisson count: p = P(X >= observed), q = P(X <= observed) (exact)."""
    p = _poisson_sf(observed - 1, mean)
    q = _poisson_cdf(observed, mean)
    log10_p = None
    if p < TINY:  # the leading term of the tail: log pmf(observed) (scipy.stats.poisson.logpmf)
        if mean >= 0 and observed >= 0:
            log_pmf = float(special.xlogy(float(observed), mean) - special.gammaln(float(observed) + 1) - mean)
        else:
            log_pmf = -math.inf
        log10_p = log_pmf / LN10
    return _record(p, q, log10_p, "two-sided-count")


def _binomial_functions():
    """The binomial's functions scipy.stats.binom calls (scipy.stats itself costs 0.45 s to
    import), or (None, None) with another SciPy: binom_sf and binom_cdf then ask scipy.stats."""
    ufuncs = getattr(special, "_ufuncs", None)
    return getattr(ufuncs, "_binom_sf", None), getattr(ufuncs, "_binom_cdf", None)


def binom_sf(k: int, trials: int, prob: float) -> float:
    """scipy.stats.binom.sf(k, trials, prob) (P(X > k)) without importing scipy.stats."""
    _binom_sf = _binomial_functions()[0]
    if _binom_sf is None or not (trials >= 0 and int(trials) == trials and 0 <= prob <= 1):
        from scipy import stats  # pragma: no cover - not reached with scipy 1.17 and valid arguments
        return float(stats.binom.sf(k, trials, prob))
    # rv_discrete.sf: 1 below the support [0, trials], 0 at its top
    return 1.0 if k < 0 else 0.0 if k >= trials else _clip(_binom_sf(float(math.floor(k)), trials, prob))


def binom_cdf(k: int, trials: int, prob: float) -> float:
    """scipy.stats.binom.cdf(k, trials, prob) (P(X <= k)) without importing scipy.stats."""
    _binom_cdf = _binomial_functions()[1]
    if _binom_cdf is None or not (trials >= 0 and int(trials) == trials and 0 <= prob <= 1):
        from scipy import stats  # pragma: no cover - not reached with scipy 1.17 and valid arguments
        return float(stats.binom.cdf(k, trials, prob))
    # rv_discrete.cdf: 0 below the support [0, trials], 1 at its top
    return 0.0 if k < 0 else 1.0 if k >= trials else _clip(_binom_cdf(float(math.floor(k)), trials, prob))


def binomial(successes: int, trials: int, prob: float = 0.5) -> PValue:
    """Binomial count, both tails exact: p = P(X >= k), q = P(X <= k)."""
    return _record(binom_sf(successes - 1, trials, prob), binom_cdf(successes, trials, prob), None,
                   "two-sided-count")


def from_float(p: float) -> PValue:
    """A p-value computed elsewhere (upper tail only)."""
    return _record(p, None)


def ks_uniform(pvalues) -> tuple[float, PValue]:
    """Second level: Kolmogorov-Smirnov of first-level p-values against U(0,1).

    Source: NIST SP 800-22 rev1a section 4.2.2 (uniformity of p-values; NIST uses a
    chi-square on 10 bins, we use KS as TestU01 does, guide section 1.3).

    The statistic D = max(D+, D-), D+ = max(i/n - F(x_i)), D- = max(F(x_i) - (i-1)/n) over the
    sorted x_1..x_n, F the uniform's cdf (x clipped to [0, 1]): the bits scipy.stats.kstest(x,
    "uniform") gives. The p-value P(D_n >= D) is the two-sided distribution as Simard and
    L'Ecuyer compute it (rngcheck/stats/kolmogorov.py, without scipy.stats: 0.57 s of CPU to
    import; exact for n <= 140, asymptotic in places above, as kstwo): kstest's within 1e-9
    relative (tests/test_stats_kolmogorov.py). NaN where a value is.
    """
    x = np.sort(np.asarray(pvalues, dtype=float))
    n = x.size
    if n == 0 or x[-1] != x[-1]:   # NaN sorts last
        return math.nan, _record(math.nan, None)
    cdf = np.clip(x, 0.0, 1.0)
    d_plus = (np.arange(1.0, n + 1) / n - cdf).max()
    d_minus = (cdf - np.arange(0.0, n) / n).max()
    d = float(d_plus if d_plus > d_minus else d_minus)
    return d, _record(kolmogorov.sf(n, d), None)


def sidak(min_tail: float, count: int) -> PValue:
    """Probability that the smallest of ``count`` independent p-values is <= min_tail."""
    if min_tail <= 0:
        return _record(0.0, None)
    p = -math.expm1(count * math.log1p(-min(min_tail, 1.0))) if min_tail < 1 else 1.0
    return _record(p, None, math.log10(min(1.0, count * min_tail)) if p < TINY else None)


def display(p: float, q=None) -> str:
    """A p-value as text that never rounds to 0 or 1."""
    if p is None or p != p:
        return "undefined (degenerate statistic)"
    if q is not None and p > 0.5 and q < 1e-4:
        return f"1 - {q:.2g}" if q >= TINY else "1 - < 1e-300"
    if p < TINY:
        return "< 1e-300"
    if p < 1e-4:
        return f"{p:.2g}"
    if p > 0.9999:
        return "> 0.9999"
    return f"{p:.4f}"
