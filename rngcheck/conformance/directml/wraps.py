"""The 2^31 boundary (issue 29): wrong answers of kernels that hold an index or a byte offset in 32 bits.

Two classes, each recognised from a few bounded windows of the output (never the whole tensor),
and named with the element the output starts to repeat from and why (ids in diagnosis.FAMILIES):

- ``element-index-int32``: the element index held in a signed 32-bit int. From element 2^31 on
  the index has wrapped, and element i holds element i mod 2^31: the output repeats elements 0,
  1, ... from element 2^31. Judged on the window just below 2^31 (right), the window from 2^31
  and the tensor's last window (each element i holds element i mod 2^31, not its own word).
- ``byte-offset-uint32``: the byte offset 4i held in 32 bits. It wraps at 4 GiB, element 2^30:
  element i (i >= 2^30) is written at element i mod 2^30, so elements 0, 1, ... hold the words
  of elements 2^30 .. n - 1 (the output repeats from element 0 with element 2^30's words;
  an element whose own write came later keeps its own word: either is the class), and the
  elements from 2^30 on are never written. Judged on the first window, the window from 2^30 and
  the last window (packed tensors: a strided one's offsets are not i).

The boundaries are parameters (``at``) so that tests can prove the logic on small stand-ins; the
checks run by the suite use 2^31 and 2^30 only, on tensors that pass them.
"""

from __future__ import annotations

import numpy as np

from ... import counter, layout, reference
from .diagnosis import family

INT32_WRAP = 1 << 31        # a signed 32-bit element index wraps here
BYTE_WRAP = 1 << 30         # a 32-bit byte offset of 4-byte elements wraps here (4 GiB)
WINDOW = 4096               # elements per window judged


def diagnose(state, sizes, strides, extent: np.ndarray, unwritten: int) -> dict | None:
    """The wrap class the output is, or None (bounded: a few windows of WINDOW elements)."""
    state = counter.state_array(state)
    return element_index(state, sizes, strides, extent) or byte_offset(state, sizes, strides, extent, unwritten)


def _read(sizes, strides, extent: np.ndarray, first: int, count: int) -> np.ndarray:
    return extent[layout.physical_offsets(sizes, strides, first, count)]


def _words_mod(state, first: int, count: int, at: int) -> np.ndarray:
    """The words of elements i mod ``at`` for i = first .. first+count-1."""
    pieces, i = [], first
    while i < first + count:
        run = min(first + count - i, at - i % at)
        pieces.append(reference.words(state, i % at, run))
        i += run
    return np.concatenate(pieces)


def element_index(state, sizes, strides, extent: np.ndarray, at: int | None = None) -> dict | None:
    """element-index-int32 (``at`` = 2^31): right below ``at``, element i holding element i mod at from it on."""
    at = INT32_WRAP if at is None else at
    n = layout.element_count(sizes)
    if n <= at:
        return None
    below = max(0, at - WINDOW)
    if not np.array_equal(_read(sizes, strides, extent, below, at - below), reference.words(state, below, at - below)):
        return None
    changed = False
    for first in sorted({at, max(at, n - WINDOW)}):
        count = min(WINDOW, n - first)
        actual = _read(sizes, strides, extent, first, count)
        repeated = _words_mod(state, first, count, at)
        if not np.array_equal(actual, repeated):
            return None
        changed |= not np.array_equal(actual, reference.words(state, first, count))
    if not changed:
        return None
    bits = at.bit_length() - 1
    return family("element-index-int32", f"from element {at} (2^{bits}) on, element i holds element i mod 2^{bits}: "
                  f"the output repeats elements 0, 1, ... from element {at}, because the element index is held "
                  f"in a signed 32-bit int, which wraps at 2^{bits}",
                  repeats_from=at, repeats_element=0, wraps_at=f"2^{bits}")


def byte_offset(state, sizes, strides, extent: np.ndarray, unwritten: int, at: int | None = None) -> dict | None:
    """byte-offset-uint32 (``at`` = 2^30 elements of 4 bytes): writes from element ``at`` on land on
    element i - at; the elements from ``at`` on are never written."""
    at = BYTE_WRAP if at is None else at
    n = layout.element_count(sizes)
    if n <= at or not layout.is_packed(sizes, strides):
        return None
    for first in sorted({at, max(at, n - WINDOW)}):
        count = min(WINDOW, n - first)
        if not np.all(extent[first:first + count] == np.uint32(unwritten)):
            return None
    # Element i lands on element i mod at: each of the first words holds one of its elements' words.
    count = min(WINDOW, n - at)
    actual = extent[:count]
    own = reference.words(state, 0, count)
    anyone, wrapped = actual == own, np.zeros(count, dtype=bool)
    for k in range(1, -(-n // at)):
        first = k * at
        words = reference.words(state, first, min(count, n - first))
        hit = actual[:words.size] == words
        anyone[:words.size] |= hit
        wrapped[:words.size] |= hit & (words != own[:words.size])
    if not np.all(anyone) or not np.any(wrapped):
        return None
    bits = at.bit_length() - 1
    return family("byte-offset-uint32", f"from element {at} (2^{bits}, byte offset 4 GiB) on, the writes wrap to "
                  f"the buffer's start (element i lands on element i mod 2^{bits}): elements "
                  f"0 .. {min(at, n - at) - 1} hold the words of elements {at} .. {n - 1} "
                  f"(the output repeats from element 0 with element {at}'s words) and elements {at} .. {n - 1} "
                  f"were never written, because the byte offset 4i is held in 32 bits, which wraps at 2^32 bytes",
                  repeats_from=0, repeats_element=at, never_written_from=at, wraps_at="2^32 bytes")
