"""Philox4x32-R, the bijection behind DML_RANDOM_GENERATOR_TYPE_PHILOX_4X32_10.

Source: Salmon, Moraes, Dror, Shaw, "Parallel Random Numbers: As Easy as 1, 2, 3"
(SC11), section 3.2 and table 2; Random123's philox.h. Known answers:
rngcheck/vectors/random123_kat.json.

Vectorised over blocks: every argument is an array of 32-bit words, one entry per
block, held in uint64 so that a 32x32 multiply keeps its high half.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

# Multipliers and Weyl key increments (paper, table 2; philox.h PHILOX_M4x32_0/1, PHILOX_W32_0/1).
PHILOX_M0 = np.uint64(0xD2511F53)
PHILOX_M1 = np.uint64(0xCD9E8D57)
PHILOX_W0 = 0x9E3779B9
PHILOX_W1 = 0xBB67AE85

DEFAULT_ROUNDS = 10
LOW32 = np.uint64(0xFFFFFFFF)
SHIFT32 = np.uint64(32)


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
