"""How a stream of 32-bit words is read as bits, and small exact helpers on bits.

The bit order is fixed once for every test: word i contributes its bits most significant
first (bit 31 of word 0 is bit 0 of the stream), the order NIST's examples are written
in and the order dieharder/PractRand use for stdin32 streams read as big numbers.
"""

from __future__ import annotations

import numpy as np

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


def walk_extremes(samples: np.ndarray):
    """For each row of words: (final sum, max partial sum, min partial sum) of the +-1 walk.

    Partial sums S_1 .. S_n over all n bits (S_0 = 0 excluded), computed per byte with
    lookup tables so a 2^20-bit sample costs a 2^17-element cumulative sum.
    """
    samples = np.ascontiguousarray(samples, dtype=np.uint32)
    octets = samples.astype(">u4").view(np.uint8).reshape(samples.shape[0], -1)
    steps = BYTE_TOTAL[octets]
    ends = np.cumsum(steps, axis=1, dtype=np.int64)
    starts = ends - steps
    highest = (starts + BYTE_MAX[octets]).max(axis=1)
    lowest = (starts + BYTE_MIN[octets]).min(axis=1)
    return ends[:, -1], highest, lowest
