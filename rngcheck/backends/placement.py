"""Shared plumbing of the library backends: reading the state, placing packed words.

A library produces output words in logical (row-major) order; the operator writes
element i at offset sum(coord_d * stride_d) (rngcheck.layout). These backends do not
validate descriptions (the library decides what it computes), but they never write
where no element maps: a description whose elements cannot be placed inside the buffer
(stride count, negative strides, buffer too short) is refused with Rejected.
"""

from __future__ import annotations

import os
from typing import Callable, Iterator

import numpy as np

from .. import counter, layout
from ..errors import Rejected

# 16 MiB of uint32 per library call: bounded memory, few calls (tests set a small one in the environment).
CHUNK_ELEMENTS = int(os.environ.get("RNGCHECK_PLACEMENT_CHUNK", 1 << 22))


def read_state(state) -> np.ndarray:
    """The six state words as a (6,) uint32 array, or Rejected if there are not six."""
    try:
        return counter.state_array(state)
    except ValueError as error:
        raise Rejected(str(error), rule="state-sizes") from None


def element_count(sizes, strides, buffer) -> int:
    """Elements of the output, after checking that every one of them lands in ``buffer``."""
    sizes = tuple(int(s) for s in sizes)
    if any(s < 0 for s in sizes):
        raise Rejected(f"size-zero: OutputTensor sizes {list(sizes)} (negative)", rule="size-zero")
    n = layout.element_count(sizes)
    if strides is not None:
        if len(strides) != len(sizes):
            raise Rejected(f"stride-count: {len(strides)} strides for {len(sizes)} dimensions",
                           rule="stride-count")
        if any(int(s) < 0 for s in strides):
            raise Rejected(f"stride-negative: strides {list(strides)}", rule="stride-negative")
    if n and layout.required_elements(sizes, strides) > np.asarray(buffer).size:
        raise Rejected(f"buffer-size: buffer of {np.asarray(buffer).size} elements, "
                       f"{layout.required_elements(sizes, strides)} needed", rule="buffer-size")
    return n


def chunks(element_count: int, chunk: int | None = None) -> Iterator[tuple[int, int]]:
    """(first, count) pairs covering 0 .. element_count-1, in order; chunk is a multiple of 4."""
    chunk = CHUNK_ELEMENTS if chunk is None else chunk
    assert chunk > 0 and chunk % 4 == 0
    for first in range(0, element_count, chunk):
        yield first, min(chunk, element_count - first)


def place(sizes, strides, buffer, produce: Callable[[int, int], np.ndarray],
          chunk: int | None = None) -> int:
    """Write the output: ``produce(first, count)`` gives elements first.. in logical order.

    ``produce`` is called with consecutive chunks in increasing order (so a library
    generator may simply keep drawing); ``chunk`` defaults to CHUNK_ELEMENTS, read at call
    time (tests shrink it to exercise chunk boundaries). Returns the element count.
    """
    sizes = tuple(int(s) for s in sizes)
    n = element_count(sizes, strides, buffer)
    packed = layout.effective_strides(sizes, strides) == layout.packed_strides(sizes)
    for first, count in chunks(n, chunk):
        words = np.asarray(produce(first, count)).reshape(-1)
        if words.size != count:
            raise RuntimeError(f"library produced {words.size} words, {count} asked for")
        words = words.astype(np.uint32, copy=False)
        if packed:
            buffer[first:first + count] = words
        else:
            buffer[layout.physical_offsets(sizes, strides, first, count)] = words
    return n
