"""Tests of the kinds that give PractRand its power, written here from their published
descriptions (PractRand 0.96, doc/Tests_engines.txt and doc/Tests_overview.txt; Chris
Doty-Humphrey). PractRand calibrates its statistics empirically on a known-good generator;
each test here is reshaped so that its null distribution is exact (independent tuples,
exact cell probabilities), which costs some power per byte but needs no calibration:

  pr.block_weights    BCFN kind: "bit counting" at several scales. The Hamming weight of
                      consecutive blocks of 2^j words (j = 0, 2, 4, ... 12), each put in one
                      of three classes (the outer two as near 1/3 as the binomial allows, below it;
                      exact tails),
                      and the classes of 3 consecutive blocks counted as one of 27 cells.
                      Long-range linear correlations (lagged Fibonacci, LFSRs) make the
                      weights of neighbouring blocks depend on each other.
  pr.weight_windows   DC6 kind: short-range dependence of Hamming weights. Bytes in three
                      weight classes (<= 3, 4, >= 5 ones), every window of 9 consecutive bytes
                      (sliding one byte, as PractRand's DC6-9x1Bytes-1) as one of 19683 cells;
                      and words (<= 14, 15-17, >= 18 ones), every window of 6 consecutive
                      words as one of 729 cells. Overlapping windows are dependent: the
                      statistic is Q_L - Q_(L-1) (Good 1953; Marsaglia's Diehard
                      "count-the-1s"), asymptotically chi-square without calibration.
                      (Until issue #33: non-overlapping 6-byte and 4-word tuples, far weaker:
                      Philox4x32-4 at 16 MiB gave p = 1e-2.7 there and 1e-16889 here.)
  pr.float_frequency  FPF kind: "a frequency test applied to the binary format of floating
                      point numbers storing the integer values of windows of the stream".
                      32-bit windows starting every 5 bytes (disjoint; the window moves 8 bits
                      against the word boundary each time), read as a float: the exponent
                      (leading zeros) and the bits after the leading one (6 of them for
                      exponents 0-7, 2 for 8-11; 12 or more leading zeros is one cell).
  pr.gap16            Gap-16 kind: gaps between repeats of each 16-bit value (both halves of
                      every word), in classes of doubling width. Expected count of a gap g in
                      a sample of N values: (N - g) p (1 - p)^(g - 1), p = 2^-16.
  pr.power_lags       TMFn kind ("long to very long range correlations common in LCG
                      output"): the low byte of w[n] - 2 w[n + L] + w[n + 2L] for lags L =
                      2^j words. For an LCG modulo 2^m, x[n + 2^k] - x[n] is a multiple of
                      2^(k+2) plus a constant, so this second difference is constant in its
                      low 2k + 4 bits; truncating to the high half leaves the constant in
                      the low bits at lags of 2^15 and more (32-bit outputs of a 64-bit LCG).
                      For independent uniform words the low bytes of the second differences
                      at one lag are independent and uniform (each brings in a new word with
                      coefficient 1), so their 256-cell chi-square is exact.

All five are streaming accumulators like the rest of the battery (mergeable, per-sample
records, results independent of chunking); each says its budget (Accumulator.budget), which the battery applies.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np

from . import kernels, pvalues
from .accumulators import Accumulator, chi2_counts
from .knuth import _chi2_p
from .tiers import MiB

MIN_EXPECTED = 5.0  # cells are judged only when every expected count is at least this


def _aggregate(acc, counts, probabilities, **extra):
    """Chi-square of pooled counts; None when the expected counts are still too small."""
    counts = np.asarray(counts)
    n = int(counts.sum())
    if n == 0 or n * float(np.min(probabilities)) < MIN_EXPECTED:
        return None
    chi2 = float(chi2_counts(counts, probabilities))
    df = len(probabilities) - 1
    return acc.finding("aggregate", chi2, pvalues.chi2(chi2, df), df=df, observations=n, **extra)


def _judged(acc, rows, probabilities, test=None, **extra) -> list[dict]:
    """The pooled chi-square of per-sample counts (``rows``) and the KS test of the samples'
    own p-values, both under ``test`` (default: the accumulator's name); [] while the
    expected counts are too small."""
    rows = np.asarray(rows)
    named = {"test": test} if test else {}
    entry = _aggregate(acc, rows.sum(axis=0), probabilities, **named, **extra)
    if entry is None:
        return []
    seconds = acc.second_level_ks(_per_sample_p(rows, probabilities))
    for second in seconds:
        second.update(named)
    return [entry] + seconds


def _per_sample_p(counts, probabilities):
    """First-level p-values of each sample's counts (rows), where the expected counts allow."""
    counts = np.asarray(counts)
    n = counts.sum(axis=-1)
    usable = n * float(np.min(probabilities)) >= MIN_EXPECTED
    if not usable.any():
        return np.empty(0)
    return _chi2_p(chi2_counts(counts[usable], probabilities), len(probabilities) - 1)


def _tuple_probabilities(class_probabilities, length):
    """Probabilities of the cells sum(c_i * k^i) of ``length`` independent classes."""
    p = np.asarray(class_probabilities, dtype=float)
    cells = np.ones(1)
    for _ in range(length):
        cells = (cells[None, :] * p[:, None]).reshape(-1)  # new class is the most significant digit
    return cells


def _tuple_codes(classes, length, k):
    """Non-overlapping ``length``-tuples of classes along the last axis -> cell codes."""
    rows = classes.shape[0]
    usable = classes.shape[1] - classes.shape[1] % length
    grouped = classes[:, :usable].reshape(rows, -1, length).astype(np.int64)
    weights = k ** np.arange(length, dtype=np.int64)
    return grouped @ weights


def _count_rows(codes, cells):
    rows = codes.shape[0]
    flat = codes + (np.arange(rows, dtype=np.int64) * cells)[:, None]
    return np.bincount(flat.reshape(-1), minlength=rows * cells).reshape(rows, cells)


@cache
def _weight_classes(bits: int):
    """Three classes of the Hamming weight of ``bits`` fair bits, the outer two as near 1/3 as
    the binomial allows without exceeding it: (lower cut, upper cut, exact class probabilities). Class 0: weight <=
    lower, 1: lower < weight < upper, 2: weight >= upper."""
    # scipy.stats.binom(bits, 0.5).ppf(1 / 3), then one down where its cdf exceeds 1/3, was
    # this cut: found here by bisection on the same cdf (pvalues.binom_cdf), without scipy.stats
    low, high = -1, bits  # cdf(low) <= 1/3 < cdf(high)
    while high - low > 1:
        mid = (low + high) // 2
        if pvalues.binom_cdf(mid, bits, 0.5) <= 1 / 3:
            low = mid
        else:
            high = mid
    lower = low
    upper = bits - lower  # symmetric
    p0 = pvalues.binom_cdf(lower, bits, 0.5)
    return lower, upper, np.array([p0, 1.0 - 2.0 * p0, p0])


# _weight_classes' cuts (lower, upper) for the 32 * 2^level bits of BlockWeights' levels, written
# out so that the workers that count need no binomial distribution (scipy.special, about 0.17 s to
# import in each: rngcheck/stats/special.py); tests/test_stats_practrand_kinds.py holds them to it
WEIGHT_CUTS = {0: (14, 18), 2: (61, 67), 4: (250, 262), 6: (1013, 1035), 8: (4076, 4116), 10: (16344, 16424),
               12: (65457, 65615)}


class BlockWeights(Accumulator):
    """BCFN kind (PractRand doc/Tests_engines.txt: "checks for long range linear correlations
    (bit counting)... each individual level is a frequency test on overlapping sets of
    Hamming weights"). Here: levels j = 0, 2, ..., 12 (blocks of 2^j words), three weight
    classes, non-overlapping triples of consecutive blocks (27 cells, exact)."""

    name = "pr.block_weights"
    budget = (16, 4 * MiB)  # reads 1/16 of the tier, at least 4 MiB (Accumulator.budget)
    cost_ns_per_word = 8
    source = "PractRand BCFN (doc/Tests_engines.txt), exact-null variant: triples of block-weight classes"
    sample_words = 1 << 20
    levels = (0, 2, 4, 6, 8, 10, 12)
    tuple_length = 3

    def measure(self, samples):
        k, s = samples.shape
        lib = kernels.active()
        if lib is not None and all(s % (1 << level) == 0 for level in self.levels):
            cuts = [WEIGHT_CUTS[level] for level in self.levels]
            counts = kernels.block_weight_counts(lib, samples, self.levels, [c[0] for c in cuts], [c[1] for c in cuts])
            records = {f"level{level}": counts[:, j].copy() for j, level in enumerate(self.levels)}
            return records, {key: value.sum(axis=0) for key, value in records.items()}
        weights = np.bitwise_count(samples).astype(np.int32)
        records = {}
        for level in self.levels:
            block = 1 << level
            sums = weights.reshape(k, s // block, block).sum(axis=2, dtype=np.int32) if block > 1 else weights
            lower, upper = WEIGHT_CUTS[level]
            classes = (sums > lower).astype(np.int8) + (sums >= upper).astype(np.int8)
            records[f"level{level}"] = _count_rows(_tuple_codes(classes, self.tuple_length, 3), 27)
        return records, {key: value.sum(axis=0) for key, value in records.items()}

    def evaluate(self, records, totals, samples):
        out = []
        for level in self.levels:
            probabilities = _tuple_probabilities(_weight_classes(32 << level)[2], self.tuple_length)
            out += _judged(self, records[f"level{level}"], probabilities, test=f"{self.name}.level{level}",
                           block_words=1 << level)
        return out


BYTE_CLASS = np.select([np.bitwise_count(np.arange(256, dtype=np.uint8)) <= 3,
                        np.bitwise_count(np.arange(256, dtype=np.uint8)) == 4], [0, 1], 2).astype(np.int8)
BYTE_CLASS_P = np.array([93, 70, 93]) / 256.0  # weights <= 3, 4, >= 5 of a fair byte
WORD_CUTS = (14, 18)  # word weight classes: <= 14, 15-17, >= 18


def _word_class_p():
    low = pvalues.binom_cdf(WORD_CUTS[0], 32, 0.5)
    return np.array([low, 1.0 - 2.0 * low, low])


FPF_FINE, FPF_COARSE = 8, 12  # exponents below 8: 6 mantissa bits; 8..11: 2 bits; >= 12: one cell


def _fpf_probabilities():
    cells = [2.0 ** -(e + 1) / 64 for e in range(FPF_FINE) for _ in range(64)]
    cells += [2.0 ** -(e + 1) / 4 for e in range(FPF_FINE, FPF_COARSE) for _ in range(4)]
    cells.append(2.0 ** -FPF_COARSE)
    return np.array(cells)


FPF_P = _fpf_probabilities()


class FloatFrequency(Accumulator):
    """FPF kind (PractRand doc/Tests_engines.txt: "floating point frequency... a frequency test
    applied to the binary format of floating point numbers storing the integer values of
    overlapping windows of the original data stream"; it "checks for very short range
    correlations... especially those involving lots of 0 bits"). Here the windows are 32
    bits starting every 5 bytes (disjoint: exact cells; the window slides 8 bits against
    the word boundary each time), read as little-endian integers."""

    name = "pr.float_frequency"
    budget = (32, 1 * MiB)  # reads 1/32 of the tier, at least 1 MiB (Accumulator.budget)
    cost_ns_per_word = 9
    source = "PractRand FPF (doc/Tests_engines.txt), exact-null variant: disjoint windows"
    sample_words = 1 << 18  # 2^20 bytes: 209715 windows

    def measure(self, samples):
        k = samples.shape[0]
        raw = samples.view(np.uint8).reshape(k, -1)
        usable = raw.shape[1] - raw.shape[1] % 5
        windows = np.ascontiguousarray(raw[:, :usable].reshape(k, -1, 5)[:, :, :4]).view("<u4")[..., 0]
        _, exponent = np.frexp(windows.astype(np.float64))  # window in [2^(e-1), 2^e): e = 32 - leading zeros
        zeros = 32 - exponent
        fine = zeros < FPF_FINE
        coarse = (zeros >= FPF_FINE) & (zeros < FPF_COARSE)
        shift_fine = np.clip(31 - zeros - 6, 0, 31).astype(np.uint32)
        shift_coarse = np.clip(31 - zeros - 2, 0, 31).astype(np.uint32)
        cell = np.full(windows.shape, len(FPF_P) - 1, dtype=np.int64)
        cell[fine] = (zeros[fine] * 64 + ((windows[fine] >> shift_fine[fine]) & 63)).astype(np.int64)
        cell[coarse] = (FPF_FINE * 64 + (zeros[coarse] - FPF_FINE) * 4
                        + ((windows[coarse] >> shift_coarse[coarse]) & 3)).astype(np.int64)
        counts = _count_rows(cell, len(FPF_P))
        return {"counts": counts}, {"counts": counts.sum(axis=0)}

    def evaluate(self, records, totals, samples):
        return _judged(self, records["counts"], FPF_P)


GAP_P = 2.0 ** -16


@cache
def _gap_classes(values: int):
    """Gap classes [2^c, 2^(c+1)) for gaps up to ``values`` - 1, merged from the top until the
    expected count is at least MIN_EXPECTED in a sample; returns (upper bounds, expected)."""
    g = np.arange(1, values, dtype=np.float64)
    expected = (values - g) * GAP_P * np.exp((g - 1) * math.log1p(-GAP_P))
    bounds, sums = [], []
    start = 1
    while start < values:
        end = min(2 * start, values)
        bounds.append(end)
        sums.append(expected[start - 1:end - 1].sum())
        start = end
    while len(sums) > 1 and sums[-1] < MIN_EXPECTED:  # merge the thin tail
        sums[-2] += sums.pop()
        bounds.pop(-2)
    return np.array(bounds), np.array(sums)


class Gap16(Accumulator):
    """Gap-16 kind (PractRand doc/Tests_engines.txt: "a variation on the classic Gap test").
    Gaps between consecutive occurrences of each 16-bit value within a sample (both halves
    of every word, low half first), in classes of doubling width; the cells' expected counts
    are exact, the chi-square is taken given the number of gaps (df = classes - 1)."""

    name = "pr.gap16"
    budget = (64, 1 * MiB)  # reads 1/64 of the tier, at least 1 MiB (Accumulator.budget)
    cost_ns_per_word = 37
    source = "PractRand Gap-16 (doc/Tests_engines.txt); Knuth TAOCP vol. 2, 3.3.2 C"
    sample_words = 1 << 18  # 2^19 values: about 8 per value

    def measure(self, samples):
        k = samples.shape[0]
        values = samples.view(np.uint16).reshape(k, -1)
        n = values.shape[1]
        bounds, _ = _gap_classes(n)
        lib = kernels.active()
        if lib is not None:  # the same counts in C, one pass with each value's last position
            counts = kernels.gap16_counts(lib, samples, bounds)
            return {"counts": counts}, {"counts": counts.sum(axis=0)}
        rows = []
        for row in values:
            order = np.argsort(row, kind="stable")  # positions grouped by value, increasing
            sorted_values = row[order]
            same = sorted_values[1:] == sorted_values[:-1]
            gaps = np.diff(order)[same]
            rows.append(np.bincount(np.searchsorted(bounds, gaps, side="right"), minlength=len(bounds)))
        counts = np.array(rows, dtype=np.int64)[:, :len(bounds)]
        return {"counts": counts}, {"counts": counts.sum(axis=0)}

    def evaluate(self, records, totals, samples):
        _, expected = _gap_classes(self.sample_words * 2)
        probabilities = expected / expected.sum()
        return _judged(self, records["counts"], probabilities, classes=len(probabilities))


class PowerLags(Accumulator):
    """TMFn kind (PractRand doc/Tests_engines.txt: "a simple test looking for some simple long
    to very long range correlations common in LCG output"). Here: the low byte of the second
    difference w[n] - 2 w[n+L] + w[n+2L] at lags L = 2^j words, 256 cells, per lag (see the
    module docstring for why the cells are exact and why LCGs fail)."""

    name = "pr.power_lags"
    budget = (16, 4 * MiB)  # reads 1/16 of the tier, at least 4 MiB (Accumulator.budget)
    cost_ns_per_word = 14
    source = "PractRand TMFn (doc/Tests_engines.txt), exact-null variant: second differences at power-of-two lags"
    sample_words = 1 << 20
    lags = (1 << 4, 1 << 8, 1 << 12, 1 << 14, 1 << 16, 1 << 17, 1 << 18)

    def measure(self, samples):
        lib = kernels.active()
        if lib is not None:
            counts = kernels.power_lag_counts(lib, samples, self.lags)
            records = {f"lag{lag}": counts[:, i].copy() for i, lag in enumerate(self.lags)}
            return records, {key: value.sum(axis=0) for key, value in records.items()}
        k, s = samples.shape
        records = {}
        for lag in self.lags:
            span = s - 2 * lag
            difference = samples[:, :span] - samples[:, lag:lag + span] * np.uint32(2) + samples[:, 2 * lag:]
            records[f"lag{lag}"] = _count_rows((difference & np.uint32(255)).astype(np.int64), 256)
        return records, {key: value.sum(axis=0) for key, value in records.items()}

    def evaluate(self, records, totals, samples):
        probabilities = np.full(256, 1 / 256)
        return [entry for lag in self.lags for entry in
                _judged(self, records[f"lag{lag}"], probabilities, test=f"{self.name}.lag{lag}", lag_words=lag)]


def overlapping_codes(letters, length: int, k: int):
    """Codes sum(letter[i + j] k^j, j < length) of every circular ``length``-window of each row
    (the row is read as a cycle: the last windows wrap to its start); uint16 while k^length
    fits (half the memory traffic of int32)."""
    rows, n = letters.shape
    dtype = np.uint16 if k ** length <= 1 << 16 else np.int64
    cyclic = np.concatenate([letters, letters[:, :length - 1]], axis=1).astype(dtype)
    codes = cyclic[:, length - 1:length - 1 + n] * dtype(k ** (length - 1))
    for j in range(length - 2, -1, -1):
        codes += cyclic[:, j:j + n] * dtype(k ** j)
    return codes


def _count_each_row(codes, cells):
    return np.array([np.bincount(row, minlength=cells) for row in codes], dtype=np.int64).reshape(-1, cells)


def overlapping_q_difference(counts, class_p, length: int):
    """Q_L - Q_(L-1) of the circular L-window counts (rows: samples; cell code sum c_j k^j),
    with Q_m Pearson's sum over the m-window cells (the (L-1)-window counts are the L-window
    counts summed over the last letter, the most significant digit). For independent letters
    of probabilities ``class_p`` it is asymptotically chi-square with k^L - k^(L-1) degrees of
    freedom (Good 1953, for equal letters; Marsaglia's "count-the-1s" tests, Diehard 1995, for
    letters of unequal probability: Q5 - Q4, 2500 df); returns (statistic per row, df)."""
    counts = np.asarray(counts, dtype=np.float64)
    k = len(class_p)
    p_long = _tuple_probabilities(class_p, length)
    p_short = _tuple_probabilities(class_p, length - 1)
    shorter = counts.reshape(counts.shape[:-1] + (k, k ** (length - 1))).sum(axis=-2)
    q = chi2_counts(counts, p_long) - chi2_counts(shorter, p_short)
    return q, k ** length - k ** (length - 1)


class WeightWindows(Accumulator):
    """DC6 kind at PractRand's reach (PractRand 0.96 src/tests.cpp DistC6, its standard
    battery's DC6-9x1Bytes-1: every window of 9 consecutive bytes, sliding one byte at a time,
    each byte's Hamming weight in 4 buckets, a G-test of the 2^18 window counts calibrated on a
    known-good generator). Here every circular window of 9 consecutive bytes of a sample,
    sliding one byte, bytes in 3 weight classes (<= 3, 4, >= 5 ones: 19683 cells), and every
    circular window of 6 consecutive words (<= 14, 15-17, >= 18 ones: 729 cells). Overlapping
    windows are not independent; the statistic is Q_L - Q_(L-1) (overlapping_q_difference),
    whose asymptotic chi-square law needs no calibration. Per-sample statistics add up to the
    pooled one's law, since each sample is its own cycle."""

    name = "pr.weight_windows"
    budget = (16, 1 * MiB)  # reads 1/16 of the tier, at least 1 MiB (Accumulator.budget)
    cost_ns_per_word = 23  # 5.9 ms per MiB measured here (the non-overlapping tuples it replaces: 3.8)
    source = ("PractRand DC6-9x1Bytes-1 (src/tests.cpp DistC6, doc/Tests_engines.txt), exact-law variant: "
              "overlapping windows, Q_L - Q_(L-1) (Good 1953; Marsaglia's Diehard count-the-1s)")
    sample_words = 1 << 18
    byte_window, word_window = 9, 6

    def measure(self, samples):
        lib = kernels.active()
        if lib is not None:
            counts = kernels.weight_window_counts(lib, samples, BYTE_CLASS, WORD_CUTS)
            records = {"bytes": counts[0], "words": counts[1]}
            return records, {key: value.sum(axis=0) for key, value in records.items()}
        k = samples.shape[0]
        byte_classes = BYTE_CLASS[samples.view(np.uint8)].reshape(k, -1)
        weights = np.bitwise_count(samples)
        word_classes = (weights > WORD_CUTS[0]).astype(np.int8) + (weights >= WORD_CUTS[1]).astype(np.int8)
        records = {
            "bytes": _count_each_row(overlapping_codes(byte_classes, self.byte_window, 3), 3 ** self.byte_window),
            "words": _count_each_row(overlapping_codes(word_classes, self.word_window, 3), 3 ** self.word_window),
        }
        return records, {key: value.sum(axis=0) for key, value in records.items()}

    def evaluate(self, records, totals, samples):
        out = []
        for unit, class_p, length in (("bytes", BYTE_CLASS_P, self.byte_window),
                                      ("words", _word_class_p(), self.word_window)):
            rows = np.asarray(records[unit])
            if rows.size == 0:
                continue
            pooled, df = overlapping_q_difference(rows.sum(axis=0), class_p, length)
            out.append(self.finding("aggregate", float(pooled), pvalues.chi2(float(pooled), df),
                                    test=f"{self.name}.{unit}", df=df, window=length,
                                    observations=int(rows.sum())))
            per_sample, _ = overlapping_q_difference(rows, class_p, length)
            for second in self.second_level_ks(_chi2_p(per_sample, df)):
                second["test"] = f"{self.name}.{unit}"
                out.append(second)
        return out
