"""TensorFlow's numbers from Philox words, and its stream semantics, rule by rule.

Sources (TensorFlow's tree; facts read there, written here):
  R  tensorflow/core/lib/random/random_distributions.h (UniformDistribution, NormalDistribution,
     TruncatedNormalDistribution, BoxMullerFloat/Double, Uint16ToHalf, Uint16ToBfloat16,
     UniformFullIntDistribution32/64, SignedAdd)
  U  tensorflow/core/lib/random/random_distributions_utils.h (Uint32ToFloat, Uint64ToDouble)
  F  tensorflow/core/kernels/random_op_cpu.h (FillPhiloxRandom: output groups and their skips;
     kReservedSamplesPerOutput = 256)
  S  tensorflow/core/kernels/stateless_random_ops.cc (GenerateKey: the stateless seed scrambling)
  G  tensorflow/python/ops/stateful_random_ops.py (Generator: state, from_seed, skip, split,
     _preprocess_key) and tensorflow/core/kernels/stateful_random_ops_cpu_gpu.h
     (UpdateMemWithPhiloxRandom: the counter advances by 256 per output element)
  D  ../shared/seeds/004_a9f6993c0c6e48da.digest.md (the guide's printed numbers: the vectors in
     rngcheck/vectors/tensorflow_guide.json, reproduced by this module in tests/test_numbers.py)

The word stream. A kernel fills its output in *groups*; group g is made from block counter + g
(F), which puts element i of a one-word-per-element distribution on word i of the operator's
stream, and element i of a two-words-per-element one on words 2i and 2i+1 (low word first).

Conversions:
  1. float32 uniform: the low 23 bits of word i are the mantissa of a float in [1, 2) (exponent
     127); minus 1.0 gives [0, 1) exactly (U, Uint32ToFloat).
  2. float64 uniform: the low 20 bits of word 2i and all of word 2i+1 are the mantissa (word 2i
     high) of a double in [1, 2), minus 1.0 (U, Uint64ToDouble).
  3. float16 uniform: the low 10 bits of word i as the mantissa of a half in [1, 2), minus 1
     (R, Uint16ToHalf). bfloat16: the low 7 bits, exponent 127, minus 1 (R, Uint16ToBfloat16).
  4. uniform in [low, high): u * (high - low) + low, each operation in the dtype
     (stateful_random_ops.py / stateless_random_ops.py: ``rnd * (maxval - minval) + minval``).
  5. normal float32: words (2k, 2k+1) make elements 2k and 2k+1 by Box-Muller (R, BoxMullerFloat):
        u1 = max(rule-1(word 2k), 1e-7)              the epsilon clamp: log never sees 0
        v1 = float(2 * pi * rule-1(word 2k+1))       2.0f * M_PI is a double product, then rounded
        r  = sqrt(-2 * log(u1))                      in float
        element 2k = r * sin(v1), element 2k+1 = r * cos(v1)   (sin first)
     float16 and bfloat16: the float32 result rounded (R).
  6. normal float64: words 4k..4k+3 make elements 2k, 2k+1: u1 = max(rule-2(words 4k, 4k+1),
     1e-7), v1 = 2 * pi * rule-2(words 4k+2, 4k+3), then as rule 5 in double (R, BoxMullerDouble).
  7. truncated normal: output group g (4 elements; 2 for float64) starts at block
     counter + 256 g (128 g for float64: kReservedSamplesPerOutput * group size / 4 lanes) and
     reads words one at a time from there: each pair (each four for float64) gives two
     Box-Muller values, kept in order (sin first) when |x| < 2, until the group is full (R, F).
  8. integers in [low, high), int32: low + (word i mod (high - low)) with high - low computed in
     uint32 and the sum without overflow (SignedAdd); int64: the same on
     word 2i | word 2i+1 << 32 in uint64 (R, UniformDistribution<int32/int64>).
  9. bits (full range): uint32/int32 = word i; uint64/int64 = word 2i | word 2i+1 << 32 (R).

Stream semantics (G, S) are the Generator model below (rules 10-15).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any, SupportsInt

import numpy as np
import numpy.typing as npt

from .. import counter as state_words
from .. import philox, reference
from . import floats
from .box_muller import polar32, polar64
from .request import (
    BITS,
    INTEGERS,
    NORMAL,
    TRUNCATE,
    TRUNCATED_NORMAL,
    UNIFORM,
    Convention,
    Request,
    required_state,
)
from .tolerance import EXACT, Bound, Interval, one_rounding

SOURCE_R = "tensorflow/core/lib/random/random_distributions.h"
SOURCE_U = "tensorflow/core/lib/random/random_distributions_utils.h"
SOURCE_F = "tensorflow/core/kernels/random_op_cpu.h"
SOURCE_S = "tensorflow/core/kernels/stateless_random_ops.cc"
SOURCE_G = "tensorflow/python/ops/stateful_random_ops.py"

EPSILON = 1.0e-7
RESERVED_SAMPLES_PER_OUTPUT = 256     # F: kReservedSamplesPerOutput; also G's skip multiplier
LANES = 4
MASK64 = (1 << 64) - 1
SEED_KEY = (0x3EC8F720, 0x02461E29)   # S: the key that scrambles a stateless seed


# ---------------------------------------------------------------------------------- words -> [0, 1)
def uint32_to_float(words: np.ndarray) -> np.ndarray:
    """Rule 1: low 23 bits in a [1, 2) mantissa, minus 1 (float32, exact)."""
    bits = (np.asarray(words, dtype=np.uint32) & np.uint32(0x7FFFFF)) | np.uint32(127 << 23)
    result: np.ndarray = bits.view(np.float32) - np.float32(1.0)
    return result


def uint64_to_double(high_words: np.ndarray, low_words: np.ndarray) -> np.ndarray:
    """Rule 2: the low 20 bits of ``high_words`` over all of ``low_words``, in [1, 2), minus 1."""
    mantissa = ((np.asarray(high_words, dtype=np.uint64) & np.uint64(0xFFFFF)) << np.uint64(32)) \
        | np.asarray(low_words, dtype=np.uint64)
    result: np.ndarray = (mantissa | np.uint64(1023 << 52)).view(np.float64) - 1.0
    return result


def uint16_to_half(words: np.ndarray) -> np.ndarray:
    """Rule 3: the low 10 bits in a [1, 2) half mantissa, minus 1 (float16)."""
    bits = (np.asarray(words, dtype=np.uint32) & np.uint32(0x3FF)).astype(np.uint16) | np.uint16(15 << 10)
    result: np.ndarray = bits.view(np.float16) - np.float16(1.0)
    return result


def uint16_to_bfloat16(words: np.ndarray) -> np.ndarray:
    """Rule 3: the low 7 bits in a [1, 2) bfloat16 mantissa, minus 1 (exact; bits as uint16)."""
    bits = (np.asarray(words, dtype=np.uint32) & np.uint32(0x7F)) | np.uint32(127 << 7)
    one_to_two = floats.bfloat16_to_float32(bits.astype(np.uint16))
    return floats.bfloat16_from_float32(one_to_two - np.float32(1.0))


def unit_uniform(dtype: str, words: np.ndarray) -> np.ndarray:
    """[0, 1) in ``dtype`` from the stream's words (rules 1-3), one element per word or pair."""
    if dtype == "float64":
        return uint64_to_double(words[0::2], words[1::2])
    return {"float32": uint32_to_float, "float16": uint16_to_half, "bfloat16": uint16_to_bfloat16}[dtype](words)


# ---------------------------------------------------------------------------------- Box-Muller
def box_muller_float(x0: np.ndarray, x1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rule 5 in float32: (r sin v1, r cos v1). Each transcendental step is evaluated in binary64
    and rounded once to binary32 (the exact model; rngcheck.numbers.tolerance rule 3)."""
    u1 = np.maximum(uint32_to_float(x0), np.float32(EPSILON))          # the epsilon clamp
    v1 = (2.0 * math.pi * uint32_to_float(x1).astype(np.float64)).astype(np.float32)
    return polar32(u1, v1)


def box_muller_double(x0: np.ndarray, x1: np.ndarray, x2: np.ndarray, x3: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rule 6: Box-Muller in binary64 on two doubles of rule 2."""
    u1 = np.maximum(uint64_to_double(x0, x1), EPSILON)
    return polar64(u1, 2.0 * math.pi * uint64_to_double(x2, x3))


def interleave(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    out = np.empty(first.size + second.size, dtype=np.result_type(first, second))
    out[0::2], out[1::2] = first, second
    return out


def normal_from_words(dtype: str, words: np.ndarray) -> np.ndarray:
    """Rules 5-6: normals in ``dtype`` from a whole number of Box-Muller pairs of words."""
    if dtype == "float64":
        return interleave(*box_muller_double(words[0::4], words[1::4], words[2::4], words[3::4]))
    values = interleave(*box_muller_float(words[0::2], words[1::2]))
    return round_float32(dtype, values)


def round_float32(dtype: str, values: np.ndarray) -> np.ndarray:
    """float32 values in ``dtype`` (rule 5's last step for float16 and bfloat16)."""
    if dtype == "float32":
        return values
    return floats.round_to(floats.format_of(dtype), values.astype(np.float64))


# ---------------------------------------------------------------------------------- the stream
def stream(state: npt.ArrayLike, first: int, count: int) -> np.ndarray:
    """Words first .. first+count-1 of the operator's stream for ``state``."""
    return reference.words(state_words.state_array(state), first, count)


def words_per_element(request: Request) -> int:
    return 2 if request.dtype in ("float64", "int64", "uint64") else 1


TRIALS = 16   # Box-Muller trials made at once per truncated-normal group (4 needed; 16 almost always do)


def truncated_normal(dtype: str, state: npt.ArrayLike, count: int) -> np.ndarray:
    """Rule 7: group by group, each from its own reserved stretch of the stream.

    Vectorised: every group's first TRIALS trials at once; a group that keeps fewer than its
    size (about one in 10^13) is finished word by word from where they end."""
    wide = dtype == "float64"
    group = 2 if wide else LANES
    per_trial = 4 if wide else 2
    groups = -(-count // group)
    blocks_per_group = RESERVED_SAMPLES_PER_OUTPUT * group // LANES
    trial_blocks = TRIALS * per_trial // LANES
    offsets = (np.arange(groups, dtype=np.uint64)[:, None] * np.uint64(blocks_per_group)
               + np.arange(trial_blocks, dtype=np.uint64)[None, :]).reshape(-1)
    state = state_words.state_array(state)
    words = philox.philox4x32(*state_words.counters_at(state, offsets), *state_words.key_of(state)).reshape(-1)
    values = normal_from_words("float64" if wide else "float32", words).reshape(groups, -1)
    kept = np.abs(values) < TRUNCATE
    order = np.argsort(~kept, axis=1, kind="stable")[:, :group]   # the kept values first, in order
    chosen = np.take_along_axis(values, order, axis=1)
    short = np.flatnonzero(kept.sum(axis=1) < group)
    for g in short:
        chosen[g] = _truncated_group(dtype, state, int(g) * blocks_per_group * LANES, group, per_trial)
    out = chosen.reshape(-1)[:count]
    return out if dtype in ("float32", "float64") else round_float32(dtype, out)


def _truncated_group(dtype: str, state: npt.ArrayLike, start: int, group: int, per_trial: int) -> np.ndarray:
    """One group of rule 7, trial by trial (the rare group TRIALS trials do not fill)."""
    kept: list[np.floating] = []
    taken = 0
    while len(kept) < group:
        batch = stream(state, start + taken, per_trial)
        taken += per_trial
        for value in normal_from_words("float64" if dtype == "float64" else "float32", batch):
            if abs(float(value)) < TRUNCATE and len(kept) < group:
                kept.append(value)
    return np.array(kept)


def integers(dtype: str, words: np.ndarray, low: int, high: int) -> np.ndarray:
    """Rule 8: low + bits mod (high - low), the range in unsigned arithmetic, no overflow."""
    wide = dtype in ("int64", "uint64")
    bits = combine64(words) if wide else np.asarray(words, dtype=np.uint64)
    span = (high - low) & (MASK64 if wide else 0xFFFFFFFF)     # uint32/uint64(hi) - uint32/uint64(lo)
    offsets = bits % np.uint64(span) if span else bits
    values = [low + int(v) for v in offsets]                   # exact: SignedAdd cannot overflow here
    return np.array(values, dtype=dtype)


def combine64(words: np.ndarray) -> np.ndarray:
    """Rule 9: word 2i | word 2i+1 << 32 as uint64."""
    words = np.asarray(words, dtype=np.uint64)
    result: np.ndarray = words[0::2] | (words[1::2] << np.uint64(32))
    return result


def full_range(dtype: str, words: np.ndarray) -> np.ndarray:
    """Rule 9: the words themselves, or pairs of them, reinterpreted in ``dtype``."""
    if dtype in ("int64", "uint64"):
        return combine64(words).view(dtype)
    return np.asarray(words, dtype=np.uint32).view(dtype)


# Tolerance rule 7: the evaluation orders of rule 4 an implementation may use. TensorFlow writes
# ``rnd * (maxval - minval) + minval`` as two graph operations (two roundings in the dtype); a
# compiler that fuses them (XLA's GPU and CPU backends may contract a multiply-add; OpenVINO's CPU
# plugin does, measured) rounds once. float16 and bfloat16 arithmetic is float32 arithmetic rounded
# to the narrow format on most hardware: a kernel may keep the float32 intermediates and round once
# at the end (OpenVINO's CPU plugin without native bfloat16, measured).
RANGE_ORDERS = ("each step rounded in the dtype", "a fused multiply-add in the dtype")
NARROW_RANGE_ORDERS = RANGE_ORDERS + ("each step in float32, rounded to the dtype at the end",
                                      "a fused multiply-add in float32, rounded to the dtype")
BFLOAT16_RANGE = ("u * (high - low) + low in bfloat16 stays a distance, not the set of its evaluation orders' "
                  "results (tolerance rule 7): OpenVINO's CPU plugin without native bfloat16 gives, measured, "
                  "results that no order of round-to-nearest arithmetic gives (150 of 1027 elements of [-3.5, "
                  "7.25) on an AVX-512 CPU without AVX512_BF16, other elements on another CPU), each within 2 ULP "
                  "of the range's larger endpoint; TensorFlow itself gives the reference's bits. 2 ULP of the "
                  "larger endpoint (tolerance rule 2)")
RANGE_WHY = ("u * (high - low) + low: the result of one of its allowed evaluation orders exactly ({orders}): "
             "not a distance from one of them (tolerance rule 7; a different formula is thousands of ULP off "
             "near zero, where 1 ULP of the larger endpoint would admit it)")


def range_orders(dtype: str, unit: np.ndarray, low: float, high: float) -> np.ndarray:
    """Rule 4's results in every order of RANGE_ORDERS (NARROW_RANGE_ORDERS for float16 and
    bfloat16), one row each, held per floats rule 1; the first row is the reference's (scaled)."""
    fmt, wide = floats.format_of(dtype), floats.FLOAT32
    u = floats.as_values(fmt, unit)
    lo, hi = (floats.as_values(fmt, floats.round_to(fmt, np.array([end], dtype=np.float64)))[0] for end in (low, high))
    span = floats.as_values(fmt, floats.fused_multiply_add(fmt, hi, 1.0, -lo))
    rows = [scaled(dtype, unit, low, high), floats.fused_multiply_add(fmt, u, span, lo)]
    if dtype in ("float16", "bfloat16"):
        span32 = floats.as_values(wide, floats.fused_multiply_add(wide, hi, 1.0, -lo))
        product = floats.as_values(wide, floats.fused_multiply_add(wide, u, span32, 0.0))
        stepped = floats.fused_multiply_add(wide, product, 1.0, lo)
        for result in (stepped, floats.fused_multiply_add(wide, u, span32, lo)):
            rows.append(floats.round_to(fmt, floats.as_values(wide, result)))
    return np.stack([np.asarray(row, dtype=fmt.storage).reshape(-1) for row in rows])


def scaled(dtype: str, unit: np.ndarray, low: float, high: float) -> np.ndarray:
    """Rule 4: unit * (high - low) + low, each step rounded to ``dtype``."""
    if dtype == "bfloat16":
        fmt = floats.BFLOAT16
        lo, hi = (floats.round_to(fmt, np.array([x])) for x in (low, high))
        lo32, hi32 = floats.bfloat16_to_float32(lo), floats.bfloat16_to_float32(hi)
        span = floats.bfloat16_to_float32(floats.bfloat16_from_float32(hi32 - lo32))
        product = floats.bfloat16_to_float32(floats.bfloat16_from_float32(floats.bfloat16_to_float32(unit) * span))
        return floats.bfloat16_from_float32(product + lo32)
    kind = np.dtype(dtype).type
    lo, hi = kind(low), kind(high)
    result: np.ndarray = (unit * (hi - lo) + lo).astype(dtype)
    return result


# ---------------------------------------------------------------------------------- the convention
class TensorFlow(Convention):
    name = "tensorflow"
    title = "TensorFlow (CPU and GPU kernels; stateless_random_*_v2, tf.random.Generator)"
    kinds = {
        UNIFORM: ("float16", "bfloat16", "float32", "float64"),
        NORMAL: ("float16", "bfloat16", "float32", "float64"),
        TRUNCATED_NORMAL: ("float16", "bfloat16", "float32", "float64"),
        INTEGERS: ("int32", "int64"),
        BITS: ("int32", "int64", "uint32", "uint64"),
    }
    sources = {UNIFORM: f"{SOURCE_U} (Uint32ToFloat, Uint64ToDouble); {SOURCE_R} (Uint16ToHalf, Uint16ToBfloat16)",
               NORMAL: f"{SOURCE_R} (BoxMullerFloat, BoxMullerDouble)",
               TRUNCATED_NORMAL: f"{SOURCE_R} (TruncatedNormalDistribution); {SOURCE_F} (256 per output)",
               INTEGERS: f"{SOURCE_R} (UniformDistribution<int32/int64>, SignedAdd)",
               BITS: f"{SOURCE_R} (UniformFullIntDistribution32/64)"}
    seeded = True
    reaches_high = True   # rule 4 rounds each step in the dtype: u * (high - low) + low can round onto high

    def interval(self, request: Request) -> Interval | None:
        """Rule 7 keeps |x| < 2 in float32; rounded to float16 or bfloat16, 2 itself can come out."""
        interval = super().interval(request)
        if interval is not None and request.kind == TRUNCATED_NORMAL and request.dtype in ("float16", "bfloat16"):
            return replace(interval, low_closed=True, high_closed=True)
        return interval

    def draw(self, request: Request, state: npt.ArrayLike | None = None) -> np.ndarray:
        if request.seed is not None:
            state = stateless_state(request.seed)
        n = request.count
        if request.kind == TRUNCATED_NORMAL:
            return truncated_normal(request.dtype, required_state(state), n)
        per = words_per_element(request)
        if request.kind == NORMAL:
            pair = 4 if request.dtype == "float64" else 2          # words per two elements
            whole = -(-n * per // pair) * pair
            return normal_from_words(request.dtype, stream(required_state(state), 0, whole))[:n]
        words = stream(required_state(state), 0, n * per)
        if request.kind == UNIFORM:
            unit = unit_uniform(request.dtype, words)
            if request.low is None:
                return unit
            return scaled(request.dtype, unit, *request.uniform_range)
        if request.kind == INTEGERS:
            return integers(request.dtype, words, *request.integer_range)
        return full_range(request.dtype, words)

    def orders(self, request: Request, state: npt.ArrayLike | None) -> np.ndarray | None:
        """Tolerance rule 7 for the ranged uniform (rule 4): every allowed order's results."""
        if request.kind != UNIFORM or request.low is None:
            return None
        if request.seed is not None:
            state = stateless_state(request.seed)
        words = stream(required_state(state), 0, request.count * words_per_element(request))
        return range_orders(request.dtype, unit_uniform(request.dtype, words), *request.uniform_range)

    def bound(self, request: Request) -> Bound:
        if request.kind in (INTEGERS, BITS):
            return EXACT
        if request.kind == UNIFORM:
            if request.low is None:
                return EXACT
            if request.dtype == "bfloat16":
                return one_rounding(*request.uniform_range, BFLOAT16_RANGE, ulps=2)
            orders = NARROW_RANGE_ORDERS if request.dtype == "float16" else RANGE_ORDERS
            return Bound(0, RANGE_WHY.format(orders="; ".join(orders)), orders=orders)
        if request.dtype in ("float16", "bfloat16"):
            return Bound(4, "Box-Muller in float32 (within 4 float32 ULP, as for float32), then rounded to the "
                            "narrow format: the result must be the rounding of a float32 within 4 ULP of the "
                            "exact model (tolerance rule 5)", wide="float32")
        return Bound(4, "Box-Muller: log and sin/cos within 1 ULP each (libm), sqrt halves log's relative "
                        "error, two products round 0.5 ULP each; the reference rounds each step once: "
                        "at most 4 ULP of the output format")


TENSORFLOW = TensorFlow()


# ---------------------------------------------------------------------------------- stream semantics
def stateless_key_counter(seed: tuple[int, int]) -> tuple[tuple[int, int], tuple[int, int, int, int]]:
    """Rule 10 (S, GenerateKey): seed [a, b] (64 bits each) is scrambled by one Philox4x32-10 block:
    counter (lo32 a, hi32 a, lo32 b, hi32 b) under key (0x3ec8f720, 0x02461e29) gives words
    m0..m3; the op's key is (m0, m1) and its counter (0, 0, m2, m3)."""
    a, b = (int(s) & MASK64 for s in seed)
    words = [a & 0xFFFFFFFF, a >> 32, b & 0xFFFFFFFF, b >> 32]
    c0, c1, c2, c3 = (np.array([w], dtype=np.uint64) for w in words)
    m = [int(x) for x in philox.philox4x32(c0, c1, c2, c3, *SEED_KEY)[0]]
    return (m[0], m[1]), (0, 0, m[2], m[3])


def stateless_state(seed: tuple[int, int]) -> np.ndarray:
    """The 6-word state a stateless op with ``seed`` draws from (rule 10)."""
    key, counter_words = stateless_key_counter(seed)
    return state_words.state_from_words(counter_words, key)


def replica_key(key: int, replica: int) -> int:
    """Rule 13 (G, _preprocess_key): inside a strategy, replica r draws with key
    uniform_full_int(uint64) of counter (r, 0) under the generator's key: words 0 | 1 << 32 of
    Philox4x32-10(counter = (lo32 r, hi32 r, 0, 0), key)."""
    state = state_words.make_state(int(replica) & MASK64, key & MASK64)
    words = reference.words(state, 0, 2)
    return int(words[0]) | int(words[1]) << 32


def as_int64(value: int) -> int:
    """A 64-bit value as TensorFlow holds it (int64): a state word, a stateless seed."""
    value &= MASK64
    return value - (1 << 64) if value >> 63 else value


@dataclass
class Generator:
    """tf.random.Generator with the Philox algorithm, as a model (G).

    Rule 11: the state is three int64 values [counter low 64, counter high 64, key];
    from_seed(s) and reset_from_seed(s) chop a Python integer into 64-bit pieces, least
    significant first, padded with zeros on the left to three (create_rng_state(1234) is
    [1234, 0, 0]).
    Rule 12: a draw of shape S reads the state and skips it (rng_read_and_skip): the counter
    advances by 256 * prod(S) (UpdateMemWithPhiloxRandom), 128-bit; the draw itself is the
    stateless op on the state it read (rules 1-9 on that key and counter).
    Rule 13: inside a distribution strategy, the key is first hashed with the replica id.
    Rule 14: split(n) draws n uint64 keys (bits, int64, shape [n], hence rule 12's skip of 256 n)
    and makes n generators with state [0, 0, key_i].
    Rule 15: a checkpoint saves the state and restore puts it back: the stream continues
    exactly from the saving point.
    """

    counter: int = 0
    key: int = 0

    @classmethod
    def from_seed(cls, seed: int) -> Generator:
        generator = cls()
        generator.reset_from_seed(seed)
        return generator

    @classmethod
    def from_state(cls, state: Iterable[SupportsInt]) -> Generator:
        low, high, key = (int(v) & MASK64 for v in state)
        return cls(counter=low | high << 64, key=key)

    def reset_from_seed(self, seed: int) -> None:
        seed = int(seed)
        pieces = []
        for _ in range(3):
            pieces.append(seed & MASK64)
            seed >>= 64
        self.counter, self.key = pieces[0] | pieces[1] << 64, pieces[2]

    @property
    def state(self) -> list[int]:
        """Rule 11, as TensorFlow prints it (int64)."""
        return [as_int64(self.counter), as_int64(self.counter >> 64), as_int64(self.key)]

    def skip(self, delta: int) -> tuple[int, int]:
        """Rule 12: (counter, key) before, then the counter moves 256 * delta on."""
        read = (self.counter, self.key)
        self.counter = (self.counter + RESERVED_SAMPLES_PER_OUTPUT * int(delta)) % (1 << 128)
        return read

    def draw(self, kind: str, dtype: str, shape: tuple[int, ...] = (), *, low: float | int | None = None,
             high: float | int | None = None) -> np.ndarray:
        """Rule 12: the numbers of one Generator call (flat, row-major), state advanced."""
        count = math.prod(shape)
        counter_value, key = self.skip(count)
        request = Request(TensorFlow.name, kind, dtype, count, low, high)
        return TENSORFLOW.draw(request, state_words.make_state(counter_value, key))

    def normal(self, shape: tuple[int, ...] = (), dtype: str = "float32") -> np.ndarray:
        return self.draw(NORMAL, dtype, shape)

    def replicated(self, kind: str, dtype: str, shape: tuple[int, ...], replicas: int) -> list[np.ndarray]:
        """Rule 13: one call under a strategy of ``replicas`` (a generator created in its scope):
        every replica's copy of the state is read and skipped alike, each replica hashes the key
        with its id, so replica r gets the stateless draw on (counter, replica_key(key, r))."""
        count = math.prod(shape)
        counter_value, key = self.skip(count)
        request = Request(TensorFlow.name, kind, dtype, count)
        return [TENSORFLOW.draw(request, state_words.make_state(counter_value, replica_key(key, r)))
                for r in range(replicas)]

    def split(self, count: int) -> list[Generator]:
        """Rule 14."""
        keys = self.draw(BITS, "int64", (count,))
        return [Generator(counter=0, key=int(k) & MASK64) for k in keys]

    def save(self) -> tuple[int, int]:
        """Rule 15."""
        return (self.counter, self.key)

    def restore(self, saved: tuple[int, int]) -> None:
        self.counter, self.key = saved


# ---------------------------------------------------------------------------------- programs
# A program is what a guide example does, step by step (rngcheck/vectors/tensorflow_guide.json):
#   from_seed seed / reset_from_seed seed       (generator, default "g")
#   normal shape [expect]                       one Generator call (rule 12)
#   replicated replicas shape [expect per replica]   one call under a strategy (rule 13)
#   split count into                            rule 14: new generators named by ``into``
#   save name / restore name                    rule 15
#   state expect                                the generator's state as three int64 (rule 11)
#   stateless kind shape seed [expect]          a stateless op with seed [a, b] (rule 10)
STEP_OPS = ("from_seed", "reset_from_seed", "normal", "replicated", "split", "save", "restore", "state",
            "stateless")


@dataclass(frozen=True)
class Step:
    op: str
    generator: str = "g"
    seed: int | tuple[int, int] | None = None
    shape: tuple[int, ...] = ()
    count: int = 0
    into: tuple[str, ...] = ()
    replicas: int = 0
    kind: str = NORMAL
    name: str = ""
    expect: tuple[Any, ...] | None = None     # floats (None where not printed), per replica for ``replicated``

    @property
    def generator_seed(self) -> int:
        """The seed of from_seed and reset_from_seed: one integer."""
        if not isinstance(self.seed, int):
            raise ValueError(f"step {self.op}: the seed is one integer, got {self.seed!r}")
        return self.seed

    @property
    def seed_pair(self) -> tuple[int, int]:
        """The seed of a stateless op: two integers."""
        if not isinstance(self.seed, tuple) or len(self.seed) != 2:
            raise ValueError(f"step {self.op}: a stateless seed is two integers, got {self.seed!r}")
        return self.seed


@dataclass(frozen=True)
class Draw:
    """One draw of a program: the stateless request and state it comes down to, what the model
    gives, and what the source printed (None where it printed nothing)."""

    step: int
    label: str
    request: Request
    state: np.ndarray | None
    model: np.ndarray
    expected: tuple[Any, ...] | None


def run_program(steps: Iterable[Step]) -> tuple[list[Draw], list[tuple[int, list[int], list[int]]]]:
    """Run a program on the Generator model: its draws, and its state checks (step, expected, model)."""
    generators: dict[str, Generator] = {}
    saved: dict[str, tuple[int, int]] = {}
    draws: list[Draw] = []
    states: list[tuple[int, list[int], list[int]]] = []

    def generator(name: str) -> Generator:
        if name not in generators:
            raise ValueError(f"generator {name!r} is used before it is created")
        return generators[name]

    for index, step in enumerate(steps):
        if step.op == "from_seed":
            generators[step.generator] = Generator.from_seed(step.generator_seed)
        elif step.op == "reset_from_seed":
            generator(step.generator).reset_from_seed(step.generator_seed)
        elif step.op == "normal":
            g = generator(step.generator)
            count = math.prod(step.shape)
            counter_value, key = g.counter, g.key
            values = g.normal(step.shape)
            request = Request(TensorFlow.name, NORMAL, "float32", count)
            draws.append(Draw(index, f"{step.generator}.normal({list(step.shape)})", request,
                              state_words.make_state(counter_value, key), values, step.expect))
        elif step.op == "replicated":
            g = generator(step.generator)
            counter_value, key = g.counter, g.key
            replica_draws = g.replicated(step.kind, "float32", step.shape, step.replicas)
            request = Request(TensorFlow.name, step.kind, "float32", math.prod(step.shape))
            for replica, replica_values in enumerate(replica_draws):
                expected = None if step.expect is None else step.expect[replica]
                draws.append(Draw(index, f"replica {replica}: {step.generator}.{step.kind}({list(step.shape)})",
                                  request, state_words.make_state(counter_value, replica_key(key, replica)),
                                  replica_values, expected))
        elif step.op == "split":
            for name, new in zip(step.into, generator(step.generator).split(step.count)):
                generators[name] = new
        elif step.op == "save":
            saved[step.name] = generator(step.generator).save()
        elif step.op == "restore":
            if step.name not in saved:
                raise ValueError(f"checkpoint {step.name!r} is restored before it is saved")
            generator(step.generator).restore(saved[step.name])
        elif step.op == "state":
            states.append((index, list(step.expect or ()), generator(step.generator).state))
        elif step.op == "stateless":
            request = Request(TensorFlow.name, step.kind, "float32", math.prod(step.shape), seed=step.seed_pair)
            draws.append(Draw(index, f"stateless_{step.kind}({list(step.shape)}, seed={list(step.seed_pair)})",
                              request, None, TENSORFLOW.draw(request), step.expect))
        else:
            raise ValueError(f"unknown step {step.op!r}")
    return draws, states
