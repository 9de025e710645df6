"""PyTorch's numbers from Philox words (its CUDA generator), rule by rule.

Sources (PyTorch 2.13; facts read there, written here):
  D  aten/src/ATen/native/cuda/DistributionTemplates.h (uniform_kernel, normal_kernel,
     uniform_and_transform, normal_and_transform, random_from_to_kernel,
     random_full_64_bits_range_kernel, random_kernel)
  T  aten/src/ATen/core/TransformationHelper.h (uniform_int_from_to, uniform_int_full_range,
     uniform_int, normal)
  H  aten/src/ATen/core/DistributionsHelper.h (uniform_int_from_to_distribution: the 2^28 rule,
     shared by the CPU generator)
  C  the cuRAND device functions those kernels call (rngcheck.numbers.curand rules 1-4)

The word stream. PyTorch's Philox generator is CUDA's: every thread of a kernel runs
curand_init(seed, thread index, offset) and takes its elements grid-stride (element li from the
thread li mod (threads), lane by lane), so where element i's words sit in the generator's stream
depends on the launch geometry (D: calc_execution_policy). The rules below read one thread's
words in order (word i of the operator's stream); mapping PyTorch's layout is a later issue.
The CPU generator is mt19937, not Philox: only the integer transformations (T, H) are shared
with it, and those are what tests/test_numbers_conventions.py drives with known words.

Conversions:
  1. uniform float32/float16/bfloat16 in [from, to): r = cuRAND's rule 1 on word i (a float in
     (0, 1]); value = (dtype)(r * (float)(to - from) + from) in float (a fused multiply-add: nvcc
     contracts by default; the cast rounds once more for float16/bfloat16); a value equal to ``to``
     becomes ``from`` (D: "reverse the bounds"). For [0, 1) that is r, with 1.0 turned into 0.0
     (float16 and bfloat16 round r first, so every r that rounds to 1 gives 0).
  2. uniform float64: r = cuRAND's rule 2 on words 2i, 2i+1 (curand_uniform2_double), then as
     rule 1 in double (D).
  3. normal float32/float16/bfloat16: curand_normal4 (cuRAND's rule 3, sine first) in float, then
     x * std + mean (T, normal) and a cast to the dtype (D). normal float64: curand_normal2_double
     (cuRAND's rule 4) (D).
  4. integers random_(from, to), range = to - from (H, D): a range below 2^28 takes word i and
     gives from + word mod range; a range of 2^28 or more takes words 2i (high) and 2i+1 (low) as
     a uint64 and gives from + uint64 mod range (T, uniform_int_from_to: the sum in int64, then
     cast to the dtype). (Facebook's internal builds, FBCODE_CAFFE2, switch at 2^32 for 64-bit
     types instead.)
  5. bits: random_(-2^63, None) on int64 is word 2i << 32 | word 2i+1 as int64
     (random_full_64_bits_range_kernel with uniform_int_full_range).
  6. random_() with no range (not a Request kind here): int64 and float64 take the uint64 of rule
     4 modulo 2^63 (float64: 2^53 + 1), the others word i modulo the type's max + 1 (a float
     type: 2^digits + 1, float32 2^24 + 1; bool: the low bit) (T, uniform_int).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from . import floats
from .curand import SAME_ARITHMETIC, box_muller_double, box_muller_float, uniform_double, uniform_float
from .request import BITS, INTEGERS, NORMAL, UNIFORM, Convention, Request, required_state
from .tensorflow import interleave, stream
from .tolerance import EXACT, Bound, multiply_add_orders

SOURCE_D = "aten/src/ATen/native/cuda/DistributionTemplates.h"
SOURCE_T = "aten/src/ATen/core/TransformationHelper.h"
SOURCE_H = "aten/src/ATen/core/DistributionsHelper.h"
WIDE_RANGE = 1 << 28           # H: from this range on, 64 random bits per element


def uniform(dtype: str, words: np.ndarray, low: float = 0.0, high: float = 1.0, fused: bool = True) -> np.ndarray:
    """Rules 1-2 (held per floats rule 1). ``r * range + from`` is one fused multiply-add (nvcc
    contracts a * b + c by default): one rounding, in float (then cast) or in double; ``fused``
    False: the product rounded first (a build that does not contract)."""
    if dtype == "float64":
        r = uniform_double(words[0::2], words[1::2])
        lo, hi = np.float64(low), np.float64(high)
        value = floats.multiply_add(floats.FLOAT64, r, hi - lo, lo, fused)
        return np.where(value == hi, lo, value)
    r = uniform_float(words)
    fmt = floats.format_of(dtype)
    lo, hi = (floats.as_values(fmt, floats.round_to(fmt, np.array([x])))[0] for x in (low, high))
    span = np.float32(np.float32(hi) - np.float32(lo))           # opmath (float) of to - from
    in_float = floats.multiply_add(floats.FLOAT32, r, span, lo, fused)            # one rounding, or two, in float
    value = in_float if dtype == "float32" else floats.round_to(fmt, in_float.astype(np.float64))
    as_float = floats.as_values(fmt, value)
    start = floats.round_to(fmt, np.array([lo]))[0]
    return np.where(as_float == hi, start, value).astype(fmt.storage)


def normal(dtype: str, words: np.ndarray) -> np.ndarray:
    """Rule 3 (mean 0, std 1) on a whole number of pairs of words."""
    if dtype == "float64":
        return interleave(*box_muller_double(words[0::4], words[1::4], words[2::4], words[3::4]))
    values = interleave(*box_muller_float(words[0::2], words[1::2]))
    return values if dtype == "float32" else floats.round_to(floats.format_of(dtype), values.astype(np.float64))


def uint64_pairs(words: np.ndarray) -> np.ndarray:
    """Rules 4-5: word 2i high, word 2i+1 low."""
    words = np.asarray(words, dtype=np.uint64)
    result: np.ndarray = (words[0::2] << np.uint64(32)) | words[1::2]
    return result


def words_for_integers(low: int, high: int) -> int:
    return 2 if high - low >= WIDE_RANGE else 1


def integers(dtype: str, words: np.ndarray, low: int, high: int) -> np.ndarray:
    """Rule 4: from + bits mod range, in int64, cast to ``dtype`` (wrapping as C++ casts do)."""
    span = high - low
    bits = uint64_pairs(words) if span >= WIDE_RANGE else np.asarray(words, dtype=np.uint64)
    values = [(int(b) % span + low) for b in bits]
    bits_of = np.dtype(dtype).itemsize * 8
    wrapped = [v & ((1 << bits_of) - 1) for v in values]
    return np.array(wrapped, dtype=np.uint64).astype(f"uint{bits_of}").view(dtype)


# rule 6: the modulus of random_() with no range, and whether the element takes 64 bits
UNBOUNDED = {"bool": (2, False), "uint8": (1 << 8, False), "int8": (1 << 7, False), "int16": (1 << 15, False),
             "int32": (1 << 31, False), "int64": (1 << 63, True), "float16": ((1 << 11) + 1, False),
             "bfloat16": ((1 << 8) + 1, False), "float32": ((1 << 24) + 1, False), "float64": ((1 << 53) + 1, True)}


def unbounded(dtype: str, words: np.ndarray) -> np.ndarray:
    """Rule 6: random_() with no range, as exact integers (a float dtype holds them exactly;
    bool: the low bit). One word per element, two (high first) for int64 and float64."""
    modulus, wide = UNBOUNDED[dtype]
    bits = uint64_pairs(words) if wide else np.asarray(words, dtype=np.uint64)
    return np.array([int(b) % modulus for b in bits], dtype=np.uint64)


class PyTorch(Convention):
    name = "pytorch"
    title = "PyTorch, CUDA Philox generator (torch.rand / randn / random_ / randint on a CUDA device)"
    kinds = {UNIFORM: ("float16", "bfloat16", "float32", "float64"),
             NORMAL: ("float16", "bfloat16", "float32", "float64"),
             INTEGERS: ("int32", "int64"),
             BITS: ("int64",)}
    sources = {UNIFORM: f"{SOURCE_D} (uniform_kernel); curand_uniform.h",
               NORMAL: f"{SOURCE_D} (normal_kernel); {SOURCE_T} (normal); curand_normal.h",
               INTEGERS: f"{SOURCE_D} (random_from_to_kernel); {SOURCE_T} (uniform_int_from_to); {SOURCE_H}",
               BITS: f"{SOURCE_D} (random_full_64_bits_range_kernel); {SOURCE_T} (uniform_int_full_range)"}

    def draw(self, request: Request, state: npt.ArrayLike | None = None) -> np.ndarray:
        n, dtype = request.count, request.dtype
        if request.kind == UNIFORM:
            low, high = request.uniform_range
            return uniform(dtype, stream(required_state(state), 0, n * (2 if dtype == "float64" else 1)), low, high)
        if request.kind == NORMAL:
            per_pair = 4 if dtype == "float64" else 2
            return normal(dtype, stream(required_state(state), 0, -(-n // 2) * per_pair))[:n]
        if request.kind == INTEGERS:
            low_int, high_int = request.integer_range
            per = words_for_integers(low_int, high_int)
            return integers(dtype, stream(required_state(state), 0, n * per), low_int, high_int)
        return uint64_pairs(stream(required_state(state), 0, 2 * n)).view(np.int64)

    def orders(self, request: Request, state: npt.ArrayLike | None) -> np.ndarray | None:
        """Tolerance rule 7 for the ranged uniform: fused (the reference), or the product rounded first."""
        if request.kind != UNIFORM or request.low is None:
            return None
        low, high = request.uniform_range
        words = stream(required_state(state), 0, request.count * (2 if request.dtype == "float64" else 1))
        return np.stack([uniform(request.dtype, words, low, high, fused) for fused in (True, False)])

    def bound(self, request: Request) -> Bound:
        if request.kind in (INTEGERS, BITS):
            return EXACT
        if request.kind == UNIFORM:
            if request.low is None:
                return SAME_ARITHMETIC
            return multiply_add_orders("r * range + from in float (double for float64), then cast; the "
                                       "reference fuses it as nvcc does by default, a build that does not "
                                       "rounds the product first (source-only: no CUDA device here)")
        if request.dtype in ("float16", "bfloat16"):
            return Bound(4, "cuRAND's float Box-Muller (within 4 float32 ULP) cast to the narrow format: the "
                            "rounding of a float32 within 4 ULP of the exact model (tolerance rule 5)", wide="float32")
        return Bound(4, "cuRAND's Box-Muller with correctly rounded sin/cos (rngcheck.numbers.curand's bound, same "
                        "derivation): 4 ULP. On a GPU cuRAND's device code uses __sincosf (float, absolute error) "
                        "and sincospi (double), which differ by more near the zeros of sin/cos: source-only, "
                        "not measured (no CUDA device)")


PYTORCH = PyTorch()
