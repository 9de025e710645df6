"""ThreeFry NxW-R: the counter-based generator built from Threefish's add-rotate-xor rounds
(JAX draws every default random number from ThreeFry2x32-20; StableHLO's rng_bit_generator
names THREEFRY beside PHILOX).

Source: Salmon, Moraes, Dror, Shaw, "Parallel Random Numbers: As Easy as 1, 2, 3" (SC11),
section 3.1 and table 3 (rotation constants of the 2x32, 4x32, 2x64 and 4x64 variants);
Random123's threefry.h (R_32x2_*, R_32x4_*_*, R_64x2_*, R_64x4_*_*, SKEIN_KS_PARITY32/64) and
the Skein 1.3 paper (the key-schedule parity constant). Known answers:
rngcheck/vectors/random123_kat.json (every threefry line of Random123's kat_vectors).

The block function, for N lanes x[0..N-1] of W bits and N key words k[0..N-1]:
  key schedule   ks[i] = k[i] (i < N), ks[N] = PARITY ^ k[0] ^ ... ^ k[N-1]
  first injection  x[i] += ks[i]
  round r (0-based), with rotation row R[r mod 8]:
    N = 2:   x0 += x1; x1 = rotl(x1, R[r][0]) ^ x0
    N = 4:   r even: x0 += x1; x1 = rotl(x1, R[r][0]) ^ x0;  x2 += x3; x3 = rotl(x3, R[r][1]) ^ x2
             r odd:  x0 += x3; x3 = rotl(x3, R[r][0]) ^ x0;  x2 += x1; x1 = rotl(x1, R[r][1]) ^ x2
  after every 4th round (the s-th injection, s = 1, 2, ...):
    x[i] += ks[(s + i) mod (N + 1)] for each lane i, and then x[N-1] += s
All additions are mod 2^W. Vectorised over blocks: the lanes are columns of a (blocks, N) array.

The keyword arguments (rotations, parity, injection_period, initial_injection, injection_count) exist so that
the diagnosis can build the known wrong variants from this one function; their defaults are
the standard ThreeFry.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from .philox import counter_blocks

# Rotation constants, one row per round mod 8 (threefry.h; SC11 table 3). A 2xW round rotates
# one word, a 4xW round two.
ROTATIONS_2X32 = ((13,), (15,), (26,), (6,), (17,), (29,), (16,), (24,))
ROTATIONS_4X32 = ((10, 26), (11, 21), (13, 27), (23, 5), (6, 20), (17, 11), (25, 10), (18, 20))
ROTATIONS_2X64 = ((16,), (42,), (12,), (31,), (16,), (32,), (24,), (21,))
ROTATIONS_4X64 = ((14, 16), (52, 57), (23, 40), (5, 37), (25, 33), (46, 12), (58, 22), (32, 32))
ROTATIONS: dict[tuple[int, int], tuple[tuple[int, ...], ...]] = {
    (2, 32): ROTATIONS_2X32, (4, 32): ROTATIONS_4X32, (2, 64): ROTATIONS_2X64, (4, 64): ROTATIONS_4X64,
}

# The key-schedule parity constant (Skein's C240, threefry.h SKEIN_KS_PARITY64), and the
# 32-bit one Random123 uses for W = 32 (SKEIN_KS_PARITY32: its high 32 bits).
PARITY_64 = 0x1BD11BDAA9FC1A22
PARITY_32 = 0x1BD11BDA
PARITY: dict[int, int] = {32: PARITY_32, 64: PARITY_64}

INJECTION_PERIOD = 4  # rounds between key injections
DEFAULT_ROUNDS = 20   # Random123's default for every width (the paper's "ThreeFry-NxW-20")


def rotl(x: np.ndarray, amount: int, bits: int) -> np.ndarray:
    """x rotated left by ``amount`` mod W bits (amount 0 is the identity)."""
    amount %= bits
    if amount == 0:
        return x
    rotated: np.ndarray = (x << x.dtype.type(amount)) | (x >> x.dtype.type(bits - amount))
    return rotated


def key_schedule(key: Sequence[int], bits: int, parity: int) -> list[int]:
    """ks[0..N]: the key words and their xor with the parity constant (Python ints, W bits)."""
    mask = (1 << bits) - 1
    schedule = [int(word) & mask for word in key]
    extra = parity & mask
    for word in schedule:
        extra ^= word
    return schedule + [extra]


def threefry(counters: npt.ArrayLike, key: Sequence[int], rounds: int = DEFAULT_ROUNDS, *,
             word_bits: int | None = None, rotations: Sequence[Sequence[int]] | None = None,
             parity: int | None = None, injection_period: int = INJECTION_PERIOD,
             initial_injection: bool = True, injection_count: bool = True) -> np.ndarray:
    """ThreeFry NxW-R of each row of ``counters`` (shape (blocks, N), N in {2, 4}) under ``key`` (N words).

    W is read off the dtype (uint32 or uint64) unless given; the result has the counters' shape
    and the W-bit dtype. Standard unless told otherwise:
      rotations         8 rows of N/2 rotation amounts (default ROTATIONS[N, W]), taken mod W;
      parity            the key-schedule constant (default PARITY[W]);
      injection_period  rounds between key injections (default 4; 1 = after every round;
                        0 = never after the first injection);
      initial_injection whether the key is added before the first round (default True);
      injection_count   whether the s-th injection adds s to the last lane (default True).
    """
    words, bits, dtype, lanes = counter_blocks(counters, word_bits)
    if len(key) != lanes:
        raise ValueError(f"ThreeFry{lanes}x{bits} takes {lanes} key words, not {len(key)}")
    table = tuple(tuple(row) for row in (rotations if rotations is not None else ROTATIONS[lanes, bits]))
    if len(table) != 8 or any(len(row) != lanes // 2 for row in table):
        raise ValueError(f"a ThreeFry{lanes}x{bits} rotation table has 8 rows of {lanes // 2}")
    if injection_period < 0:
        raise ValueError(f"injection period {injection_period} is negative")
    schedule = key_schedule(key, bits, PARITY[bits] if parity is None else parity)
    mask = (1 << bits) - 1
    x = [words[:, lane].astype(dtype) for lane in range(lanes)]
    if initial_injection:
        x = [lane + dtype(schedule[i]) for i, lane in enumerate(x)]
    injection = 0
    for round_index in range(rounds):
        row = table[round_index % 8]
        if lanes == 2:
            x[0] = x[0] + x[1]
            x[1] = rotl(x[1], row[0], bits) ^ x[0]
        elif round_index % 2 == 0:
            x[0] = x[0] + x[1]
            x[1] = rotl(x[1], row[0], bits) ^ x[0]
            x[2] = x[2] + x[3]
            x[3] = rotl(x[3], row[1], bits) ^ x[2]
        else:
            x[0] = x[0] + x[3]
            x[3] = rotl(x[3], row[0], bits) ^ x[0]
            x[2] = x[2] + x[1]
            x[1] = rotl(x[1], row[1], bits) ^ x[2]
        if injection_period and (round_index + 1) % injection_period == 0:
            injection += 1
            x = [lane + dtype(schedule[(injection + i) % (lanes + 1)]) for i, lane in enumerate(x)]
            if injection_count:
                x[-1] = x[-1] + dtype(injection & mask)
    return np.stack(x, axis=1).astype(dtype, copy=False)
