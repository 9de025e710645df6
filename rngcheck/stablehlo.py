"""StableHLO's ``rng_bit_generator``: the second operator (the reference variant is XLA's).

    (output_state, output) = stablehlo.rng_bit_generator(initial_state) {rng_algorithm}

The StableHLO spec (openxla/stablehlo docs/spec.md, "rng_bit_generator") fixes the signature and
says the algorithm's output is *implementation-defined*: "Given an initial state, the output is
guaranteed to be deterministic between executions, but it is not guaranteed to be deterministic
between implementations." So no variant is "the" answer. rngcheck takes XLA's variant as the
reference (every XLA backend runs it; sources below) and names any other variant that it sees as
a *divergence* (rngcheck.conformance.rng_bit_generator), never as wrong.

The description rules (rule ids in RULES; StableHLO spec constraints C1-C2 and the op's type
constraints; what XLA accepts, measured with jaxlib 0.10.2's CPU client):

  1. ``rng_algorithm`` is DEFAULT, THREE_FRY or PHILOX (rule ``algorithm``).
  2. ``initial_state`` is a 1-D tensor of ui64 (rule ``state-type``); its size is 2 for THREE_FRY,
     2 or 3 for PHILOX, implementation-defined for DEFAULT (rule ``state-size``; XLA: DEFAULT is
     PHILOX on the CPU, so 2 or 3; XLA refuses THREE_FRY with u64[3] in its HLO verifier).
  3. ``output`` is a statically shaped tensor (rank 0 and up, every size >= 0; rule ``shape``) of
     8-, 16-, 32- or 64-bit integers or floats (rule ``element-type``; the op also allows 2/4-bit
     integers and 4/6-bit floats, which rngcheck does not check). A float output holds bits: rngcheck
     compares it as the unsigned integer of its width. ``output_state`` has the type of
     ``initial_state``.

The semantics (XLA: ``xla/service/rng_bit_generator_expander.cc`` and ``xla/hlo/builder/lib/prng.cc``,
PhiloxBitGenerator / ThreeFryBitGenerator). ``n`` is the number of output elements, element ``i``
counted row-major over the output shape, ``W`` the element width in bits:

  4. The key is ``state[0]``: its low 32 bits are key word 0, its high 32 bits key word 1.
  5. PHILOX (Philox4x32-10): the 128-bit counter is (``state[1]`` low, ``state[2]`` high) for a
     u64[3] state; for a u64[2] state it is (``state[1]`` low, ``state[0]`` high): the key doubles as
     the counter's high half (the expander reverses the state). Block ``b`` is Philox4x32-10 of
     counter + b (a full 128-bit add, carry included) under the key.
  6. PHILOX, W <= 32: element i is lane i mod 4 of block floor(i/4), truncated to its low W bits;
     ceil(n/4) blocks are used. W = 64: element i is lanes (2j, 2j+1) of block floor(i/2) with
     j = i mod 2, the first lane the low half; ceil(n/2) blocks. (With a u64[3] state and W = 32 this
     is DirectML's DML_RANDOM_GENERATOR exactly: rngcheck.reference.)
  7. PHILOX, the new state: the counter plus the blocks used, mod 2^128; a u64[3] state gets
     [key, counter low, counter high], a u64[2] state [key, counter low] (the carry out of the low
     half is dropped from the state, although the blocks used it).
  8. THREE_FRY (ThreeFry2x32-20, rngcheck.generators "threefry2x32"): the counter is ``state[1]``, a
     64-bit number; counter c is the block input (c mod 2^32, floor(c / 2^32)).
  9. THREE_FRY, W = 64: element i is block (state[1] + i mod 2^64), its lane 0 the low half and lane 1
     the high half; the new counter is state[1] + n mod 2^64.
 10. THREE_FRY, W <= 32: the output shape is split in two along one dimension (SplitShapeIntoHalves):
     the first dimension of even size, else the first of the largest size (rank 0: a shape of 1).
     With h = ceil(size/2) on that dimension, element at coordinates x is lane (x_s mod 2) of block
     (state[1] + r mod 2^64), r the row-major index of x with x_s replaced by floor(x_s / 2) in the
     halved shape; truncated to its low W bits. The new counter is state[1] + (elements of the halved
     shape) mod 2^64.
 11. The new state's key is the input key; the input state is not modified.

Everything is computed in chunks of elements (bounded memory whatever the output's size).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from . import counter, reference
from .errors import Rejected

SPEC = "StableHLO specification (openxla/stablehlo docs/spec.md), 'rng_bit_generator'"
XLA_EXPANDER = "openxla/xla xla/service/rng_bit_generator_expander.cc"
XLA_PRNG = "openxla/xla xla/hlo/builder/lib/prng.cc"
SOURCE = f"{XLA_PRNG}; {XLA_EXPANDER}"

DEFAULT, THREE_FRY, PHILOX = "DEFAULT", "THREE_FRY", "PHILOX"
ALGORITHMS = (DEFAULT, THREE_FRY, PHILOX)
DEFAULT_IS = PHILOX   # XLA's CPU and GPU compilers expand DEFAULT as PHILOX (measured: jaxlib 0.10.2 CPU)
STATE_SIZES = {THREE_FRY: (2,), PHILOX: (2, 3), DEFAULT: (2, 3)}
THREEFRY_ROUNDS = 20  # prng.cc: "we are conservative and use 20 rounds"
THREEFRY_GENERATOR = "threefry2x32"

# The element types rngcheck checks, with their widths (numpy names; StableHLO's in MLIR_TYPES).
ELEMENT_TYPES = {"uint8": 8, "uint16": 16, "uint32": 32, "uint64": 64, "int8": 8, "int16": 16, "int32": 32,
                 "int64": 64, "float16": 16, "float32": 32, "float64": 64}
MLIR_TYPES = {"uint8": "ui8", "uint16": "ui16", "uint32": "ui32", "uint64": "ui64", "int8": "i8", "int16": "i16",
              "int32": "i32", "int64": "i64", "float16": "f16", "float32": "f32", "float64": "f64"}
MAX_ELEMENTS = 1 << 40  # far above what a test allocates; a guard against a shape typed by mistake

RULES = {
    "algorithm": "rng_algorithm is DEFAULT, THREE_FRY or PHILOX",
    "state-type": "initial_state is a 1-D tensor of ui64",
    "state-size": "size(initial_state) is 2 for THREE_FRY, 2 or 3 for PHILOX, implementation-defined for DEFAULT "
                  "(XLA: as PHILOX)",
    "element-type": "output holds 8/16/32/64-bit integers or floats (rngcheck's checked subset of the op's types)",
    "shape": "output is statically shaped: every dimension size >= 0",
    "element-count": "at most 2^40 output elements (rngcheck's guard against a shape typed by mistake, not "
                     "StableHLO's)",
}
CHUNK_ELEMENTS = reference.CHUNK_ELEMENTS


@dataclass(frozen=True)
class Call:
    """One rng_bit_generator: the algorithm, the u64 state words, the output shape and element type."""

    algorithm: str
    state: tuple[int, ...]
    shape: tuple[int, ...]
    dtype: str

    @property
    def element_count(self) -> int:
        return int(np.prod(self.shape, dtype=object)) if self.shape else 1

    @property
    def bits(self) -> int:
        return ELEMENT_TYPES[self.dtype]

    @property
    def unsigned(self) -> np.dtype:
        """The unsigned dtype the output's bits are compared as."""
        return np.dtype(f"uint{self.bits}")

    @property
    def resolved(self) -> str:
        """The algorithm XLA runs (DEFAULT is PHILOX)."""
        return DEFAULT_IS if self.algorithm == DEFAULT else self.algorithm

    def text(self) -> str:
        state = ", ".join(f"0x{w:016x}" for w in self.state)
        shape = "x".join(map(str, self.shape)) or "scalar"
        return f"{self.algorithm} u64[{len(self.state)}] [{state}] -> {shape} {self.dtype}"


def reject(rule: str, detail: str) -> Rejected:
    return Rejected(f"{detail} ({rule}: {RULES[rule]})", rule=rule)


def validate(algorithm: str, state: npt.ArrayLike, shape: Sequence[int], dtype: str) -> Call:
    """The call, checked against rules 1-3 (Rejected naming the rule broken)."""
    if algorithm not in ALGORITHMS:
        raise reject("algorithm", f"algorithm {algorithm!r}")
    array = np.asarray(state)
    if array.ndim != 1 or array.dtype != np.uint64:
        raise reject("state-type", f"initial_state is {array.dtype}{list(array.shape)}")
    if array.size not in STATE_SIZES[algorithm]:
        raise reject("state-size", f"{algorithm} with a u64[{array.size}] state")
    if str(dtype) not in ELEMENT_TYPES:
        raise reject("element-type", f"output element type {dtype!r}")
    sizes = tuple(int(s) for s in shape)
    if any(s < 0 for s in sizes):
        raise reject("shape", f"output shape {list(sizes)}")
    elements = int(np.prod(sizes, dtype=object) if sizes else 1)
    if elements > MAX_ELEMENTS:
        raise reject("element-count", f"output shape {list(sizes)} has {elements} elements")
    return Call(algorithm, tuple(int(w) for w in array), sizes, str(dtype))


def _key(call: Call) -> tuple[int, int]:
    key = call.state[0]                                   # rule 4
    return key & 0xFFFFFFFF, key >> 32


# ----------------------------------------------------------------------------------- PHILOX
def philox_counter(call: Call) -> int:
    """The 128-bit counter of rule 5."""
    high = call.state[2] if len(call.state) == 3 else call.state[0]
    return (high << 64) | call.state[1]


def philox_blocks(call: Call) -> int:
    """Blocks used (rule 6)."""
    per_block = 2 if call.bits == 64 else 4
    return -(-call.element_count // per_block)


def _philox_state6(call: Call) -> np.ndarray:
    """The DirectML 6-word state with the same counter and key: rule 5 is DirectML's rule 2 from there."""
    return counter.make_state(philox_counter(call), _key(call))


def _philox_words(call: Call, first: int, count: int) -> np.ndarray:
    state6 = _philox_state6(call)
    if call.bits == 64:                                   # rule 6: two 32-bit words per element, low first
        pairs = reference.words(state6, 2 * first, 2 * count).astype(np.uint64)
        joined: np.ndarray = pairs[0::2] | (pairs[1::2] << np.uint64(32))
        return joined
    words = reference.words(state6, first, count)
    return words.astype(call.unsigned)                    # truncation to the low W bits


def _philox_state(call: Call) -> tuple[int, ...]:
    advanced = (philox_counter(call) + philox_blocks(call)) % (1 << 128)   # rule 7
    low, high = advanced & ((1 << 64) - 1), advanced >> 64
    return (call.state[0], low, high) if len(call.state) == 3 else (call.state[0], low)


# ---------------------------------------------------------------------------------- THREE_FRY
def split_dimension(shape: Sequence[int]) -> int:
    """Rule 10's dimension: the first of even size, else the first of the largest size (-1 for rank 0)."""
    if not shape:
        return -1
    for d, size in enumerate(shape):
        if size % 2 == 0:
            return d
    return max(range(len(shape)), key=lambda d: (shape[d], -d))


def halved_shape(shape: Sequence[int]) -> tuple[int, ...]:
    """Rule 10's halved shape (without its trivial dimension)."""
    if not shape:
        return (1,)
    s = split_dimension(shape)
    return tuple(-(-size // 2) if d == s else size for d, size in enumerate(shape))


def threefry_blocks(call: Call) -> int:
    if call.bits == 64:
        return call.element_count
    return int(np.prod(halved_shape(call.shape), dtype=object))


def _threefry(counters: np.ndarray, call: Call) -> np.ndarray:
    """ThreeFry2x32-20 of 64-bit counters (uint64): (blocks, 2) uint32, lane 0 from the low half."""
    from . import generators

    words = np.empty((counters.size, 2), dtype=np.uint32)
    words[:, 0] = counters & np.uint64(0xFFFFFFFF)
    words[:, 1] = counters >> np.uint64(32)
    out: np.ndarray = generators.get(THREEFRY_GENERATOR).blocks(words, _key(call), THREEFRY_ROUNDS)
    return out


def _logical_indices(first: int, count: int) -> np.ndarray:
    return np.arange(first, first + count, dtype=np.uint64)


def _threefry_words(call: Call, first: int, count: int) -> np.ndarray:
    base = np.uint64(call.state[1])
    if call.bits == 64:                                   # rule 9
        with np.errstate(over="ignore"):
            blocks = _threefry(base + _logical_indices(first, count), call).astype(np.uint64)
        wide: np.ndarray = blocks[:, 0] | (blocks[:, 1] << np.uint64(32))
        return wide
    if not call.shape:                                    # rank 0: block 0, lane 0
        return _threefry(np.array([base], dtype=np.uint64), call)[:, 0].astype(call.unsigned)
    s = split_dimension(call.shape)
    index = np.arange(first, first + count, dtype=np.int64)
    coordinates = np.array(np.unravel_index(index, call.shape))    # (rank, count)
    lane = coordinates[s] % 2
    coordinates[s] //= 2
    row = np.ravel_multi_index(tuple(coordinates), halved_shape(call.shape)).astype(np.uint64)
    with np.errstate(over="ignore"):
        blocks = _threefry(base + row, call)
    chosen: np.ndarray = blocks[np.arange(count), lane].astype(call.unsigned)   # rule 10, truncated
    return chosen


def _threefry_state(call: Call) -> tuple[int, ...]:
    return call.state[0], (call.state[1] + threefry_blocks(call)) % (1 << 64)


def block_of(call: Call, index: int) -> tuple[int, int]:
    """(block counter, first lane) that made element ``index`` (rules 5-6, 9-10): what a report shows."""
    if call.resolved == PHILOX:
        per_block = 2 if call.bits == 64 else 4
        lane = (index % per_block) * (2 if call.bits == 64 else 1)
        return (philox_counter(call) + index // per_block) % (1 << 128), lane
    if call.bits == 64:
        return (call.state[1] + index) % (1 << 64), 0
    if not call.shape:
        return call.state[1], 0
    s = split_dimension(call.shape)
    coordinates = list(np.unravel_index(index, call.shape))
    lane = int(coordinates[s]) % 2
    coordinates[s] //= 2
    row = int(np.ravel_multi_index(tuple(coordinates), halved_shape(call.shape)))
    return (call.state[1] + row) % (1 << 64), lane


# ------------------------------------------------------------------------------------ the operator
def words(call: Call, first: int, count: int) -> np.ndarray:
    """Output elements first .. first+count-1 (row-major) as the unsigned integers of their bits."""
    if count <= 0:
        return np.empty(0, dtype=call.unsigned)
    if call.resolved == PHILOX:
        return _philox_words(call, first, count)
    return _threefry_words(call, first, count)


def new_state(call: Call) -> np.ndarray:
    """The output state (rules 7, 9-11) as uint64."""
    words_ = _philox_state(call) if call.resolved == PHILOX else _threefry_state(call)
    return np.array(words_, dtype=np.uint64)


def chunks(call: Call, chunk: int | None = None) -> Iterator[tuple[int, np.ndarray]]:
    """(first, words) of the whole output, chunk by chunk (bounded memory)."""
    for first, count in reference.chunks(call.element_count, chunk):
        yield first, words(call, first, count)


def rng_bit_generator(algorithm: str, state: npt.ArrayLike, shape: Sequence[int],
                      dtype: str) -> tuple[np.ndarray, np.ndarray]:
    """The operator, per the backend contract (rngcheck.backends.contract: ``rng_bit_generator``):
    (new state uint64, output of ``dtype`` and ``shape``)."""
    call = validate(algorithm, state, shape, dtype)
    out = np.empty(call.element_count, dtype=call.unsigned)
    for first, values in chunks(call):
        out[first:first + values.size] = values
    return new_state(call), out.view(np.dtype(call.dtype)).reshape(call.shape)
