"""NIST SP 800-22 rev1a tests (Rukhin et al., NIST Special Publication 800-22 Revision 1a, 2010).

Two forms of each test:
  * a reference function on a 0/1 bit array that follows the document step by step and
    reproduces its worked examples (tests/test_stats_nist.py checks them all);
  * a streaming accumulator on 32-bit words (bit order: rngcheck.stats.bits), vectorised,
    checked against the reference function on random data.

A sample is 2^20 bits (2^15 words; NIST suggests n >= 10^6). Each accumulator reports
the test on the whole stream ("aggregate": the counts of every sample pooled, the most
powerful form against a small constant bias) and the second level (KS on the per-sample
p-values, NIST section 4.2.2).
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache

import numpy as np
from scipy import special

from . import pvalues
from .accumulators import Accumulator, chi2_counts
from .bits import ones as count_ones, walk_extremes

SAMPLE_WORDS = 1 << 15  # 2^20 bits


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


def longest_run(bits, *, exact: bool = True) -> float:
    """2.4 Test for the Longest Run of Ones in a Block (M chosen from n as in section 2.4.2).

    ``exact`` uses exact class probabilities (longest_run_probabilities) instead of the
    4-digit table. The worked example of 2.4.8 prints chi2 = 4.882605 (the table's
    probabilities) but P-value = 0.180609, which is what the exact probabilities give
    (chi2 = 4.882457); the table gives 0.180598.
    """
    bits = np.asarray(bits, dtype=np.int64)
    n = bits.size
    M = 8 if n < 6272 else 128 if n < 750000 else 10000
    bounds, probs = LONGEST_RUN_TABLE[M]
    if exact:
        probs = longest_run_probabilities(M, bounds[0], bounds[-1])
    N = n // M
    counts = np.zeros(len(bounds), dtype=np.int64)
    for block in bits[:N * M].reshape(N, M):
        best = run = 0
        for b in block:
            run = run + 1 if b else 0
            best = max(best, run)
        counts[min(max(best, bounds[0]), bounds[-1]) - bounds[0]] += 1
    chi2 = float(chi2_counts(counts, probs))
    return float(special.gammaincc((len(bounds) - 1) / 2.0, chi2 / 2.0))


@lru_cache(maxsize=None)
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


def matrix_rank(bits, M: int = 32, Q: int = 32) -> float:
    """2.5 Binary Matrix Rank Test (with the 32x32 probabilities 0.2888/0.5776/0.1336 as published)."""
    bits = np.asarray(bits, dtype=np.uint8)
    N = bits.size // (M * Q)
    ranks = [gf2_rank(bits[i * M * Q:(i + 1) * M * Q].reshape(M, Q)) for i in range(N)]
    full = sum(r == M for r in ranks)
    minus = sum(r == M - 1 for r in ranks)
    chi2 = ((full - 0.2888 * N) ** 2 / (0.2888 * N) + (minus - 0.5776 * N) ** 2 / (0.5776 * N)
            + (N - full - minus - 0.1336 * N) ** 2 / (0.1336 * N))
    return float(math.exp(-chi2 / 2.0))


def spectral(bits) -> float:
    """2.6 Discrete Fourier Transform (Spectral) Test, as published (variance n*0.95*0.05/4)."""
    x = 2.0 * np.asarray(bits, dtype=np.float64) - 1.0
    n = x.size
    modulus = np.abs(np.fft.fft(x))[: n // 2]
    threshold = math.sqrt(math.log(1 / 0.05) * n)
    n0 = 0.95 * n / 2.0
    n1 = int((modulus < threshold).sum())
    d = (n1 - n0) / math.sqrt(n * 0.95 * 0.05 / 4.0)
    return float(special.erfc(abs(d) / math.sqrt(2)))


def _window_counts(bits, m: int) -> np.ndarray:
    """Counts of every m-bit pattern over the n overlapping windows, the sequence wrapped around
    (the augmented sequence of 2.11.4 step 1 and 2.12.4 step 1)."""
    n = bits.size
    extended = np.concatenate([bits, bits[: m - 1]]).astype(np.int64)
    values = np.zeros(n, dtype=np.int64)
    for j in range(m):
        values = (values << 1) | extended[j:j + n]
    return np.bincount(values, minlength=1 << m)


def _psi2(bits, m: int) -> float:
    if m <= 0:
        return 0.0
    counts = _window_counts(bits, m)
    return (2.0 ** m / bits.size) * float((counts.astype(np.float64) ** 2).sum()) - bits.size


def serial(bits, m: int) -> tuple[float, float]:
    """2.11 Serial Test: (p1, p2) from del psi^2_m and del^2 psi^2_m."""
    bits = np.asarray(bits, dtype=np.uint8)
    psim, psim1, psim2 = _psi2(bits, m), _psi2(bits, m - 1), _psi2(bits, m - 2)
    d1 = psim - psim1
    d2 = psim - 2 * psim1 + psim2
    return float(special.gammaincc(2 ** (m - 2), d1 / 2)), float(special.gammaincc(2 ** (m - 3), d2 / 2))


def _phi(bits, m: int) -> float:
    counts = _window_counts(bits, m)
    c = counts[counts > 0] / bits.size
    return float((c * np.log(c)).sum())


def approximate_entropy(bits, m: int) -> float:
    """2.12 Approximate Entropy Test: chi2 = 2n(ln 2 - ApEn), p = igamc(2^(m-1), chi2/2)."""
    bits = np.asarray(bits, dtype=np.uint8)
    n = bits.size
    apen = _phi(bits, m) - _phi(bits, m + 1)
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
        return [self.finding("aggregate", (t - pairs / 2) / math.sqrt(pairs / 4), aggregate, transitions=t, pairs=pairs)] \
            + self.second_level_ks(first)


class LongestRun(Accumulator):
    """NIST SP 800-22 rev1a section 2.4 (Longest Run of Ones in a Block), M = 128 bits,
    classes <=4 .. >=9, with exact class probabilities (the table's 4 digits would bias a
    long stream)."""

    name = "nist.longest_run"
    source = "NIST SP 800-22 rev1a, section 2.4"
    sample_words = SAMPLE_WORDS
    probabilities = longest_run_probabilities(128, 4, 9)

    def measure(self, samples):
        k = samples.shape[0]
        pairs = np.ascontiguousarray(samples, dtype=np.uint32).view(np.uint64).reshape(-1, 2)
        swap = np.uint64(32)  # little-endian pairs hold word 2i in the low half: stream order is the swap
        hi = (pairs[:, 0] << swap) | (pairs[:, 0] >> swap)
        lo = (pairs[:, 1] << swap) | (pairs[:, 1] >> swap)

        def shifted(h, l, m):  # the 128-bit block (h, l) shifted left by m bits
            return (h << np.uint64(m)) | (l >> np.uint64(64 - m)), l << np.uint64(m)

        # a_L has bit i set where bits i, i-1, ..., i-L+1 are all ones: a_{m+n} = a_m & (a_n << m)
        h, l = shifted(hi, lo, 1)
        h &= hi
        l &= lo  # a_2
        h2, l2 = shifted(h, l, 2)
        h &= h2
        l &= l2  # a_4
        classes = np.zeros(hi.size, dtype=np.uint8)  # number of L in 5..9 with a run of length >= L
        for _ in range(5):
            h2, l2 = shifted(h, l, 1)
            h &= h2
            l &= l2  # a_5 .. a_9
            classes += (h | l) != 0
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
