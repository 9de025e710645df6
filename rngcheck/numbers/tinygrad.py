"""tinygrad's random numbers (Tensor.manual_seed, Tensor.rand), rule by rule: its key, its counter and its words.
Not a registered convention: tinygrad has no 6-word state, and how rngcheck's states reach its seed and draws is
its backend's placement (rngcheck.backends.tinygrad_backend rules 2-3), judged by the property axis; this module
is the model its tests check tinygrad against, bit for bit.

Sources (tinygrad 0.14.0; facts read there, written here):
  T  tinygrad/tensor.py (manual_seed, _next_counter), tinygrad/mixin/rand.py (random_bits, _threefry_random_bits,
     _bits_to_rand, rand), tinygrad/codegen/decomp/op.py (threefry2x32)
  M  measured on its PYTHON device (tests/test_tinygrad_backend.py)

1. Key: a device's key is [sha256(i) mod 2^32, seed mod 2^32], i the number of devices seeded before it (0 for
   the first), sha256 over i's 4 big-endian bytes read as a big-endian integer (T _next_counter; M: the first
   device's word 0 is 0x14B81119). ``manual_seed`` forgets the devices and their counters.
2. Counter: each device keeps a 64-bit word counter, 0 after ``manual_seed``; a draw of w words reads the
   counter c and moves it to c + w, when the draw is made (not when it is realised: tinygrad#16520 is that a lazy
   draw realised later can read another). A float32 number is one word.
3. Words: Threefry2x32-20 (the standard block, rngcheck.threefry; T threefry2x32) makes a draw's key of the
   device key and the counter (lanes 0 and 1 of the block of counter (c mod 2^32, c >> 32)), then n words of that
   key are lane 0, then lane 1, of the blocks (i, i + h), i < h = ceil(n/2), the last cut for an odd n (T
   random_bits; JAX's layout before 0.5 but for that odd count: JAX's last counter is 0, tinygrad's i + h).
4. Float32 uniform: JAX's rule, the top 23 bits as the mantissa of a float in [1, 2), minus 1
   (rngcheck.numbers.jax rule 1; T _bits_to_rand).
Normals (Box-Muller of two uniforms, cosine, ``1 - u`` in the log) and integer ranges are not modelled here.
"""

from __future__ import annotations

import hashlib

import numpy as np

from ..threefry import threefry
from . import jax as jax_numbers
from . import jax_keys

MASK32 = 0xFFFFFFFF


def device_key(seed: int, device_index: int = 0) -> tuple[int, int]:
    """Rule 1."""
    digest = int.from_bytes(hashlib.sha256(device_index.to_bytes(4, "big")).digest(), "big")
    return digest & MASK32, seed & MASK32


def words(key: tuple[int, int], counter: int, count: int) -> np.ndarray:
    """Rule 3: the ``count`` words of a draw made when the device's counter was ``counter``."""
    block = threefry(np.array([[counter & MASK32, (counter >> 32) & MASK32]], dtype=np.uint32), key, 20)[0]
    return jax_keys.words((int(block[0]), int(block[1])), count, "original", pad_with_zero=False)


def rand32(seed: int, counter: int, count: int, device_index: int = 0) -> np.ndarray:
    """Rules 1-4: ``Tensor.rand(count)`` in float32, made when the device's counter was ``counter``."""
    return jax_numbers.uniform_from_bits("float32", words(device_key(seed, device_index), counter, count))
