"""Hypothesis strategies for operator descriptions: random states, shapes and layouts.

States lean on the edges where implementations break (counter words near 2^32 - 1, zero
and all-ones keys); layouts are a random permutation of the dimensions with random padding.
"""

from __future__ import annotations

import math

from hypothesis import strategies as st

from ...description import FEATURE_LEVEL_3_0, FEATURE_LEVEL_4_0
from . import cases as C

EDGE_WORDS = [0, 1, 2, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFD, 0xFFFFFFFE, 0xFFFFFFFF]
words = st.one_of(st.sampled_from(EDGE_WORDS), st.integers(0, 0xFFFFFFFF))


@st.composite
def descriptions(draw, max_elements: int = 600, max_rank: int = 8) -> C.Case:
    rank = draw(st.integers(1, max_rank))
    sizes: list[int] = []
    for _ in range(rank):
        room = max_elements // max(1, math.prod(sizes))
        sizes.append(draw(st.integers(1, max(1, min(room, 40)))))
    state = tuple(draw(words) for _ in range(6))
    strides: tuple[int, ...] | None = None
    if draw(st.booleans()):
        order = draw(st.permutations(range(rank)))  # order[0] is the innermost dimension
        chosen = [0] * rank
        step = 1
        for dim in order:
            chosen[dim] = step * draw(st.sampled_from([1, 1, 1, 2, 3]))
            step = chosen[dim] * (sizes[dim] - 1) + step + draw(st.integers(0, 3))
        strides = tuple(chosen)
    level = FEATURE_LEVEL_3_0 if rank == 4 and draw(st.booleans()) else FEATURE_LEVEL_4_0
    return C.Case(id="property/drawn", category="property", description="drawn by hypothesis",
                  rule=C.RULE_MAPPING, source=C.DML_PAGE, state=state, sizes=tuple(sizes),
                  strides=strides, feature_level=level)
