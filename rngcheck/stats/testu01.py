"""TestU01-style tests (L'Ecuyer & Simard, TestU01 user's guide, "sknuth", "smarsa",
"sstring", "swalk" modules), as streaming accumulators on 32-bit words.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from . import kernels, pvalues
from .accumulators import Accumulator, chi2_counts
from .bits import weight_pairs
from .special import special
from .tiers import MiB


class BirthdaySpacings(Accumulator):
    """Birthday spacings (TestU01 guide, smarsa_BirthdaySpacings; Knuth 3.3.2 J; Marsaglia):
    m = 4096 birthdays in a year of n = 2^32 days (whole words), sorted; J = number of
    repeated values among the m spacings (m minus the number of distinct spacings),
    approximately Poisson with lambda = m^3 / (4n) = 4. The sum of J over all sets is
    Poisson(4 x sets): tested in both tails with the exact Poisson distribution.
    (The relative error of the Poisson mean is O(1/m); at 2^24 sets, 64 GiB, it nears one
    standard deviation: the deep tier reports the sets used.)"""

    name = "testu01.birthday_spacings"
    cost_ns_per_word = 8
    source = "TestU01 guide, smarsa_BirthdaySpacings; Knuth TAOCP vol. 2, 3.3.2 J"
    sample_words = 1 << 16
    m = 4096
    second_level = False  # per-sample counts are discrete (Poisson(64))

    def measure(self, samples):
        # in C where it is built (kernels.birthday_repeats: each set sorted by bucket, the repeats
        # found by hashing the spacings; the same counts as the two sorts below)
        k, s = samples.shape
        lib = kernels.active()
        if lib is not None:
            repeats = kernels.birthday_repeats(lib, samples, self.m).reshape(k, -1).sum(axis=1)
            return {"J": repeats}, {"J": repeats.sum()}
        sets = np.sort(samples.reshape(-1, self.m), axis=1)
        spacings = np.empty_like(sets)  # sorted, so the spacings are non-negative uint32
        spacings[:, 0] = sets[:, 0]
        np.subtract(sets[:, 1:], sets[:, :-1], out=spacings[:, 1:])
        spacings.sort(axis=1)
        repeats = (spacings[:, 1:] == spacings[:, :-1]).sum(axis=1).reshape(k, -1).sum(axis=1)
        return {"J": repeats}, {"J": repeats.sum()}

    def evaluate(self, records, totals, samples):
        sets = samples * self.sample_words // self.m
        lam = self.m ** 3 / (4.0 * 2 ** 32)
        observed = int(totals["J"])
        return [self.finding("aggregate", observed, pvalues.poisson(observed, lam * sets),
                             expected=lam * sets, sets=sets, m=self.m, days="2^32")]


def _binomial_weights(bits: int) -> list[Fraction]:
    return [Fraction(math.comb(bits, w), 2 ** bits) for w in range(bits + 1)]


WEIGHT_CLASSES = np.array([0] * 14 + [1, 1, 2, 3, 3] + [4] * 14)  # <=13, 14-15, 16, 17-18, >=19
_W = _binomial_weights(32)
WEIGHT_CLASS_PROBS = np.array([float(sum(_W[w] for w in range(33) if WEIGHT_CLASSES[w] == c)) for c in range(5)])
HAMMING_CELLS = np.array([0] * 11 + list(range(1, 11)) + [11] * 12)  # <=10, 11..20, >=21
HAMMING_CELL_PROBS = np.array([float(sum(_W[w] for w in range(33) if HAMMING_CELLS[w] == c)) for c in range(12)])


_HAMMING_ONEHOT = (HAMMING_CELLS[:, None] == np.arange(12)[None, :]).astype(np.int64)
_CLASS_ONEHOT = (WEIGHT_CLASSES[:, None] == np.arange(5)[None, :]).astype(np.int64)


class HammingWeight(Accumulator):
    """Hamming weights of 32-bit words (TestU01 guide, sstring_HammingWeight2 / HammingIndep):
      * distribution: weights in 12 cells (<=10, 11..20, >=21) against Binomial(32, 1/2);
      * independence: weight classes (5 classes) of non-overlapping pairs of consecutive
        words, a 5x5 table against the product of exact binomial class probabilities."""

    name = "testu01.hamming"
    source = "TestU01 guide, sstring_HammingWeight2 and sstring_HammingIndep"
    sample_words = 1 << 15

    def measure(self, samples):
        k = samples.shape[0]
        joint = weight_pairs(samples)  # (k, 33, 33): weights of words 2i and 2i+1
        weights = joint.sum(axis=2) + joint.sum(axis=1)
        dist = weights @ _HAMMING_ONEHOT
        indep = np.matmul(np.matmul(_CLASS_ONEHOT.T, joint), _CLASS_ONEHOT).reshape(k, 25)  # class_even * 5 + class_odd
        return {"dist": dist, "indep": indep}, {"dist": dist.sum(axis=0), "indep": indep.sum(axis=0)}

    def evaluate(self, records, totals, samples):
        pair_probs = np.outer(WEIGHT_CLASS_PROBS, WEIGHT_CLASS_PROBS).reshape(-1)
        results = []
        for key, probs, test in (("dist", HAMMING_CELL_PROBS, "testu01.hamming_weight"),
                                 ("indep", pair_probs, "testu01.hamming_independence")):
            df = len(probs) - 1
            first = special.gammaincc(df / 2, chi2_counts(records[key], probs) / 2)
            chi2 = float(chi2_counts(totals[key], probs))
            entry = self.finding("aggregate", chi2, pvalues.chi2(chi2, df), df=df, test=test)
            results.append(entry)
            for ks in self.second_level_ks(first):
                ks["test"] = test
                results.append(ks)
        return results


class Collision(Accumulator):
    """Collision test (Knuth 3.3.2 I; TestU01 guide, smultin_Multinomial with collisions):
    2^14 balls (the top 24 bits of consecutive words) in 2^24 urns; collisions C =
    balls - occupied urns. Mean and variance exact (Knuth's formulas); the sum of C over
    all sets is tested with a normal approximation (two-sided, both tails meaningful)."""

    name = "knuth.collision"
    source = "Knuth TAOCP vol. 2, 3.3.2 I (collision test)"
    sample_words = 1 << 16
    balls = 1 << 14
    urn_bits = 24
    second_level = False

    def measure(self, samples):
        lib = kernels.active()
        collisions = kernels.per_row(lib, "collision_counts", samples, 1, self.balls, self.urn_bits)[:, 0] \
            if lib is not None else self._collisions(samples)
        return {"C": collisions}, {"C": collisions.sum()}

    def _collisions(self, samples):
        """Per sample, the collisions summed over its sets: numpy (kernels.c's collision_counts)."""
        k, s = samples.shape
        values = np.sort((samples >> np.uint32(32 - self.urn_bits)).reshape(-1, self.balls), axis=1)
        return (values[:, 1:] == values[:, :-1]).sum(axis=1).reshape(k, -1).sum(axis=1)

    def moments(self):
        """Exact mean and variance of the collision count of n balls in m urns."""
        from decimal import Decimal, localcontext
        n, m = self.balls, 2 ** self.urn_bits
        with localcontext() as ctx:  # 60 digits: the variance is a difference of ~1e14-sized terms
            ctx.prec = 60
            dm = Decimal(m)
            e1 = (1 - 1 / dm) ** n
            e2 = (1 - 2 / dm) ** n
            mean_empty = dm * e1  # empty urns: C = n - (m - empty)
            var_empty = dm * (dm - 1) * e2 + dm * e1 - (dm * e1) ** 2
            mean = n - (dm - mean_empty)
            return float(mean), float(var_empty)

    def evaluate(self, records, totals, samples):
        sets = samples * self.sample_words // self.balls
        mean, var = self.moments()
        observed = int(totals["C"])
        z = (observed - mean * sets) / math.sqrt(var * sets)
        return [self.finding("aggregate", z, pvalues.normal_two_sided(z), collisions=observed,
                             expected=mean * sets, sets=sets)]


class WordCollision(Collision):
    """The collision test on whole words (Knuth 3.3.2 I with m = 2^32 urns, n = 2^20 balls: every
    word of a 4 MiB sample is a ball in the urn of its value); C = balls - distinct words, mean
    n - m (1 - (1 - 1/m)^n), about 128 per sample. A generator that walks a permutation of the
    32-bit words (one thread of a 32-bit-state generator under a bijective output function, such
    as Warp's PCG: weak_generators.SHIPPED) repeats no word within its period, where random words
    repeat about 128 times per 2^20; the top-24-bit test above cannot see it. The sum of C over the
    samples is tested with the Poisson distribution in both tails (its variance is the Poisson's
    to a relative 2^-12: n / m), as the birthday spacings are."""

    name = "knuth.collision.words"
    sample_words = 1 << 20
    balls = 1 << 20
    urn_bits = 32
    budget = (16, 4 * MiB)  # 1/16 of the tier, at least one sample (Accumulator.budget)
    cost_ns_per_word = 6

    def measure(self, samples):
        # Collision's numpy code on both paths (sorted, equal neighbours): the compiled counter's
        # bitmap of 2^32 urns would be 512 MiB
        collisions = self._collisions(samples)
        return {"C": collisions}, {"C": collisions.sum()}

    def evaluate(self, records, totals, samples):
        mean, _ = self.moments()
        observed = int(totals["C"])
        return [self.finding("aggregate", observed, pvalues.poisson(observed, mean * samples),
                             collisions=observed, expected=mean * samples, sets=samples, urns="2^32")]


class RandomWalk(Accumulator):
    """Random walk test (TestU01 guide, swalk_RandomWalk1, statistic H): walks of L = 64
    steps, one bit per step (every bit of the stream, most significant first); the final
    position (number of +1 steps) is Binomial(64, 1/2), grouped into cells with exact
    probabilities, and the count of walks per cell is a chi-square."""

    name = "testu01.random_walk"
    source = "TestU01 guide, swalk_RandomWalk1 (statistic H)"
    sample_words = 1 << 15
    L = 64

    def __init__(self, start: int = 0):
        super().__init__(start)
        w = _binomial_weights(self.L)
        lo, hi = 22, 42  # cells: <=22, 23..41, >=42
        self.cell_of = np.array([min(max(x, lo), hi) - lo for x in range(self.L + 1)])
        self.probabilities = np.array([float(sum(w[x] for x in range(self.L + 1) if self.cell_of[x] == c))
                                       for c in range(hi - lo + 1)])
        ups = (np.arange(33)[:, None] + np.arange(33)[None, :]).reshape(-1)
        self._cell_of_pair = (self.cell_of[ups][:, None] == np.arange(hi - lo + 1)[None, :]).astype(np.float64)

    def measure(self, samples):
        k = samples.shape[0]
        joint = weight_pairs(samples).reshape(k, 33 * 33).astype(np.float64)  # counts < 2^53: exact
        counts = np.rint(joint @ self._cell_of_pair).astype(np.int64)  # cell of weight(2i) + weight(2i+1)
        return {"counts": counts}, {"counts": counts.sum(axis=0)}

    def evaluate(self, records, totals, samples):
        df = len(self.probabilities) - 1
        first = special.gammaincc(df / 2, chi2_counts(records["counts"], self.probabilities) / 2)
        chi2 = float(chi2_counts(totals["counts"], self.probabilities))
        return [self.finding("aggregate", chi2, pvalues.chi2(chi2, df), df=df)] + self.second_level_ks(first)
