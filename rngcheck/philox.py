"""Philox NxW-R: Philox4x32-R (the bijection behind DML_RANDOM_GENERATOR_TYPE_PHILOX_4X32_10)
and the other Random123 widths, Philox2x32, Philox2x64 and Philox4x64.

Source: Salmon, Moraes, Dror, Shaw, "Parallel Random Numbers: As Easy as 1, 2, 3"
(SC11), section 3.2 and table 2; Random123's philox.h. Known answers:
rngcheck/vectors/random123_kat.json (every philox line of Random123's kat_vectors).

``philox4x32`` is the hot path of the DirectML reference and is written for it alone:
every argument is an array of 32-bit words, one entry per block, held in uint64 so that a
32x32 multiply keeps its high half. ``philox`` is the general NxW-R, vectorised over blocks
(an array of shape (blocks, N)); for W = 64 numpy has no 64x64->128 multiply, so the high
half is assembled from four 32x32 products (``mulhilo64``).

``compiled_stream4x32`` is the same Philox4x32-R over a run of counters, compiled (philox.c beside
this file, built on first use: rngcheck.native.Kernels, ``RNGCHECK_KERNELS``); the reference takes it
where it can be had, and ``philox4x32`` where it cannot, with the same words (tests/test_reference.py).
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from . import native

# Multipliers and Weyl key increments (paper, table 2; philox.h PHILOX_M4x32_0/1, PHILOX_W32_0/1).
PHILOX_M0 = np.uint64(0xD2511F53)
PHILOX_M1 = np.uint64(0xCD9E8D57)
PHILOX_W0 = 0x9E3779B9
PHILOX_W1 = 0xBB67AE85

# The other widths (philox.h): PHILOX_M2x32_0, PHILOX_M2x64_0, PHILOX_M4x64_0/1, PHILOX_W64_0/1
# (the 64-bit Weyl constants are the golden ratio and sqrt(3) - 1 in 64 bits, as the 32-bit ones are in 32).
PHILOX_M2X32_0 = 0xD256D193
PHILOX_M2X64_0 = 0xD2B74407B1CE6E93
PHILOX_M4X64_0 = 0xD2E7470EE14C6C93
PHILOX_M4X64_1 = 0xCA5A826395121157
PHILOX_W64_0 = 0x9E3779B97F4A7C15
PHILOX_W64_1 = 0xBB67AE8584CAA73B

# (lanes N, word bits W) -> the round multipliers, one per pair of lanes.
MULTIPLIERS: dict[tuple[int, int], tuple[int, ...]] = {
    (2, 32): (PHILOX_M2X32_0,),
    (4, 32): (int(PHILOX_M0), int(PHILOX_M1)),
    (2, 64): (PHILOX_M2X64_0,),
    (4, 64): (PHILOX_M4X64_0, PHILOX_M4X64_1),
}
# word bits W -> the Weyl key increments (a 2xW Philox has one key word and uses the first).
WEYL: dict[int, tuple[int, int]] = {32: (PHILOX_W0, PHILOX_W1), 64: (PHILOX_W64_0, PHILOX_W64_1)}
WORD_DTYPES: dict[int, type[np.unsignedinteger]] = {32: np.uint32, 64: np.uint64}

DEFAULT_ROUNDS = 10
LOW32 = np.uint64(0xFFFFFFFF)
SHIFT32 = np.uint64(32)

_PTR = ctypes.c_void_p
# -O2, not -O3 -march=native: measured on an AMD EPYC, -O2's scalar code ran at 2-3 ns per word, the
# vectorised builds at 4-6 (the 32x32 products' shuffles cost more than they save).
KERNELS = native.Kernels(Path(__file__).with_suffix(".c"), ("-O2", "-std=gnu99", "-shared", "-fPIC"), "philox",
                         "the reference's Philox stream", {"philox4x32_stream": (_PTR, _PTR, _PTR, ctypes.c_int64,
                                                                                  ctypes.c_int, _PTR)})
_CONSTANTS = np.array([PHILOX_M0, PHILOX_M1, PHILOX_W0, PHILOX_W1], dtype=np.uint32)  # philox.c's, from here


class Scratch:
    """Arrays kept from one chunk to the next. Allocating a fresh 0.5 MiB array per operation
    costs numpy more than the arithmetic does (mmap, page faults, munmap)."""

    def __init__(self) -> None:
        self.arrays: dict[str, np.ndarray] = {}

    def array(self, name: str, size: int, dtype: npt.DTypeLike) -> np.ndarray:
        kept = self.arrays.get(name)
        if kept is None or kept.size < size or kept.dtype != dtype:
            kept = self.arrays[name] = np.empty(size, dtype=dtype)
        return kept[:size]

    def counting(self, size: int) -> np.ndarray:
        """0, 1, ..., size-1 as uint64 (kept: it is the same for every chunk)."""
        kept = self.arrays.get("counting")
        if kept is None or kept.size < size:
            kept = self.arrays["counting"] = np.arange(size, dtype=np.uint64)
        return kept[:size]


def philox4x32(c0: npt.ArrayLike, c1: npt.ArrayLike, c2: npt.ArrayLike, c3: npt.ArrayLike,
               k0: int, k1: int, rounds: int = DEFAULT_ROUNDS, *,
               scratch: Scratch | None = None) -> np.ndarray:
    """Philox4x32-R of counters (c0, c1, c2, c3) under key (k0, k1).

    Returns uint32 of shape (blocks, 4): one row per counter, the four output lanes in order.

    Each round (philox.h, _philox4x32round):
        hi0:lo0 = M0 * c0      hi1:lo1 = M1 * c2
        c' = (hi1 ^ c1 ^ k0,  lo1,  hi0 ^ c3 ^ k1,  lo0)
    and between rounds the key is bumped: k0 += W0, k1 += W1 (mod 2^32).
    The arithmetic is done in place on uint64 copies. With ``scratch`` the copies and the
    result live in its arrays (the result is valid until the next call with the same scratch).
    """
    scratch = scratch or Scratch()
    size = np.size(c0)
    inputs = (c0, c1, c2, c3)
    c0, c1, c2, c3 = (scratch.array(f"c{i}", size, np.uint64) for i in range(4))
    for copy, given in zip((c0, c1, c2, c3), inputs):
        np.copyto(copy, given, casting="unsafe")
    product0 = scratch.array("product0", size, np.uint64)
    product1 = scratch.array("product1", size, np.uint64)
    for round_index in range(rounds):
        if round_index:
            k0 = (k0 + PHILOX_W0) & 0xFFFFFFFF
            k1 = (k1 + PHILOX_W1) & 0xFFFFFFFF
        np.multiply(c0, PHILOX_M0, out=product0)
        np.multiply(c2, PHILOX_M1, out=product1)
        c1 ^= np.uint64(k0)
        c3 ^= np.uint64(k1)
        np.right_shift(product1, SHIFT32, out=c0)
        c0 ^= c1                                  # c0' = hi1 ^ c1 ^ k0
        np.bitwise_and(product1, LOW32, out=c1)   # c1' = lo1
        np.right_shift(product0, SHIFT32, out=c2)
        c2 ^= c3                                  # c2' = hi0 ^ c3 ^ k1
        np.bitwise_and(product0, LOW32, out=c3)   # c3' = lo0
    blocks = scratch.array("blocks", 4 * size, np.uint32).reshape(size, 4)
    for lane, value in enumerate((c0, c1, c2, c3)):
        blocks[:, lane] = value
    return blocks


def compiled_stream4x32(start: Sequence[int], k0: int, k1: int, block_count: int, rounds: int = DEFAULT_ROUNDS,
                        *, scratch: Scratch | None = None) -> np.ndarray | None:
    """Philox4x32-R of the counters start + j mod 2^128 (j = 0 .. block_count-1; ``start``: four
    32-bit words, the lowest first) under (k0, k1), compiled (philox.c): uint32 of shape (block_count, 4),
    as ``philox4x32`` gives them. None where the compiled stream cannot be had (the caller runs
    ``philox4x32``; rngcheck.native.Kernels says why). With ``scratch`` the result lives in its arrays."""
    lib = KERNELS.active()
    if lib is None:
        return None
    words = np.array([*start, k0, k1], dtype=np.uint32)
    count = max(0, block_count)
    blocks = (scratch or Scratch()).array("blocks", 4 * count, np.uint32).reshape(count, 4)
    lib.philox4x32_stream(words.ctypes.data, words[4:].ctypes.data, _CONSTANTS.ctypes.data, count, max(0, rounds),
                          blocks.ctypes.data)
    return blocks


def counter_blocks(counters: npt.ArrayLike, word_bits: int | None
                   ) -> tuple[np.ndarray, int, type[np.unsignedinteger], int]:
    """(words, W, the W-bit dtype, N) of a (blocks, N) counters array with N = 2 or 4 lanes (ValueError
    otherwise): what Philox and ThreeFry both check first."""
    words = np.asarray(counters)
    bits = word_bits_of(words, word_bits)
    if words.ndim != 2 or words.shape[1] not in (2, 4):
        raise ValueError(f"counters must have shape (blocks, 2) or (blocks, 4), not {words.shape}")
    return words, bits, WORD_DTYPES[bits], int(words.shape[1])


def word_bits_of(counters: np.ndarray, word_bits: int | None) -> int:
    """W of a counters array: given, or read off its dtype (uint32 -> 32, uint64 -> 64)."""
    if word_bits is None:
        for bits, dtype in WORD_DTYPES.items():
            if counters.dtype == dtype:
                return bits
        raise ValueError(f"counters of dtype {counters.dtype} are neither uint32 nor uint64 words")
    if word_bits not in WORD_DTYPES:
        raise ValueError(f"word size {word_bits} is not 32 or 64 bits")
    return word_bits


def mulhilo32(a: np.ndarray, multiplier: int) -> tuple[np.ndarray, np.ndarray]:
    """(high, low) 32-bit halves of a * multiplier, for uint32 words a (the product held in uint64)."""
    product = a.astype(np.uint64) * np.uint64(multiplier)
    return (product >> SHIFT32).astype(np.uint32), (product & LOW32).astype(np.uint32)


def mulhilo64(a: np.ndarray, multiplier: int) -> tuple[np.ndarray, np.ndarray]:
    """(high, low) 64-bit halves of a * multiplier, for uint64 words a.

    numpy's uint64 multiply keeps the low half only (mod 2^64). With a = ah*2^32 + al and
    m = mh*2^32 + ml: a*m = ah*mh*2^64 + (ah*ml + al*mh)*2^32 + al*ml, so the high half is
    ah*mh + hi32(ah*ml) + hi32(al*mh) + the carry out of hi32(al*ml) + lo32(ah*ml) + lo32(al*mh)
    (that sum is below 3*2^32: no overflow in 64 bits).
    """
    a = a.astype(np.uint64, copy=False)
    a_high, a_low = a >> SHIFT32, a & LOW32
    m_high, m_low = np.uint64(multiplier >> 32), np.uint64(multiplier & 0xFFFFFFFF)
    low_low, low_high, high_low = a_low * m_low, a_low * m_high, a_high * m_low
    middle = (low_low >> SHIFT32) + (low_high & LOW32) + (high_low & LOW32)
    high = a_high * m_high + (low_high >> SHIFT32) + (high_low >> SHIFT32) + (middle >> SHIFT32)
    return high, a * np.uint64(multiplier)


def philox(counters: npt.ArrayLike, key: Sequence[int], rounds: int = DEFAULT_ROUNDS, *,
           word_bits: int | None = None, multipliers: Sequence[int] | None = None,
           weyl: Sequence[int] | None = None) -> np.ndarray:
    """Philox NxW-R of each row of ``counters`` (shape (blocks, N), N in {2, 4}) under ``key`` (N/2 words).

    W is read off the dtype (uint32 or uint64) unless given; the result has the counters' shape
    and the W-bit dtype. Each round (philox.h, _philox2xWround and _philox4xWround):
        N = 2:  hi:lo = M0 * x0;                      x' = (hi ^ k0 ^ x1, lo)
        N = 4:  hi0:lo0 = M0 * x0, hi1:lo1 = M1 * x2;  x' = (hi1 ^ x1 ^ k0, lo1, hi0 ^ x3 ^ k1, lo0)
    and between rounds the key is bumped by the Weyl constants (k_i += W_i mod 2^W).
    ``multipliers`` and ``weyl`` replace the standard constants (MULTIPLIERS, WEYL).
    """
    words, bits, dtype, lanes = counter_blocks(counters, word_bits)
    if len(key) != lanes // 2:
        raise ValueError(f"Philox{lanes}x{bits} takes {lanes // 2} key word(s), not {len(key)}")
    mask = (1 << bits) - 1
    multipliers = tuple(multipliers if multipliers is not None else MULTIPLIERS[lanes, bits])
    increments = tuple(weyl if weyl is not None else WEYL[bits])
    mulhilo = mulhilo32 if bits == 32 else mulhilo64
    x = [words[:, lane].astype(dtype) for lane in range(lanes)]
    k = [int(word) & mask for word in key]
    for round_index in range(rounds):
        if round_index:
            k = [(word + increment) & mask for word, increment in zip(k, increments)]
        if lanes == 2:
            high, low = mulhilo(x[0], multipliers[0])
            x = [high ^ x[1] ^ dtype(k[0]), low]
        else:
            high0, low0 = mulhilo(x[0], multipliers[0])
            high1, low1 = mulhilo(x[2], multipliers[1])
            x = [high1 ^ x[1] ^ dtype(k[0]), low1, high0 ^ x[3] ^ dtype(k[1]), low0]
    return np.stack(x, axis=1).astype(dtype, copy=False)
