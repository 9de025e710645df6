"""A backend written as a Python class: DML_RANDOM_GENERATOR (Philox 4x32-10) in plain numpy.

    rngcheck run --backend examples/python-backend/philox_numpy.py:PhiloxNumpy
    rngcheck run --backend examples/python-backend/philox_numpy.py:PhiloxNumpy --case 'uniform/tensorflow/*'

It imports nothing of rngcheck's reference model: the block function is Random123's philox4x32
round (Salmon et al., SC11) written again here, the layout and the counter rule are DirectML's
(DML_RANDOM_GENERATOR_OPERATOR_DESC). It does not validate descriptions (``validates = False``),
so the suite reports its answers to invalid ones as information, not failures. It also draws one
kind of number, TensorFlow's float32 uniform in [0, 1) (the low 23 bits of each word as a mantissa
in [1, 2), minus 1: tensorflow/core/lib/random/random_distributions_utils.h, Uint32ToFloat); any
other request raises NotApplicable, which the suite reports as n/a, never as a pass.
"""

from __future__ import annotations

import numpy as np

from rngcheck.backends import Backend
from rngcheck.errors import NotApplicable

MASK = np.uint64(0xFFFFFFFF)
M0, M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)     # Random123's PHILOX_M4x32_0, _1
W0, W1 = 0x9E3779B9, 0xBB67AE85                          # the Weyl constants that bump the key


def philox4x32_10(counters: list[np.ndarray], key: tuple[int, int]) -> list[np.ndarray]:
    """Ten rounds on the four counter words (uint64 arrays holding 32-bit values)."""
    c0, c1, c2, c3 = counters
    k0, k1 = key
    for round_ in range(10):
        if round_:
            k0, k1 = (k0 + W0) & 0xFFFFFFFF, (k1 + W1) & 0xFFFFFFFF
        p0, p1 = M0 * c0, M1 * c2
        c0, c1, c2, c3 = (p1 >> np.uint64(32)) ^ c1 ^ np.uint64(k0), p1 & MASK, \
            (p0 >> np.uint64(32)) ^ c3 ^ np.uint64(k1), p0 & MASK
    return [c0, c1, c2, c3]


def add_to_counter(words: list[int], blocks: np.ndarray) -> list[np.ndarray]:
    """The 128-bit counter (word 0 least significant) plus each of ``blocks``, mod 2^128."""
    carry, out = blocks.astype(np.uint64), []
    for word in words:
        total = np.uint64(word) + carry
        out.append(total & MASK)
        carry = total >> np.uint64(32)
    return out


class PhiloxNumpy(Backend):
    name = "philox-numpy"
    validates = False
    fork_safe = True
    conventions = ("tensorflow",)

    def describe(self) -> dict[str, str]:
        return {"version": f"philox_numpy example (numpy {np.__version__})", "device": "cpu"}

    def words(self, state: np.ndarray, count: int) -> np.ndarray:
        """The first ``count`` words of the stream: element i is lane i mod 4 of block counter + i // 4."""
        state = np.asarray(state, dtype=np.uint32).reshape(-1)
        blocks = np.arange(-(-count // 4), dtype=np.uint64)
        lanes = philox4x32_10(add_to_counter([int(w) for w in state[:4]], blocks), (int(state[4]), int(state[5])))
        return np.stack(lanes, axis=1).reshape(-1)[:count].astype(np.uint32)

    def random_generator(self, state, sizes, strides, buffer, *, output_state=True, feature_level=(4, 0)):
        n = int(np.prod(sizes))
        values = self.words(state, n)
        if strides is None:
            buffer[:n] = values
        else:
            offsets, index, inner = np.zeros(n, dtype=np.int64), np.arange(n, dtype=np.int64), 1
            for size, stride in zip(reversed(sizes), reversed(strides)):
                offsets += (index // inner) % size * stride
                inner *= size
            buffer[offsets] = values
        if output_state is False:
            return None
        words = np.asarray(state, dtype=np.uint32).reshape(-1)
        counter = add_to_counter([int(w) for w in words[:4]], np.array([-(-n // 4)], dtype=np.uint64))
        return np.array([int(c[0]) for c in counter] + [int(words[4]), int(words[5])], dtype=np.uint32)

    def random_numbers(self, request: dict, state):
        if (request["convention"], request["kind"], request["dtype"]) != ("tensorflow", "uniform", "float32") \
                or request.get("low") is not None or request.get("seed") is not None:
            raise NotApplicable("this example draws only TensorFlow's float32 uniform in [0, 1)")
        bits = (self.words(state, request["count"]) & np.uint32(0x7FFFFF)) | np.uint32(127 << 23)
        return bits.view(np.float32) - np.float32(1.0)
