"""NIST SP 800-22 rev1a, compressibility and linear complexity: 2.9 Maurer's Universal
Statistical Test and 2.10 Linear Complexity (Berlekamp-Massey per block): reference functions and
streaming forms.

The linear complexity aggregate pools all blocks against the exact class probabilities
(LINEAR_COMPLEXITY_PI_EXACT), not the rounded ones sts-2.1.2 uses per sequence (whose errors a
long stream would detect).
"""

from __future__ import annotations

import math

import numpy as np

from .. import kernels, pvalues
from ..accumulators import Accumulator, chi2_counts
from ..special import special
from ..tiers import MiB
from .common import SAMPLE_WORDS, DoesNotApply, sample_bits, window_values

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
    return universal_fn(universal_distances(bits, L, Q, K), K), L, K


def universal_distances(bits, L: int, Q: int, K: int) -> np.ndarray:
    """For the L-bit blocks Q+1 .. Q+K (numbered from 1), the distance to the previous block of the
    same value, or the block's number where there is none (kernels.universal_distances in C)."""
    values = window_values(bits[:(Q + K) * L], L)[::L].astype(np.uint8 if L <= 8 else np.uint16)  # radix sort
    index = np.arange(1, Q + K + 1)
    order = np.argsort(values, kind="stable")  # by value, then position
    same = np.zeros(Q + K, dtype=bool)
    same[1:] = values[order][1:] == values[order][:-1]
    previous = np.zeros(Q + K, dtype=np.int64)
    previous[order[1:]] = np.where(same[1:], index[order][:-1], 0)  # last earlier index of the value, 0 if none
    return index[Q:] - previous[Q:]


def universal_fn(distances: np.ndarray, K: int) -> float:
    """f_n of section 2.9.4 from the distances (both paths: the same floating-point sum)."""
    return float(np.log2(distances.astype(np.float64)).sum()) / K


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


class Universal(Accumulator):
    """NIST SP 800-22 rev1a section 2.9 (Maurer's Universal Statistical Test), L = 7, Q = 1280
    on each sample of 2^20 bits. Aggregate: the mean of the samples' f_n against its expected
    value (independent samples: sigma / sqrt(samples)), two-sided."""

    name = "nist.universal"
    budget = (128, 2 * MiB)  # reads 1/128 of the tier, at least 2 MiB (Accumulator.budget)
    cost_ns_per_word = 149
    source = "NIST SP 800-22 rev1a, section 2.9"
    sample_words = SAMPLE_WORDS

    def measure(self, samples):
        lib = kernels.active()
        n = samples.shape[1] * 32
        if lib is not None and n >= UNIVERSAL_MIN_N[6]:
            L, Q, K = universal_parameters(n)
            fn = np.array([universal_fn(kernels.universal_distances(lib, row, L, Q, K), K) for row in samples])
        else:
            fn = np.array([universal_statistic(bits)[0] for bits in sample_bits(samples)])
        return {"fn": fn}, {}

    def evaluate(self, records, totals, samples):
        L, _, K = universal_parameters(self.sample_words * 32)
        expected, sigma = UNIVERSAL_TABLE[L][0], universal_sigma(L, K)
        fn = records["fn"]
        first = special.erfc(np.abs(fn - expected) / (math.sqrt(2) * sigma))
        z = (math.fsum(fn.tolist()) - samples * expected) / (sigma * math.sqrt(samples))
        return [self.finding("aggregate", z, pvalues.normal_two_sided(z), L=L, K=K)] + self.second_level_ks(first)


class LinearComplexity(Accumulator):
    """NIST SP 800-22 rev1a section 2.10 (Linear Complexity Test, M = 500): the 2097 blocks of
    each sample by their class of T; the aggregate pools all blocks against the exact class
    probabilities (1/96, 1/32, ..., 1/48)."""

    name = "nist.linear_complexity"
    budget = (256, 2 * MiB)  # reads 1/256 of the tier, at least 2 MiB (Accumulator.budget)
    from_tier = "deep"
    cost_ns_per_word = 2073
    source = "NIST SP 800-22 rev1a, section 2.10"
    sample_words = SAMPLE_WORDS
    M = 500
    exact = np.array(LINEAR_COMPLEXITY_PI_EXACT)
    program = np.array(LINEAR_COMPLEXITY_PI)

    def measure(self, samples):
        nu = np.stack([linear_complexity_classes(bits, self.M) for bits in sample_bits(samples)])
        return {"nu": nu}, {"nu": nu.sum(axis=0)}

    def evaluate(self, records, totals, samples):
        first = special.gammaincc(3.0, chi2_counts(records["nu"], self.program) / 2.0)
        chi2 = float(chi2_counts(totals["nu"], self.exact))
        return [self.finding("aggregate", chi2, pvalues.chi2(chi2, 6), counts=totals["nu"].tolist(), M=self.M)] \
            + self.second_level_ks(first)
