"""Linear complexity of long bit sequences: the test that sees generators linear over GF(2).

Every output bit of an LFSR-like generator (xorshift, MT19937, the lowest bit of an
additive lagged-Fibonacci or of xorshift128+) is a linear function of a k-bit state, so the
sequence of one bit position has linear complexity at most k; a random sequence of n bits
has linear complexity about n/2. Berlekamp-Massey finds it exactly. Sources: TestU01's
scomp_LinearComp (L'Ecuyer & Simard, TestU01 guide, section on scomp; BigCrush's
LinearComp on 400,020 bits is where MT19937 fails), and the distribution of the linear
complexity of a random sequence (Rueppel, "Analysis and Design of Stream Ciphers", 1986,
Ch. 4): of the 2^n sequences of length n, exactly 1 has complexity 0 and
2^min(2L-1, 2n-2L) have complexity L (1 <= L <= n). p-values here are those exact tails.

NIST SP 800-22's linear complexity test (section 2.10) is the other shape: many blocks of
500 bits, a chi-square over the deviations. It cannot see a complexity of 19937; this one
reads one long sequence per bit position, as TestU01 does.
"""

from __future__ import annotations

import math

import numpy as np

from . import kernels, pvalues
from .accumulators import Accumulator

# (word stride, bit position): the sequences read. Stride 2 reads every other word: the low
# (or high) halves of a 64-bit generator's outputs, where xorshift128+'s lowest bit is an LFSR;
# there bit 32 + b is bit b of the odd words (the high half). Stride 4: one lane of a 4-word
# block (Philox's layout).
SEQUENCES = ((1, 0), (2, 0), (2, 1), (4, 0))  # (2, 1): bit 1 of 64-bit outputs (xoroshiro128+: degree 2)
# The short sequences read every bit position of the words and of 64-bit outputs: a generator
# whose bit 0 is good but whose other bits are linear (a combined Tausworthe, xorwow's
# xorshift part under a Weyl sum's high bits) shows a complexity of its state size there.
EVERY_BIT = tuple((1, b) for b in range(32)) + tuple((2, b) for b in range(64))


def sequence_of(sample: np.ndarray, stride: int, bit: int, bits: int) -> np.ndarray:
    """Bit ``bit`` of every ``stride``-th word (stride 2, bit >= 32: of the odd words)."""
    offset, bit = divmod(bit, 32) if stride == 2 else (0, bit)
    return (sample[offset::stride][:bits] >> np.uint32(bit)) & np.uint32(1)


def berlekamp_massey(bits) -> int:
    """The linear complexity of a 0/1 sequence (Massey 1969), on Python integers as GF(2)
    polynomials: bit i of C is the coefficient of x^i of the connection polynomial.

    One long sequence at a time. nist.linear_complexities runs the same algorithm on many
    short blocks side by side (numpy columns), the shape SP 800-22's test has; a test holds
    the two to the same answers."""
    c, b = 1, 1
    length, last = 0, -1  # L, and the position of the last length change
    history = 0  # bit i = s_{N-i}: the newest bit in bit 0
    for n, bit in enumerate(bits):
        history = (history << 1) | int(bit)
        if (c & history).bit_count() & 1:  # the discrepancy: C does not predict s_n
            previous = c
            c ^= b << (n - last)
            if 2 * length <= n:
                length, last, b = n + 1 - length, n, previous
    return length


def _count_between(n: int, lo: int, hi: int) -> int:
    """The number of sequences of n bits with complexity in lo..hi (Rueppel: 1 of complexity 0,
    2^min(2L-1, 2n-2L) of complexity L), from the geometric sums' closed forms (exact integers)."""
    lo, hi = max(lo, 0), min(hi, n)
    if lo > hi:
        return 0
    total = 0
    if lo == 0:
        total, lo = 1, 1
    half = n // 2  # 2L - 1 < 2n - 2L exactly when L <= n/2
    a, b = lo, min(hi, half)
    if a <= b:  # sum of 2^(2L-1), L = a..b
        total += (1 << (2 * a - 1)) * ((1 << (2 * (b - a + 1))) - 1) // 3
    a, b = max(lo, half + 1), hi
    if a <= b:  # sum of 2^(2n-2L), L = a..b: 4^j for j = n-b .. n-a
        total += (1 << (2 * (n - b))) * ((1 << (2 * (b - a + 1))) - 1) // 3
    return total


def complexity_tails(n: int, observed: int) -> pvalues.PValue:
    """Exact P(L >= observed) and P(L <= observed) for a random sequence of n bits (Rueppel)."""
    below = _count_between(n, 0, observed)
    above = _count_between(n, observed, n)
    p, q = _ratio(above, n), _ratio(below, n)
    log10_p = (math.log2(above) - n) * math.log10(2) if above else None
    return pvalues._record(p, q, log10_p, "two-sided-count")


def _ratio(count: int, n: int) -> float:
    """count / 2^n as a float (0.0 when it underflows), without a float overflow."""
    shift = max(0, count.bit_length() - 60)
    return math.ldexp(count >> shift, shift - n)


class LinearComplexity(Accumulator):
    """Berlekamp-Massey on ``bits`` consecutive values of one bit position, for each
    (stride, bit) of SEQUENCES (``every``: of EVERY_BIT), from the first sample of the stream
    only (the budget is the sample). Complexity far below n/2: a linear generator. One
    p-value per sequence; with ``every``, one per stride: the most extreme sequence, its
    two-sided tail corrected for the number of sequences (Sidak; discrete, so conservative)."""

    name = "linear.complexity"
    source = ("TestU01 scomp_LinearComp (Berlekamp-Massey on one bit position); exact tails "
              "from Rueppel 1986")
    second_level = False
    max_samples = 1

    def __init__(self, start: int = 0, bits: int = 1 << 14, every: bool = False):
        self.sequences = EVERY_BIT if every else SEQUENCES
        self.sample_words = max(s for s, _ in self.sequences) * bits  # the widest stride needs that many words
        super().__init__(start, bits=bits, every=every)
        self.bits, self.every = bits, every
        # Berlekamp-Massey on Python integers: about 0.075 n^2 ns per sequence of n bits (80 ms
        # at n = 2^15 here), all of it on the stream's first sample: what balanced_ranges must know
        self.cost_ns_per_word = len(self.sequences) * 0.075 * bits * bits / self.sample_words
        self.name = f"{LinearComplexity.name}.n{bits}" + (".every_bit" if every else "")

    def measure(self, samples):
        lib = kernels.active()
        rows = []
        for sample in samples:
            sequences = [sequence_of(sample, stride, bit, self.bits) for stride, bit in self.sequences]
            rows.append([kernels.berlekamp_massey(lib, s) if lib is not None else berlekamp_massey(s.tolist())
                         for s in sequences])
        return {"complexity": np.array(rows, dtype=np.int64)}, {}

    def evaluate(self, records, totals, samples):
        found = []
        for (stride, bit), observed in zip(self.sequences, records["complexity"][0]):
            observed = int(observed)
            found.append((stride, bit, observed, complexity_tails(self.bits, observed)))
        if not self.every:
            return [self.finding("aggregate", observed, record, test=f"{self.name}.stride{stride}.bit{bit}",
                                 expected=self.bits / 2, sequence_bits=self.bits,
                                 parameters={"stride": stride, "bit": bit})
                    for stride, bit, observed, record in found]
        out = []
        for stride in sorted({s for s, _ in self.sequences}):
            group = [f for f in found if f[0] == stride]

            def two_sided(record):
                return min(1.0, 2.0 * min(record["p"], record["q"]))

            stride_, bit, observed, record = min(group, key=lambda f: (two_sided(f[3]), f[1]))
            tail = two_sided(record)
            combined = pvalues.sidak(tail, len(group))
            if record["log10_p"] is not None and tail < 1e-300:
                combined = pvalues._record(0.0, None, record["log10_p"] + math.log10(2 * len(group)))
            out.append(self.finding("worst-cell", observed, combined, test=f"{self.name}.stride{stride}",
                                    expected=self.bits / 2, sequence_bits=self.bits, worst_bit=bit,
                                    sequences=len(group), parameters={"stride": stride}))
        return out
