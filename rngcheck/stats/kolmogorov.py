"""The two-sided one-sample Kolmogorov-Smirnov distribution: P(D_n >= d), the p-value of the
battery's second level (pvalues.ks_uniform), without scipy.stats (0.57 s of CPU to import).

D_n = sup |F_n(t) - t| over n independent U(0, 1) values. The formulas are the published ones,
written here; which one is used where follows Simard and L'Ecuyer ("Computing the Two-Sided
Kolmogorov-Smirnov Distribution", Journal of Statistical Software 39(11), 2011) with the
thresholds scipy.stats' ``kstwo`` uses, so that both take the same formula at every (n, d). Exact
for n <= 140 (but for Miller's approximation below a p-value of 7e-4) and wherever the Durbin
matrix or Ruben and Gambino's formulas are used; elsewhere, for n > 140, Pelz and Good's
asymptotic series or Miller's approximation, as kstwo (relative errors measured against the exact
value: 2e-5 at n = 141, n d^2 = 2.1; 4e-7 at n = 500, n d^2 = 1). With t = n d:

  R1. d <= 1/(2n): P = 1; d >= 1: P = 0 (outside the support).
  R2. Ruben and Gambino (1982), exact at both ends: t <= 1: P(D_n < d) = n!/n^n (2t - 1)^n;
      t >= n - 1: P = 2 (1 - d)^n.
  R3. d >= 1/2: P = 2 P(D_n+ >= d), exactly (D_n+ + D_n- <= 1: no sample crosses both bounds);
      P(D_n+ >= d) is Smirnov's one-sided tail, scipy.special.smirnov.
  R4. n <= 140: n d^2 <= 4: 1 - P(D_n < d), exact, from the Durbin matrix (R6); above, Miller's
      approximation 2 P(D_n+ >= d) (a p-value below 7e-4, whose relative error is of its order).
      Simard and L'Ecuyer use Pomeranz's recursion for 0.754693 < n d^2 <= 4: the Durbin matrix is
      exact there too, and at most 49 x 49 at these n.
  R5. n > 140: n d^2 >= 370: P = 0 (below 1e-320); n d^2 >= 2.2: Miller's 2 P(D_n+ >= d); below,
      1 - P(D_n < d), P(D_n < d) from the Durbin matrix where n <= 100000 and n d^(3/2) <= 1.4
      (a matrix of at most 117 x 117), from Pelz and Good's asymptotic series (R7) otherwise.
  R6. Durbin (1973), as Marsaglia, Tsang and Wang (2003) compute it: with k = floor(t) + 1,
      m = 2k - 1, h = k - t, the m x m matrix H with H[i][j] = 1/(i - j + 1)! for j <= i + 1
      (0 otherwise), less h^(i+1)/(i+1)! in column 0 and h^(m-j)/(m-j)! in row m - 1, plus
      (2h - 1)^m/m! at H[m-1][0] where 2h > 1; then P(D_n < d) = n!/n^n (H^n)[k-1][k-1].
  R7. Pelz and Good (1976): with z = d sqrt(n), P(D_n <= d) ~ K0(z) + K1(z)/n^(1/2) +
      K2(z)/n + K3(z)/n^(3/2), the K_i as Simard and L'Ecuyer give them (``_pelz_good``).

Against scipy.stats.kstwo.sf (tests/test_stats_kolmogorov.py): the same value to within 1e-9
relative wherever both compute (the same formulas, evaluated in another order; in R4's Pomeranz
band an exact value computed another way), bit for bit where both call scipy.special.smirnov.
"""

from __future__ import annotations

import math

import numpy as np

from .special import special

SQRT_2PI = math.sqrt(2.0 * math.pi)
PI2 = math.pi ** 2


def sf(n: int, d: float) -> float:
    """P(D_n >= d) for n U(0, 1) values (n >= 1); NaN for a NaN d."""
    if d != d:
        return math.nan
    if d >= 1.0:                                        # R1
        return 0.0
    t = n * d
    if t <= 0.5:
        return 1.0
    if t <= 1.0:                                        # R2, the lower end
        return _clip(1.0 - _scaled_factorial_ratio(n, 2.0 * t - 1.0))
    if t >= n - 1:                                      # R2, the upper end
        return _clip(2.0 * (1.0 - d) ** n)
    if d >= 0.5:                                        # R3
        return _clip(2.0 * float(special.smirnov(n, d)))
    nd2 = t * d
    if n <= 140:                                        # R4
        if nd2 <= 4.0:
            return _clip(1.0 - _durbin_cdf(n, d))
        return _clip(2.0 * float(special.smirnov(n, d)))
    if nd2 >= 370.0:                                    # R5
        return 0.0
    if nd2 >= 2.2:
        return _clip(2.0 * float(special.smirnov(n, d)))
    if n <= 100000 and n * d ** 1.5 <= 1.4:
        return _clip(1.0 - _durbin_cdf(n, d))
    return _clip(1.0 - _pelz_good(n, d))


def _clip(p: float) -> float:
    return min(max(p, 0.0), 1.0)


def _scaled_factorial_ratio(n: int, base: float, value: float = 1.0, exponent: int = 0) -> float:
    """value * 2^exponent * n!/n^n * base^n: the n factors (i/n) base split into mantissas and
    powers of two (np.frexp), the mantissas multiplied 512 at a time (no underflow: each is at
    least 1/2), the powers of two added exactly."""
    if base == 0.0 or value == 0.0:
        return 0.0
    value, shift = math.frexp(value)
    exponent += shift
    mantissas, exponents = np.frexp(np.arange(1, n + 1, dtype=float) / n * base)
    exponent += int(exponents.sum())
    for start in range(0, n, 512):
        value, shift = math.frexp(value * float(np.prod(mantissas[start:start + 512])))
        exponent += shift
    return math.ldexp(value, exponent)


def _durbin_cdf(n: int, d: float) -> float:
    """P(D_n < d) from the Durbin matrix (R6), H^n by repeated squaring with every product
    rescaled by a power of two (exact: no rounding) to stay within the double range."""
    t = n * d
    k = int(t) + 1
    m = 2 * k - 1
    h = k - t
    steps = np.subtract.outer(np.arange(m), np.arange(m)) + 1         # i - j + 1
    factorials = np.array([math.factorial(s) for s in range(m + 1)], dtype=float)
    matrix = np.where(steps >= 0, 1.0, 0.0)
    powers = h ** np.arange(1, m + 1)                                   # h^1 .. h^m
    matrix[:, 0] -= powers
    matrix[m - 1, :] -= powers[::-1]
    if 2.0 * h > 1.0:
        matrix[m - 1, 0] += (2.0 * h - 1.0) ** m
    matrix /= np.where(steps >= 1, factorials[np.clip(steps, 0, m)], 1.0)

    result, result_exponent = None, 0
    base, base_exponent = matrix, 0
    power = n
    while True:
        if power & 1:
            if result is None:
                result, result_exponent = base.copy(), base_exponent
            else:
                result, result_exponent = _rescaled(result @ base, result_exponent + base_exponent)
        power >>= 1
        if not power:
            break
        base, base_exponent = _rescaled(base @ base, 2 * base_exponent)
    assert result is not None
    return _scaled_factorial_ratio(n, 1.0, float(result[k - 1, k - 1]), result_exponent)


def _rescaled(matrix, exponent: int):
    """``matrix`` * 2^exponent as (a matrix whose largest magnitude is in [0.5, 1), exponent)."""
    largest = float(np.abs(matrix).max())
    if largest == 0.0 or not math.isfinite(largest):
        return matrix, exponent
    shift = math.frexp(largest)[1]
    return np.ldexp(matrix, -shift), exponent + shift


def _pelz_good(n: int, d: float) -> float:
    """P(D_n <= d) from Pelz and Good's series (R7). The sums run over odd m = 2j - 1 (the terms
    e^(-pi^2 m^2 / (8 z^2))) and over j >= 1 (the terms e^(-pi^2 j^2 / (2 z^2))), j = 1 .. J with J
    one more than the least j where pi^2 ((2j - 1)^2 - 1) / (8 z^2) >= 60: every later term is below
    e^-60 of the first of its sum (their polynomial factors, at most m^6 < 10^7 for the z < 1.5 of
    R5, leave it below 10^-19), so the sums are whole to double precision."""
    z = d * math.sqrt(n)
    z2 = z * z
    terms = math.ceil((1.0 + math.sqrt(1.0 + 480.0 * z2 / PI2)) / 2.0) + 1
    j = np.arange(terms, 0, -1, dtype=float)                  # smallest terms first
    m2 = (2.0 * j - 1.0) ** 2
    odd = np.exp(-PI2 * m2 / (8.0 * z2))
    whole = np.exp(-PI2 * j * j / (2.0 * z2)) * j * j
    a = PI2 * m2 / 4.0                                        # pi^2 m^2 / 4

    k0 = SQRT_2PI / z * odd.sum()
    k1 = SQRT_2PI / (6.0 * z2 * z2) * ((a - z2) * odd).sum()
    k2 = (SQRT_2PI / (72.0 * z ** 7)
          * ((6.0 * z ** 6 + 2.0 * z2 * z2 + (2.0 * z2 * z2 - 5.0 * z2) * a + (1.0 - 2.0 * z2) * a * a) * odd).sum()
          - PI2 * SQRT_2PI / (36.0 * z2 * z) * whole.sum())
    k3 = (SQRT_2PI / (6480.0 * z ** 10)
          * ((-30.0 * z ** 6 - 90.0 * z ** 8 + (135.0 * z2 * z2 - 96.0 * z ** 6) * a
              + (212.0 * z2 * z2 - 60.0 * z2) * a * a + (5.0 - 30.0 * z2) * a ** 3) * odd).sum()
          + PI2 * SQRT_2PI / (216.0 * z ** 6) * ((3.0 * z2 - PI2 * j * j) * whole).sum())
    root = math.sqrt(n)
    return k0 + k1 / root + k2 / n + k3 / (n * root)
