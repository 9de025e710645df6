"""Streaming forms of the SP 800-22 rev1a tests of sections 2.7 - 2.10, 2.14 and 2.15 for the
battery: each sample of 2^20 bits (2^15 words, the bit order of rngcheck.stats.bits) is one
sequence of the reference functions in rngcheck.stats.nist, and the counts of all samples are
pooled into one statistic over the whole stream ("aggregate"), beside the second level (KS of
the per-sample p-values) where those are continuous enough.

Pooling millions of blocks needs exact cell probabilities: the aggregates use the exact ones
(overlapping templates: nist.overlapping_probabilities_exact; linear complexity:
nist.LINEAR_COMPLEXITY_PI_EXACT), not the rounded ones sts-2.1.2 uses per sequence (whose
errors a long stream would detect). The per-sample p-values of the second level are sts's.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from . import nist, pvalues
from .accumulators import Accumulator, chi2_counts
from .bits import to_bits
from .tiers import MiB

SAMPLE_WORDS = nist.SAMPLE_WORDS  # 2^20 bits


def _sample_bits(samples: np.ndarray):
    return to_bits(samples)  # (k, 2^20) of 0/1


class OverlappingTemplate(Accumulator):
    """NIST SP 800-22 rev1a section 2.8 (Overlapping Template Matching, m = 9, M = 1032): the
    1016 blocks of each sample by their number of runs of nine ones; the aggregate is the
    chi-square of all blocks pooled against the exact class probabilities."""

    name = "nist.overlapping_template"
    budget = (128, 2 * MiB)  # reads 1/128 of the tier, at least 2 MiB (Accumulator.budget)
    cost_ns_per_word = 66
    source = "NIST SP 800-22 rev1a, section 2.8"
    sample_words = SAMPLE_WORDS
    exact = np.array(nist.overlapping_probabilities_exact())
    program = np.array(nist.overlapping_probabilities())

    def measure(self, samples):
        nu = np.stack([nist.overlapping_classes(bits) for bits in _sample_bits(samples)])
        return {"nu": nu}, {"nu": nu.sum(axis=0)}

    def evaluate(self, records, totals, samples):
        first = special.gammaincc(2.5, chi2_counts(records["nu"], self.program) / 2.0)
        chi2 = float(chi2_counts(totals["nu"], self.exact))
        return [self.finding("aggregate", chi2, pvalues.chi2(chi2, 5), counts=totals["nu"].tolist())] \
            + self.second_level_ks(first)


class NonOverlappingTemplate(Accumulator):
    """NIST SP 800-22 rev1a section 2.7 (Non-overlapping Template Matching, the 148 aperiodic
    templates of m = 9, N = 8 blocks per sample). Aggregate: for each template the chi-square
    of all blocks of all samples (8 x samples degrees of freedom); the worst template is
    reported with Sidak's correction for 148. Second level: the KS test of each template's
    per-sample p-values, the worst one reported with the same correction."""

    name = "nist.non_overlapping_template"
    budget = (128, 2 * MiB)  # reads 1/128 of the tier, at least 2 MiB (Accumulator.budget)
    cost_ns_per_word = 101
    source = "NIST SP 800-22 rev1a, section 2.7"
    sample_words = SAMPLE_WORDS
    m = 9
    blocks = nist.NON_OVERLAPPING_BLOCKS
    templates = nist.aperiodic_templates(9)

    def measure(self, samples):
        W = np.stack([nist.template_counts(bits, self.m, self.blocks, self.templates)
                      for bits in _sample_bits(samples)])  # (k, 8, 148)
        sums, squares = W.sum(axis=1), (W * W).sum(axis=1)  # exact integers per sample and template
        return {"sum": sums, "squares": squares}, {"sum": sums.sum(axis=0), "squares": squares.sum(axis=0)}

    def _chi2(self, sums, squares, blocks):
        M = self.sample_words * 32 // self.blocks
        mu, variance = nist.non_overlapping_moments(M, self.m)
        return (squares - 2 * mu * sums + blocks * mu * mu) / variance  # sum (W - mu)^2 / sigma^2

    def evaluate(self, records, totals, samples):
        chi2 = self._chi2(totals["sum"].astype(np.float64), totals["squares"].astype(np.float64), self.blocks * samples)
        p = special.gammaincc(self.blocks * samples / 2.0, chi2 / 2.0)
        worst = int(np.argmin(p))
        label = "".join(map(str, self.templates[worst]))
        results = [self.finding("worst-cell", float(chi2[worst]), pvalues.sidak(float(p[worst]), p.size),
                                template=label, templates=p.size, df=self.blocks * samples)]
        first = special.gammaincc(self.blocks / 2.0, self._chi2(records["sum"], records["squares"], self.blocks) / 2.0)
        if self.second_level and first.shape[0] >= 10:
            ks = [pvalues.ks_uniform(first[:, t]) for t in range(first.shape[1])]
            t = int(np.argmin([k[1]["p"] for k in ks]))
            results.append(self.finding("second-level", ks[t][0], pvalues.sidak(ks[t][1]["p"], len(ks)),
                                        second_level="KS of per-sample p-values, worst template",
                                        template="".join(map(str, self.templates[t])),
                                        first_level_count=int(first.shape[0])))
        return results


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
        fn = np.array([nist.universal_statistic(bits)[0] for bits in _sample_bits(samples)])
        return {"fn": fn}, {}

    def evaluate(self, records, totals, samples):
        L, _, K = nist.universal_parameters(self.sample_words * 32)
        expected, sigma = nist.UNIVERSAL_TABLE[L][0], nist.universal_sigma(L, K)
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
    exact = np.array(nist.LINEAR_COMPLEXITY_PI_EXACT)
    program = np.array(nist.LINEAR_COMPLEXITY_PI)

    def measure(self, samples):
        nu = np.stack([nist.linear_complexity_classes(bits, self.M) for bits in _sample_bits(samples)])
        return {"nu": nu}, {"nu": nu.sum(axis=0)}

    def evaluate(self, records, totals, samples):
        first = special.gammaincc(3.0, chi2_counts(records["nu"], self.program) / 2.0)
        chi2 = float(chi2_counts(totals["nu"], self.exact))
        return [self.finding("aggregate", chi2, pvalues.chi2(chi2, 6), counts=totals["nu"].tolist(), M=self.M)] \
            + self.second_level_ks(first)


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
        k = samples.shape[0]
        J = np.zeros(k, dtype=np.int64)
        table = np.zeros((k, 6, 8), dtype=np.int64)
        xi = np.zeros((k, 18), dtype=np.int64)
        for i, bits in enumerate(_sample_bits(samples)):
            walk, cycle, cycles = nist._walk_cycles(bits)
            if cycles >= nist.MIN_CYCLES:  # 0.005 sqrt(2^20) = 5.1 < 500
                J[i] = cycles
                table[i] = nist.excursion_table(walk, cycle, cycles)
                xi[i] = nist.variant_visits(walk)
        return {"J": J}, {"J": J.sum(), "table": table.sum(axis=0), "xi": xi.sum(axis=0)}

    def evaluate(self, records, totals, samples):
        J = int(totals["J"])
        applicable = int((records["J"] > 0).sum())
        if J == 0:  # no sample had 500 cycles: nothing to test (not a failure by itself)
            return []
        p = []
        for i, x in enumerate(nist.EXCURSION_STATES):
            expected = J * np.array(nist.excursion_probabilities(x))
            chi2 = float(((totals["table"][:, i] - expected) ** 2 / expected).sum())
            p.append((float(special.gammaincc(2.5, chi2 / 2.0)), chi2, x))
        worst = min(p)
        results = [self.finding("worst-cell", worst[1], pvalues.sidak(worst[0], len(p)), state=worst[2],
                                cycles=J, applicable_samples=applicable)]
        z = [((int(v) - J) / math.sqrt(J * (4.0 * abs(x) - 2)), x) for x, v in zip(nist.VARIANT_STATES, totals["xi"])]
        zw, xw = max(z, key=lambda item: abs(item[0]))
        two_sided = float(special.erfc(abs(zw) / math.sqrt(2)))
        entry = self.finding("worst-cell", zw, pvalues.sidak(two_sided, len(z)), state=xw, cycles=J,
                             applicable_samples=applicable, test="nist.random_excursions_variant",
                             source="NIST SP 800-22 rev1a, section 2.15")
        results[0]["source"] = "NIST SP 800-22 rev1a, section 2.14"
        return results + [entry]
