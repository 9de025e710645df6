"""Keras 3's ``keras.random.uniform`` per Keras backend, rule by rule: which generator each backend seeds from a
``SeedGenerator``'s state and how a float32 in [0, 1) is made. Not a registered convention: Keras has no 6-word
state, and how rngcheck's states reach a SeedGenerator is its backend's placement (rngcheck.backends.keras_backend
rule 1), judged by the property axis; this module is the model its tests check Keras against, bit for bit.

Sources (Keras 3.15.1; facts read there, written here):
  K  keras/src/random/seed_generator.py (SeedGenerator's state [seed, 0] and next(): the state, then its counter
     word moved by one), keras/src/backend/{jax,tensorflow,torch,numpy}/random.py (uniform)
  M  measured with Keras 3.15.1 on jax 0.10.2, tensorflow 2.21.0, torch 2.13.0+cpu and numpy 2.4.6
     (tests/test_keras_numbers.py)

1. The pair: ``SeedGenerator(s)``'s draw c (0 first) is made from the pair [s, c] (K).
2. jax: the pair is the key data itself; the numbers are jax.random.uniform's from it (rngcheck.numbers.jax_keys
   rule 2, rngcheck.numbers.jax rule 1): not jax.random.key(s), which is [0, s] (the property axis's rule 10).
3. tensorflow: ``tf.random.stateless_uniform(seed=[s, c])`` (rngcheck.numbers.tensorflow rule 10, the
   stateless seed, then its rule 1).
4. torch: ``torch.Generator().manual_seed((s + c) mod 2^32)``, its CPU mt19937 (init_genrand seeding); torch.rand's
   float32 is the low 24 bits of each 32-bit word times 2^-24 (M). s + c: adjacent seeds' streams are one draw
   apart (the property axis's property-seeds-overlap).
5. numpy: ``np.random.default_rng([s, c]).uniform(...)``, numpy's float64 in [0, 1) (53 bits) cast to float32 by
   ``astype``: rounded to nearest, so a float64 from 1 - 2^-25 up becomes 1.0 (one number in 2^25): Keras's
   numpy backend's float32 uniform can return 1.0, outside [0, 1) (the property axis's rule 9 names it on its
   edge seed 1183528, whose number 15 is 1.0).
"""

from __future__ import annotations

import numpy as np

from . import jax as jax_numbers
from . import jax_keys
from .request import UNIFORM, Request
from .tensorflow import TENSORFLOW

KERAS_BACKENDS = ("jax", "tensorflow", "torch", "numpy")
MASK32 = 0xFFFFFFFF


def mt19937_words(seed: int, count: int) -> np.ndarray:
    """Rule 4's generator: mt19937 seeded by init_genrand(seed) (numpy's legacy seeding, as torch.manual_seed)."""
    return np.random.RandomState(seed & MASK32).randint(0, 1 << 32, size=count, dtype=np.uint32)


def uniform32(backend: str, seed: int, draw: int, count: int) -> np.ndarray:
    """Rules 1-5: ``keras.random.uniform((count,), dtype="float32")``'s numbers for SeedGenerator(seed)'s draw."""
    if backend == "jax":
        return jax_numbers.uniform_from_bits("float32", jax_keys.words((seed & MASK32, draw & MASK32), count))
    if backend == "tensorflow":
        return TENSORFLOW.draw(Request(TENSORFLOW.name, UNIFORM, "float32", count, seed=(seed, draw)))
    if backend == "torch":
        words = mt19937_words(seed + draw, count)
        scaled: np.ndarray = (words & np.uint32(0xFFFFFF)).astype(np.float32) * np.float32(2.0 ** -24)
        return scaled
    if backend == "numpy":
        rounded: np.ndarray = np.random.default_rng([seed, draw]).random(count).astype(np.float32)
        return rounded
    raise ValueError(f"Keras's backends are {', '.join(KERAS_BACKENDS)}, not {backend!r}")
