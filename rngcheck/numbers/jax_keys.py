"""JAX's threefry keys: how an integer seed becomes a key, and a key becomes words (jax.random's default
implementation, threefry2x32). rngcheck.numbers.jax turns the words into numbers; this says which words.

Sources (JAX 0.10.2; facts read there, written here):
  K  jax/_src/prng.py (threefry_seed, threefry_random_bits, _threefry_random_bits_partitionable,
     _threefry_random_bits_original, threefry_split)
  M  measured against JAX 0.10.2 on CPU (tests/test_jax_keys.py), and the layout before 0.5 against MLX
     0.32.4, which keeps it (tests/test_mlx_backend.py)

1. Seeding: ``jax.random.key(s)`` / ``PRNGKey(s)`` for an integer s is the key data
   [s >> 32, s mod 2^32] with 64-bit mode on (``jax_enable_x64``), [0, s mod 2^32] without it (the
   default: the seed is cut to 32 bits first) (K threefry_seed; M): [0, s] for a seed below 2^32.
   The key data IS the key: ``jax.random.uniform(jnp.array([a, b], uint32), ...)`` draws from [a, b],
   as a library that builds its own key data does (Keras 3 on JAX: [seed, counter]).
2. Words, the partitionable layout (``jax_threefry_partitionable`` on: the default since JAX 0.5): the
   32-bit element at flat index i of any shape is lane 0 xor lane 1 of Threefry2x32-20 under the key on the
   counter (i >> 32, i mod 2^32) (K _threefry_random_bits_partitionable).
3. Words, the layout before 0.5 (off; MLX keeps it): n words are lane 0, then lane 1, of Threefry2x32-20
   under the key on the counters (i, i + h), i < h = ceil(n/2), an odd n's last counter i + h = n taken
   as 0 (the iota is padded with one 0 word) (K _threefry_random_bits_original, threefry_2x32; one block
   call below 2^32 words).
4. Splitting, the layout before 0.5: ``split(key)`` is the 4 words of rule 3 under the key, as two keys
   (w0, w1) and (w2, w3) (K threefry_split over iota(4)).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..threefry import threefry

MASK32 = 0xFFFFFFFF
LAYOUTS = ("partitionable", "original")   # rules 2 and 3


def key_from_seed(seed: int, x64: bool = False) -> tuple[int, int]:
    """Rule 1: the key data of ``jax.random.key(seed)`` (``x64``: with ``jax_enable_x64`` on)."""
    return ((seed >> 32) & MASK32 if x64 else 0, seed & MASK32)


def words(key: Sequence[int], count: int, layout: str = "partitionable", *, pad_with_zero: bool = True) -> np.ndarray:
    """Rules 2-3: the first ``count`` 32-bit words that ``key`` draws for a flat shape of ``count``.
    ``pad_with_zero=False``: an odd count's last counter stays i + h (tinygrad's copy of rule 3)."""
    if layout not in LAYOUTS:
        raise ValueError(f"JAX's threefry layout is one of {', '.join(LAYOUTS)}, not {layout!r}")
    key = (int(key[0]) & MASK32, int(key[1]) & MASK32)
    if layout == "partitionable":
        index = np.arange(count, dtype=np.uint64)
        counters = np.stack([index >> np.uint64(32), index & np.uint64(MASK32)], axis=1).astype(np.uint32)
        blocks = threefry(counters, key, 20)
        return np.asarray(blocks[:, 0] ^ blocks[:, 1], dtype=np.uint32)
    half = (count + 1) // 2
    first = np.arange(half, dtype=np.uint64)
    second = first + np.uint64(half)
    if pad_with_zero:
        second[second >= count] = 0      # an odd count is padded with a 0 counter
    counters = np.stack([first, second], axis=1).astype(np.uint32)
    blocks = threefry(counters, key, 20)
    return np.concatenate([blocks[:, 0], blocks[:, 1]])[:count]


def split(key: Sequence[int]) -> tuple[tuple[int, int], tuple[int, int]]:
    """Rule 4: ``jax.random.split(key)`` in the layout before 0.5."""
    w = [int(word) for word in words(key, 4, "original")]
    return (w[0], w[1]), (w[2], w[3])
