"""Binary rank of large matrices: the test that sees linear generators whose state is small
next to the matrix.

An N x N matrix over GF(2) is filled row by row from the stream; if every bit used is a
linear function of a k-bit state (an LFSR, xorshift, the low bits of xoroshiro128+ or of a
lagged Fibonacci generator), the rows are images of successive states under one linear map,
so the rank is at most k: far below N once N > k. Anchors: TestU01's smarsa_MatrixRank
(Crush and BigCrush run it on 1000 x 1000 and 5000 x 5000 matrices; L'Ecuyer & Simard,
TestU01 guide, smarsa) and PractRand's BRank (doc/Tests_engines.txt: "binary rank" on
matrices whose size grows with the data, of the whole words and of selected bits).

Null distribution (Kovalenko; Marsaglia & Tsay 1985; NIST SP 800-22 section 3.5): for a
random N x N matrix over GF(2) the rank deficit D = N - rank has

    P(D = k) = 2^(-k^2) prod_{i=k+1..N} (1 - 2^-i)^2 / prod_{i=1..N-k} (1 - 2^-i)

(0.2888, 0.5776, 0.1284, 0.0053 for k = 0, 1, 2, 3 and more, for any N >= 32). Two results
per matrix size and bit selection, both against that exact law:

  aggregate    chi-square of the deficits' counts in cells 0, 1, 2, >= 3 (the top cells merged
               until each expects at least 5 matrices), when there are enough matrices;
  worst-cell   the largest deficit d of the M matrices read: p = 1 - (1 - P(D >= d))^M, exact
               (discrete, so conservative); a linear generator gives d in the hundreds at once.

Bit selections ("select"): "all" the whole 32-bit words; "low8" the low byte of each word;
"bit0" bit 0 of each word; "bit0/2" bit 0 of every other word (the lowest bit of 64-bit
outputs stored low word first: xoroshiro128+'s and xorshift128+'s LFSR bit); "bit31" the top
bit of each word.

Elimination: the matrices of a batch side by side in one uint64 array (B, N, N/64), one
column at a time: the pivot found in each matrix at once, swapped to the matrix's current
rank, XORed into the rows below it that have the bit, on the words from the column's on
(forward elimination only: about N^3/192 word operations per matrix). The cost per MiB is
in each test's cost_ns_per_word (benchmarks/bench_stats.py measures it).
"""

from __future__ import annotations

import functools
import math
from functools import cache

import numpy as np

from . import kernels, pvalues
from .accumulators import Accumulator, chi2_counts
from .tiers import MiB

SELECTIONS = {  # name: (bits taken per word, word stride)
    "all": (32, 1),
    "low8": (8, 1),
    "bit0": (1, 1),
    "bit0/2": (1, 2),
    "bit31": (1, 1),
}
MIN_EXPECTED = 5.0


@cache
def deficit_log2_probabilities(n: int, top: int = 64) -> np.ndarray:
    """log2 P(D = k), k = 0 .. min(n, top), for a random n x n matrix over GF(2) (exact formula)."""
    # log2 prod_{i=a..b} (1 - 2^-i); the terms computed once (summed in the same order as before:
    # the same bits, 0.1 s less of every run's start: docs/statistics.md, Speed)
    terms = [0.0] + [math.log1p(-2.0 ** -i) for i in range(1, n + 1)]  # (index 0 never summed)

    def log2_prod(a, b):
        return sum(terms[a:b + 1]) / math.log(2)

    out = []
    for k in range(0, min(n, top) + 1):
        out.append(-k * k + 2 * log2_prod(k + 1, n) - log2_prod(1, n - k))
    return np.array(out)


def deficit_probabilities(n: int, cells: int = 4) -> np.ndarray:
    """P(D = 0), ..., P(D = cells - 2), P(D >= cells - 1)."""
    p = 2.0 ** deficit_log2_probabilities(n)
    head = p[:cells - 1]
    return np.append(head, max(0.0, 1.0 - head.sum()))


def deficit_tail_log2(n: int, d: int) -> float:
    """log2 P(D >= d) (exact terms summed; d may be as large as n)."""
    if d <= 0:
        return 0.0
    if d <= 60:
        logs = deficit_log2_probabilities(n, top=min(n, d + 40))[d:]
    else:  # 2^-(d^2) terms: the first dominates; its factors computed directly
        logs = np.array([-k * k + 2 * sum(math.log1p(-2.0 ** -i) for i in range(k + 1, min(n, k + 80) + 1))
                         / math.log(2) - sum(math.log1p(-2.0 ** -i) for i in range(1, min(n - k, 80) + 1))
                         / math.log(2) for k in range(d, min(n, d + 3) + 1)])
    top = logs.max()
    return float(top + math.log2(np.sum(2.0 ** (logs - top))))


def gf2_ranks(matrices: np.ndarray) -> np.ndarray:
    """Ranks over GF(2) of a batch of bit-packed square matrices, shape (B, N, N/64) uint64
    (row r of matrix b is matrices[b, r]; column j is bit j % 64 of word j // 64). The array
    is destroyed."""
    m = matrices
    batch, n, words = m.shape
    rank = np.zeros(batch, dtype=np.int64)
    index = np.arange(batch)
    rows = np.arange(n)
    one = np.uint64(1)
    for column in range(n):
        w, bit = divmod(column, 64)
        low = int(rank.min())  # rows above every matrix's rank hold pivots: leave them alone
        sub = m[:, low:, w:]
        has_bit = ((sub[:, :, 0] >> np.uint64(bit)) & one).astype(bool)
        free = has_bit & (rows[low:][None, :] >= rank[:, None])  # rows at or below the rank
        found = free.any(axis=1)
        if not found.any():
            continue
        pivot = free.argmax(axis=1) + low  # absolute row of each matrix's pivot
        target = rank  # the pivot goes to row `rank` of its matrix
        ok = index[found]
        p_rows, t_rows = pivot[found], target[found]
        pivot_row = m[ok, p_rows, w:].copy()
        m[ok, p_rows, w:] = m[ok, t_rows, w:]
        m[ok, t_rows, w:] = pivot_row
        # the rows below the new pivot that have the bit: the free rows but the pivot (a row
        # swapped down from `rank` did not have the bit, or it would have been the pivot)
        below = free
        below[ok, p_rows - low] = False
        full = np.zeros((batch, 1, sub.shape[2]), dtype=np.uint64)
        full[ok, 0] = pivot_row
        mask = np.negative(below.astype(np.uint64))[:, :, None]  # all ones where the row has the bit
        sub ^= mask & full
        rank += found
    return rank


def pack_rows(samples: np.ndarray, n: int, select: str) -> np.ndarray:
    """(k, sample_words) uint32 -> (k, n, n/64) uint64 matrices of the selected bits, row by row
    (always a new array: the samples are shared with the other tests)."""
    k = samples.shape[0]
    per_word, stride = SELECTIONS[select]
    if select == "all":
        return samples.copy().view(np.uint64).reshape(k, n, n // 64)  # a copy: the elimination destroys it
    words = samples[:, ::stride] if stride > 1 else samples
    if select == "low8":
        return np.ascontiguousarray(words.astype(np.uint8)).view(np.uint64).reshape(k, n, n // 64)
    bit = 31 if select == "bit31" else 0
    bits = ((words >> np.uint32(bit)) & np.uint32(1)).astype(np.uint8)
    packed = np.packbits(bits.reshape(k, n, n), axis=2, bitorder="little")
    return np.ascontiguousarray(packed).view(np.uint64).reshape(k, n, n // 64)


class BinaryRank(Accumulator):
    """GF(2) rank of ``size`` x ``size`` matrices of the stream's ``select`` bits (see the module
    docstring): one matrix per sample, its rank deficit recorded."""

    name = "rank.binary"
    source = ("TestU01 smarsa_MatrixRank (large L x L matrices) and PractRand BRank; exact law of the "
              "rank deficit of a random GF(2) matrix (Kovalenko; SP 800-22 section 3.5)")
    second_level = False
    budget: tuple[int, int] | None = (16, 2 * MiB)
    cost_ns_per_word = 6.0

    def __init__(self, start: int = 0, size: int = 256, select: str = "all"):
        if size % 64 or size < 64:
            raise ValueError("size must be a multiple of 64")
        if select not in SELECTIONS:
            raise ValueError(f"unknown bit selection {select!r}")
        per_word, stride = SELECTIONS[select]
        self.sample_words = size * size * stride // per_word
        super().__init__(start, size=size, select=select)
        self.size, self.select = size, select
        self.name = test_name(size, select)
        self.batch_words = max(self.sample_words, (1 << 20) if size <= 256 else 1 << 21)
        if (size, select) in SCHEDULE:  # the battery's facts of this test (Accumulator.budget ...)
            self.from_tier, self.budget, self.cost_ns_per_word = SCHEDULE[(size, select)]

    def measure(self, samples):
        matrices = pack_rows(samples, self.size, self.select)
        lib = kernels.active()
        deficits = self.size - (kernels.gf2_ranks(lib, matrices) if lib is not None else gf2_ranks(matrices))
        return {"deficit": deficits.astype(np.int32)}, {}

    def evaluate(self, records, totals, samples):
        deficits = records["deficit"].astype(np.int64)
        count = int(deficits.size)
        out = []
        cells = 4
        probabilities = deficit_probabilities(self.size, cells)
        while cells > 2 and count * probabilities[-1] < MIN_EXPECTED:  # merge the thin top cells
            cells -= 1
            probabilities = deficit_probabilities(self.size, cells)
        if count * probabilities.min() >= MIN_EXPECTED:
            observed = np.bincount(np.minimum(deficits, cells - 1), minlength=cells)
            chi2 = float(chi2_counts(observed, probabilities))
            out.append(self.finding("aggregate", chi2, pvalues.chi2(chi2, cells - 1), df=cells - 1,
                                    matrices=count, counts=observed.tolist()))
        worst = int(deficits.max())
        log2_tail = deficit_tail_log2(self.size, worst)  # P(D >= worst) for one matrix
        tail = 2.0 ** log2_tail
        p = -math.expm1(count * math.log1p(-min(tail, 0.5))) if tail < 1 else 1.0
        log10_p = (log2_tail * math.log10(2) + math.log10(count)) if p < 1e-300 or p == 0 else None
        if worst == 0:
            p = 1.0
        out.append(self.finding("worst-cell", worst, pvalues._record(p, None, log10_p),
                                matrices=count, largest_deficit=worst))
        return out


# The battery's schedule: (size, select) -> (from_tier, budget, cost_ns_per_word measured
# here). Sizes grow with the tier, as PractRand's BRank sizes grow with the data; the
# selected-bit matrices are where a linear low bit hides behind nonlinear high bits. The
# budgets are small: a linear generator shows a deficit in the hundreds in its first
# matrix (the worst-cell result), and the chi-square needs only dozens of matrices.
SCHEDULE = {
    (256, "all"): ("smoke", (256, 1 * MiB), 320.0),
    (256, "low8"): ("smoke", (256, 1 * MiB), 85.0),
    (256, "bit0"): ("smoke", (128, 2 * MiB), 17.0),
    (256, "bit0/2"): ("smoke", (128, 2 * MiB), 9.0),
    (256, "bit31"): ("smoke", (128, 2 * MiB), 17.0),
    (1024, "all"): ("standard", (256, 1 * MiB), 470.0),
    (2048, "all"): ("deep", (1024, 4 * MiB), 720.0),
}


def test_name(size: int, select: str) -> str:
    """The name of the rank test of ``size`` x ``size`` matrices of ``select`` bits (its results')."""
    return f"{BinaryRank.name}.{size}.{select.replace('/', '_')}"


def battery_tests() -> list[tuple[str, functools.partial, str]]:
    """The battery's rank tests (SCHEDULE), in order: (name, factory, from_tier) each, which
    battery.TESTS registers."""
    return [(test_name(size, select), functools.partial(BinaryRank, size=size, select=select), tier)
            for (size, select), (tier, _, _) in SCHEDULE.items()]
