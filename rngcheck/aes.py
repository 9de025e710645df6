"""AES-4x32 (Random123's AESNI4x32) and ARS-4x32: the AES round as a counter-based generator.

Source: FIPS-197 ("Advanced Encryption Standard"): the S-box (section 5.1.1: the
multiplicative inverse in GF(2^8) modulo x^8 + x^4 + x^3 + x + 1, then the affine map with
0x63), ShiftRows (5.1.2), MixColumns (5.1.3), the key expansion (5.2) and the cipher
(5.1, figure 5); its appendix C.1 is one of Random123's aesni4x32 known answers. ARS-R: Salmon
et al., SC11, section 3.3, and Random123's ars.h: the AES round with a Weyl key schedule: round
key 0 is the key, round key i+1 = round key i + (0x9E3779B97F4A7C15, 0xBB67AE8584CAA73B) as two
64-bit lanes (low lane: words 0-1), the block xored with round key 0, then R - 1 full AES rounds
and a last round without MixColumns. Random123 runs both on the AES-NI instructions; here they
are plain numpy on bytes (slow, for known answers and diagnosis), vectorised over blocks.

A block of four 32-bit words is the AES state of 16 bytes, word 0's little-endian bytes first
(byte i of the state is row i mod 4, column i div 4, as FIPS-197 fills the state from its input).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

AES_ROUNDS = 10  # AES-128
ARS_ROUNDS = 7   # Random123's ars4x32 default (ARS4x32_DEFAULT_ROUNDS); its known answers use 10
ARS_WEYL = (0x9E3779B97F4A7C15, 0xBB67AE8584CAA73B)  # golden ratio, sqrt(3) - 1: low, high 64-bit lanes
REDUCING = 0x11B  # x^8 + x^4 + x^3 + x + 1


def _multiply(a: int, b: int) -> int:
    """a * b in GF(2^8) (FIPS-197 4.2)."""
    product = 0
    while b:
        if b & 1:
            product ^= a
        a <<= 1
        if a & 0x100:
            a ^= REDUCING
        b >>= 1
    return product


def _sbox() -> np.ndarray:
    """FIPS-197 5.1.1: b = inverse(x) (0 for 0), then b_i ^ b_(i+4) ^ b_(i+5) ^ b_(i+6) ^ b_(i+7) ^ c_i, c = 0x63.

    The inverse from the powers of the generator {03}: x = 3^i has inverse 3^(255 - i)."""
    powers, logarithm = [1] * 255, [0] * 256
    for i in range(1, 255):
        powers[i] = _multiply(powers[i - 1], 3)
    for i, x in enumerate(powers):
        logarithm[x] = i
    table = []
    for x in range(256):
        b = powers[(255 - logarithm[x]) % 255] if x else 0
        rotations = [((b << k) | (b >> (8 - k))) & 0xFF for k in range(1, 5)]
        table.append(b ^ rotations[0] ^ rotations[1] ^ rotations[2] ^ rotations[3] ^ 0x63)
    return np.array(table, dtype=np.uint8)


SBOX = _sbox()
# ShiftRows: row r of the state rotated left by r columns; byte r + 4c comes from r + 4((c + r) mod 4).
SHIFT_ROWS = np.array([r + 4 * ((c + r) % 4) for c in range(4) for r in range(4)], dtype=np.intp)
XTIME = np.array([_multiply(x, 2) for x in range(256)], dtype=np.uint8)


def _mix_columns(state: np.ndarray) -> np.ndarray:
    """FIPS-197 5.1.3: each column (a0..a3) times {03}x^3 + {01}x^2 + {01}x + {02} mod x^4 + 1."""
    a = state.reshape(-1, 4, 4)  # (blocks, column, row)
    a0, a1, a2, a3 = (a[:, :, r] for r in range(4))
    every = a0 ^ a1 ^ a2 ^ a3
    mixed = np.stack([a0 ^ every ^ XTIME[a0 ^ a1], a1 ^ every ^ XTIME[a1 ^ a2],
                      a2 ^ every ^ XTIME[a2 ^ a3], a3 ^ every ^ XTIME[a3 ^ a0]], axis=2)
    return mixed.reshape(-1, 16)


def _round(state: np.ndarray, round_key: np.ndarray, *, last: bool = False) -> np.ndarray:
    """One AES round (AES-NI's aesenc; aesenclast when ``last``): SubBytes, ShiftRows, MixColumns, AddRoundKey."""
    state = SBOX[state][:, SHIFT_ROWS]
    if not last:
        state = _mix_columns(state)
    keyed: np.ndarray = state ^ round_key
    return keyed


def _as_bytes(words: np.ndarray) -> np.ndarray:
    as_bytes: np.ndarray = np.ascontiguousarray(words, dtype="<u4").view(np.uint8).reshape(len(words), 16)
    return as_bytes


def _as_words(state: np.ndarray) -> np.ndarray:
    words: np.ndarray = np.ascontiguousarray(state).view("<u4").reshape(len(state), 4).astype(np.uint32)
    return words


def _key_bytes(key: Sequence[int]) -> np.ndarray:
    key_bytes: np.ndarray = _as_bytes(np.array([[int(k) & 0xFFFFFFFF for k in key]], dtype=np.uint32))[0]
    return key_bytes


def expand_key(key: Sequence[int], rounds: int = AES_ROUNDS) -> np.ndarray:
    """FIPS-197 5.2 for a 128-bit key (four words): the rounds + 1 round keys, as (rounds + 1, 16) bytes."""
    words = [_key_bytes(key)[4 * i:4 * i + 4].copy() for i in range(4)]
    rcon = 1
    for i in range(4, 4 * (rounds + 1)):
        temp = words[i - 1]
        if i % 4 == 0:
            temp = SBOX[np.roll(temp, -1)]  # SubWord(RotWord(temp))
            temp[0] ^= rcon
            rcon = _multiply(rcon, 2)
        words.append(words[i - 4] ^ temp)
    return np.array(words, dtype=np.uint8).reshape(rounds + 1, 16)


def aes4x32(counters: npt.ArrayLike, key: Sequence[int], rounds: int = AES_ROUNDS) -> np.ndarray:
    """AES-128 encryption (FIPS-197 figure 5, with ``rounds`` rounds) of each (blocks, 4) uint32 counter row."""
    keys = expand_key(key, rounds)
    state = _as_bytes(np.asarray(counters)) ^ keys[0]
    for r in range(1, rounds + 1):
        state = _round(state, keys[r], last=r == rounds)
    return _as_words(state)


def ars4x32(counters: npt.ArrayLike, key: Sequence[int], rounds: int = ARS_ROUNDS) -> np.ndarray:
    """ARS-R of each (blocks, 4) uint32 counter row under a four-word key (see the module docstring)."""
    mask = (1 << 64) - 1
    low = (int(key[0]) & 0xFFFFFFFF) | (int(key[1]) & 0xFFFFFFFF) << 32
    high = (int(key[2]) & 0xFFFFFFFF) | (int(key[3]) & 0xFFFFFFFF) << 32

    def round_key() -> np.ndarray:
        return _key_bytes([low & 0xFFFFFFFF, low >> 32, high & 0xFFFFFFFF, high >> 32])

    state = _as_bytes(np.asarray(counters)) ^ round_key()
    for r in range(1, rounds + 1):
        low, high = (low + ARS_WEYL[0]) & mask, (high + ARS_WEYL[1]) & mask
        state = _round(state, round_key(), last=r == rounds)
    return _as_words(state)
