"""Triton's random numbers (triton.language.random), rule by rule: its own layout of Philox4x32-10 and its
conversions. Not a registered convention: a Triton kernel has no 6-word state, and how rngcheck's states
reach its (seed, offset) is the backend's placement (rngcheck.backends.triton_backend rule 3), judged by the
property axis; this module is the model its tests check the library's numbers against, bit for bit.

Sources (Triton 3.9.0; facts read there, written here):
  T  triton/language/random.py (randint4x, randint, uint_to_uniform_float, rand, pair_uniform_to_normal, randn)
  M  measured in Triton's interpreter (TRITON_INTERPRET=1; tests/test_triton_backend.py), and triton#6832's
     two sides (docs/library-findings.md)

1. Words: ``tl.randint4x(seed, offset)`` is the Philox4x32-10 block of counter (offset mod 2^32, offset >> 32,
   0, 0) under key (seed mod 2^32, seed >> 32); the offset's high word only for an int64 offset (T; M: before
   triton#6832, Triton 3.3.1 ran an int64 offset as Philox4x64-10 instead). Element i of a kernel reading
   offsets o.. reads the block of offset o + i: one block an element, not the operator's four words a block.
   ``tl.randint`` is lane 0.
2. Uniform (``tl.rand``): lane 0 as int32, a negative x folded to ~x (= -x - 1), converted to float32 and times
   the float32 nearest 4.6566127342e-10 (just under 2^-31) (T uint_to_uniform_float). The largest fold,
   2^31 - 1, rounds to 2^31 in float32, and the scale keeps the product at 1 - 2^-24: never 1.0 (M).
3. Normal (``tl.randn``): u1, u2 = rule 2 of lanes 0 and 1, u1 raised to at least 1e-7 (float32); the cosine
   of Box-Muller, sqrt(-2 log u1) * cos(2 pi u2), in float32, the sine dropped (T pair_uniform_to_normal, randn).
   The interpreter evaluates log, sqrt and cos in float32 with numpy's functions; the model rounds each
   transcendental once from binary64 (rngcheck.numbers.box_muller), within 1e-5 of it (M).
"""

from __future__ import annotations

import numpy as np

from ..philox import philox4x32
from . import box_muller

SOURCE = "triton/language/random.py (Triton 3.9.0)"
SCALE = np.float32(4.6566127342e-10)    # rule 2
SMALLEST_U1 = np.float32(1e-7)          # rule 3
TWO_PI = np.float32(6.283185307179586)


def blocks(seed: int, first: int, count: int) -> np.ndarray:
    """Rule 1: ``tl.randint4x(seed, first..first + count - 1)`` as (count, 4) uint32, one row an offset."""
    offsets = np.arange(count, dtype=np.uint64) + np.uint64(first)
    return philox4x32(offsets & np.uint64(0xFFFFFFFF), offsets >> np.uint64(32), 0, 0, seed & 0xFFFFFFFF, seed >> 32)


def uniform(words: np.ndarray) -> np.ndarray:
    """Rule 2: ``tl.rand``'s float32 of each (lane 0) word."""
    signed = np.asarray(words, dtype=np.uint32).view(np.int32)
    folded: np.ndarray = np.where(signed < 0, ~signed, signed).astype(np.float32) * SCALE
    return folded


def normal(lane0: np.ndarray, lane1: np.ndarray) -> np.ndarray:
    """Rule 3: ``tl.randn``'s float32 of each pair of lanes 0 and 1."""
    u1 = np.maximum(SMALLEST_U1, uniform(lane0))
    u2 = uniform(lane1)
    _, cosine = box_muller.polar32(u1, (TWO_PI * u2).astype(np.float32))
    return cosine


def draw(kind: str, seed: int, first: int, count: int) -> np.ndarray:
    """``count`` float32 numbers of ``kind`` ("uniform": tl.rand, "normal": tl.randn) at offsets first.."""
    words = blocks(seed, first, count)
    if kind == "uniform":
        return uniform(words[:, 0])
    if kind == "normal":
        return normal(words[:, 0], words[:, 1])
    raise ValueError(f"Triton draws uniform and normal float32, not {kind!r}")
