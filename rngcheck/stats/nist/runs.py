"""NIST SP 800-22 rev1a, the runs tests: 2.3 Runs and 2.4 Longest Run of Ones in a Block
(the text's table, sts-2.1.2's probabilities and exact ones): reference functions and streaming forms.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import cache

import numpy as np

from .. import kernels, pvalues
from ..accumulators import Accumulator, chi2_counts
from ..bits import ones as count_ones
from ..special import special
from .common import SAMPLE_WORDS, DoesNotApply


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


class Runs(Accumulator):
    """NIST SP 800-22 rev1a section 2.3 (Runs Test). Aggregate: the number of transitions
    between adjacent bits of each sample is Binomial(n-1, 1/2) for a fair stream
    (b_i xor b_i+1 are independent fair bits), tested in both tails."""

    name = "nist.runs"
    source = "NIST SP 800-22 rev1a, section 2.3"
    sample_words = SAMPLE_WORDS

    def measure(self, samples):
        lib = kernels.active()
        if lib is not None:
            ones, transitions = kernels.per_row(lib, "runs_transitions", samples, 2).T
        else:
            ones, transitions = self._counts(samples)
        return {"ones": ones, "transitions": transitions}, {"transitions": transitions.sum()}

    @staticmethod
    def _counts(samples):
        """(ones, transitions) per sample: numpy (kernels.c's runs_transitions in C)."""
        inner = count_ones((samples ^ (samples >> np.uint32(1))) & np.uint32(0x7FFFFFFF), axis=1)
        across = np.count_nonzero((samples[:, :-1] & np.uint32(1)) != (samples[:, 1:] >> np.uint32(31)), axis=1)
        return count_ones(samples, axis=1), inner + across

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
        lib = kernels.active()
        counts = kernels.per_row(lib, "longest_run_classes", samples, 6) if lib is not None else self._counts(samples)
        return {"counts": counts}, {"counts": counts.sum(axis=0)}

    @staticmethod
    def _counts(samples):
        """(k, 6) blocks by longest run class: numpy (kernels.c's longest_run_classes in C)."""
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
        return np.stack([np.count_nonzero(classes == c, axis=1) for c in range(6)], axis=1)

    def evaluate(self, records, totals, samples):
        first = special.gammaincc(2.5, chi2_counts(records["counts"], self.probabilities) / 2.0)
        chi2 = float(chi2_counts(totals["counts"], self.probabilities))
        return [self.finding("aggregate", chi2, pvalues.chi2(chi2, 5), counts=totals["counts"].tolist())] \
            + self.second_level_ks(first)
