"""The generator state: a 128-bit counter and a 64-bit key in six UINT32 words.

Source: DML_RANDOM_GENERATOR_OPERATOR_DESC, InputStateTensor: "The first four 32-bit
values contain a monotonically increasing 128-bit counter. The last two 32-bit values
contain the 64-bit key". Word 0 is the least significant counter word and word 4 the
low half of the key (k0), as TensorFlow-DirectML and ONNX Runtime fill it.
"""

from __future__ import annotations

import numpy as np

STATE_WORDS = 6
COUNTER_BITS = 128
WORD_MASK = 0xFFFFFFFF


def state_array(words) -> np.ndarray:
    """Six words as the canonical numpy uint32 (6,) array (values must fit in 32 bits)."""
    values = [int(w) for w in np.asarray(words).reshape(-1)]
    if len(values) != STATE_WORDS or any(not 0 <= v <= WORD_MASK for v in values):
        raise ValueError(f"a state is {STATE_WORDS} words of 32 bits, got {values}")
    return np.array(values, dtype=np.uint32)


def as_state_words(value) -> np.ndarray | None:
    """``value`` as 6 uint32 words if it is a state (six integers in 0..2^32-1), else None."""
    try:
        values = np.asarray(value)
        if values.size != STATE_WORDS or values.dtype.kind not in "ui":
            return None
        if not bool(np.all((values >= 0) & (values <= WORD_MASK))):
            return None
    except Exception:
        return None
    return values.reshape(-1).astype(np.uint32)


def counter_of(state) -> int:
    """The 128-bit counter of a state, as an integer (word 0 least significant)."""
    words = np.asarray(state).reshape(-1)
    return sum(int(words[i]) << (32 * i) for i in range(4))


def key_of(state) -> tuple[int, int]:
    """The key (k0, k1) of a state: words 4 and 5."""
    words = np.asarray(state).reshape(-1)
    return int(words[4]), int(words[5])


def make_state(counter: int, key: tuple[int, int] | int) -> np.ndarray:
    """A state from a counter (taken mod 2^128) and a key, given as (k0, k1) or one 64-bit int."""
    if isinstance(key, int):
        key = (key & WORD_MASK, (key >> 32) & WORD_MASK)
    counter %= 1 << COUNTER_BITS
    return state_array([(counter >> (32 * i)) & WORD_MASK for i in range(4)] + list(key))


def blocks_for(element_count: int) -> int:
    """Philox blocks an execution consumes: ceil(n / 4), four output words per block."""
    return -(-element_count // 4)


def advance(state, element_count: int, *, counter_bits: int = COUNTER_BITS) -> np.ndarray:
    """The output state: the counter advanced by ceil(n/4) mod 2^128, the key unchanged.

    Source: Remarks, "the 128-bit counter should be incremented by ceil(outputSize / 4)".
    (``counter_bits`` narrower than 128 models broken carries, for the diagnosis only.)
    """
    return add_to_counter(state, blocks_for(element_count), counter_bits=counter_bits)


def add_to_counter(state, increment: int, *, counter_bits: int = COUNTER_BITS) -> np.ndarray:
    """State with ``increment`` added to the counter, carrying within the low ``counter_bits``.

    With counter_bits=128 this is the spec's full-carry 128-bit add; 32 or 64 model
    implementations whose carry stops at a word boundary.
    """
    counter = counter_of(state)
    field = (1 << counter_bits) - 1
    counter = (counter & ~field) | ((counter + increment) & field)
    return make_state(counter, key_of(state))


def block_counters(state, first_block: int, block_count: int, *, counter_bits: int = COUNTER_BITS,
                   scratch=None):
    """Counter words (c0, c1, c2, c3) of blocks first_block .. first_block+block_count-1.

    Block j is keyed by counter + j mod 2^128 (the carry stops at ``counter_bits``
    only in the diagnosis' broken models). Returns four uint64 arrays of 32-bit words
    (in ``scratch``'s arrays when one is given: rngcheck.philox.Scratch).
    """
    if counter_bits not in (32, 64, COUNTER_BITS):
        raise ValueError(f"counter_bits must be 32, 64 or 128, got {counter_bits}")
    if scratch is None:
        from .philox import Scratch
        scratch = Scratch()
    start = counter_of(add_to_counter(state, first_block, counter_bits=counter_bits))
    offsets = scratch.counting(block_count)
    low64, high64 = np.uint64(start & ((1 << 64) - 1)), np.uint64(start >> 64)
    mask, shift = np.uint64(WORD_MASK), np.uint64(32)
    low = np.add(low64, offsets, out=scratch.array("low", block_count, np.uint64))  # wraps mod 2^64
    high = scratch.array("high", block_count, np.uint64)
    if counter_bits == COUNTER_BITS:
        np.add(high64, np.less(low, low64), out=high, casting="unsafe")  # the carry into the high half
    else:
        high[:] = high64  # the broken models: no carry out of the low half ...
        if counter_bits == 32:  # ... nor out of word 0
            np.bitwise_and(low64 + offsets, mask, out=low)
            low |= low64 & np.uint64(0xFFFFFFFF00000000)
    words = [scratch.array(f"word{i}", block_count, np.uint64) for i in range(4)]
    np.bitwise_and(low, mask, out=words[0])
    np.right_shift(low, shift, out=words[1])
    np.bitwise_and(high, mask, out=words[2])
    np.right_shift(high, shift, out=words[3])
    return tuple(words)
