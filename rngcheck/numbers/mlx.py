"""MLX's random numbers (mlx.core.random), rule by rule: its keys, their words and its float32 uniform. Not a
registered convention: MLX's generator is Threefry-2x32, not the operator's Philox word stream, and how
rngcheck's states reach its seed and draws is the backend's placement (rngcheck.backends.mlx_backend rule 1),
judged by the property axis; this module is the model its tests check the library's numbers against, bit for bit.

Source: measured with mlx[cpu] 0.32.4 on x86_64 Linux (tests/test_mlx_backend.py: every rule below, bit for
bit, odd counts included), after the reading of MLX's random.cpp that rngcheck.backends.mlx_backend records.

1. Keys: ``mx.random.key(s)`` is [0, s], as ``jax.random.key(s)`` (rngcheck.numbers.jax_keys rule 1).
2. Words: JAX's layout from before JAX 0.5 (rngcheck.numbers.jax_keys rule 3, odd counts padded as JAX pads
   them), not current JAX's partitionable one: the same key gives other words than JAX >= 0.5.
3. The global generator: ``mx.random.seed(s)`` sets the key to [0, s]; each draw without a key takes
   ``key, sub = split(key)`` (jax_keys rule 4) and draws from ``sub``.
4. Uniform float32 in [0, 1): float32(bits) / float32(2^32 - 1), each step rounded to float32, held at most
   1 - 2^-24: bits from 2^32 - 128 up round to 2^32, a quotient of 1.0, which comes out 1 - 2^-24.
Normals, integer ranges and float16 are not modelled here (the property axis judges them).
"""

from __future__ import annotations

import numpy as np

from . import jax_keys

BELOW_1 = np.float32(1 - 2 ** -24)


def draw_key(seed: int, draw: int) -> tuple[int, int]:
    """Rule 3: the key of the global generator's ``draw``-th draw (0 first) after ``mx.random.seed(seed)``."""
    key = jax_keys.key_from_seed(seed)
    for _ in range(draw + 1):
        key, sub = jax_keys.split(key)
    return sub


def uniform(words: np.ndarray) -> np.ndarray:
    """Rule 4: float32 uniforms of 32-bit words."""
    quotient = np.asarray(words, dtype=np.uint32).astype(np.float32) / np.float32(2 ** 32 - 1)
    held: np.ndarray = np.minimum(quotient, BELOW_1)
    return held


def draw_uniform(seed: int, draw: int, count: int) -> np.ndarray:
    """Rules 1-4: the ``draw``-th ``mx.random.uniform(shape=(count,))`` after ``mx.random.seed(seed)``."""
    return uniform(jax_keys.words(draw_key(seed, draw), count, "original"))
