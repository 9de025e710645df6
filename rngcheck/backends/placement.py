"""Shared plumbing of the library backends: reading the state, placing packed words.

A library produces output words in logical (row-major) order; the operator writes
element i at offset sum(coord_d * stride_d) (rngcheck.layout.write_elements, rule 4).
These backends do not validate descriptions (the library decides what it computes), but
they never write where no element maps: a description whose elements cannot be placed
inside the buffer (stride count, negative strides, buffer too short) is refused with
Rejected.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import numpy as np

from .. import counter, layout
from ..description import RULES, check_layout
from ..errors import NotApplicable, Rejected
from ..reference import chunks

# 16 MiB of uint32 per library call: bounded memory, few calls. Read once, when this module
# is imported (tests run a backend in a fresh process with a small one in its environment).
CHUNK_ELEMENTS = int(os.environ.get("RNGCHECK_PLACEMENT_CHUNK", 1 << 22))


def read_state(state) -> np.ndarray:
    """The six state words as a (6,) uint32 array, or Rejected if there are not six."""
    try:
        return counter.state_array(state)
    except ValueError as error:
        raise Rejected(str(error), rule="state-sizes") from None


def seed_and_position(state, library: str, max_position: int) -> tuple[int, int]:
    """A seeded library generator's (seed, position) as the property axis writes them into the state
    (rngcheck.conformance.properties): the seed is state word 4 (word 5 zero), the position (the draw of
    the generator made from that seed) counter word 0 (words 1-3 zero); NotApplicable for any other state,
    or a position past ``max_position`` (each one is drawn again from the seed)."""
    words = read_state(state)
    if int(words[5]) or any(int(w) for w in words[1:4]):
        raise NotApplicable(f"{library}'s seed is one uint32 word (state word 4; word 5 zero) and its position "
                            f"counter word 0 (words 1-3 zero)")
    position = int(words[0])
    if position > max_position:
        raise NotApplicable(f"position {position}: the {library} backend reaches positions 0 to {max_position}")
    return int(words[4]), position


def checked_element_count(sizes, strides, buffer) -> int:
    """Element count of the output, after refusing (Rejected) a description whose elements
    cannot all be placed inside ``buffer``: negative sizes, then description.check_layout
    (stride count, negative strides, buffer size). Nothing else is validated."""
    sizes = tuple(int(s) for s in sizes)
    if any(s < 0 for s in sizes):
        raise Rejected(f"size-zero: OutputTensor sizes {list(sizes)} (negative) ({RULES['size-zero']})",
                       rule="size-zero")
    check_layout(sizes, strides, np.asarray(buffer).size)
    return layout.element_count(sizes)


def place(sizes, strides, buffer, produce: Callable[[int, int], np.ndarray],
          chunk: int | None = None) -> int:
    """Write the output: ``produce(first, count)`` gives elements first.. in logical order.

    ``produce`` is called with consecutive chunks in increasing order (so a library
    generator may simply keep drawing); ``chunk`` (a multiple of 4) defaults to
    CHUNK_ELEMENTS, which is read from RNGCHECK_PLACEMENT_CHUNK once, at import (tests shrink
    it to exercise chunk boundaries). Returns the element count.
    """
    sizes = tuple(int(s) for s in sizes)
    n = checked_element_count(sizes, strides, buffer)
    chunk = CHUNK_ELEMENTS if chunk is None else chunk
    assert chunk > 0 and chunk % 4 == 0

    def pieces():
        for first, count in chunks(n, chunk):
            words = np.asarray(produce(first, count)).reshape(-1)
            if words.size != count:
                raise RuntimeError(f"library produced {words.size} words, {count} asked for")
            yield first, words.astype(np.uint32, copy=False)

    layout.write_elements(sizes, strides, buffer, pieces())
    return n
