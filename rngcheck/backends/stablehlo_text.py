"""A StableHLO module of one ``rng_bit_generator``, as text: what the xla and iree backends compile.

    func @main(%words: tensor<2Kxui32>) -> (tensor<2Kxui32>, tensor<SHAPE x uW>)

The u64[K] state crosses as 2K uint32 words (low word first, bitcast inside), so that no caller
needs 64-bit arrays; a float output is bitcast to the unsigned integer of its width (its bits are
what rng_bit_generator defines). Written for rngcheck from the StableHLO spec's op syntax.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import stablehlo

# rngcheck.stablehlo's algorithm names are the MLIR attribute's spellings.
ATTRIBUTE = {stablehlo.DEFAULT: "DEFAULT", stablehlo.THREE_FRY: "THREE_FRY", stablehlo.PHILOX: "PHILOX"}


def tensor(shape, element: str) -> str:
    return "tensor<" + "".join(f"{s}x" for s in shape) + element + ">"


def module_text(algorithm: str, state_words: int, shape: tuple[int, ...], dtype: str) -> str:
    element = stablehlo.MLIR_TYPES[dtype]
    unsigned = f"ui{stablehlo.ELEMENT_TYPES[dtype]}"
    words = tensor((2 * state_words,), "ui32")
    pairs = tensor((state_words, 2), "ui32")
    state = tensor((state_words,), "ui64")
    out = tensor(shape, element)
    bits = tensor(shape, unsigned)
    convert = (f"    %bits = stablehlo.bitcast_convert %out : ({out}) -> {bits}\n" if element != unsigned else "")
    result = "%bits" if element != unsigned else "%out"
    return (
        "module @rngcheck_rng_bit_generator {\n"
        f"  func.func public @main(%words: {words}) -> ({words}, {bits}) {{\n"
        f"    %pairs = stablehlo.reshape %words : ({words}) -> {pairs}\n"
        f"    %state = stablehlo.bitcast_convert %pairs : ({pairs}) -> {state}\n"
        f"    %new, %out = \"stablehlo.rng_bit_generator\"(%state) "
        f"{{rng_algorithm = #stablehlo<rng_algorithm {ATTRIBUTE[algorithm]}>}} : ({state}) -> ({state}, {out})\n"
        f"{convert}"
        f"    %new_pairs = stablehlo.bitcast_convert %new : ({state}) -> {pairs}\n"
        f"    %new_words = stablehlo.reshape %new_pairs : ({pairs}) -> {words}\n"
        f"    return %new_words, {result} : {words}, {bits}\n"
        "  }\n"
        "}\n")


def state_words(state: np.ndarray) -> np.ndarray:
    """The u64 state as uint32 words, low word first."""
    return np.ascontiguousarray(np.asarray(state, dtype=np.uint64)).view(np.uint32).copy()


def state_of_words(words) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(words, dtype=np.uint32)).view(np.uint64).copy()


class Compiled:
    """The backend's compiled programs by (algorithm, state words, shape, element type), at most
    ``limit`` kept (the oldest dropped first); ``compile`` turns a module's text into a program and
    raises Rejected for one the implementation refuses."""

    def __init__(self, compile: Callable[[str], Any], limit: int = 64) -> None:
        self._compile, self._limit = compile, limit
        self._programs: dict[tuple, Any] = {}

    def program(self, algorithm: str, words: int, shape: tuple[int, ...], dtype: str) -> Any:
        key = (algorithm, words, tuple(shape), dtype)
        if key not in self._programs:
            if len(self._programs) >= self._limit:
                self._programs.pop(next(iter(self._programs)))
            self._programs[key] = self._compile(module_text(algorithm, words, shape, dtype))
        return self._programs[key]
