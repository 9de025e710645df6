"""The generator axis: every counter-based generator rngcheck knows, by its Random123 name.

A Generator is a keyed bijection on blocks of N words of W bits (rngcheck.philox,
rngcheck.threefry). ``blocks(counters, key, rounds)`` takes counters of shape (blocks, N)
as uint32 (W = 32) or uint64 (W = 64) and a key of ``key_words`` integers, and returns the
(blocks, N) output blocks in that dtype. Operators (DirectML's, StableHLO's) and diagnoses take
a Generator instead of assuming Philox4x32-10; what differs between generators lives here.

Random123's ARS-4x32 and AESNI-4x32 are here too (rngcheck.aes: the AES round written from
FIPS-197 in numpy, without AES-NI; slow, for known answers and diagnosis).

``REGISTRY`` (an rngcheck.registry.Registry) holds them by name, built by its load on the first
read; ``GENERATORS`` (in table order), ``NAMES``, ``PHILOX4X32`` and ``get`` read it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from . import aes, counter, philox, threefry
from .errors import RngcheckError
from .registry import Registry

FAMILY_LABELS = {"philox": "Philox", "threefry": "ThreeFry", "ars": "ARS", "aesni": "AESNI"}


@dataclass(frozen=True)
class Generator:
    """One generator: Random123's name, family, N lanes of W bits, key words, default rounds.

    What differs between generators lives here: ``function`` computes blocks from counters,
    ``stream_function`` the blocks of an operator state (the counter words then the key words),
    ``wrong_rounds`` the round counts the diagnosis tries when the answer is wrong.
    """

    name: str
    family: str
    lanes: int
    word_bits: int
    key_words: int
    default_rounds: int
    function: Callable[..., np.ndarray] = field(repr=False, compare=False)
    stream_function: Callable[..., np.ndarray] = field(repr=False, compare=False)
    wrong_rounds: tuple[int, ...] = field(default=(), compare=False)

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

    @property
    def words_per_block(self) -> int:
        """32-bit output words per block (a W = 64 lane is two: its low half, then its high half)."""
        return self.counter_bits // 32

    @property
    def state_words(self) -> int:
        """32-bit words of an operator state: the counter's, then the key's (DirectML's 6 for Philox4x32)."""
        return (self.counter_bits + self.key_bits) // 32

    def key_of_state(self, state: npt.ArrayLike) -> tuple[int, ...]:
        """The W-bit key words of a state (its words after the counter's, least significant first)."""
        words = [int(w) for w in np.asarray(state).reshape(-1)]
        per = self.word_bits // 32
        key32 = words[self.counter_bits // 32:self.state_words]
        return tuple(sum(w << (32 * j) for j, w in enumerate(key32[i:i + per])) for i in range(0, len(key32), per))

    def stream(self, state: npt.ArrayLike, first_block: int, block_count: int, rounds: int | None = None, *,
               scratch: philox.Scratch | None = None) -> np.ndarray:
        """Blocks first_block .. first_block + block_count - 1 of an operator state, as 32-bit words.

        The state is ``state_words`` 32-bit words: the (N*W)-bit counter, least significant word
        first, then the key. Block j is the generator at counter + j mod 2^(N*W) under the key;
        returns uint32 of shape (block_count, words_per_block) (each W = 64 lane as its low then
        its high 32 bits). With ``scratch`` the result may live in its arrays until the next call.
        """
        words = np.asarray(state).reshape(-1)
        if words.size != self.state_words:
            raise ValueError(f"a {self.name} state is {self.state_words} words of 32 bits, got {words.size}")
        rounds = self.default_rounds if rounds is None else rounds
        return self.stream_function(self, words, first_block, block_count, rounds, scratch)

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
    blocks: np.ndarray = philox.philox4x32(counters[:, 0], counters[:, 1], counters[:, 2], counters[:, 3], k0, k1,
                                           rounds=rounds).copy()
    return blocks


def _philox4x32_stream(generator: Generator, state: np.ndarray, first_block: int, block_count: int, rounds: int,
                       scratch: philox.Scratch | None) -> np.ndarray:
    """The DirectML reference's path: 128-bit counter words 0-3, key words 4-5, in scratch arrays
    (compiled where it can be had: philox.compiled_stream4x32, the same words)."""
    k0, k1 = counter.key_of(state)
    start = counter.add_to_counter(state, first_block)[:4].tolist()
    compiled = philox.compiled_stream4x32(start, k0, k1, block_count, rounds, scratch=scratch)
    if compiled is not None:
        return compiled
    ctr = counter.block_counters(state, first_block, block_count, scratch=scratch)
    return philox.philox4x32(*ctr, k0, k1, rounds=rounds, scratch=scratch)


def block_counters(generator: Generator, start: int, block_count: int) -> np.ndarray:
    """Counters start + j mod 2^(N*W), j = 0 .. block_count-1, as (block_count, N) W-bit words.

    The add is done on 64-bit limbs: j joins the lowest limb (wrapping), and the carry (0 or 1)
    runs up through the limbs above it; W = 32 lanes are then the limbs' low and high halves.
    """
    limbs = generator.counter_bits // 64 or 1
    limb_bits = min(64, generator.counter_bits)
    start %= 1 << generator.counter_bits
    base = [(start >> (64 * i)) & ((1 << limb_bits) - 1) for i in range(limbs)]
    offsets = np.arange(block_count, dtype=np.uint64)
    low = np.uint64(base[0]) + offsets  # wraps mod 2^64
    if limb_bits < 64:
        low &= np.uint64((1 << limb_bits) - 1)
    columns = [low]
    carry = low < np.uint64(base[0])
    for value in base[1:]:
        limb = np.uint64(value) + carry.astype(np.uint64)
        carry = carry & (limb == 0)
        columns.append(limb)
    if generator.word_bits == 64:
        return np.stack(columns, axis=1)
    halves = [part for limb in columns for part in (limb & philox.LOW32, limb >> philox.SHIFT32)]
    return np.stack(halves[:generator.lanes], axis=1).astype(np.uint32)


def _stream(generator: Generator, state: np.ndarray, first_block: int, block_count: int, rounds: int,
            scratch: philox.Scratch | None) -> np.ndarray:
    start = counter.value_of_words(state[:generator.counter_bits // 32].tolist()) + first_block
    blocks = generator.blocks(block_counters(generator, start, block_count), generator.key_of_state(state), rounds)
    if generator.word_bits == 64:
        blocks = blocks.astype("<u8").view("<u4").astype(np.uint32)
    return blocks.reshape(block_count, generator.words_per_block)


def _philox(counters: np.ndarray, key: tuple[int, ...], rounds: int) -> np.ndarray:
    return philox.philox(counters, key, rounds)


def _threefry(counters: np.ndarray, key: tuple[int, ...], rounds: int) -> np.ndarray:
    return threefry.threefry(counters, key, rounds)


def _ars(counters: np.ndarray, key: tuple[int, ...], rounds: int) -> np.ndarray:
    return aes.ars4x32(counters, key, rounds)


def _aes(counters: np.ndarray, key: tuple[int, ...], rounds: int) -> np.ndarray:
    return aes.aes4x32(counters, key, rounds)


# Round counts the diagnosis tries (besides the default): Random123's other tested counts first.
PHILOX_WRONG_ROUNDS = (7, 6, 8, 9, 11, 12, 1, 0)
THREEFRY_WRONG_ROUNDS = (13, 20, 32, 72, 12, 16, 8, 4, 1, 0)
ARS_WRONG_ROUNDS = (10, 5, 6, 8, 9, 1)
AES_WRONG_ROUNDS = (9, 1)


def _generator(name: str, family: str, lanes: int, word_bits: int) -> Generator:
    if family == "philox":
        return Generator(name, family, lanes, word_bits, lanes // 2, philox.DEFAULT_ROUNDS,
                         _philox4x32 if (lanes, word_bits) == (4, 32) else _philox,
                         _philox4x32_stream if (lanes, word_bits) == (4, 32) else _stream,
                         PHILOX_WRONG_ROUNDS)
    return Generator(name, family, lanes, word_bits, lanes, threefry.DEFAULT_ROUNDS, _threefry, _stream,
                     tuple(r for r in THREEFRY_WRONG_ROUNDS if r != threefry.DEFAULT_ROUNDS))


def _load_generators() -> None:
    """Every generator, in the order tables list them (registry rules 2-3)."""
    for generator in (
        _generator("philox2x32", "philox", 2, 32),
        _generator("philox4x32", "philox", 4, 32),
        _generator("philox2x64", "philox", 2, 64),
        _generator("philox4x64", "philox", 4, 64),
        _generator("threefry2x32", "threefry", 2, 32),
        _generator("threefry4x32", "threefry", 4, 32),
        _generator("threefry2x64", "threefry", 2, 64),
        _generator("threefry4x64", "threefry", 4, 64),
        Generator("ars4x32", "ars", 4, 32, 4, aes.ARS_ROUNDS, _ars, _stream,
                  tuple(r for r in ARS_WRONG_ROUNDS if r != aes.ARS_ROUNDS)),
        Generator("aesni4x32", "aesni", 4, 32, 4, aes.AES_ROUNDS, _aes, _stream, AES_WRONG_ROUNDS),
    ):
        REGISTRY.add(generator.name, generator)


REGISTRY: Registry[Generator] = Registry("generator", load=_load_generators)
GENERATORS: tuple[Generator, ...] = tuple(REGISTRY.values())
NAMES = REGISTRY.names()
PHILOX4X32 = REGISTRY.get("philox4x32")  # DML_RANDOM_GENERATOR_TYPE_PHILOX_4X32_10
# Random123 kat_vectors generators rngcheck knows but does not implement, with the reason (none
# now: the vectors file's not_implemented list is built from this).
NOT_IMPLEMENTED: dict[str, str] = {}


def get(name: str) -> Generator:
    """The generator of that Random123 name (RngcheckError, one line, for any other: registry rule 4,
    with the reason where the name is one rngcheck knows but does not implement)."""
    if name in NOT_IMPLEMENTED:
        raise RngcheckError(f"unknown generator {name!r}: {NOT_IMPLEMENTED[name]} (known: {', '.join(NAMES)})")
    return REGISTRY.get(name)
