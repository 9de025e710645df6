"""NIST SP 800-22 rev1a, the random walk's cycles: 2.14 Random Excursions and 2.15 Random
Excursions Variant: reference functions and the streaming form of both.
"""

from __future__ import annotations

import math

import numpy as np

from .. import kernels, pvalues
from ..accumulators import Accumulator
from ..special import special
from ..tiers import MiB
from .common import SAMPLE_WORDS, DoesNotApply, sample_bits

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


class RandomExcursions(Accumulator):
    """NIST SP 800-22 rev1a sections 2.14 and 2.15 (Random Excursions and its Variant) on each
    sample of 2^20 bits; samples with J < 500 cycles are left out (the tests do not apply to
    them, as in sts-2.1.2's final report). Aggregates: for each state the pooled cycle counts
    of the applicable samples (2.14: chi-square with 5 degrees of freedom against J pi_k(x);
    2.15: the total visits against the total J); the worst state of each is reported with
    Sidak's correction (8 and 18 states). No second level: the per-sample p-values are too
    discrete (and a third of the samples do not apply)."""

    name = "nist.random_excursions"
    budget = (128, 2 * MiB)  # reads 1/128 of the tier, at least 2 MiB (Accumulator.budget)
    cost_ns_per_word = 353
    source = "NIST SP 800-22 rev1a, sections 2.14 and 2.15"
    sample_words = SAMPLE_WORDS
    second_level = False

    def measure(self, samples):
        lib = kernels.active()
        J, table, xi = self._counts_c(lib, samples) if lib is not None else self._counts(samples)
        return {"J": J}, {"J": J.sum(), "table": table.sum(axis=0), "xi": xi.sum(axis=0)}

    @staticmethod
    def _counts_c(lib, samples):
        """_counts by kernels.c's excursion_counts (the samples with too few cycles zeroed here)."""
        out = kernels.per_row(lib, "excursion_counts", samples, 67)
        out[out[:, 0] < MIN_CYCLES] = 0
        return out[:, 0].copy(), out[:, 1:49].reshape(-1, 6, 8).copy(), out[:, 49:].copy()

    @staticmethod
    def _counts(samples):
        """Per sample: J, the (6, 8) excursion table and the 18 variant visits (zero where J < 500)."""
        k = samples.shape[0]
        J = np.zeros(k, dtype=np.int64)
        table = np.zeros((k, 6, 8), dtype=np.int64)
        xi = np.zeros((k, 18), dtype=np.int64)
        for i, bits in enumerate(sample_bits(samples)):
            walk, cycle, cycles = _walk_cycles(bits)
            if cycles >= MIN_CYCLES:  # 0.005 sqrt(2^20) = 5.1 < 500
                J[i] = cycles
                table[i] = excursion_table(walk, cycle, cycles)
                xi[i] = variant_visits(walk)
        return J, table, xi

    def evaluate(self, records, totals, samples):
        J = int(totals["J"])
        applicable = int((records["J"] > 0).sum())
        if J == 0:  # no sample had 500 cycles: nothing to test (not a failure by itself)
            return []
        p = []
        for i, x in enumerate(EXCURSION_STATES):
            expected = J * np.array(excursion_probabilities(x))
            chi2 = float(((totals["table"][:, i] - expected) ** 2 / expected).sum())
            p.append((float(special.gammaincc(2.5, chi2 / 2.0)), chi2, x))
        worst = min(p)
        results = [self.finding("worst-cell", worst[1], pvalues.sidak(worst[0], len(p)), state=worst[2],
                                cycles=J, applicable_samples=applicable)]
        z = [((int(v) - J) / math.sqrt(J * (4.0 * abs(x) - 2)), x) for x, v in zip(VARIANT_STATES, totals["xi"])]
        zw, xw = max(z, key=lambda item: abs(item[0]))
        two_sided = float(special.erfc(abs(zw) / math.sqrt(2)))
        entry = self.finding("worst-cell", zw, pvalues.sidak(two_sided, len(z)), state=xw, cycles=J,
                             applicable_samples=applicable, test="nist.random_excursions_variant",
                             source="NIST SP 800-22 rev1a, section 2.15")
        results[0]["source"] = "NIST SP 800-22 rev1a, section 2.14"
        return results + [entry]
