"""What the library-backend tests share: states that cross every counter carry, layouts of
every kind, one execution on a prefilled buffer, and the buffer the operator would leave."""

from __future__ import annotations

import numpy as np

from rngcheck import counter, layout

SENTINEL = 0xA5A5A5A5
KEY = (0xDEADBEEF, 0xCAFEBABE)
COUNTERS = [
    0x0123_4567_89AB_CDEF_FEDC_BA98_7654_3210,
    0,
    (1 << 32) - 2,   # carry word 0 -> 1 within n <= 9
    (1 << 64) - 2,   # carry word 1 -> 2
    (1 << 96) - 2,   # carry word 2 -> 3
    (1 << 128) - 2,  # 2^128 wrap
    (1 << 128) - 1,  # wrap on the first block
]
STATES = [counter.make_state(c, KEY) for c in COUNTERS] + [
    counter.make_state((1 << 64) - 1, (0, 0)),
    counter.make_state((1 << 128) - 2, (0xFFFFFFFF, 0xFFFFFFFF)),
]
BROKEN = ("failed", "error", "crashed", "timeout")


def layouts(n):
    return [
        ((n,), None),
        ((1, n), (0, 2)),                    # a gap after every element
        ((2, n), (1, 2)),                    # column-major
        ((n, 1, 1), (5, 7, 1)),              # rank 3 with padding
        ((1,) * 7 + (n,), (9,) * 7 + (3,)),  # rank 8
    ]


def run_one(backend, state, sizes, strides, extra=5):
    """(the buffer after one execution on a SENTINEL-filled buffer, the returned state)."""
    buffer = np.full(layout.required_elements(sizes, strides) + extra, SENTINEL, dtype=np.uint32)
    new_state = backend.random_generator(state.copy(), sizes, strides, buffer)
    return buffer, new_state


def placed(words, sizes, strides, length):
    """A SENTINEL-filled buffer of ``length`` holding ``words`` at the layout's offsets."""
    buffer = np.full(length, SENTINEL, dtype=np.uint32)
    buffer[layout.physical_offsets(sizes, strides)] = words
    return buffer
