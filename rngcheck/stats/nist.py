"""NIST SP 800-22 rev1a tests (Rukhin et al., NIST Special Publication 800-22 Revision 1a, 2010).

Two forms of each test:
  * a reference function on a 0/1 bit array that follows the document step by step and
    reproduces its worked examples (tests/test_stats_nist.py checks them all) and the p-values
    NIST's program sts-2.1.2 prints for e, pi, sqrt 2 and sqrt 3 (rev1a Appendix B, to six
    decimals: tests/test_stats_nist_sts.py). Where the text and sts-2.1.2 differ (longest-run
    and linear complexity tables, rank and overlapping-template probabilities) the function
    follows the program, and says so; the text's variant stays available. All 15 tests;
    ``rngcheck nist`` (nist_sts.py) runs them on sequences as sts does;
  * a streaming accumulator on 32-bit words (bit order: rngcheck.stats.bits), vectorised,
    checked against the reference function on random data: here for sections 2.1 - 2.6 and
    2.11 - 2.13, in nist_stream.py for 2.7 - 2.10, 2.14 and 2.15.

A sample is 2^20 bits (2^15 words; NIST suggests n >= 10^6). Each accumulator reports
the test on the whole stream ("aggregate": the counts of every sample pooled, the most
powerful form against a small constant bias) and the second level (KS on the per-sample
p-values, NIST section 4.2.2).
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import cache

import numpy as np
from scipy import special

from . import pvalues
from .accumulators import Accumulator, chi2_counts
from .bits import ones as count_ones
from .bits import walk_extremes
from .tiers import MiB

SAMPLE_WORDS = 1 << 15  # 2^20 bits


class DoesNotApply(str):
    """A test that does not apply to this sequence (too short, too few cycles): the reason.

    Not a failure and not a p-value; tables print it in the p-value's place."""


# --------------------------------------------------------------------------------------
# Reference functions (bit arrays), step by step as in the document.
# --------------------------------------------------------------------------------------

def monobit(bits) -> float:
    """2.1 Frequency (Monobit) Test: S_n = sum(2e-1), s_obs = |S_n|/sqrt(n), p = erfc(s_obs/sqrt 2)."""
    bits = np.asarray(bits, dtype=np.int64)
    s = int((2 * bits - 1).sum())
    return float(special.erfc(abs(s) / math.sqrt(bits.size) / math.sqrt(2)))


def block_frequency(bits, M: int) -> float:
    """2.2 Frequency Test within a Block: chi2 = 4M sum (pi_i - 1/2)^2, p = igamc(N/2, chi2/2)."""
    bits = np.asarray(bits, dtype=np.int64)
    N = bits.size // M
    pi = bits[:N * M].reshape(N, M).mean(axis=1)
    chi2 = 4.0 * M * float(((pi - 0.5) ** 2).sum())
    return float(special.gammaincc(N / 2.0, chi2 / 2.0))


def runs(bits) -> float:
    """2.3 Runs Test (with the frequency prerequisite |pi - 1/2| < 2/sqrt(n), else p = 0 as NIST)."""
    bits = np.asarray(bits, dtype=np.int64)
    n = bits.size
    pi = bits.mean()
    if abs(pi - 0.5) >= 2.0 / math.sqrt(n):
        return 0.0
    v = 1 + int((bits[1:] != bits[:-1]).sum())
    return float(special.erfc(abs(v - 2 * n * pi * (1 - pi)) / (2 * math.sqrt(2 * n) * pi * (1 - pi))))


# 2.4: table of section 2.4.4 / 3.4: (M, class upper bounds, probabilities as published)
LONGEST_RUN_TABLE = {
    8: ((1, 2, 3, 4), (0.2148, 0.3672, 0.2305, 0.1875)),
    128: ((4, 5, 6, 7, 8, 9), (0.1174, 0.2430, 0.2493, 0.1752, 0.1027, 0.1124)),
    10000: ((10, 11, 12, 13, 14, 15, 16), (0.0882, 0.2092, 0.2483, 0.1933, 0.1208, 0.0675, 0.0727)),
}
# the class probabilities sts-2.1.2 uses (longestRunOfOnes.c): exact for M = 8, 10 digits for
# M = 128, the text's 4-digit table for M = 10^4
STS_LONGEST_RUN_PROBABILITIES = {
    8: (0.21484375, 0.3671875, 0.23046875, 0.1875),
    128: (0.1174035788, 0.242955959, 0.249363483, 0.17517706, 0.102701071, 0.112398847),
    10000: LONGEST_RUN_TABLE[10000][1],
}


def longest_run(bits, *, exact: bool = False) -> float | DoesNotApply:
    """2.4 Test for the Longest Run of Ones in a Block (M chosen from n as in section 2.4.2).

    By default the class probabilities are sts-2.1.2's (STS_LONGEST_RUN_PROBABILITIES: exact
    for M = 8, 10 digits for M = 128, the text's 4-digit table for M = 10^4), so that the
    p-values are the ones sts-2.1.2 prints (rev1a Appendix B: 0.718945 for e, where exact
    probabilities give 0.718366). ``exact`` uses exact class probabilities
    (longest_run_probabilities) instead: the table's 4 digits are off by up to 1.6e-3 for
    M = 10^4, which biases the test on long streams. The worked example of 2.4.8 prints
    chi2 = 4.882605 (the table's probabilities) but P-value = 0.180609, which is what the exact
    probabilities (sts's for M = 8) give (chi2 = 4.882457); the 4-digit table gives 0.180598.
    Not applicable below n = 128 (as sts-2.1.2).
    """
    bits = np.asarray(bits, dtype=np.int64)
    n = bits.size
    if n < 128:
        return DoesNotApply(f"n = {n} < 128")
    M = 8 if n < 6272 else 128 if n < 750000 else 10000
    bounds, _ = LONGEST_RUN_TABLE[M]
    probs = longest_run_probabilities(M, bounds[0], bounds[-1]) if exact else STS_LONGEST_RUN_PROBABILITIES[M]
    N = n // M
    best = longest_runs(bits[:N * M].reshape(N, M))
    counts = np.bincount(np.clip(best, bounds[0], bounds[-1]) - bounds[0], minlength=len(bounds))
    chi2 = float(chi2_counts(counts, probs))
    return float(special.gammaincc((len(bounds) - 1) / 2.0, chi2 / 2.0))


def longest_runs(blocks) -> np.ndarray:
    """The longest run of ones in each row of a 0/1 matrix: the runs are found where a zero
    column appended to each row makes every run end (starts and ends of the flattened rows)."""
    N, M = blocks.shape
    padded = np.zeros((N, M + 2), dtype=np.int8)
    padded[:, 1:-1] = blocks
    step = np.diff(padded.reshape(-1))
    starts, ends = np.flatnonzero(step == 1), np.flatnonzero(step == -1)
    best = np.zeros(N, dtype=np.int64)
    np.maximum.at(best, starts // (M + 2), ends - starts)
    return best


@cache
def _no_run_longer(M: int, k: int) -> int:
    """Number of M-bit strings whose longest run of ones is <= k (exact)."""
    # ways[j] = strings so far ending in exactly j ones (j <= k)
    ways = [1] + [0] * k
    for _ in range(M):
        total = sum(ways)
        ways = [total] + ways[:-1]
    return sum(ways)


def longest_run_probabilities(M: int, lowest: int, highest: int) -> tuple[float, ...]:
    """Exact probabilities of the classes <=lowest, lowest+1, ..., >=highest for M-bit blocks."""
    cdf = [Fraction(_no_run_longer(M, k), 2 ** M) for k in range(lowest, highest)]
    probs = [cdf[0]] + [cdf[i] - cdf[i - 1] for i in range(1, len(cdf))] + [1 - cdf[-1]]
    return tuple(float(p) for p in probs)


def gf2_rank(matrix) -> int:
    """Rank over GF(2) of a 0/1 matrix (section 2.5 and appendix F.1, by elimination)."""
    m = np.array(matrix, dtype=np.uint8) % 2
    rank = 0
    rows, cols = m.shape
    for c in range(cols):
        pivot = next((r for r in range(rank, rows) if m[r, c]), None)
        if pivot is None:
            continue
        m[[rank, pivot]] = m[[pivot, rank]]
        for r in range(rows):
            if r != rank and m[r, c]:
                m[r] ^= m[rank]
        rank += 1
    return rank


def rank_probabilities(M: int = 32, Q: int = 32) -> tuple[float, float, float]:
    """Exact P(rank = M), P(rank = M-1), P(rank <= M-2) of a random MxQ GF(2) matrix (section 3.5)."""
    def p(r):
        product = 1.0
        for i in range(r):
            product *= (1 - 2.0 ** (i - Q)) * (1 - 2.0 ** (i - M)) / (1 - 2.0 ** (i - r))
        return 2.0 ** (r * (Q + M - r) - M * Q) * product
    full, minus = p(M), p(M - 1)
    return full, minus, 1.0 - full - minus


RANK_PROBABILITIES_PUBLISHED = (0.2888, 0.5776, 0.1336)  # section 2.5.4 step (4), rounded


def matrix_rank(bits, M: int = 32, Q: int = 32, *, published: bool = False) -> float | DoesNotApply:
    """2.5 Binary Matrix Rank Test: N = floor(n / MQ) matrices filled row by row; F_M, F_M-1 and
    the rest against N p_i, p = exp(-chi2/2) (igamc(1, chi2/2)).

    The class probabilities are those of 32x32 matrices whatever M and Q are (as the text and
    sts-2.1.2 both do), computed exactly as sts-2.1.2 computes them (rank_probabilities): its
    printed p-values (rev1a Appendix B: 0.306156 for e) come from these. ``published`` uses
    the text's rounded 0.2888, 0.5776, 0.1336 instead (0.307543 for e), which the worked example
    of 2.5.4 (3x3 matrices, p = 0.741948) is computed with. Not applicable below n = 38MQ
    (sts-2.1.2 refuses N < 38)."""
    bits = np.asarray(bits, dtype=np.uint8)
    N = bits.size // (M * Q)
    if N < 38 and not published:
        return DoesNotApply(f"n = {bits.size} < {38 * M * Q} (38 matrices of {M}x{Q})")
    if M == Q == 32:
        ranks = gf2_rank32(np.packbits(bits[:N * M * Q]).view(">u4").astype(np.uint32).reshape(N, 32))
    else:
        ranks = np.array([gf2_rank(bits[i * M * Q:(i + 1) * M * Q].reshape(M, Q)) for i in range(N)])
    full = int((ranks == M).sum())
    minus = int((ranks == M - 1).sum())
    p_full, p_minus, p_rest = RANK_PROBABILITIES_PUBLISHED if published else rank_probabilities(32, 32)
    chi2 = ((full - p_full * N) ** 2 / (p_full * N) + (minus - p_minus * N) ** 2 / (p_minus * N)
            + (N - full - minus - p_rest * N) ** 2 / (p_rest * N))
    return float(math.exp(-chi2 / 2.0))


def spectral(bits) -> float:
    """2.6 Discrete Fourier Transform (Spectral) Test, as published (variance n*0.95*0.05/4)."""
    x = 2.0 * np.asarray(bits, dtype=np.float64) - 1.0
    n = x.size
    modulus = np.abs(np.fft.rfft(x))[: n // 2]  # the first n/2 terms of the DFT (rfft: the same terms)
    threshold = math.sqrt(math.log(1 / 0.05) * n)
    n0 = 0.95 * n / 2.0
    n1 = int((modulus < threshold).sum())
    d = (n1 - n0) / math.sqrt(n * 0.95 * 0.05 / 4.0)
    return float(special.erfc(abs(d) / math.sqrt(2)))


def _window_values(bits, m: int) -> np.ndarray:
    """The value of the m bits starting at each position 0 .. n-m, first bit most significant
    (m <= 25): the windows starting at bits 8k .. 8k+7 are cut from the 32 bits from byte k."""
    bits = np.asarray(bits, dtype=np.uint8)
    count = bits.size - m + 1
    if count <= 0:
        return np.zeros(0, dtype=np.uint32)
    k = (count + 7) // 8
    octets = np.zeros(k + 3, dtype=np.uint32)
    packed = np.packbits(bits)
    octets[:min(packed.size, k + 3)] = packed[:k + 3]
    words = (octets[:k] << 24) | (octets[1:k + 1] << 16) | (octets[2:k + 2] << 8) | octets[3:k + 3]
    mask = np.uint32((1 << m) - 1)
    values = np.empty((k, 8), dtype=np.uint32)
    for o in range(8):
        values[:, o] = (words >> np.uint32(32 - m - o)) & mask
    return values.reshape(-1)[:count]


def _window_counts(bits, m: int) -> np.ndarray:
    """Counts of every m-bit pattern over the n overlapping windows, the sequence wrapped around
    (the augmented sequence of 2.11.4 step 1 and 2.12.4 step 1); m <= 25."""
    bits = np.asarray(bits, dtype=np.uint8)
    if m <= 0:
        return np.array([bits.size])
    return np.bincount(_window_values(np.concatenate([bits, bits[:m - 1]]), m), minlength=1 << m)


def _marginal(counts: np.ndarray) -> np.ndarray:
    """Counts of the (m-1)-bit prefixes from the counts of the m-bit wrapped windows."""
    return counts[0::2] + counts[1::2]


def _psi2(counts: np.ndarray, n: int) -> float:
    if counts.size <= 1:  # m = 0 (and the text's m = -1): psi^2 = 0
        return 0.0
    return (float(counts.size) / n) * float((counts.astype(np.float64) ** 2).sum()) - n


def serial(bits, m: int) -> tuple[float, float]:
    """2.11 Serial Test: (p1, p2) from del psi^2_m and del^2 psi^2_m."""
    bits = np.asarray(bits, dtype=np.uint8)
    counts = _window_counts(bits, m)  # the m-1 and m-2 bit counts are its marginals
    psim, psim1, psim2 = (_psi2(c, bits.size) for c in (counts, _marginal(counts), _marginal(_marginal(counts))))
    d1 = psim - psim1
    d2 = psim - 2 * psim1 + psim2
    return float(special.gammaincc(2 ** (m - 2), d1 / 2)), float(special.gammaincc(2 ** (m - 3), d2 / 2))


def _phi(counts: np.ndarray, n: int) -> float:
    c = counts[counts > 0] / n
    return float((c * np.log(c)).sum())


def approximate_entropy(bits, m: int) -> float:
    """2.12 Approximate Entropy Test: chi2 = 2n(ln 2 - ApEn), p = igamc(2^(m-1), chi2/2)."""
    bits = np.asarray(bits, dtype=np.uint8)
    n = bits.size
    counts = _window_counts(bits, m + 1)
    apen = _phi(_marginal(counts), n) - _phi(counts, n)  # phi(0) = 0: one pattern, frequency 1
    chi2 = 2.0 * n * (math.log(2) - apen)
    return float(special.gammaincc(2 ** (m - 1), chi2 / 2))


def cusum_p(n: int, z: int) -> float:
    """Section 2.13.4 step (4): p-value of the maximal excursion z of a walk of n steps.

    Bounds of the sums use C's truncating integer division, as NIST's sts-2.1.2 code.
    Far in the tail (p < 1e-10, where 1 - sum1 + sum2 cancels) the reflection-principle
    asymptote 4 Phi(-z/sqrt n) is used instead.
    """
    if z <= 0:
        return 1.0
    sqn = math.sqrt(n)

    def tdiv(a, b):
        q = abs(a) // abs(b)
        return q if (a >= 0) == (b > 0) else -q

    k1 = np.arange(tdiv(tdiv(-n, z) + 1, 4), tdiv(tdiv(n, z) - 1, 4) + 1)
    k2 = np.arange(tdiv(tdiv(-n, z) - 3, 4), tdiv(tdiv(n, z) - 1, 4) + 1)
    sum1 = float((special.ndtr((4 * k1 + 1) * z / sqn) - special.ndtr((4 * k1 - 1) * z / sqn)).sum())
    sum2 = float((special.ndtr((4 * k2 + 3) * z / sqn) - special.ndtr((4 * k2 + 1) * z / sqn)).sum())
    p = 1.0 - sum1 + sum2
    if p < 1e-10:
        p = min(1.0, 4.0 * float(special.ndtr(-z / sqn)))
    return float(min(max(p, 0.0), 1.0))


def cumulative_sums(bits, mode: str = "forward") -> float:
    """2.13 Cumulative Sums (Cusum) Test, mode 0 (forward) or 1 (backward)."""
    x = 2 * np.asarray(bits, dtype=np.int64) - 1
    if mode == "backward":
        x = x[::-1]
    z = int(np.abs(np.cumsum(x)).max())
    return cusum_p(x.size, z)


# --- Sections 2.7 - 2.10, 2.14, 2.15: the tests that read a whole sequence (n about 10^6). ---
#
# Where the text and NIST's program sts-2.1.2 differ, these follow the program: its printed
# p-values (rev1a Appendix B) are what users compare against. Each difference is named in
# the docstring. ``DoesNotApply`` is returned (never a p-value) where a test does not apply.


def aperiodic_templates(m: int) -> list[tuple[int, ...]]:
    """The aperiodic m-bit templates of section 2.7 in increasing binary order, as sts-2.1.2's
    template files list them: B is aperiodic when no copy of B shifted by 1 .. m-1 bits
    agrees with B where they overlap (so two occurrences of B can never overlap)."""
    found = []
    for value in range(1 << m):
        b = tuple((value >> (m - 1 - i)) & 1 for i in range(m))
        if all(b[s:] != b[:m - s] for s in range(1, m)):
            found.append(b)
    return found


NON_OVERLAPPING_BLOCKS = 8


def non_overlapping_template(bits, m: int = 9, templates=None,
                             blocks: int = NON_OVERLAPPING_BLOCKS) -> list[float] | DoesNotApply:
    """2.7 Non-overlapping Template Matching Test, N = 8 blocks of M = floor(n/8) bits: one
    p-value per aperiodic m-bit template (148 for m = 9; aperiodic_templates), in sts's order.

    W_j counts the occurrences of B starting at positions 0 .. M-m of block j (occurrences
    of an aperiodic template never overlap, so the text's skip by m after a match changes
    nothing); mu = (M-m+1)/2^m, sigma^2 = M (2^-m - (2m-1) 2^-2m); chi2 = sum (W_j-mu)^2/sigma^2,
    p = igamc(N/2, chi2/2). ``blocks``: N (8 in sts-2.1.2; the worked example of 2.7.4 has 2).
    Not applicable when M < m (mu would not be positive; sts-2.1.2 skips the test then)."""
    bits = np.asarray(bits, dtype=np.uint8)
    N = blocks
    M = bits.size // N
    if M < m:
        return DoesNotApply(f"n = {bits.size} < {N * m} (needs M = n/{N} >= m = {m})")
    templates = aperiodic_templates(m) if templates is None else templates
    W = template_counts(bits, m, N, templates).astype(np.float64)
    mu, variance = non_overlapping_moments(M, m)
    chi2 = (((W - mu) / math.sqrt(variance)) ** 2).sum(axis=0)
    return [float(p) for p in special.gammaincc(N / 2.0, chi2 / 2.0)]


def template_counts(bits, m: int, N: int, templates) -> np.ndarray:
    """W: occurrences of each template starting at positions 0 .. M-m of each of the N blocks
    of M = floor(n/N) bits, shape (N, templates)."""
    M = np.asarray(bits).size // N
    counts = np.stack([np.bincount(_window_values(block, m), minlength=1 << m)
                       for block in np.asarray(bits, dtype=np.uint8)[:N * M].reshape(N, M)])  # (N, 2^m)
    index = [int("".join(map(str, t)), 2) for t in templates]
    return counts[:, index]


def non_overlapping_moments(M: int, m: int) -> tuple[float, float]:
    """mu and sigma^2 of W in a block of M bits (section 2.7.4 step 3)."""
    return (M - m + 1) / 2.0 ** m, M * (1.0 / 2.0 ** m - (2.0 * m - 1.0) / 2.0 ** (2.0 * m))


def overlapping_probabilities(M: int = 1032, m: int = 9, K: int = 5) -> tuple[float, ...]:
    """Class probabilities of section 2.8 as sts-2.1.2 computes them (its function Pr):
    eta = (M-m+1)/2^(m+1), P(0) = e^-eta, P(u) = e^-eta 2^-u sum_{j=1..u} eta^j/j! C(u-1, j-1),
    the last class 1 - sum (for m = 9, M = 1032: eta = 1, P(0) = 1/e = 0.367879). They differ
    from the text's table of 2.8.4 (0.364091, 0.185659, 0.139381, 0.100571, 0.070432, 0.139865,
    from the corrected formula of Hamano and Kaneko) by up to 3.8e-3; sts-2.1.2's printed
    p-values (rev1a Appendix B) come from these."""
    eta = (M - m + 1) / 2.0 ** m / 2.0
    probs = [math.exp(-eta)]
    for u in range(1, K):
        probs.append(sum(math.exp(-eta - u * math.log(2) + j * math.log(eta) - math.lgamma(j + 1)
                                  + math.lgamma(u) - math.lgamma(j) - math.lgamma(u - j + 1))
                         for j in range(1, u + 1)))
    probs.append(1.0 - sum(probs))
    return tuple(probs)


def overlapping_template(bits, m: int = 9, M: int = 1032, K: int = 5) -> float | DoesNotApply:
    """2.8 Overlapping Template Matching Test: B = m ones, N = floor(n/M) blocks of M = 1032
    bits; nu_i = blocks with i overlapping occurrences of B (i = 0..4, >= 5 pooled);
    chi2 against N pi_i with sts-2.1.2's pi_i (overlapping_probabilities), p = igamc(K/2, chi2/2).
    The minimum n is M (one block; the text recommends n >= 10^6)."""
    N = np.asarray(bits).size // M
    if N < 1:
        return DoesNotApply(f"n = {np.asarray(bits).size} < M = {M}")
    nu = overlapping_classes(bits, m, M, K)
    probs = np.array(overlapping_probabilities(M, m, K))
    chi2 = float(((nu - N * probs) ** 2 / (N * probs)).sum())
    return float(special.gammaincc(K / 2.0, chi2 / 2.0))


def overlapping_classes(bits, m: int = 9, M: int = 1032, K: int = 5) -> np.ndarray:
    """nu_0 .. nu_K: blocks of M bits with 0, 1, ..., >= K overlapping occurrences of m ones
    starting at positions 0 .. M-m of the block."""
    bits = np.asarray(bits, dtype=np.uint8)
    N = bits.size // M
    at = np.flatnonzero(_window_values(bits[:N * M], m) == (1 << m) - 1)
    at = at[at % M <= M - m]
    hits = np.bincount(at // M, minlength=N)
    return np.bincount(np.minimum(hits, K), minlength=K + 1)


def overlapping_probabilities_exact(M: int = 1032, m: int = 9, K: int = 5) -> tuple[float, ...]:
    """The exact class probabilities of 2.8 (0 .. K-1 occurrences, >= K): a Markov chain over
    (the run of ones at the end, capped at m; occurrences so far, capped at K) along the M bits.
    Section 2.8.4 prints them rounded (0.364091, 0.185659, ...); sts-2.1.2 uses the older
    approximation (overlapping_probabilities). The battery's pooled counts need these."""
    prob = np.zeros((m + 1, K + 1))
    prob[0, 0] = 1.0
    for _ in range(M):
        new = np.zeros_like(prob)
        new[0] = prob.sum(axis=0) / 2  # a zero
        new[1:m] += prob[:m - 1] / 2  # a one, the run below m
        full = (prob[m - 1] + prob[m]) / 2  # a one that completes (or continues) m ones: one more occurrence
        new[m, 1:] += full[:-1]
        new[m, K] += full[K]
        prob = new
    return tuple(float(x) for x in prob.sum(axis=0))


# 2.9: expected value and variance of f_n for L = 6 .. 16 (table of section 2.9.4 step 5 / sts)
UNIVERSAL_TABLE = {
    6: (5.2177052, 2.954), 7: (6.1962507, 3.125), 8: (7.1836656, 3.238), 9: (8.1764248, 3.311),
    10: (9.1723243, 3.356), 11: (10.170032, 3.384), 12: (11.168765, 3.401), 13: (12.168070, 3.410),
    14: (13.167693, 3.416), 15: (14.167488, 3.419), 16: (15.167379, 3.421),
}
# the smallest n for each L (section 2.9.7's table of n >= 1010 x 2^L x L, as sts-2.1.2 applies it)
UNIVERSAL_MIN_N = {6: 387840, 7: 904960, 8: 2068480, 9: 4654080, 10: 10342400, 11: 22753280,
                   12: 49643520, 13: 107560960, 14: 231669760, 15: 496435200, 16: 1059061760}


def universal(bits) -> float | DoesNotApply:
    """2.9 Maurer's "Universal Statistical" Test: L from n by the table of 2.9.7 (L = 6 from
    n = 387,840, 7 from 904,960, ...), Q = 10 x 2^L initialisation blocks, K = floor(n/L) - Q
    test blocks; f_n = (1/K) sum log2(i - T[block i]) (T: last index of each L-bit value, 0
    when unseen); sigma = c sqrt(variance(L)/K), c = 0.7 - 0.8/L + (4 + 32/L) K^(-3/L) / 15;
    p = erfc(|f_n - expectedValue(L)| / (sqrt 2 sigma)). Not applicable below n = 387,840."""
    found = universal_statistic(bits)
    if isinstance(found, DoesNotApply):
        return found
    fn, L, K = found
    return float(special.erfc(abs(fn - UNIVERSAL_TABLE[L][0]) / (math.sqrt(2) * universal_sigma(L, K))))


def universal_statistic(bits):
    """(f_n, L, K) of section 2.9.4, or DoesNotApply below n = 387,840."""
    bits = np.asarray(bits, dtype=np.uint8)
    n = bits.size
    if n < UNIVERSAL_MIN_N[6]:
        return DoesNotApply(f"n = {n} < {UNIVERSAL_MIN_N[6]}")
    L, Q, K = universal_parameters(n)
    values = _window_values(bits[:(Q + K) * L], L)[::L].astype(np.uint8 if L <= 8 else np.uint16)  # radix sort
    index = np.arange(1, Q + K + 1)
    order = np.argsort(values, kind="stable")  # by value, then position
    same = np.zeros(Q + K, dtype=bool)
    same[1:] = values[order][1:] == values[order][:-1]
    previous = np.zeros(Q + K, dtype=np.int64)
    previous[order[1:]] = np.where(same[1:], index[order][:-1], 0)  # last earlier index of the value, 0 if none
    distances = index[Q:] - previous[Q:]
    return float(np.log2(distances.astype(np.float64)).sum()) / K, L, K


def universal_parameters(n: int) -> tuple[int, int, int]:
    """L (the largest whose minimum n is met), Q = 10 x 2^L and K = floor(n/L) - Q (n >= 387,840)."""
    L = max(L for L, least in UNIVERSAL_MIN_N.items() if n >= least)
    Q = 10 * (1 << L)
    return L, Q, n // L - Q


def universal_sigma(L: int, K: int) -> float:
    """sigma of f_n (section 2.9.4 step 5, with Coron and Naccache's correction factor c)."""
    c = 0.7 - 0.8 / L + (4 + 32 / L) * K ** (-3 / L) / 15
    return c * math.sqrt(UNIVERSAL_TABLE[L][1] / K)


def linear_complexities(bits, M: int) -> np.ndarray:
    """Linear complexity (Berlekamp-Massey, appendix A of the text) of each M-bit block, all
    blocks at once: the polynomials are bit vectors in 64-bit words (row w holds bits 64w ..
    64w+63 of every block's polynomial). At step t only the words holding bits 0..t+1 can be
    non-zero, so only those are touched."""
    bits = np.asarray(bits, dtype=np.uint64)
    N = bits.size // M
    blocks = np.ascontiguousarray(bits[:N * M].reshape(N, M).T)  # (M, N): step t reads row t
    words = (M + 2 + 63) // 64
    one, top = np.uint64(1), np.uint64(63)

    def shift(v, w):  # rows 0..w-1 of v, times x (one bit up across the words), in place
        carry = v[:w - 1] >> top
        v[:w] <<= one
        v[1:w] |= carry

    C = np.zeros((words, N), dtype=np.uint64)
    C[0] = 1
    Bx = np.zeros((words, N), dtype=np.uint64)
    Bx[0] = 2  # B(x) x^(t - m): B = 1, m = -1 at t = 0
    S = np.zeros((words, N), dtype=np.uint64)  # bit i: s_{t-i}
    L = np.zeros(N, dtype=np.int64)
    for t in range(M):
        w = min(words, (t + 2) // 64 + 1)  # bits 0 .. t+1 live in these words
        shift(S, w)
        S[0] |= blocks[t]
        d = (np.bitwise_count(C[:w] & S[:w]).sum(axis=0) & 1).astype(bool)
        grow = d & (L <= t // 2)
        T = C[:w, grow]  # the old C of the blocks whose L grows (a copy)
        C[:w] ^= Bx[:w] * d  # d is 0 or 1
        L[grow] = t + 1 - L[grow]
        Bx[:w, grow] = T
        shift(Bx, min(words, w + 1))
    return L


# 2.10: sts-2.1.2's class probabilities (the text's, rounded as printed there)
LINEAR_COMPLEXITY_PI = (0.01047, 0.03125, 0.12500, 0.50000, 0.25000, 0.06250, 0.020833)


# the exact class probabilities for large M (1/96, 1/32, 1/8, 1/2, 1/4, 1/16, 1/48: section 3.10);
# the battery pools millions of blocks, where the rounded 0.01047 (1/96 = 0.0104167) would show
LINEAR_COMPLEXITY_PI_EXACT = (1 / 96, 1 / 32, 1 / 8, 1 / 2, 1 / 4, 1 / 16, 1 / 48)


def linear_complexity_classes(bits, M: int) -> np.ndarray:
    """nu_0 .. nu_6: the blocks of M bits by T_i = (-1)^M (L_i - mu) + 2/9 in the classes
    <= -2.5, (-2.5, -1.5], ..., > 2.5 (section 2.10.4 steps 2-4, as sts-2.1.2 computes them)."""
    L = linear_complexities(bits, M)
    sign_mean = -1 if (M + 1) % 2 == 0 else 1
    mean = M / 2.0 + (9.0 + sign_mean) / 36.0 - 1.0 / 2.0 ** M * (M / 3.0 + 2.0 / 9.0)
    sign = 1 if M % 2 == 0 else -1
    T = sign * (L - mean) + 2.0 / 9.0
    return np.bincount(np.digitize(T, [-2.5, -1.5, -0.5, 0.5, 1.5, 2.5], right=True), minlength=7)


def linear_complexity(bits, M: int = 500) -> float | DoesNotApply:
    """2.10 Linear Complexity Test: N = floor(n/M) blocks, L_i by Berlekamp-Massey,
    T_i = (-1)^M (L_i - mu) + 2/9 with mu = M/2 + (9 + (-1)^(M+1))/36 - (M/3 + 2/9)/2^M,
    classes <= -2.5, (-2.5,-1.5], ..., > 2.5 against pi = LINEAR_COMPLEXITY_PI (the text's
    rounded values, which sts-2.1.2 uses), p = igamc(3, chi2/2). The text asks n >= 10^6,
    500 <= M <= 5000 and N >= 200; it is computed for any n >= M and M >= 1."""
    bits = np.asarray(bits, dtype=np.uint8)
    N = bits.size // M
    if N < 1:
        return DoesNotApply(f"n = {bits.size} < M = {M}")
    nu = linear_complexity_classes(bits, M)
    pi = np.array(LINEAR_COMPLEXITY_PI)
    chi2 = float(((nu - N * pi) ** 2 / (N * pi)).sum())
    return float(special.gammaincc(3.0, chi2 / 2.0))


EXCURSION_STATES = (-4, -3, -2, -1, 1, 2, 3, 4)
VARIANT_STATES = tuple(range(-9, 0)) + tuple(range(1, 10))
MIN_CYCLES = 500


def _walk_cycles(bits):
    """The walk S_k (k = 1..n), the cycle of each step (the number of zeros before it) and J."""
    walk = np.cumsum(2 * np.asarray(bits, dtype=np.int32) - 1, dtype=np.int32)
    zero = walk == 0
    J = int(zero.sum()) + int(walk[-1] != 0)
    return walk, np.cumsum(zero) - zero, J


def _too_few_cycles(n: int, J: int):
    least = max(0.005 * math.sqrt(n), MIN_CYCLES)
    if J < least:
        return DoesNotApply(f"J = {J} cycles < {least:g}")
    return None


def excursion_probabilities(x: int) -> tuple[float, ...]:
    """pi_k(x), k = 0..5 (>= 5 pooled): the probability that a cycle visits x exactly k times
    (section 3.14). sts-2.1.2 prints them to 10 digits; these are exact."""
    a = 1.0 / (2 * abs(x))
    return (1 - a,) + tuple(a * a * (1 - a) ** (k - 1) for k in range(1, 5)) + (a * (1 - a) ** 4,)


def excursion_table(walk, cycle, J: int) -> np.ndarray:
    """nu_k(x): the cycles that visit state x exactly k times (k = 0..4, >= 5), shape (6, 8),
    columns in EXCURSION_STATES order."""
    near = (np.abs(walk) <= 4) & (walk != 0)
    column = walk[near] + 4 - (walk[near] > 0)  # -4..-1, 1..4 -> 0..7
    visits = np.bincount(cycle[near] * 8 + column, minlength=8 * J).reshape(J, 8)  # per cycle and state
    return np.stack([np.bincount(np.minimum(visits[:, i], 5), minlength=6) for i in range(8)], axis=1)


def variant_visits(walk) -> np.ndarray:
    """xi(x): the visits of the walk to x = -9..-1, 1..9 (VARIANT_STATES order)."""
    counts = np.bincount(walk[np.abs(walk) <= 9] + 9, minlength=19)
    return np.concatenate([counts[:9], counts[10:]])


def random_excursions(bits) -> dict:
    """2.14 Random Excursions Test: the walk of +-1 steps, cut into J cycles at its zeros
    (the end is a zero too); for each state x = -4..-1, 1..4, nu_k(x) = cycles visiting x k
    times (k = 0..4, >= 5); chi2(x) against J pi_k(x), p = igamc(5/2, chi2/2).

    Returns {x: p-value}, or DoesNotApply when J < max(0.005 sqrt(n), 500): the test does not
    apply (sts-2.1.2 prints p = 0 for every state then, which is not a failure)."""
    walk, cycle, J = _walk_cycles(bits)
    skip = _too_few_cycles(walk.size, J)
    if skip:
        return skip
    table = excursion_table(walk, cycle, J)
    result = {}
    for i, x in enumerate(EXCURSION_STATES):
        nu = table[:, i]
        expected = J * np.array(excursion_probabilities(x))
        chi2 = float(((nu - expected) ** 2 / expected).sum())
        result[x] = float(special.gammaincc(2.5, chi2 / 2.0))
    return result


def random_excursions_variant(bits) -> dict:
    """2.15 Random Excursions Variant Test: xi(x) = visits of the walk to x over all J cycles,
    p = erfc(|xi(x) - J| / sqrt(2J(4|x| - 2))) for x = -9..-1, 1..9. Returns {x: p-value}, or
    DoesNotApply when J < max(0.005 sqrt(n), 500) (as 2.14)."""
    walk, _, J = _walk_cycles(bits)
    skip = _too_few_cycles(walk.size, J)
    if skip:
        return skip
    xi = variant_visits(walk)
    return {x: float(special.erfc(abs(int(v) - J) / math.sqrt(2.0 * J * (4.0 * abs(x) - 2))))
            for x, v in zip(VARIANT_STATES, xi)}


# --------------------------------------------------------------------------------------
# Streaming accumulators on 32-bit words.
# --------------------------------------------------------------------------------------

class Monobit(Accumulator):
    """NIST SP 800-22 rev1a section 2.1 (Frequency (Monobit) Test)."""

    name = "nist.monobit"
    source = "NIST SP 800-22 rev1a, section 2.1"
    sample_words = SAMPLE_WORDS

    def measure(self, samples):
        ones = count_ones(samples, axis=1)
        return {"ones": ones}, {"ones": ones.sum()}

    def evaluate(self, records, totals, samples):
        n = self.sample_words * 32
        s = 2 * records["ones"] - n
        first = special.erfc(np.abs(s) / math.sqrt(2.0 * n))
        total_bits = n * samples
        s_all = 2 * int(totals["ones"]) - total_bits
        aggregate = pvalues.erfc_p(abs(s_all) / math.sqrt(2.0 * total_bits))
        return [self.finding("aggregate", s_all / math.sqrt(total_bits), aggregate, bits=total_bits)] \
            + self.second_level_ks(first)


class BlockFrequency(Accumulator):
    """NIST SP 800-22 rev1a section 2.2 (Frequency Test within a Block), M = 2^14 bits, N = 64."""

    name = "nist.block_frequency"
    source = "NIST SP 800-22 rev1a, section 2.2"
    sample_words = SAMPLE_WORDS
    block_words = 1 << 9

    def measure(self, samples):
        M = self.block_words * 32
        ones = count_ones(samples.reshape(samples.shape[0], -1, self.block_words), axis=2)
        numerator = ((2 * ones - M) ** 2).sum(axis=1)  # chi2 = numerator / M, exact integers
        return {"numerator": numerator}, {"numerator": numerator.sum()}

    def evaluate(self, records, totals, samples):
        M = self.block_words * 32
        N = self.sample_words // self.block_words
        first = special.gammaincc(N / 2.0, records["numerator"] / M / 2.0)
        chi2 = int(totals["numerator"]) / M
        return [self.finding("aggregate", chi2, pvalues.chi2(chi2, N * samples), M=M, N=N * samples)] \
            + self.second_level_ks(first)


class Runs(Accumulator):
    """NIST SP 800-22 rev1a section 2.3 (Runs Test). Aggregate: the number of transitions
    between adjacent bits of each sample is Binomial(n-1, 1/2) for a fair stream
    (b_i xor b_i+1 are independent fair bits), tested in both tails."""

    name = "nist.runs"
    source = "NIST SP 800-22 rev1a, section 2.3"
    sample_words = SAMPLE_WORDS

    def measure(self, samples):
        inner = count_ones((samples ^ (samples >> np.uint32(1))) & np.uint32(0x7FFFFFFF), axis=1)
        across = np.count_nonzero((samples[:, :-1] & np.uint32(1)) != (samples[:, 1:] >> np.uint32(31)), axis=1)
        transitions = inner + across
        ones = count_ones(samples, axis=1)
        return {"ones": ones, "transitions": transitions}, {"transitions": transitions.sum()}

    def evaluate(self, records, totals, samples):
        n = self.sample_words * 32
        pi = records["ones"] / n
        v = records["transitions"] + 1
        with np.errstate(divide="ignore", invalid="ignore"):
            first = special.erfc(np.abs(v - 2 * n * pi * (1 - pi)) / (2 * math.sqrt(2 * n) * pi * (1 - pi)))
        first = np.where(np.abs(pi - 0.5) >= 2 / math.sqrt(n), 0.0, np.nan_to_num(first))
        pairs = (n - 1) * samples
        t = int(totals["transitions"])
        aggregate = pvalues.binomial(t, pairs)
        return [self.finding("aggregate", (t - pairs / 2) / math.sqrt(pairs / 4), aggregate,
                             transitions=t, pairs=pairs)] + self.second_level_ks(first)


class LongestRun(Accumulator):
    """NIST SP 800-22 rev1a section 2.4 (Longest Run of Ones in a Block), M = 128 bits,
    classes <=4 .. >=9, with exact class probabilities (the table's 4 digits would bias a
    long stream)."""

    name = "nist.longest_run"
    cost_ns_per_word = 6
    source = "NIST SP 800-22 rev1a, section 2.4"
    sample_words = SAMPLE_WORDS
    probabilities = longest_run_probabilities(128, 4, 9)

    def measure(self, samples):
        k = samples.shape[0]
        pairs = np.ascontiguousarray(samples, dtype=np.uint32).view(np.uint64).reshape(-1, 2)
        swap = np.uint64(32)  # little-endian pairs hold word 2i in the low half: stream order is the swap
        hi = (pairs[:, 0] << swap) | (pairs[:, 0] >> swap)
        lo = (pairs[:, 1] << swap) | (pairs[:, 1] >> swap)

        def shifted(high, low, m):  # the 128-bit block (high, low) shifted left by m bits
            return (high << np.uint64(m)) | (low >> np.uint64(64 - m)), low << np.uint64(m)

        # a_L has bit i set where bits i, i-1, ..., i-L+1 are all ones: a_{m+n} = a_m & (a_n << m);
        # (ah, al) is a_L's high and low word
        ah, al = shifted(hi, lo, 1)
        ah &= hi
        al &= lo  # a_2
        h2, l2 = shifted(ah, al, 2)
        ah &= h2
        al &= l2  # a_4
        classes = np.zeros(hi.size, dtype=np.uint8)  # number of L in 5..9 with a run of length >= L
        for _ in range(5):
            h2, l2 = shifted(ah, al, 1)
            ah &= h2
            al &= l2  # a_5 .. a_9
            classes += (ah | al) != 0
        classes = classes.reshape(k, -1)
        counts = np.stack([np.count_nonzero(classes == c, axis=1) for c in range(6)], axis=1)
        return {"counts": counts}, {"counts": counts.sum(axis=0)}

    def evaluate(self, records, totals, samples):
        first = special.gammaincc(2.5, chi2_counts(records["counts"], self.probabilities) / 2.0)
        chi2 = float(chi2_counts(totals["counts"], self.probabilities))
        return [self.finding("aggregate", chi2, pvalues.chi2(chi2, 5), counts=totals["counts"].tolist())] \
            + self.second_level_ks(first)


def gf2_rank32(matrices: np.ndarray) -> np.ndarray:
    """Ranks over GF(2) of 32x32 bit matrices given as (K, 32) uint32 rows (vectorised elimination).

    Columns from the most significant bit down: once the higher bits are cleared in every
    row, the largest row of a matrix has the current bit iff some row has, so it is the
    pivot; xoring it into every row that has the bit (itself included) clears the column.
    The rows are held transposed (row r of every matrix contiguous) so that the pivot is an
    elementwise maximum, and narrowed to 16 and 8 bits once the higher bits are gone.
    """
    rows = np.ascontiguousarray(np.asarray(matrices, dtype=np.uint32).T)  # (32, K)
    rank = np.zeros(rows.shape[1], dtype=np.int64)
    tmp = np.empty_like(rows)
    for bit in range(31, -1, -1):
        if bit in (15, 7):
            rows = rows.astype(np.uint16 if bit == 15 else np.uint8)
            tmp = np.empty_like(rows)
        pivot = np.maximum.reduce(rows, axis=0)
        shift = rows.dtype.type(bit)
        rank += pivot >> shift  # 1 where this column has a pivot
        np.right_shift(rows, shift, out=tmp)  # 1 for the rows that have the bit
        np.multiply(tmp, pivot, out=tmp)
        rows ^= tmp
    return rank


class MatrixRank(Accumulator):
    """NIST SP 800-22 rev1a section 2.5 (Binary Matrix Rank Test), 32x32 matrices of 32
    consecutive words, exact class probabilities."""

    name = "nist.matrix_rank"
    budget = (8, 2 * MiB)  # reads 1/8 of the tier, at least 2 MiB (Accumulator.budget)
    cost_ns_per_word = 17
    source = "NIST SP 800-22 rev1a, section 2.5"
    sample_words = SAMPLE_WORDS
    probabilities = rank_probabilities(32, 32)

    def measure(self, samples):
        ranks = gf2_rank32(samples.reshape(-1, 32)).reshape(samples.shape[0], -1)
        counts = np.stack([(ranks == 32).sum(axis=1), (ranks == 31).sum(axis=1), (ranks <= 30).sum(axis=1)], axis=1)
        return {"counts": counts}, {"counts": counts.sum(axis=0)}

    def evaluate(self, records, totals, samples):
        first = np.exp(-chi2_counts(records["counts"], self.probabilities) / 2.0)
        chi2 = float(chi2_counts(totals["counts"], self.probabilities))
        return [self.finding("aggregate", chi2, pvalues.chi2(chi2, 2), counts=totals["counts"].tolist())] \
            + self.second_level_ks(first)


def overlapping_counts(samples: np.ndarray, m: int) -> np.ndarray:
    """Counts of the n overlapping m-bit patterns of each sample, wrapping around (m <= 32).

    For m <= 12: one histogram of the 16-bit windows starting at every 4-bit boundary (two
    bincounts of 4 values per word), then the m-bit patterns starting 0..3 bits into each
    window are marginals of it (exact integer sums, in float64 below 2^53).
    """
    k, s = samples.shape
    if m > 12:
        return _overlapping_counts_shifts(samples, m)
    octets = np.empty((k, 4 * s + 2), dtype=np.uint8)  # stream order (big-endian words), 2 bytes wrapped
    octets[:, :4 * s] = np.ascontiguousarray(samples, dtype=">u4").view(np.uint8).reshape(k, 4 * s)
    octets[:, 4 * s:] = octets[:, :2]
    wide = octets.astype(np.uint16)
    counts = np.empty((k, 1 << m), dtype=np.int64)
    for row in range(k):
        w = wide[row]
        even = (w[:-2] << np.uint16(8)) | w[1:-1]  # the 16 bits from bit 8b
        odd = (even << np.uint16(4)) | (w[2:] >> np.uint16(4))  # the 16 bits from bit 8b + 4
        h = (np.bincount(even, minlength=1 << 16) + np.bincount(odd, minlength=1 << 16)).astype(np.float64)
        c = np.zeros(1 << m)
        for o in range(4):  # the pattern starting o bits into the window: drop o high, 16-m-o low bits
            low = 1 << (16 - m - o)
            c += h.reshape(1 << o, -1).sum(axis=0).reshape(1 << m, low) @ np.ones(low)
        counts[row] = c.astype(np.int64)
    return counts


def _overlapping_counts_shifts(samples: np.ndarray, m: int) -> np.ndarray:
    """overlapping_counts by 32 shifted bincounts (any m <= 32)."""
    k, s = samples.shape
    pair = (samples.astype(np.uint64) << np.uint64(32)) | np.roll(samples, -1, axis=1).astype(np.uint64)
    mask = np.uint64((1 << m) - 1)
    offsets = (np.arange(k, dtype=np.uint64) << np.uint64(m))[:, None]
    counts = np.zeros(k << m, dtype=np.int64)
    for shift in range(32):
        values = ((pair >> np.uint64(64 - m - shift)) & mask) + offsets
        counts += np.bincount(values.reshape(-1).astype(np.intp), minlength=k << m)
    return counts.reshape(k, 1 << m)


class OverlappingPatterns(Accumulator):
    """NIST SP 800-22 rev1a sections 2.11 (Serial Test, m = 12) and 2.12 (Approximate
    Entropy Test, m = 10), from one count of the overlapping 12-bit patterns per sample.
    The aggregate sums the per-sample statistics (independent chi-squares; NIST's
    igamc(a, x/2) is a chi-square with 2a degrees of freedom)."""

    name = "nist.serial"
    budget = (8, 2 * MiB)  # reads 1/8 of the tier, at least 2 MiB (Accumulator.budget)
    cost_ns_per_word = 30
    source = "NIST SP 800-22 rev1a, sections 2.11 and 2.12"
    sample_words = SAMPLE_WORDS
    m_serial = 12
    m_apen = 10

    def measure(self, samples):
        n = self.sample_words * 32
        counts = overlapping_counts(samples, self.m_serial)
        by_m = {self.m_serial: counts}
        for m in range(self.m_serial - 1, self.m_apen - 1, -1):
            c = by_m[m + 1]
            by_m[m] = c[:, 0::2] + c[:, 1::2]  # drop the last bit: marginal of the (m)-bit prefix
        a = {m: (c * c).sum(axis=1) << m for m, c in by_m.items()}  # 2^m sum c^2 (exact)
        m = self.m_serial
        d1 = a[m] - a[m - 1]
        d2 = a[m] - 2 * a[m - 1] + a[m - 2]
        phi = {}
        for mm in (self.m_apen, self.m_apen + 1):
            c = by_m[mm] / n
            with np.errstate(divide="ignore", invalid="ignore"):
                phi[mm] = np.where(c > 0, c * np.log(np.where(c > 0, c, 1)), 0.0).sum(axis=1)
        apen = phi[self.m_apen] - phi[self.m_apen + 1]
        chi2_apen = 2.0 * n * (math.log(2) - apen)
        return {"d1": d1, "d2": d2, "apen_chi2": chi2_apen}, {"d1": d1.sum(), "d2": d2.sum()}

    def evaluate(self, records, totals, samples):
        n = self.sample_words * 32
        m = self.m_serial
        p1 = special.gammaincc(2 ** (m - 2), records["d1"] / n / 2)
        p2 = special.gammaincc(2 ** (m - 3), records["d2"] / n / 2)
        pa = special.gammaincc(2 ** (self.m_apen - 1), records["apen_chi2"] / 2)
        d1 = int(totals["d1"]) / n
        d2 = int(totals["d2"]) / n
        apen_total = math.fsum(records["apen_chi2"].tolist())
        results = [
            self.finding("aggregate", d1, pvalues.chi2(d1, 2 ** (m - 1) * samples), statistic_name="del psi^2", m=m),
            self.finding("aggregate", d2, pvalues.chi2(d2, 2 ** (m - 2) * samples), statistic_name="del^2 psi^2", m=m,
                         test="nist.serial2"),
            self.finding("aggregate", apen_total, pvalues.chi2(apen_total, 2 ** self.m_apen * samples),
                         m=self.m_apen, test="nist.approximate_entropy"),
        ]
        for name, first in (("nist.serial", p1), ("nist.serial2", p2), ("nist.approximate_entropy", pa)):
            for entry in self.second_level_ks(first):
                entry["test"] = name
                results.append(entry)
        for entry in results:
            entry["source"] = ("NIST SP 800-22 rev1a, section 2.12" if entry["test"] == "nist.approximate_entropy"
                               else "NIST SP 800-22 rev1a, section 2.11")
        return results


class CumulativeSums(Accumulator):
    """NIST SP 800-22 rev1a section 2.13 (Cumulative Sums Test), forward and backward, per
    sample (the maximal excursion is not additive, so no pooled aggregate: second level only,
    plus the smallest per-sample p-value corrected for the number of samples)."""

    name = "nist.cumulative_sums"
    budget = (8, 2 * MiB)  # reads 1/8 of the tier, at least 2 MiB (Accumulator.budget)
    cost_ns_per_word = 18
    source = "NIST SP 800-22 rev1a, section 2.13"
    sample_words = SAMPLE_WORDS

    def measure(self, samples):
        total, highest, lowest = walk_extremes(samples)
        forward = np.maximum(np.abs(highest), np.abs(lowest))
        backward = np.maximum(total - np.minimum(lowest, 0), np.maximum(highest, 0) - total)
        return {"forward": forward, "backward": backward}, {}

    def evaluate(self, records, totals, samples):
        n = self.sample_words * 32
        results = []
        for mode in ("forward", "backward"):
            first = np.array([cusum_p(n, int(z)) for z in records[mode]])
            worst = float(first.min())
            entry = self.finding("min-of-samples", float(records[mode].max()), pvalues.sidak(worst, first.size),
                                 mode=mode, test=f"nist.cumulative_sums.{mode}")
            results.append(entry)
            for ks in self.second_level_ks(first):
                ks["test"] = f"nist.cumulative_sums.{mode}"
                results.append(ks)
        return results


class Spectral(Accumulator):
    """NIST SP 800-22 rev1a section 2.6 (Discrete Fourier Transform Test), on 2^16-bit samples.

    The published variance n*0.95*0.05/4 is known to be too small (Kim, Umeno, Hasegawa,
    IACR ePrint 2004/018; Pareschi, Rovatti, Setti 2012), which makes the p-values
    non-uniform: the battery uses the corrected variance n*0.95*0.05/3.8 and pools the
    count of peaks below the threshold over all samples (aggregate only, a z-test).
    """

    name = "nist.spectral"
    budget = (32, 1 * MiB)  # reads 1/32 of the tier, at least 1 MiB (Accumulator.budget)
    cost_ns_per_word = 350
    source = "NIST SP 800-22 rev1a, section 2.6 (variance per Kim et al. 2004)"
    sample_words = 1 << 11
    second_level = False

    def measure(self, samples):
        k = samples.shape[0]
        octets = np.ascontiguousarray(samples, dtype=">u4").view(np.uint8).reshape(k, -1)
        bits = np.unpackbits(octets, axis=1).astype(np.float64)  # most significant bit first
        n = bits.shape[1]
        # NIST transforms x = 2 bit - 1; for every term but DC, DFT(2 bit - 1) = 2 DFT(bit), so
        # |X| < T is |DFT(bit)| < T / 2 (the same counts, without the +-1 array)
        modulus = np.abs(np.fft.rfft(bits, axis=1))[:, 1: n // 2]  # without the DC term (not complex-normal)
        threshold = math.sqrt(math.log(1 / 0.05) * n)
        below = (modulus < threshold / 2).sum(axis=1)
        return {"below": below}, {"below": below.sum()}

    def evaluate(self, records, totals, samples):
        n = self.sample_words * 32
        n0 = 0.95 * (n / 2.0 - 1) * samples
        d = (int(totals["below"]) - n0) / math.sqrt(n * 0.95 * 0.05 / 3.8 * samples)
        return [self.finding("aggregate", d, pvalues.normal_two_sided(d), variance="n*0.95*0.05/3.8")]
