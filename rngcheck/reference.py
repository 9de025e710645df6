"""The reference model of DML_RANDOM_GENERATOR (Philox 4x32-10), in numpy.

The operator, rule by rule (DML_RANDOM_GENERATOR_OPERATOR_DESC; rngcheck README):
  1. The description must be valid (rngcheck.description.validate).
  2. Output element i, counted in row-major order over Sizes, is lane (i mod 4) of
     Philox4x32-10(counter + floor(i / 4) mod 2^128, key).
  3. It is written at physical offset sum(coordinate_d * stride_d) (rngcheck.layout, rules 1-4).
  4. The output state is the input state with the counter advanced by ceil(n / 4)
     mod 2^128 (n = element count); the key is unchanged.
Nothing else: padding between elements is left alone, the input state is read only.
``words`` also takes another generator of rngcheck.generators (the generator axis): the
operator's rule 2 with that generator's block in place of Philox4x32-10's.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import SupportsInt

import numpy as np
import numpy.typing as npt

from . import counter, layout, philox
from .description import FEATURE_LEVEL_4_0, Description, validate
from .generators import PHILOX4X32, Generator

LANES = 4
CHUNK_ELEMENTS = 1 << 16  # bounded memory (and cache-sized): ~3 MiB of temporaries whatever the tensor size


def words(state: npt.ArrayLike, first: int, count: int, *, rounds: int | None = None,
          scratch: philox.Scratch | None = None, generator: Generator = PHILOX4X32) -> np.ndarray:
    """Output elements first .. first+count-1 in logical (row-major) order, as uint32.

    Rule 2: element i is lane i mod 4 of the block keyed by counter + floor(i/4).
    With another ``generator`` (rngcheck.generators) the state is its counter words then its key
    words, and element i is 32-bit word i mod B of block floor(i / B), B = its words per block.
    ``rounds`` defaults to the generator's (10). (With ``scratch`` the result lives in its
    arrays until the next call.)
    """
    if count <= 0:
        return np.empty(0, dtype=np.uint32)
    per_block = generator.words_per_block
    first_block = first // per_block
    last_block = (first + count - 1) // per_block
    interleaved = generator.stream(state, first_block, last_block - first_block + 1, rounds,
                                   scratch=scratch).reshape(-1)
    skip = first - first_block * per_block
    return interleaved[skip:skip + count]


def chunks(element_count: int, chunk: int | None = None) -> Iterator[tuple[int, int]]:
    """(first, count) pairs covering 0 .. element_count-1 in bounded pieces."""
    chunk = chunk or CHUNK_ELEMENTS
    for first in range(0, element_count, chunk):
        yield first, min(chunk, element_count - first)


def random_generator(state: npt.ArrayLike, sizes: layout.Sizes, strides: layout.Strides, buffer: np.ndarray, *,
                     output_state: bool | Iterable[SupportsInt] | None = True,
                     feature_level: tuple[int, ...] = FEATURE_LEVEL_4_0) -> np.ndarray | None:
    """The operator, per the backend contract (see rngcheck.backends.Backend)."""
    validate(Description.of_call(state, sizes, strides, buffer, output_state, feature_level))
    state = counter.state_array(state)
    n = layout.element_count(sizes)
    scratch = philox.Scratch()
    layout.write_elements(sizes, strides, buffer,  # rule 3
                          ((first, words(state, first, count, scratch=scratch)) for first, count in chunks(n)))
    return counter.advance(state, n) if output_state else None  # rule 4
