"""The description rules of DML_RANDOM_GENERATOR: which tensor descriptions are valid.

Sources: DML_RANDOM_GENERATOR_OPERATOR_DESC, "Tensor support" and "Tensor constraints"
(feature level 3.0: every tensor 4-D; 4.0 and later: 1 to 8 dimensions, state sizes
{[1],...,6}); DML_BUFFER_TENSOR_DESC (UINT sizes and strides, one stride per dimension,
fewer than 2^32 elements, TotalTensorSizeInBytes >= DMLCalcBufferTensorSize).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import NoReturn, SupportsInt

import numpy as np
import numpy.typing as npt

from . import layout
from .counter import STATE_WORDS
from .errors import Rejected

FEATURE_LEVEL_3_0 = (3, 0)
FEATURE_LEVEL_4_0 = (4, 0)
MAX_ELEMENTS = 1 << 32  # element counts are UINT32 in DirectML

# Rule ids: stable names that cases, errors and reports use.
RULES = {
    "feature-level": "the operator exists from DML_FEATURE_LEVEL_3_0 on",
    "data-type": "every tensor is UINT32",
    "rank": "feature level 3.0: every tensor is 4-D; 4.0 and later: 1 to 8 dimensions",
    "state-sizes": "state tensors have sizes {1,1,1,6} (3.0) or {[1],...,6} (4.0 and later)",
    "state-match": "InputStateTensor and OutputStateTensor have the same DimensionCount and Sizes",
    "size-zero": "no dimension has size 0",
    "element-count": "a tensor has fewer than 2^32 elements",
    "stride-count": "when strides are given there is one per dimension",
    "stride-negative": "strides are UINT32: none is negative",
    "buffer-size": "the buffer holds at least sum((size_d - 1) * stride_d) + 1 elements",
}


@dataclass(frozen=True)
class Description:
    """One execution's tensor descriptions, as the backend contract passes them."""

    state_sizes: tuple[int, ...]
    output_sizes: tuple[int, ...]
    output_strides: tuple[int, ...] | None
    output_state_sizes: tuple[int, ...] | None  # None: no OutputStateTensor
    buffer_elements: int
    feature_level: tuple[int, ...] = FEATURE_LEVEL_4_0  # (major, minor), compared as a tuple
    state_dtype: str = "uint32"
    output_dtype: str = "uint32"

    @classmethod
    def of_call(cls, state: npt.ArrayLike, sizes: Iterable[SupportsInt], strides: Iterable[SupportsInt] | None,
                buffer: npt.ArrayLike, output_state: bool | Iterable[SupportsInt] | None,
                feature_level: Iterable[int]) -> Description:
        """The description implied by a backend-contract call."""
        state_array = np.asarray(state)
        output_state_sizes: tuple[int, ...] | None
        if output_state is True:
            output_state_sizes = tuple(state_array.shape)
        elif output_state:
            output_state_sizes = tuple(int(s) for s in output_state)
        else:
            output_state_sizes = None
        return cls(
            state_sizes=tuple(int(s) for s in state_array.shape),
            output_sizes=tuple(int(s) for s in sizes),
            output_strides=None if strides is None else tuple(int(s) for s in strides),
            output_state_sizes=output_state_sizes,
            buffer_elements=int(np.asarray(buffer).size),
            feature_level=tuple(feature_level),
            state_dtype=str(state_array.dtype),
            output_dtype=str(np.asarray(buffer).dtype),
        )


def _reject(rule: str, detail: str) -> NoReturn:
    raise Rejected(f"{rule}: {detail} ({RULES[rule]})", rule=rule)


def _check_state_sizes(sizes: tuple[int, ...], feature_level: tuple[int, ...], which: str) -> None:
    if feature_level < FEATURE_LEVEL_4_0:
        if tuple(sizes) != (1, 1, 1, STATE_WORDS):
            _reject("state-sizes", f"{which} sizes {list(sizes)} at feature level 3.0")
    elif not sizes or sizes[-1] != STATE_WORDS or any(s != 1 for s in sizes[:-1]):
        _reject("state-sizes", f"{which} sizes {list(sizes)}")


def validate(d: Description) -> None:
    """Raise :class:`Rejected` naming the first rule ``d`` breaks; return None when valid."""
    if d.feature_level < FEATURE_LEVEL_3_0:
        _reject("feature-level", f"feature level {d.feature_level[0]}.{d.feature_level[1]}")
    if d.state_dtype != "uint32" or d.output_dtype != "uint32":
        _reject("data-type", f"state {d.state_dtype}, output {d.output_dtype}")
    ranks = {"InputStateTensor": len(d.state_sizes), "OutputTensor": len(d.output_sizes)}
    if d.output_state_sizes is not None:
        ranks["OutputStateTensor"] = len(d.output_state_sizes)
    for which, rank in ranks.items():
        allowed = (4,) if d.feature_level < FEATURE_LEVEL_4_0 else range(1, 9)
        if rank not in allowed:
            _reject("rank", f"{which} has {rank} dimensions at feature level "
                            f"{d.feature_level[0]}.{d.feature_level[1]}")
    _check_state_sizes(d.state_sizes, d.feature_level, "InputStateTensor")
    if d.output_state_sizes is not None:
        _check_state_sizes(d.output_state_sizes, d.feature_level, "OutputStateTensor")
        if d.output_state_sizes != d.state_sizes:
            _reject("state-match", f"{list(d.state_sizes)} vs {list(d.output_state_sizes)}")
    if any(s == 0 for s in d.output_sizes):
        _reject("size-zero", f"OutputTensor sizes {list(d.output_sizes)}")
    if any(s < 0 for s in d.output_sizes):
        _reject("size-zero", f"OutputTensor sizes {list(d.output_sizes)} (negative)")
    if layout.element_count(d.output_sizes) >= MAX_ELEMENTS:
        _reject("element-count", f"{layout.element_count(d.output_sizes)} elements")
    check_layout(d.output_sizes, d.output_strides, d.buffer_elements)


def check_layout(sizes: Iterable[SupportsInt], strides: Iterable[SupportsInt] | None, buffer_elements: int) -> None:
    """The layout rules (stride-count, stride-negative, buffer-size), in that order: raise
    :class:`Rejected` unless every element of ``sizes`` placed by ``strides`` lands in a
    buffer of ``buffer_elements`` elements. Sizes must not be negative. ``validate`` applies
    these last; backends that do not validate (rngcheck.backends.placement) apply only these,
    so they never write where no element maps. An empty tensor needs no buffer."""
    sizes = tuple(int(s) for s in sizes)
    if strides is not None:
        strides = tuple(int(s) for s in strides)
        if len(strides) != len(sizes):
            _reject("stride-count", f"{len(strides)} strides for {len(sizes)} dimensions")
        if any(s < 0 for s in strides):
            _reject("stride-negative", f"strides {list(strides)}")
    needed = layout.required_elements(sizes, strides)
    if layout.element_count(sizes) and buffer_elements < needed:
        _reject("buffer-size", f"buffer of {buffer_elements} elements, {needed} needed")
