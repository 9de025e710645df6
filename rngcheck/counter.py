"""The generator state: a 128-bit counter and a 64-bit key in six UINT32 words.

Source: DML_RANDOM_GENERATOR_OPERATOR_DESC, InputStateTensor: "The first four 32-bit
values contain a monotonically increasing 128-bit counter. The last two 32-bit values
contain the 64-bit key". Word 0 is the least significant counter word and word 4 the
low half of the key (k0), as TensorFlow-DirectML and ONNX Runtime fill it.

The state, word by word (every conversion an adapter or a report needs is written here
once; a library's own mapping onto these words stays in its adapter):
  1. Words 0-3 are the counter, word 0 least significant:
     counter = w0 | w1 << 32 | w2 << 64 | w3 << 96.
  2. Words 4-5 are the key (k0, k1); as one 64-bit integer, key = k0 | k1 << 32.
  3. The counter as two 64-bit halves (the uint64 pairs of TensorFlow, XLA and OpenCL
     kernels): low = words 0-1 = counter mod 2^64, high = words 2-3 = counter >> 64.
  4. Counter arithmetic is modulo 2^128 with the carry through all four words; an
     execution of n elements consumes ceil(n / 4) blocks and advances the counter by as
     many (Remarks). The key never changes.
  5. Written out, a counter is hexadecimal, most significant word first (w3 ... w0).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import SupportsInt

import numpy as np
import numpy.typing as npt

from .philox import Scratch

STATE_WORDS = 6
COUNTER_WORDS = 4   # rule 1: words 0-3; the key is the other two (rule 2)
COUNTER_BITS = 128
WORD_MASK = 0xFFFFFFFF
HALF_MASK = (1 << 64) - 1


def state_array(words: npt.ArrayLike) -> np.ndarray:
    """Six words as the canonical numpy uint32 (6,) array (values must fit in 32 bits)."""
    values = [int(w) for w in np.asarray(words).reshape(-1)]
    if len(values) != STATE_WORDS or any(not 0 <= v <= WORD_MASK for v in values):
        raise ValueError(f"a state is {STATE_WORDS} words of 32 bits, got {values}")
    return np.array(values, dtype=np.uint32)


def as_state_words(value: object) -> np.ndarray | None:
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


def value_of_words(words: Iterable[SupportsInt]) -> int:
    """Rules 1-2: the integer that 32-bit words make, the first one least significant."""
    return sum(int(w) << (32 * i) for i, w in enumerate(words))


def word_of(value: int | np.integer) -> int:
    """A 32-bit state word from any integer with its bits: value mod 2^32 (an int32 -1 is 0xffffffff)."""
    return int(value) & WORD_MASK


def signed_word(word: int | np.integer) -> int:
    """The int32 with a word's bits (for libraries that take or keep state words as int32)."""
    word = word_of(word)
    return word - (1 << 32) if word >= 1 << 31 else word


def words_of_value(value: int, count: int) -> list[int]:
    """Rules 1-2 the other way: ``count`` 32-bit words of ``value`` (mod 2^(32 count)),
    least significant first."""
    return [(int(value) >> (32 * i)) & WORD_MASK for i in range(count)]


def counter_of(state: npt.ArrayLike) -> int:
    """Rule 1: the 128-bit counter of a state (or of its four counter words), as an integer."""
    words = np.asarray(state).reshape(-1)
    if words.size < COUNTER_WORDS:
        raise ValueError(f"a counter is {COUNTER_WORDS} words, got {words.tolist()}")
    return value_of_words(words[:COUNTER_WORDS].tolist())


def key_of(state: npt.ArrayLike) -> tuple[int, int]:
    """Rule 2: the key (k0, k1) of a state: words 4 and 5."""
    words = np.asarray(state).reshape(-1)
    return int(words[4]), int(words[5])


def key_value(state: npt.ArrayLike) -> int:
    """Rule 2: the key of a state as one 64-bit integer, k0 | k1 << 32."""
    return value_of_words(key_of(state))


def counter_words(state: npt.ArrayLike) -> np.ndarray:
    """Rule 1: the counter's words 0-3 of a state, as uint32, word 0 first."""
    return np.array(state_array(state)[:COUNTER_WORDS])  # a copy


def key_words(state: npt.ArrayLike) -> np.ndarray:
    """Rule 2: the key's words 4-5 (k0, k1) of a state, as uint32."""
    return np.array(state_array(state)[COUNTER_WORDS:])  # a copy


def counter_halves(state: npt.ArrayLike) -> tuple[int, int]:
    """Rule 3: the counter of a state as 64-bit halves (low = words 0-1, high = words 2-3)."""
    value = counter_of(state)
    return value & HALF_MASK, value >> 64


def counter_from_halves(low: int, high: int) -> int:
    """Rule 3 the other way: the 128-bit counter whose 64-bit halves are ``low`` and ``high``."""
    return (int(low) & HALF_MASK) | ((int(high) & HALF_MASK) << 64)


def make_state(counter: int, key: tuple[int, int] | int | np.integer) -> np.ndarray:
    """A state from a counter (taken mod 2^128) and a key, given as (k0, k1) or one 64-bit int."""
    if isinstance(key, (int, np.integer)):
        key_words = words_of_value(int(key), STATE_WORDS - COUNTER_WORDS)
    else:
        key_words = list(key)
    return state_array(words_of_value(int(counter) % (1 << COUNTER_BITS), COUNTER_WORDS) + key_words)


def state_from_words(counter_words: npt.ArrayLike, key_words: npt.ArrayLike) -> np.ndarray:
    """A state from its counter words (4, word 0 first) and key words (k0, k1): rules 1-2."""
    counter_words = [int(w) for w in np.asarray(counter_words).reshape(-1)]
    key_words = [int(w) for w in np.asarray(key_words).reshape(-1)]
    if len(counter_words) != COUNTER_WORDS or len(key_words) != STATE_WORDS - COUNTER_WORDS:
        raise ValueError(f"a state is {COUNTER_WORDS} counter words and {STATE_WORDS - COUNTER_WORDS} key words, "
                         f"got {counter_words} and {key_words}")
    return state_array(counter_words + key_words)


def counter_text(counter: int, separator: str = "") -> str:
    """Rule 5: a counter (mod 2^128) as 0x and 32 hex digits, word 3 first; ``separator``
    between the words ("'" gives 0xw3'w2'w1'w0)."""
    words = words_of_value(int(counter) % (1 << COUNTER_BITS), COUNTER_WORDS)
    return "0x" + separator.join(f"{w:08x}" for w in reversed(words))


def blocks_for(element_count: int) -> int:
    """Rule 4: Philox blocks an execution consumes: ceil(n / 4), four output words per block."""
    return -(-element_count // 4)


def advance(state: npt.ArrayLike, element_count: int, *, counter_bits: int = COUNTER_BITS) -> np.ndarray:
    """Rule 4: the output state, the counter advanced by ceil(n/4) mod 2^128, the key unchanged.

    Source: Remarks, "the 128-bit counter should be incremented by ceil(outputSize / 4)".
    (``counter_bits`` narrower than 128 models broken carries, for the diagnosis only.)
    """
    return add_to_counter(state, blocks_for(element_count), counter_bits=counter_bits)


def add_to_counter(state: npt.ArrayLike, increment: int, *, counter_bits: int = COUNTER_BITS) -> np.ndarray:
    """Rule 4: the state with ``increment`` (any integer, negative too) added to the counter,
    carrying within the low ``counter_bits``.

    With counter_bits=128 this is the spec's full-carry 128-bit add; 32 or 64 model
    implementations whose carry stops at a word boundary.
    """
    counter = counter_of(state)
    field = (1 << counter_bits) - 1
    counter = (counter & ~field) | ((counter + increment) & field)
    return make_state(counter, key_of(state))


def block_counters(state: npt.ArrayLike, first_block: int, block_count: int, *, counter_bits: int = COUNTER_BITS,
                   scratch: Scratch | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Counter words (c0, c1, c2, c3) of blocks first_block .. first_block+block_count-1.

    Block j is keyed by counter + j mod 2^128 (the carry stops at ``counter_bits``
    only in the diagnosis' broken models). Returns four uint64 arrays of 32-bit words
    (in ``scratch``'s arrays when one is given: rngcheck.philox.Scratch).
    """
    if counter_bits not in (32, 64, COUNTER_BITS):
        raise ValueError(f"counter_bits must be 32, 64 or 128, got {counter_bits}")
    if scratch is None:
        scratch = Scratch()
    start = add_to_counter(state, first_block, counter_bits=counter_bits)
    offsets = scratch.counting(block_count)
    low64, high64 = (np.uint64(half) for half in counter_halves(start))
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
    return words[0], words[1], words[2], words[3]


def counters_at(state: npt.ArrayLike, offsets: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Counter words (c0, c1, c2, c3) of the blocks at ``offsets`` (uint64 block numbers, any order):
    block j is keyed by counter + j mod 2^128 (rule 4), as block_counters for scattered blocks."""
    offsets = np.asarray(offsets, dtype=np.uint64)
    low64, high64 = (np.uint64(half) for half in counter_halves(state))
    low = low64 + offsets                                         # wraps mod 2^64
    high = high64 + (low < low64).astype(np.uint64)               # the carry into the high half
    mask, shift = np.uint64(WORD_MASK), np.uint64(32)
    return low & mask, low >> shift, high & mask, high >> shift
