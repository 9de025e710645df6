"""Tests aimed at counter-based generators: every (Philox output lane, bit position) cell.

DML_RANDOM_GENERATOR writes lane (i mod 4) of block floor(i/4) as word i, so a weakness of
one lane or one bit position (a round count too low leaves structure in particular lanes
and in the low bits of the multiplier outputs) is diluted 128 times in a whole-stream test.
Here each of the 4 x 32 cells is tested separately:

  * frequency: ones in cell (lane, bit), Binomial(n, 1/2);
  * lag 1: bit b of word i xor bit b of word i+1 (adjacent lanes of one block, and lane 3
    to lane 0 of the next counter), Binomial(n, 1/2) per (lane of word i, bit);
  * lag 4: bit b of word i xor bit b of word i+4 (same lane, consecutive counters).

For a fair stream, the 128 cells of each table are independent fair coins. Two statistics
per table: the chi-square over the 128 cells (df 128; sensitive to many small biases) and
the largest |z| with the Sidak correction for 128 cells (sensitive to one biased cell).
Sources: NIST SP 800-22 rev1a 2.1 (frequency) applied per bit position, as TestU01's
sstring_HammingIndep / PractRand's BCFN are per bit; Salmon et al. SC11 section 2 (the
counter-based design whose lanes these are).
"""

from __future__ import annotations

import math

import numpy as np

from . import kernels, pvalues
from .accumulators import Accumulator
from .special import special

LANES = 4
BITS = 32


BITS_OF_BYTE = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1, bitorder="little").astype(np.int64)


def lane_bit_counts(words: np.ndarray) -> np.ndarray:
    """(k, S) words -> (k, 4, 32) counts of ones per (lane, bit), bit index 0 = least significant.

    Bit-sliced counting (no per-word scatter): the words are read as 64-bit pairs (lanes
    0-1 and 2-3 alternate). For each bit offset b in 0..3, (x >> b) & 0x1111..1 leaves one bit
    in each 4-bit field; sums of 8 such pairs still fit the fields, which are then split into
    8-bit fields (even and odd nibbles: bit offsets b and b + 4 within each byte) and summed
    on, at most 255 per field. Exact integer counts, equal to lane_bit_counts_bytes.
    """
    k, s = words.shape
    if s % 2048 or s // 256 > 255:
        return lane_bit_counts_bytes(words)
    x = np.ascontiguousarray(words, dtype=np.uint32).view(np.uint64)  # (k, s/2): words 2j (low half), 2j+1
    tmp = np.empty_like(x)
    out = np.empty((k, 2, 8, 8), dtype=np.int64)  # (lane pair, byte of the 64-bit pair, bit offset in the byte)
    for b in range(4):
        np.right_shift(x, np.uint64(b), out=tmp)
        np.bitwise_and(tmp, _NIBBLE_ONES, out=tmp)
        nibbles = np.add.reduce(tmp.reshape(k, 8, -1), axis=1)  # 4-bit fields: at most 8
        for high, offset in ((False, b), (True, b + 4)):
            fields = (nibbles >> np.uint64(4)) if high else nibbles.copy()
            fields &= _LOW_NIBBLES
            octets = np.add.reduce(fields.reshape(k, -1, 128), axis=1)  # 8-bit fields: at most s/256
            out[:, :, :, offset] = octets.view(np.uint8).reshape(k, 64, 2, 8).sum(axis=1, dtype=np.int64)
    # byte t of a pair: t < 4 -> lane 2p, bits 8t+o; t >= 4 -> lane 2p+1, bits 8(t-4)+o
    return out.reshape(k, LANES, BITS)


_NIBBLE_ONES = np.uint64(0x1111111111111111)
_LOW_NIBBLES = np.uint64(0x0F0F0F0F0F0F0F0F)


def lane_bit_counts_bytes(words: np.ndarray) -> np.ndarray:
    """lane_bit_counts by one bincount of (lane, byte position, byte value) per sample, then
    a 256x8 table of bits (any sample length that is a multiple of 4)."""
    k, s = words.shape
    octets = np.ascontiguousarray(words, dtype="<u4").view(np.uint8).reshape(k, s // LANES, LANES * 4)
    cells = octets.astype(np.uint16)
    cells |= np.arange(LANES * 4, dtype=np.uint16) << np.uint16(8)
    counts = np.empty((k, LANES * 4 * 256), dtype=np.int64)
    for row in range(k):
        counts[row] = np.bincount(cells[row].reshape(-1), minlength=LANES * 4 * 256)
    return (counts.reshape(k, LANES, 4, 256) @ BITS_OF_BYTE).reshape(k, LANES, BITS)  # byte j, bit b: 8j + b


class LaneBits(Accumulator):
    """Per (lane, bit) frequency, lag-1 and lag-4 agreement (see module docstring)."""

    name = "lanes"
    cost_ns_per_word = 8
    source = "per-bit NIST SP 800-22 rev1a 2.1 on each Philox lane (Salmon et al. SC11)"
    sample_words = 1 << 15

    def measure(self, samples):
        k, s = samples.shape
        lib = kernels.active()
        if lib is not None:
            counts = kernels.lane_bit_counts3(lib, samples)
            ones, x1, x4 = (np.ascontiguousarray(counts[:, i]) for i in range(3))
        else:
            ones, x1, x4 = self._counts(samples)
        records, totals = {}, {}
        for key, counts in (("frequency", ones), ("lag1", x1), ("lag4", x4)):
            n = self._trials(key, s)[None]
            records[key] = ((2 * counts - n) ** 2 / n).reshape(k, -1).sum(axis=1)
            totals[key] = counts.sum(axis=0)
        return records, totals

    @staticmethod
    def _counts(samples):
        """(ones, lag-1 ones, lag-4 ones), each (k, 4, 32): numpy (kernels.lane_bit_counts3 in C)."""
        ones = lane_bit_counts(samples)
        lag1 = np.empty_like(samples)
        np.bitwise_xor(samples[:, :-1], samples[:, 1:], out=lag1[:, :-1])
        lag1[:, -1:] = 0  # pad: the last word has no successor
        lag4 = np.empty_like(samples)
        np.bitwise_xor(samples[:, :-4], samples[:, 4:], out=lag4[:, :-4])
        lag4[:, -4:] = 0
        return ones, lane_bit_counts(lag1), lane_bit_counts(lag4)

    @staticmethod
    def _trials(key: str, s: int) -> np.ndarray:
        n = np.full((LANES, BITS), s // LANES, dtype=np.int64)
        if key == "lag1":
            n[LANES - 1] -= 1
        elif key == "lag4":
            n -= 1
        return n

    def evaluate(self, records, totals, samples):
        results = []
        for key in ("frequency", "lag1", "lag4"):
            n = self._trials(key, self.sample_words) * samples
            counts = totals[key]
            z = (2 * counts - n) / np.sqrt(n)
            chi2 = float(((2 * counts - n).astype(np.float64) ** 2 / n).sum())
            test = f"lanes.{key}"
            results.append(self.finding("aggregate", chi2, pvalues.chi2(chi2, LANES * BITS), df=LANES * BITS,
                                        test=test))
            worst = int(np.abs(z).argmax())
            lane, bit = divmod(worst, BITS)
            single = pvalues.normal_two_sided(float(z.reshape(-1)[worst]))
            p = pvalues.sidak(single["p"], LANES * BITS)
            if single["p"] < pvalues.TINY:
                p["log10_p"] = single["log10_p"] + math.log10(LANES * BITS)
            results.append(self.finding("worst-cell", float(z.reshape(-1)[worst]), p, lane=lane, bit=bit,
                                        test=f"{test}.worst"))
            first = special.gammaincc(LANES * BITS / 2, records[key] / 2)
            for ks in self.second_level_ks(first):
                ks["test"] = test
                results.append(ks)
        return results
