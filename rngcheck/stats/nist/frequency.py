"""NIST SP 800-22 rev1a, the frequency tests: 2.1 Frequency (Monobit), 2.2 Frequency within a
Block and 2.13 Cumulative Sums (the walk of the +-1 bits): reference functions and streaming forms.
"""

from __future__ import annotations

import math

import numpy as np

from .. import kernels, pvalues
from ..accumulators import Accumulator
from ..bits import ones as count_ones
from ..bits import walk_extremes
from ..special import special
from ..tiers import MiB
from .common import SAMPLE_WORDS


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

    # float64's ndtr is exactly 1 from 8.3 up and exactly 0 from -38.5 down, so every term with
    # both arguments beyond 9 or below -40 is exactly 0: k is kept to the window between them
    # (about 20 values where z is near sqrt(n), as in a random walk, instead of n/z/2: the battery
    # calls this once a sample)
    low, high = math.floor((-40 * sqn / z - 3) / 4), math.ceil((9 * sqn / z + 1) / 4)
    k1 = np.arange(max(low, tdiv(tdiv(-n, z) + 1, 4)), min(high, tdiv(tdiv(n, z) - 1, 4)) + 1)
    k2 = np.arange(max(low, tdiv(tdiv(-n, z) - 3, 4)), min(high, tdiv(tdiv(n, z) - 1, 4)) + 1)
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


class Monobit(Accumulator):
    """NIST SP 800-22 rev1a section 2.1 (Frequency (Monobit) Test)."""

    name = "nist.monobit"
    source = "NIST SP 800-22 rev1a, section 2.1"
    sample_words = SAMPLE_WORDS

    def measure(self, samples):
        lib = kernels.active()
        ones = kernels.block_ones(lib, samples, samples.shape[1])[:, 0] if lib is not None \
            else count_ones(samples, axis=1)
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
        lib = kernels.active()
        ones = kernels.block_ones(lib, samples, self.block_words) if lib is not None \
            else count_ones(samples.reshape(samples.shape[0], -1, self.block_words), axis=2)
        numerator = ((2 * ones - M) ** 2).sum(axis=1)  # chi2 = numerator / M, exact integers
        return {"numerator": numerator}, {"numerator": numerator.sum()}

    def evaluate(self, records, totals, samples):
        M = self.block_words * 32
        N = self.sample_words // self.block_words
        first = special.gammaincc(N / 2.0, records["numerator"] / M / 2.0)
        chi2 = int(totals["numerator"]) / M
        return [self.finding("aggregate", chi2, pvalues.chi2(chi2, N * samples), M=M, N=N * samples)] \
            + self.second_level_ks(first)


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
