"""NIST SP 800-22 rev1a, template matching: 2.7 Non-overlapping and 2.8 Overlapping Template
Matching (aperiodic templates, class probabilities as sts-2.1.2 and exact): reference functions
and streaming forms.

Pooling millions of blocks needs exact cell probabilities: the overlapping aggregate uses
overlapping_probabilities_exact, not the rounded ones sts-2.1.2 uses per sequence (whose errors a
long stream would detect). The per-sample p-values of the second level are sts's.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .. import kernels, pvalues
from ..accumulators import Accumulator, chi2_counts
from ..special import special
from ..tiers import MiB
from .common import SAMPLE_WORDS, DoesNotApply, sample_bits, window_values

# --- Sections 2.7 - 2.10, 2.14, 2.15: the tests that read a whole sequence (n about 10^6). ---
#
# Where the text and NIST's program sts-2.1.2 differ, these follow the program: its printed
# p-values (rev1a Appendix B) are what users compare against. Each difference is named in
# the docstring. ``DoesNotApply`` is returned (never a p-value) where a test does not apply.


def aperiodic_templates(m: int) -> list[tuple[int, ...]]:
    """The aperiodic m-bit templates of section 2.7 in increasing binary order, as sts-2.1.2's
    template files list them: B is aperiodic when no copy of B shifted by 1 .. m-1 bits
    agrees with B where they overlap (so two occurrences of B can never overlap)."""
    # B's last m - s bits are the low m - s bits of its value, its first m - s bits the value >> s
    return [tuple((value >> (m - 1 - i)) & 1 for i in range(m)) for value in range(1 << m)
            if all(value >> s != value & ((1 << (m - s)) - 1) for s in range(1, m))]


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
    counts = np.stack([np.bincount(window_values(block, m), minlength=1 << m)
                       for block in np.asarray(bits, dtype=np.uint8)[:N * M].reshape(N, M)])  # (N, 2^m)
    return counts[:, template_index(templates)]


def template_index(templates) -> list[int]:
    """The templates (0/1 sequences, first bit most significant) as the values of m-bit windows."""
    return [int("".join(map(str, t)), 2) for t in templates]


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
    at = np.flatnonzero(window_values(bits[:N * M], m) == (1 << m) - 1)
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
    blocks = NON_OVERLAPPING_BLOCKS
    templates = aperiodic_templates(9)

    def measure(self, samples):
        lib = kernels.active()
        if lib is not None:
            M = samples.shape[1] * 32 // self.blocks
            index = template_index(self.templates)
            W = np.stack([kernels.block_window_counts(lib, row, self.blocks, M, self.m)[:, index]
                          for row in samples])  # (k, 8, 148)
        else:
            W = np.stack([template_counts(bits, self.m, self.blocks, self.templates)
                          for bits in sample_bits(samples)])  # (k, 8, 148)
        sums, squares = W.sum(axis=1), (W * W).sum(axis=1)  # exact integers per sample and template
        return {"sum": sums, "squares": squares}, {"sum": sums.sum(axis=0), "squares": squares.sum(axis=0)}

    def _chi2(self, sums, squares, blocks):
        M = self.sample_words * 32 // self.blocks
        mu, variance = non_overlapping_moments(M, self.m)
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


@functools.cache
def _pooled_probabilities() -> np.ndarray:
    """overlapping_probabilities_exact() as an array, made at the first evaluation: 17 ms that
    every command importing the battery paid at start-up when it was a class attribute."""
    return np.array(overlapping_probabilities_exact())


class OverlappingTemplate(Accumulator):
    """NIST SP 800-22 rev1a section 2.8 (Overlapping Template Matching, m = 9, M = 1032): the
    1016 blocks of each sample by their number of runs of nine ones; the aggregate is the
    chi-square of all blocks pooled against the exact class probabilities."""

    name = "nist.overlapping_template"
    budget = (128, 2 * MiB)  # reads 1/128 of the tier, at least 2 MiB (Accumulator.budget)
    cost_ns_per_word = 66
    source = "NIST SP 800-22 rev1a, section 2.8"
    sample_words = SAMPLE_WORDS
    program = np.array(overlapping_probabilities())

    def measure(self, samples):
        lib = kernels.active()
        if lib is not None:
            M, m, K = 1032, 9, 5  # overlapping_classes' defaults
            N = samples.shape[1] * 32 // M
            nu = np.stack([np.bincount(np.minimum(kernels.block_ones_windows(lib, row, N, M, m), K), minlength=K + 1)
                           for row in samples])
        else:
            nu = np.stack([overlapping_classes(bits) for bits in sample_bits(samples)])
        return {"nu": nu}, {"nu": nu.sum(axis=0)}

    def evaluate(self, records, totals, samples):
        first = special.gammaincc(2.5, chi2_counts(records["nu"], self.program) / 2.0)
        chi2 = float(chi2_counts(totals["nu"], _pooled_probabilities()))
        return [self.finding("aggregate", chi2, pvalues.chi2(chi2, 5), counts=totals["nu"].tolist())] \
            + self.second_level_ks(first)
