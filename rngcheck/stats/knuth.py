"""Knuth's empirical tests (The Art of Computer Programming, vol. 2, 3rd ed., section 3.3.2)
and plain chi-square uniformity tests, as streaming accumulators on 32-bit words.

Every test here has exact cell probabilities (no tables), pools its counts over the whole
stream for an "aggregate" chi-square, and runs the second level on per-sample p-values.
Values are read as U = word / 2^32 (top bits first) unless a test says otherwise.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import cache

import numpy as np

from . import kernels, pvalues
from .accumulators import Accumulator, chi2_counts, chi2_uniform_exact, shared
from .bits import byte_counts_of, u16_histograms
from .special import special
from .tiers import MiB


def _chi2_p(statistic, df):
    return special.gammaincc(df / 2.0, np.asarray(statistic, dtype=float) / 2.0)


class _CountsTest(Accumulator):
    """Shared evaluation: per-sample counts against fixed cell probabilities."""

    probabilities: np.ndarray | None = None   # set by each test

    def cell_probabilities(self):
        return self.probabilities

    def evaluate(self, records, totals, samples):
        probs = self.cell_probabilities()
        df = len(probs) - 1
        first = _chi2_p(chi2_counts(records["counts"], probs), df)
        chi2 = float(chi2_counts(totals["counts"], probs))
        return [self.finding("aggregate", chi2, pvalues.chi2(chi2, df), df=df)] + self.second_level_ks(first)


class ByteFrequency(Accumulator):
    """Chi-square uniformity of the 256 byte values (Knuth 3.3.2 A, equidistribution test;
    TestU01 guide, sstring/smultin style counts). All 4 bytes of every word."""

    name = "knuth.byte_frequency"
    cost_ns_per_word = 9
    source = "Knuth TAOCP vol. 2, 3.3.2 A (equidistribution), on bytes"
    sample_words = 1 << 15  # 128 KiB: 512 expected per cell

    def measure(self, samples):
        lib = kernels.active()
        if lib is not None:
            counts = kernels.per_row(lib, "byte_counts", samples, 256)
        else:  # one 16-bit histogram per sample (shared with Frequency16)
            counts = byte_counts_of(u16_histograms(samples))
        return {"chi2": chi2_uniform_exact(counts)}, {"counts": counts.sum(axis=0)}

    def evaluate(self, records, totals, samples):
        first = _chi2_p(records["chi2"], 255)
        chi2 = float(chi2_uniform_exact(totals["counts"]))
        return [self.finding("aggregate", chi2, pvalues.chi2(chi2, 255), df=255)] + self.second_level_ks(first)


class Frequency16(Accumulator):
    """Chi-square uniformity of 16-bit values (both halves of every word), 65536 cells
    (Knuth 3.3.2 A with d = 2^16)."""

    name = "knuth.frequency16"
    source = "Knuth TAOCP vol. 2, 3.3.2 A (equidistribution), on 16-bit values"
    sample_words = 1 << 19  # 2 MiB: 16 expected per cell

    def measure(self, samples):
        lib = kernels.active()
        counts = kernels.per_row(lib, "u16_counts", samples, 1 << 16) if lib is not None else self._counts(samples)
        return {"chi2": chi2_uniform_exact(counts)}, {"counts": counts.sum(axis=0)}

    @staticmethod
    def _counts(samples):
        """(k, 65536) counts: numpy, from the shared 16-bit histograms (kernels.c's u16_counts in C)."""
        k = samples.shape[0]
        histograms = u16_histograms(samples)  # per 2^15-word block (shared with ByteFrequency)
        per = len(histograms) // k
        counts = np.empty((k, 1 << 16), dtype=np.int64)
        for row in range(k):
            counts[row] = histograms[row * per]
            for h in histograms[row * per + 1:(row + 1) * per]:
                counts[row] += h
        return counts

    def evaluate(self, records, totals, samples):
        df = (1 << 16) - 1
        first = _chi2_p(records["chi2"], df)
        chi2 = float(chi2_uniform_exact(totals["counts"]))
        return [self.finding("aggregate", chi2, pvalues.chi2(chi2, df), df=df)] + self.second_level_ks(first)


class Gap(_CountsTest):
    """Gap test (Knuth 3.3.2 C): lengths of gaps between words whose selected 4 bits are 0
    (alpha = 0, beta = 1/16 on the selected nibble), classes 0..t-1 and >= t with t = 32,
    P(gap = r) = p (1-p)^r exactly. ``nibble`` = 7 reads the top 4 bits (U in [0, 1/16)),
    0 the bottom 4 bits (where LCGs are weakest). Gaps cut by a sample edge are dropped."""

    name = "knuth.gap"
    source = "Knuth TAOCP vol. 2, 3.3.2 C (gap test)"
    sample_words = 1 << 15
    t = 32

    def __init__(self, start: int = 0, nibble: int = 7):
        super().__init__(start, nibble=nibble)
        self.name = f"knuth.gap.nibble{nibble}"
        self.shift = np.uint32(4 * nibble)
        p = Fraction(1, 16)
        probs = [p * (1 - p) ** r for r in range(self.t)]
        self.probabilities = np.array([float(x) for x in probs] + [float((1 - p) ** self.t)])

    def measure(self, samples):
        lib = kernels.active()
        if lib is not None:
            counts, hit_count = kernels.gap_counts(lib, samples, int(self.shift), self.t)
        else:
            counts, hit_count = self._counts(samples)
        return {"counts": counts}, {"counts": counts.sum(axis=0), "hits": hit_count.sum()}

    def _counts(self, samples):
        """(k, t + 1) gap counts and (k,) hits: numpy (kernels.gap_counts in C)."""
        k, s = samples.shape
        hits = (samples & (np.uint32(15) << self.shift)) == 0
        where = np.flatnonzero(hits)  # row * s + column
        row = where // s
        hit_count = np.bincount(row, minlength=k)
        same = row[1:] == row[:-1]
        gaps = np.minimum(np.diff(where) - 1, self.t)[same]
        cells = gaps + row[1:][same] * (self.t + 1)
        return np.bincount(cells, minlength=k * (self.t + 1)).reshape(k, self.t + 1), hit_count

    def evaluate(self, records, totals, samples):
        hits = int(totals["hits"])
        trials = samples * self.sample_words
        frequency = self.finding("aggregate", hits, pvalues.binomial(hits, trials, 1 / 16),
                                 test=self.name + ".hits", expected=trials / 16)
        if int(totals["counts"].sum()) == 0:
            return [frequency]  # no gaps at all: the hit count says everything
        return [frequency] + super().evaluate(records, totals, samples)


@cache
def stirling2(n: int, k: int) -> int:
    """Stirling numbers of the second kind {n k} (Knuth vol. 1, 1.2.6), exact."""
    if n == k:
        return 1
    if k == 0 or k > n:
        return 0
    return k * stirling2(n - 1, k) + stirling2(n - 1, k - 1)


def poker_probabilities(k: int, d: int) -> list[Fraction]:
    """P(r distinct values among k independent uniform d-ary digits), r = 1..k (Knuth 3.3.2 D)."""
    out = []
    for r in range(1, k + 1):
        falling = math.prod(range(d - r + 1, d + 1))
        out.append(Fraction(falling * stirling2(k, r), d ** k))
    return out


def _digit_sets_of_halves():
    """For each 16-bit value, the set of its four 4-bit digits as a 16-bit mask."""
    v = np.arange(1 << 16, dtype=np.uint32)
    sets = np.zeros(1 << 16, dtype=np.uint16)
    for shift in (0, 4, 8, 12):
        sets |= (np.uint32(1) << ((v >> np.uint32(shift)) & np.uint32(15))).astype(np.uint16)
    return sets


_DIGIT_SET_OF_HALF = _digit_sets_of_halves()


class Poker(_CountsTest):
    """Poker test (Knuth 3.3.2 D, the "simpler" form): the 8 hexadecimal digits of each word
    are a hand of k = 8 draws from d = 16 values; count hands with r distinct digits
    (r <= 3 pooled, then 4..8), probabilities d(d-1)..(d-r+1) {k r} / d^k exactly."""

    name = "knuth.poker"
    cost_ns_per_word = 9
    source = "Knuth TAOCP vol. 2, 3.3.2 D (poker test)"
    sample_words = 1 << 15

    def __init__(self, start: int = 0):
        super().__init__(start)
        probs = poker_probabilities(8, 16)
        self.probabilities = np.array([float(sum(probs[:3]))] + [float(p) for p in probs[3:]])

    def measure(self, samples):
        lib = kernels.active()
        counts = kernels.poker_counts(lib, samples, _DIGIT_SET_OF_HALF) if lib is not None else self._counts(samples)
        return {"counts": counts}, {"counts": counts.sum(axis=0)}

    @staticmethod
    def _counts(samples):
        """(k, 6) counts of words with <= 3, 4, ..., 8 distinct digits: numpy (kernels.c in C)."""
        k, s = samples.shape
        halves = np.take(_DIGIT_SET_OF_HALF, np.ascontiguousarray(samples).view(np.uint16))  # (k, 2s)
        distinct = np.bitwise_count(halves[:, 0::2] | halves[:, 1::2])  # distinct digits of each word, 1..8
        counts = np.empty((k, 6), dtype=np.int64)
        counts[:, 0] = np.count_nonzero(distinct <= 3, axis=1)  # r <= 3 pooled
        for r in range(4, 9):
            counts[:, r - 3] = np.count_nonzero(distinct == r, axis=1)
        return counts


def coupon_probabilities(d: int, t: int) -> list[Fraction]:
    """P(segment length = r) for r = d..t-1 and P(r >= t) (Knuth 3.3.2 E, eq. (12)/(13)):
    q_r = d!/d^r {r-1, d-1}, P(>= t) = 1 - d!/d^(t-1) {t-1, d}."""
    fact = math.factorial(d)
    probs = [Fraction(fact * stirling2(r - 1, d - 1), d ** r) for r in range(d, t)]
    probs.append(1 - Fraction(fact * stirling2(t - 1, d), d ** (t - 1)))
    return probs


class CouponCollector(_CountsTest):
    """Coupon collector's test (Knuth 3.3.2 E) on the stream of 4-bit digits (8 per word, most
    significant first), d = 16: lengths of segments needed to see all 16 digits, classes
    16..t-1 and >= t merged into 8 bins of similar probability, exact probabilities."""

    name = "knuth.coupon_collector"
    budget = (8, 2 * MiB)  # reads 1/8 of the tier, at least 2 MiB (Accumulator.budget)
    cost_ns_per_word = 60
    source = "Knuth TAOCP vol. 2, 3.3.2 E (coupon collector's test)"
    sample_words = 1 << 12
    batch_words = 1 << 22  # the segment chains of many samples advance together: fewer, larger steps
    d = 16
    t = 160

    def __init__(self, start: int = 0):
        super().__init__(start)
        exact = coupon_probabilities(self.d, self.t)
        cumulative = np.cumsum([float(p) for p in exact])
        # lengths d..t-1, then ">= t": bin edges at the quantiles 1/8, 2/8, ...
        edges = np.searchsorted(cumulative, np.arange(1, 8) / 8.0)
        self.bin_of_length = np.zeros(self.t + 1, dtype=np.int64)  # index: min(length, t)
        lengths = np.arange(self.d, self.t + 1)
        self.bin_of_length[self.d:] = np.searchsorted(edges, lengths - self.d, side="left")
        bins = int(self.bin_of_length.max()) + 1
        probs = np.zeros(bins)
        for i, p in enumerate(exact):
            probs[self.bin_of_length[self.d + i]] += float(p)
        self.probabilities = probs

    def measure(self, samples):
        lib = kernels.active()
        if lib is not None:
            counts = kernels.coupon_counts(lib, samples, self.bin_of_length, self.t, len(self.probabilities))
        else:
            counts = self._counts(samples)
        return {"counts": counts}, {"counts": counts.sum(axis=0)}

    def _counts(self, samples):
        """(k, bins) counts of segment lengths, numpy (kernels.coupon_counts in C): every sample's
        chain of segments advances together, one segment per step: the rest
        of the word where the segment starts (digit by digit), then up to ``width`` whole
        words at once (their digit sets, OR-accumulated), then the completing word digit by
        digit. A segment not complete at the end of its sample is dropped."""
        k, s = samples.shape
        n = 8 * s
        width = 16
        full = np.uint16((1 << self.d) - 1)
        one = np.uint16(1)
        stride = s + width
        words = np.zeros((k, stride), dtype=np.uint32)
        words[:, :s] = samples
        flat_words = words.reshape(-1)
        present = np.zeros((k, stride), dtype=np.uint16)  # the set of digits of each word; padding: none
        for shift in _NIBBLE_SHIFTS:
            present[:, :s] |= one << ((samples >> shift) & np.uint32(15)).astype(np.uint16)
        flat_present = present.reshape(-1)
        seg_start = np.zeros(k, dtype=np.int64)
        pos = np.zeros(k, dtype=np.int64)  # digit index where the scan continues
        mask = np.zeros(k, dtype=np.uint16)  # digits seen since seg_start, before pos
        window = np.arange(1, width + 1)
        lengths = []
        active = np.arange(k)
        while active.size:
            r = active
            word = pos[r] >> 3
            base = r * stride + word
            b = one << ((flat_words[base][:, None] >> _NIBBLE_SHIFTS) & np.uint32(15)).astype(np.uint16)
            b &= _FROM_DIGIT[pos[r] & 7]  # digits before pos are not part of the segment
            acc = np.bitwise_or.accumulate(b, axis=1) | mask[r][:, None]
            in_first = acc[:, 7] == full
            cum = np.bitwise_or.accumulate(flat_present[base[:, None] + window], axis=1) | acc[:, 7:8]
            done = cum == full
            hit = done.any(axis=1)
            j = done.argmax(axis=1)
            ends = np.empty(r.size, dtype=np.int64)
            if in_first.any():
                ends[in_first] = (word[in_first] << 3) + (acc[in_first] == full).argmax(axis=1)
            later = hit & ~in_first
            if later.any():
                jl = j[later]
                before = np.where(jl > 0, cum[later, np.maximum(jl - 1, 0)], acc[later, 7])
                last = word[later] + 1 + jl
                d = (flat_words[r[later] * stride + last][:, None] >> _NIBBLE_SHIFTS) & np.uint32(15)
                acc2 = np.bitwise_or.accumulate(one << d.astype(np.uint16), axis=1) | before[:, None]
                ends[later] = (last << 3) + (acc2 == full).argmax(axis=1)
            complete = in_first | hit
            ended = r[complete]
            end = ends[complete]
            lengths.append((ended, end + 1 - seg_start[ended]))
            seg_start[ended] = end + 1
            pos[ended] = end + 1
            mask[ended] = 0
            going = r[~complete]
            mask[going] = cum[~complete, -1]
            pos[going] = ((pos[going] >> 3) + 1 + width) << 3
            active = r[pos[r] < n]
        counts = np.zeros((k, len(self.probabilities)), dtype=np.int64)
        if lengths:
            row = np.concatenate([x[0] for x in lengths])
            length = np.minimum(np.concatenate([x[1] for x in lengths]), self.t)
            cells = row * counts.shape[1] + self.bin_of_length[length]
            counts = np.bincount(cells, minlength=counts.size).reshape(counts.shape)
        return counts


_NIBBLE_SHIFTS = np.arange(28, -1, -4, dtype=np.uint32)  # digits of a word, most significant first
_FROM_DIGIT = np.where(np.arange(8)[None, :] >= np.arange(8)[:, None], 0xFFFF, 0).astype(np.uint16)  # [offset, t]


class MaximumOfT(_CountsTest):
    """Maximum-of-t test (Knuth 3.3.2 H with t = 8): V = max of 8 consecutive words; V^8 is
    uniform. 64 cells with exact probabilities from integer edges: P(V < e) = (e / 2^32)^8."""

    name = "knuth.maximum_of_t"
    source = "Knuth TAOCP vol. 2, 3.3.2 H (maximum-of-t test)"
    sample_words = 1 << 15
    t = 8
    cells = 64

    def __init__(self, start: int = 0):
        super().__init__(start)
        edges = [0] + [math.ceil(2 ** 32 * (c / self.cells) ** (1 / self.t)) for c in range(1, self.cells)] + [2 ** 32]
        self.edges = np.array(edges[1:-1], dtype=np.uint64)
        probs = [Fraction(edges[i + 1] ** self.t - edges[i] ** self.t, 2 ** (32 * self.t)) for i in range(self.cells)]
        self.probabilities = np.array([float(p) for p in probs])
        tops = np.arange(1 << 16, dtype=np.uint64) << np.uint64(16)
        self._cell_below = np.searchsorted(self.edges, tops, side="right").astype(np.uint8)  # edges <= 2^16 top
        following = np.append(self.edges, np.uint64(1 << 32))[self._cell_below]  # the next edge
        assert (np.diff(self.edges) > (1 << 16)).all()
        self._edge_in = np.where(following < tops + np.uint64(1 << 16), following, np.uint64(1 << 32)).astype(np.uint64)

    def measure(self, samples):
        lib = kernels.active()
        if lib is not None:
            counts = kernels.maximum_counts(lib, samples, self.t, self._cell_below, self._edge_in, self.cells)
        else:
            counts = self._counts(samples)
        return {"counts": counts}, {"counts": counts.sum(axis=0)}

    def _counts(self, samples):
        """(k, cells) counts of the maxima's cells: numpy (kernels.maximum_counts in C)."""
        k, s = samples.shape
        groups = samples.reshape(k, -1, self.t)
        maxima = np.maximum(groups[..., 0], groups[..., 1])
        for i in range(2, self.t):
            np.maximum(maxima, groups[..., i], out=maxima)
        top = maxima >> np.uint32(16)  # at most one edge per 2^16 values (edges are > 2^31 apart by 2^23)
        cells = self._cell_below[top].astype(np.intp)
        cells += maxima >= self._edge_in[top]  # == searchsorted(edges, maxima, side="right")
        cells += (np.arange(k) * self.cells)[:, None]
        return np.bincount(cells.reshape(-1), minlength=k * self.cells).reshape(k, self.cells)


RUNS_UP_A = np.array([
    [4529.4, 9044.9, 13568, 18091, 22615, 27892],
    [9044.9, 18097, 27139, 36187, 45234, 55789],
    [13568, 27139, 40721, 54281, 67852, 83685],
    [18091, 36187, 54281, 72414, 90470, 111580],
    [22615, 45234, 67852, 90470, 113262, 139476],
    [27892, 55789, 83685, 111580, 139476, 172860],
])
RUNS_UP_B = np.array([1 / 6, 5 / 24, 11 / 120, 19 / 720, 29 / 5040, 1 / 840])


class RunsUp(Accumulator):
    """Runs up test (Knuth 3.3.2 G, eq. (10) with the matrix a_ij and b_i given there):
    V = (1/(n-6)) sum (count_i - n b_i)(count_j - n b_j) a_ij, chi-square with 6 degrees of
    freedom for large n; run lengths 1..5 and >= 6, on each sample of n words (the run cut
    at the end of a sample ends there, as in Knuth's algorithm on a finite sequence)."""

    name = "knuth.runs_up"
    source = "Knuth TAOCP vol. 2, 3.3.2 G (runs up)"
    sample_words = 1 << 14

    def measure(self, samples):
        return self._statistics(samples, up=True)

    def _statistics(self, samples, up):
        """Run lengths without listing the runs: with R_L(j) = "a run starts at j and the next
        L-1 steps go up", the runs of length >= L number sum_j R_L(j), and R_(L+1)(j) =
        R_L(j) and step j+L-1 goes up."""
        k, s = samples.shape
        lib = kernels.active()
        if lib is not None:  # runs up and down in one pass, shared by RunsUp and RunsDown
            counts = shared(samples, "runs-up-down",
                            lambda x: kernels.per_row(lib, "runs_up_down", x, 12).reshape(-1, 2, 6))[:, 1 - up]
        else:
            counts = self._counts(samples, up)
        # every row's quadratic form at once (a loop cost 1.5 ms a chunk), by elementwise steps in a
        # fixed order: a matrix product's rounding may depend on how many rows it is given, and a
        # row's V must not depend on the rows read beside it (two processes give one's document)
        dev = counts - s * RUNS_UP_B
        form = sum(dev[:, i, None] * RUNS_UP_A[i] for i in range(6))
        return {"V": sum(form[:, j] * dev[:, j] for j in range(6)) / (s - 6)}, {}

    @staticmethod
    def _counts(samples, up):
        """(k, 6) runs of length 1..5 and >= 6: numpy (kernels.c's runs_up_counts in C)."""
        k, s = samples.shape
        if up:
            rising = samples[:, 1:] > samples[:, :-1]  # step i: x[i] -> x[i+1]
        else:  # runs up of ~x: ~x[i+1] > ~x[i] iff x[i+1] < x[i]
            rising = samples[:, 1:] < samples[:, :-1]
        starts = np.empty((k, s), dtype=bool)  # a run starts at 0 and after every step that does not rise
        starts[:, 0] = True
        np.logical_not(rising, out=starts[:, 1:])
        at_least = [np.count_nonzero(starts, axis=1)]  # runs of length >= 1: one per start
        chain = starts[:, :-1] & rising  # R_2(j) for j = 0 .. s-2
        for length in range(2, 7):
            at_least.append(np.count_nonzero(chain, axis=1))
            if length < 6:
                chain = chain[:, :-1] & rising[:, length - 1:]  # R_(L+1)(j): step j+L-1 rises too
        at_least.append(np.zeros(k, dtype=np.int64))
        return np.stack([at_least[i] - at_least[i + 1] for i in range(5)] + [at_least[5]], axis=1)

    def evaluate(self, records, totals, samples):
        first = _chi2_p(records["V"], 6)
        total = math.fsum(records["V"].tolist())
        return [self.finding("aggregate", total, pvalues.chi2(total, 6 * samples), df=6 * samples,
                             statistic_name="sum of per-sample V")] + self.second_level_ks(first)


class RunsDown(RunsUp):
    """Runs down (Knuth 3.3.2 G: "runs down" are runs up of the complemented sequence,
    since x > y iff ~x < ~y for 32-bit words; same a_ij, b_i)."""

    name = "knuth.runs_down"
    source = "Knuth TAOCP vol. 2, 3.3.2 G (runs down)"

    def measure(self, samples):
        return self._statistics(samples, up=False)
