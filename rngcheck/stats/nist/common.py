"""What the NIST SP 800-22 modules share: the sample size of the streaming forms, the
``DoesNotApply`` reason a reference function returns in a p-value's place, and how a
sample of words is read as bits."""

from __future__ import annotations

import numpy as np

from ..bits import to_bits

SAMPLE_WORDS = 1 << 15  # 2^20 bits


class DoesNotApply(str):
    """A test that does not apply to this sequence (too short, too few cycles): the reason.

    Not a failure and not a p-value; tables print it in the p-value's place."""


def sample_bits(samples: np.ndarray):
    return to_bits(samples)  # (k, 2^20) of 0/1


def window_values(bits, m: int) -> np.ndarray:
    """The value of the m bits starting at each position 0 .. n-m, first bit most significant
    (m <= 25): the windows starting at bits 8k .. 8k+7 are cut from the 32 bits from byte k."""
    bits = np.asarray(bits, dtype=np.uint8)
    count = bits.size - m + 1
    if count <= 0:
        return np.zeros(0, dtype=np.uint32)
    k = (count + 7) // 8
    octets = np.zeros(k + 3, dtype=np.uint32)
    packed = np.packbits(bits)
    octets[:min(packed.size, k + 3)] = packed[:k + 3]
    words = (octets[:k] << 24) | (octets[1:k + 1] << 16) | (octets[2:k + 2] << 8) | octets[3:k + 3]
    mask = np.uint32((1 << m) - 1)
    values = np.empty((k, 8), dtype=np.uint32)
    for o in range(8):
        values[:, o] = (words >> np.uint32(32 - m - o)) & mask
    return values.reshape(-1)[:count]
