"""Sizes and strides: where each element of a tensor lives in its buffer.

Source: DirectML, "Using strides to express padding and memory layout": the offset of an
element is the dot product of its coordinates with the strides (in elements); packed
strides are the products of the sizes of the lower-order dimensions; the minimum buffer is
DMLCalcBufferTensorSize: (sum((size_d - 1) * stride_d) + 1) elements, in bytes rounded up to 4.

The layout, rule by rule:
  1. Element i is counted in row-major order over Sizes: its coordinates are i unravelled
     over Sizes (the last dimension fastest).
  2. It lives at physical offset sum(coordinate_d * stride_d). Absent strides are packed
     row-major, stride_d = product of sizes_{d+1..}, and then the offset is i itself.
  3. The buffer must hold the last element: DMLCalcBufferTensorSize.
  4. Writing the tensor writes each element at its offset and nothing else: words where
     no element lives (padding) are left alone; when elements share an offset (aliasing),
     the last one in row-major order is what stays (rngcheck's reference; DirectML leaves
     it undefined).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import SupportsInt

import numpy as np
import numpy.typing as npt

Sizes = Sequence[SupportsInt]               # a tensor's sizes, outermost dimension first
Strides = Sequence[SupportsInt] | None      # its strides in elements; None: packed row-major


def element_count(sizes: Iterable[SupportsInt]) -> int:
    """Logical elements of a tensor: the product of its sizes."""
    return math.prod(int(s) for s in sizes)


def packed_strides(sizes: Sizes) -> tuple[int, ...]:
    """Row-major packed strides: stride_d = product of sizes_{d+1..}."""
    strides: list[int] = []
    step = 1
    for size in reversed(sizes):
        strides.append(step)
        step *= int(size)
    return tuple(reversed(strides))


def effective_strides(sizes: Sizes, strides: Strides) -> tuple[int, ...]:
    """The strides in force: the given ones, or packed row-major when they are absent."""
    return packed_strides(sizes) if strides is None else tuple(int(s) for s in strides)


def is_packed(sizes: Sizes, strides: Strides) -> bool:
    """Rule 2: True when the strides in force are packed row-major (offset = logical index)."""
    return strides is None or effective_strides(sizes, strides) == packed_strides(sizes)


def required_elements(sizes: Sizes, strides: Strides) -> int:
    """Rule 3: minimum buffer length in elements: index of the last element + 1 (DMLCalcBufferTensorSize)."""
    strides = effective_strides(sizes, strides)
    return sum((int(size) - 1) * stride for size, stride in zip(sizes, strides)) + 1


def required_bytes(sizes: Sizes, strides: Strides, element_bytes: int = 4) -> int:
    """Rule 3, DMLCalcBufferTensorSize in bytes: elements * element size, rounded up to a multiple of 4."""
    return (required_elements(sizes, strides) * element_bytes + 3) & ~3


def coordinates(sizes: Sizes, logical_indices: npt.ArrayLike) -> tuple[np.ndarray, ...]:
    """Rule 1: coordinates of elements counted in row-major order over ``sizes``."""
    return np.unravel_index(np.asarray(logical_indices, dtype=np.int64), tuple(int(s) for s in sizes))


def physical_offsets(sizes: Sizes, strides: Strides, first: int = 0, count: int | None = None) -> np.ndarray:
    """Rule 2: buffer offsets (int64) of logical elements first .. first+count-1: coords . strides."""
    total = element_count(sizes)
    if count is None:
        count = total - first
    if is_packed(sizes, strides):
        return np.arange(first, first + count, dtype=np.int64)
    strides = effective_strides(sizes, strides)
    coords = coordinates(sizes, np.arange(first, first + count, dtype=np.int64))
    offsets = np.zeros(count, dtype=np.int64)
    for coord, stride in zip(coords, strides):
        offsets += coord * stride
    return offsets


def write_elements(sizes: Sizes, strides: Strides, buffer: np.ndarray,
                   pieces: Iterable[tuple[int, np.ndarray]]) -> None:
    """Rule 4: write the tensor's elements into ``buffer``.

    ``pieces`` yields (first, words): logical elements first .. first+len(words)-1, in row-major
    order, consecutive and increasing. Each piece is stored before the next one is asked for
    (so ``words`` may be a scratch array the producer reuses). Packed strides store a slice
    (offset = index, rule 2); any other layout scatters through :func:`physical_offsets`.
    Strides must not be negative (callers validate the description first).
    """
    packed = is_packed(sizes, strides)
    if strides is not None and not packed and any(int(stride) < 0 for stride in effective_strides(sizes, strides)):
        raise ValueError(f"strides {tuple(strides)} are negative: an offset would wrap to the buffer's end")
    aliased = not packed and aliases(sizes, strides)
    for first, words in pieces:
        if packed:
            buffer[first:first + len(words)] = words
            continue
        offsets = physical_offsets(sizes, strides, first, len(words))
        if aliased:
            # numpy does not promise which of several writes to one offset stays: keep the last
            # in row-major order (rule 4) explicitly. (Later pieces overwrite earlier ones anyway.)
            last = len(offsets) - 1 - np.unique(offsets[::-1], return_index=True)[1]
            offsets, words = offsets[last], np.asarray(words)[last]
        buffer[offsets] = words


EXACT_ALIAS_LIMIT = 1 << 22


def aliases(sizes: Sizes, strides: Strides) -> bool:
    """True when two logical elements share a physical offset (a stride of 0, or overlaps).

    Exact up to EXACT_ALIAS_LIMIT elements; above it, a sufficient test (dimensions sorted by
    stride, each stride clearing the span below it) that may call an interleaved layout aliased.
    """
    strides = effective_strides(sizes, strides)
    dims = sorted((stride, int(size)) for size, stride in zip(sizes, strides) if int(size) > 1)
    span = 1
    for stride, size in dims:
        if stride < span:
            break
        span = stride * (size - 1) + span
    else:
        return False
    if element_count(sizes) <= EXACT_ALIAS_LIMIT:
        offsets = physical_offsets(sizes, strides)
        return np.unique(offsets).size < offsets.size
    return True


def covered_mask(sizes: Sizes, strides: Strides, length: int) -> np.ndarray:
    """Boolean mask over a buffer of ``length``: True where some element is written."""
    mask = np.zeros(length, dtype=bool)
    total = element_count(sizes)
    chunk = 1 << 22
    for first in range(0, total, chunk):
        mask[physical_offsets(sizes, strides, first, min(chunk, total - first))] = True
    return mask
