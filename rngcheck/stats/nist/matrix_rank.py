"""NIST SP 800-22 rev1a 2.5, Binary Matrix Rank: GF(2) ranks (one matrix; 32x32 vectorised),
the rank class probabilities, the reference function and the streaming form.
"""

from __future__ import annotations

import math

import numpy as np

from .. import kernels, pvalues
from ..accumulators import Accumulator, chi2_counts
from ..tiers import MiB
from .common import SAMPLE_WORDS, DoesNotApply


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


RANK_PROBABILITIES_PUBLISHED = (0.2888, 0.5776, 0.1336)  # section 2.5.4 step (4), rounded


def matrix_rank(bits, M: int = 32, Q: int = 32, *, published: bool = False) -> float | DoesNotApply:
    """2.5 Binary Matrix Rank Test: N = floor(n / MQ) matrices filled row by row; F_M, F_M-1 and
    the rest against N p_i, p = exp(-chi2/2) (igamc(1, chi2/2)).

    The class probabilities are those of 32x32 matrices whatever M and Q are (as the text and
    sts-2.1.2 both do), computed exactly as sts-2.1.2 computes them (rank_probabilities): its
    printed p-values (rev1a Appendix B: 0.306156 for e) come from these. ``published`` uses
    the text's rounded 0.2888, 0.5776, 0.1336 instead (0.307543 for e), which the worked example
    of 2.5.4 (3x3 matrices, p = 0.741948) is computed with. Not applicable below n = 38MQ
    (sts-2.1.2 refuses N < 38)."""
    bits = np.asarray(bits, dtype=np.uint8)
    N = bits.size // (M * Q)
    if N < 38 and not published:
        return DoesNotApply(f"n = {bits.size} < {38 * M * Q} (38 matrices of {M}x{Q})")
    if M == Q == 32:
        ranks = gf2_rank32(np.packbits(bits[:N * M * Q]).view(">u4").astype(np.uint32).reshape(N, 32))
    else:
        ranks = np.array([gf2_rank(bits[i * M * Q:(i + 1) * M * Q].reshape(M, Q)) for i in range(N)])
    full = int((ranks == M).sum())
    minus = int((ranks == M - 1).sum())
    p_full, p_minus, p_rest = RANK_PROBABILITIES_PUBLISHED if published else rank_probabilities(32, 32)
    chi2 = ((full - p_full * N) ** 2 / (p_full * N) + (minus - p_minus * N) ** 2 / (p_minus * N)
            + (N - full - minus - p_rest * N) ** 2 / (p_rest * N))
    return float(math.exp(-chi2 / 2.0))


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
    budget = (8, 2 * MiB)  # reads 1/8 of the tier, at least 2 MiB (Accumulator.budget)
    cost_ns_per_word = 17
    source = "NIST SP 800-22 rev1a, section 2.5"
    sample_words = SAMPLE_WORDS
    probabilities = rank_probabilities(32, 32)

    def measure(self, samples):
        lib = kernels.active()
        if lib is not None:
            words = np.ascontiguousarray(samples, dtype=np.uint32)
            ranks = np.empty(words.size // 32, dtype=np.int64)
            lib.gf2_rank32(words.ctypes.data, ranks.size, ranks.ctypes.data)
            ranks = ranks.reshape(samples.shape[0], -1)
        else:
            ranks = gf2_rank32(samples.reshape(-1, 32)).reshape(samples.shape[0], -1)
        counts = np.stack([(ranks == 32).sum(axis=1), (ranks == 31).sum(axis=1), (ranks <= 30).sum(axis=1)], axis=1)
        return {"counts": counts}, {"counts": counts.sum(axis=0)}

    def evaluate(self, records, totals, samples):
        first = np.exp(-chi2_counts(records["counts"], self.probabilities) / 2.0)
        chi2 = float(chi2_counts(totals["counts"], self.probabilities))
        return [self.finding("aggregate", chi2, pvalues.chi2(chi2, 2), counts=totals["counts"].tolist())] \
            + self.second_level_ks(first)
