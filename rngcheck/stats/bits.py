"""How a stream of 32-bit words is read as bits, and small exact helpers on bits.

The bit order is fixed once for every test: word i contributes its bits most significant
first (bit 31 of word 0 is bit 0 of the stream), the order NIST's examples are written
in and the order dieharder/PractRand use for stdin32 streams read as big numbers.
"""

from __future__ import annotations

import numpy as np

from . import kernels

WORD_BITS = 32


def to_bits(words) -> np.ndarray:
    """uint32 words -> uint8 array of 0/1, most significant bit of each word first."""
    words = np.ascontiguousarray(words, dtype=np.uint32)
    return np.unpackbits(words.astype(">u4").view(np.uint8), axis=-1).reshape(*words.shape[:-1], -1)


def from_bits(bits) -> np.ndarray:
    """0/1 array (length a multiple of 32) -> uint32 words (inverse of to_bits)."""
    bits = np.asarray(bits, dtype=np.uint8).reshape(-1)
    if bits.size % WORD_BITS:
        raise ValueError("bit count must be a multiple of 32")
    return np.packbits(bits).view(">u4").astype(np.uint32)


def from_text(text: str) -> np.ndarray:
    """'0110 1010...' (spaces and newlines ignored) -> uint8 0/1 array."""
    return np.array([int(c) for c in text if c in "01"], dtype=np.uint8)


def popcount(words) -> np.ndarray:
    return np.bitwise_count(np.asarray(words, dtype=np.uint32)).astype(np.int64)


def ones(words, axis=-1) -> np.ndarray:
    """Number of one bits along ``axis`` (int64, exact): sum of popcounts without an int64 copy."""
    return np.bitwise_count(np.asarray(words, dtype=np.uint32)).sum(axis=axis, dtype=np.int64)


# Per-byte tables for walks of +-1 (bit 1 -> +1, 0 -> -1), most significant bit first.
def _byte_walk_tables():
    total = np.zeros(256, np.int32)
    high = np.zeros(256, np.int32)
    low = np.zeros(256, np.int32)
    for b in range(256):
        s, hi, lo = 0, -99, 99
        for i in range(7, -1, -1):
            s += 1 if (b >> i) & 1 else -1
            hi, lo = max(hi, s), min(lo, s)
        total[b], high[b], low[b] = s, hi, lo
    return total, high, low


BYTE_TOTAL, BYTE_MAX, BYTE_MIN = _byte_walk_tables()


def _half_tables():
    """Max and min partial sums of the +-1 walk over the 16 bits of a value (most significant first)."""
    v = np.arange(1 << 16)
    hi, lo = v >> 8, v & 255
    highest = np.maximum(BYTE_MAX[hi], BYTE_TOTAL[hi] + BYTE_MAX[lo]).astype(np.int16)
    lowest = np.minimum(BYTE_MIN[hi], BYTE_TOTAL[hi] + BYTE_MIN[lo]).astype(np.int16)
    return highest, lowest


HALF_MAX, HALF_MIN = _half_tables()


def walk_extremes(samples: np.ndarray):
    """For each row of words: (final sum, max partial sum, min partial sum) of the +-1 walk.

    Partial sums S_1 .. S_n over all n bits (S_0 = 0 excluded): per word, the extremes
    within it from 16-bit tables (high half first), then one cumulative sum per word, so a
    2^20-bit sample costs a 2^15-element cumulative sum (exact integers).
    """
    samples = np.ascontiguousarray(samples, dtype=np.uint32)
    lib = kernels.active()
    if lib is not None:
        return kernels.walk_extremes(lib, samples, BYTE_TOTAL, BYTE_MAX, BYTE_MIN)
    k, s = samples.shape
    halves = samples.view(np.uint16).reshape(k, s, 2)  # little-endian: [low half, high half]
    hi, lo = halves[..., 1], halves[..., 0]
    hi_total = np.bitwise_count(hi).astype(np.int16)
    hi_total <<= 1
    hi_total -= 16
    total = np.bitwise_count(samples).astype(np.int32)
    total <<= 1
    total -= 32
    word_max = np.maximum(HALF_MAX[hi], hi_total + HALF_MAX[lo])
    word_min = np.minimum(HALF_MIN[hi], hi_total + HALF_MIN[lo])
    ends = np.cumsum(total, axis=1, dtype=np.int32)  # |S| <= 32 s < 2^31
    starts = ends - total
    highest = (starts + word_max).max(axis=1)
    lowest = (starts + word_min).min(axis=1)
    return ends[:, -1].astype(np.int64), highest.astype(np.int64), lowest.astype(np.int64)


# ----------------------------------------------------------------------------------------
# Histograms shared by several tests (computed once per chunk inside accumulators.shared_chunk).
# ----------------------------------------------------------------------------------------

HISTOGRAM_BLOCK = 1 << 15  # words per 16-bit histogram


def u16_histograms(samples: np.ndarray) -> list:
    """(k, S) words, S a multiple of HISTOGRAM_BLOCK -> the k * S / HISTOGRAM_BLOCK histograms (65536
    counts each, read-only) of the 16-bit halves of each block of HISTOGRAM_BLOCK words, in order.
    Bytes and 16-bit values are both counted from these (knuth.ByteFrequency, Frequency16)."""
    from .accumulators import shared
    blocks = np.ascontiguousarray(samples, dtype=np.uint32).reshape(-1, HISTOGRAM_BLOCK)
    return [shared(block, "u16-histogram", _u16_histogram) for block in blocks]


def _u16_histogram(block):
    return np.bincount(block.view(np.uint16), minlength=1 << 16)


def byte_counts_of(histograms) -> np.ndarray:
    """16-bit histograms -> (n, 256) counts of bytes (both bytes of each value)."""
    out = np.empty((len(histograms), 256), dtype=np.int64)
    for i, h in enumerate(histograms):
        h = h.reshape(256, 256)  # [high byte, low byte]
        np.add(h.sum(axis=0), h.sum(axis=1), out=out[i])
    return out


PAIR_STRIDE = 256  # u16 view of the uint8 weights: weight(word 2i) + 256 weight(word 2i+1)
_PAIR_INDEX = (np.arange(33)[:, None] + PAIR_STRIDE * np.arange(33)[None, :])  # [w_even, w_odd]


def weight_pairs(samples: np.ndarray) -> np.ndarray:
    """(k, S) words, S even -> (k, 33, 33) counts of (popcount(word 2i), popcount(word 2i+1)) per row.
    Hamming weights, their independence, the 64-bit random walk and the bit count all read it."""
    from .accumulators import shared
    return shared(samples, "weight-pairs", _weight_pairs)


def _weight_pairs(samples):
    lib = kernels.active()
    if lib is not None:
        return kernels.per_row(lib, "weight_pairs", samples, 33 * 33).reshape(-1, 33, 33)
    k, s = samples.shape
    weights = np.bitwise_count(np.ascontiguousarray(samples, dtype=np.uint32))  # uint8
    codes = weights.view(np.uint16).astype(np.intp)  # little-endian: even word's weight + 256 * odd word's
    cells = 32 + PAIR_STRIDE * 32 + 1
    codes += (np.arange(k, dtype=np.intp) * cells)[:, None]
    counts = np.bincount(codes.reshape(-1), minlength=k * cells).reshape(k, cells)
    return counts[:, _PAIR_INDEX]
