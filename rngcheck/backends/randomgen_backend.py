"""The ``randomgen`` backend: randomgen's Philox(number=4, width=32), a C implementation.

Mapping (see docs/library-findings.md):
  * key = k0 | k1 << 32 (state words 4, 5);
  * randomgen increments its counter *before* computing a block, so the first block it
    emits for counter X is block X + 1: we pass counter = C - 1 (mod 2^128) to get block C
    first, then draw the n words with ``random_raw`` (one uint32 word per call, lanes in
    order), from a fresh bit generator per execution (randomgen buffers unused lanes);
  * the output state is read back from randomgen's own state after the draw: its counter
    is that of the last block it computed, so the next block (the DirectML output
    counter) is randomgen's counter + 1 (undoing the C - 1 above); the key is randomgen's.
    A difference in randomgen's counter arithmetic therefore shows in the output state.

Generators (``generator_blocks``): randomgen's Philox and ThreeFry bit generators, ``number`` 2 or 4
and ``width`` 32 or 64 (philox2x32 ... threefry4x64), at the rounds randomgen fixes (Philox 10,
ThreeFry 20; any other round count is not applicable). One block for a counter C (lanes c_0..c_{N-1},
c_0 least significant) and key K: a fresh bit generator with ``counter`` = C - 1 mod 2^(N*W) (it
increments before its first block, as above) and ``key`` = sum(k_i << (W*i)) (randomgen's integer
key is its words little-endian: ``state['key'][i]`` = k_i), then N calls' worth of ``random_raw``:
one W-bit word per lane, lane 0 first. And ``aesni4x32`` (AES-128, 10 rounds) from randomgen's
``AESCounter(counter=C, key=K)`` (C and K the four 32-bit words little-endian, as above): it emits the
block of its counter *before* incrementing, so its first two ``random_raw`` words (64-bit, low half
first) are lanes 0-1 and 2-3 of block C.
"""

from __future__ import annotations

import platform

import numpy as np

from .. import counter
from ..description import FEATURE_LEVEL_4_0
from ..errors import BackendUnavailable, NotApplicable
from . import Backend, placement

ROUNDS = {"philox": 10, "threefry": 20, "aesni": 10}   # randomgen fixes them (AES-128: 10 rounds)


class RandomgenBackend(Backend):
    """randomgen.Philox(number=4, width=32) on the CPU."""

    name = "randomgen"
    validates = False
    generators = tuple(f"{family}{n}x{w}" for family in ("philox", "threefry") for n in (2, 4) for w in (32, 64)) \
        + ("aesni4x32",)

    def __init__(self):
        try:
            import randomgen
        except ImportError:
            raise BackendUnavailable("randomgen is not installed: pip install rngcheck[randomgen]") from None
        self._randomgen = randomgen

    def describe(self) -> dict[str, str]:
        return {
            "implementation": "randomgen.Philox(number=4, width=32)",
            "version": f"randomgen {self._randomgen.__version__}",
            "randomgen": self._randomgen.__version__,
            "numpy": np.__version__,
            "device": f"cpu ({platform.processor() or platform.machine()})",
        }

    def _bit_generator(self, state):
        before = counter.add_to_counter(state, -1)  # randomgen increments before its first block
        return self._randomgen.Philox(counter=counter.counter_of(before), key=counter.key_value(state),
                                      number=4, width=32)

    def random_generator(self, state, sizes, strides, buffer, *, output_state=True,
                         feature_level=FEATURE_LEVEL_4_0):
        state = placement.read_state(state)
        bit_generator = self._bit_generator(state)
        placement.place(sizes, strides, buffer, lambda first, count: bit_generator.random_raw(count))
        if not output_state:
            return None
        return self._state_after(bit_generator)

    @staticmethod
    def _state_after(bit_generator) -> np.ndarray:
        """The DirectML state after the draw, from randomgen's state (see the module doc)."""
        inner = bit_generator.state["state"]
        last_block = counter.state_from_words(inner["counter"], inner["key"])
        return counter.add_to_counter(last_block, 1)

    def generator_blocks(self, generator, rounds, counters, key):
        """One block per row of ``counters`` from a fresh bit generator each (see the module doc)."""
        lanes, bits = self.generator_request(generator, counters)
        family = generator[:-len(f"{lanes}x{bits}")]
        if int(rounds) != ROUNDS[family]:
            raise NotApplicable(f"randomgen's {family} has {ROUNDS[family]} rounds, not {rounds}")
        modulus = 1 << (lanes * bits)
        key_value = sum(int(k) << (bits * i) for i, k in enumerate(key))
        out = np.empty_like(np.asarray(counters))
        for row, words in enumerate(np.asarray(counters)):
            value = sum(int(w) << (bits * i) for i, w in enumerate(words))
            if family == "aesni":   # no increment before the first block; 64-bit words, low half first
                drawn = self._randomgen.AESCounter(counter=value, key=key_value).random_raw(2)
                out[row] = np.asarray(drawn, dtype="<u8").view("<u4").astype(out.dtype)
                continue
            bit_generator = getattr(self._randomgen, {"philox": "Philox", "threefry": "ThreeFry"}[family])
            drawn = bit_generator(counter=(value - 1) % modulus, key=key_value, number=lanes, width=bits)
            out[row] = drawn.random_raw(lanes).astype(out.dtype)
        return out
