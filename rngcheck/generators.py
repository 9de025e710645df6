"""The generator axis: every counter-based generator rngcheck knows, by its Random123 name.

A Generator is a keyed bijection on blocks of N words of W bits (rngcheck.philox,
rngcheck.threefry). ``blocks(counters, key, rounds)`` takes counters of shape (blocks, N)
as uint32 (W = 32) or uint64 (W = 64) and a key of ``key_words`` integers, and returns the
(blocks, N) output blocks in that dtype. Operators (DirectML's, StableHLO's) and diagnoses take
a Generator instead of assuming Philox4x32-10; what differs between generators lives here.

Random123's ARS-4x32 and AESNI-4x32 are not here: they are AES rounds, which rngcheck does
not implement (the vectors file lists their known-answer lines as not implemented).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from . import philox, threefry
from .errors import RngcheckError

FAMILY_LABELS = {"philox": "Philox", "threefry": "ThreeFry"}


@dataclass(frozen=True)
class Generator:
    """One generator: Random123's name, family, N lanes of W bits, key words, default rounds."""

    name: str
    family: str
    lanes: int
    word_bits: int
    key_words: int
    default_rounds: int
    function: Callable[..., np.ndarray] = field(repr=False, compare=False)

    @property
    def dtype(self) -> type[np.unsignedinteger]:
        return philox.WORD_DTYPES[self.word_bits]

    @property
    def counter_bits(self) -> int:
        return self.lanes * self.word_bits

    @property
    def key_bits(self) -> int:
        return self.key_words * self.word_bits

    @property
    def label(self) -> str:
        """The paper's spelling with the default rounds, e.g. 'Philox4x32-10'."""
        return f"{FAMILY_LABELS[self.family]}{self.lanes}x{self.word_bits}-{self.default_rounds}"

    def blocks(self, counters: npt.ArrayLike, key: Sequence[int], rounds: int | None = None) -> np.ndarray:
        """The output blocks (shape (blocks, N), W-bit dtype) of each counter row under ``key``."""
        words = np.asarray(counters)
        if words.ndim != 2 or words.shape[1] != self.lanes or words.dtype != self.dtype:
            raise ValueError(f"{self.name} takes counters of shape (blocks, {self.lanes}) and dtype "
                             f"{np.dtype(self.dtype).name}, not {words.shape} {words.dtype}")
        if len(key) != self.key_words:
            raise ValueError(f"{self.name} takes {self.key_words} key word(s), not {len(key)}")
        mask = (1 << self.word_bits) - 1
        if any(not 0 <= int(word) <= mask for word in key):
            raise ValueError(f"{self.name} key words are {self.word_bits}-bit: {list(key)}")
        return self.function(words, tuple(int(word) for word in key),
                             self.default_rounds if rounds is None else rounds)


def _philox4x32(counters: np.ndarray, key: tuple[int, ...], rounds: int) -> np.ndarray:
    """The DirectML reference's own Philox4x32 (the hot path), behind the generator interface."""
    k0, k1 = key
    return philox.philox4x32(counters[:, 0], counters[:, 1], counters[:, 2], counters[:, 3], k0, k1,
                             rounds=rounds).copy()


def _philox(counters: np.ndarray, key: tuple[int, ...], rounds: int) -> np.ndarray:
    return philox.philox(counters, key, rounds)


def _threefry(counters: np.ndarray, key: tuple[int, ...], rounds: int) -> np.ndarray:
    return threefry.threefry(counters, key, rounds)


GENERATORS: tuple[Generator, ...] = (
    Generator("philox2x32", "philox", 2, 32, 1, philox.DEFAULT_ROUNDS, _philox),
    Generator("philox4x32", "philox", 4, 32, 2, philox.DEFAULT_ROUNDS, _philox4x32),
    Generator("philox2x64", "philox", 2, 64, 1, philox.DEFAULT_ROUNDS, _philox),
    Generator("philox4x64", "philox", 4, 64, 2, philox.DEFAULT_ROUNDS, _philox),
    Generator("threefry2x32", "threefry", 2, 32, 2, threefry.DEFAULT_ROUNDS, _threefry),
    Generator("threefry4x32", "threefry", 4, 32, 4, threefry.DEFAULT_ROUNDS, _threefry),
    Generator("threefry2x64", "threefry", 2, 64, 2, threefry.DEFAULT_ROUNDS, _threefry),
    Generator("threefry4x64", "threefry", 4, 64, 4, threefry.DEFAULT_ROUNDS, _threefry),
)
NAMES = tuple(g.name for g in GENERATORS)
PHILOX4X32 = GENERATORS[1]  # DML_RANDOM_GENERATOR_TYPE_PHILOX_4X32_10
# Random123 kat_vectors lines rngcheck knows but does not implement, with the reason.
NOT_IMPLEMENTED: dict[str, str] = {
    "ars4x32": "ARS-4x32 is AES rounds (AES-NI in Random123); rngcheck has no AES implementation",
    "aesni4x32": "AESNI-4x32 is AES-128 (AES-NI in Random123); rngcheck has no AES implementation",
}


def get(name: str) -> Generator:
    """The generator of that Random123 name (RngcheckError, one line, for any other)."""
    for generator in GENERATORS:
        if generator.name == name:
            return generator
    why = f" ({NOT_IMPLEMENTED[name]})" if name in NOT_IMPLEMENTED else ""
    raise RngcheckError(f"unknown generator {name!r}{why}: known are {', '.join(NAMES)}")
