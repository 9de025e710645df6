"""numba's CUDA random numbers (numba.cuda.random), rule by rule: the seeding, xoroshiro128+ and the uniforms. Not a
registered convention: numba has no 6-word state, and how rngcheck's states reach its seed and draws is its
backend's placement (rngcheck.backends.numba_backend rules 2-3), judged by the property axis; this module is the
model its tests check numba against, bit for bit.

Sources (numba 0.68.1; facts read there, written here):
  N  numba/cuda/random.py (init_xoroshiro128p_state, rotl, xoroshiro128p_next, uint64_to_unit_float64,
     uint64_to_unit_float32)
  M  measured on the CPU (@njit) and in numba's CUDA simulator (tests/test_numba_backend.py)

1. Seeding: ``create_xoroshiro128p_states(1, seed)``'s state 0 is s0 = s1 = z, z SplitMix64's first output of the
   seed: z = seed + 0x9E3779B97F4A7C15; z = (z ^ z >> 30) * 0xBF58476D1CE4E5B9; z = (z ^ z >> 27) *
   0x94D049BB133111EB; z ^= z >> 31 (all mod 2^64) (N).
2. A draw: the output is s0 + s1 (mod 2^64), then s1 ^= s0; s0 = rotl(s0, 55) ^ s1 ^ (s1 << 14); s1 = rotl(s1, 36):
   xoroshiro128+ with the first published constants (55, 14, 36), not the 2018 ones (24, 16, 37) (N).
3. float64 uniform: (x >> 11) * 2^-53 (N). float32 uniform: that float64 rounded to float32, so a float64 from
   1 - 2^-25 up is 1.0 (N; numba#10810; M: seed 20610118's first).
Normals (Box-Muller of two float32 uniforms, the cosine) are not modelled here.
"""

from __future__ import annotations

import numpy as np

M64 = (1 << 64) - 1


def splitmix64(seed: int) -> int:
    """Rule 1's z."""
    z = (seed + 0x9E3779B97F4A7C15) & M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def _rotl(x: int, k: int) -> int:
    return ((x << k) | (x >> (64 - k))) & M64


def outputs(seed: int, skip: int, count: int) -> np.ndarray:
    """Rules 1-2: the state's outputs skip.. skip + count - 1, as uint64."""
    s0 = s1 = splitmix64(seed & M64)
    out = np.empty(count, dtype=np.uint64)
    for i in range(skip + count):
        if i >= skip:
            out[i - skip] = (s0 + s1) & M64
        s1 ^= s0
        s0 = _rotl(s0, 55) ^ s1 ^ ((s1 << 14) & M64)
        s1 = _rotl(s1, 36)
    return out


def uniform(dtype: str, x: np.ndarray) -> np.ndarray:
    """Rule 3: float64 (x >> 11) * 2^-53, or that rounded to float32."""
    wide: np.ndarray = (np.asarray(x, dtype=np.uint64) >> np.uint64(11)).astype(np.float64) * 2.0 ** -53
    return wide.astype(np.float32) if dtype == "float32" else wide
