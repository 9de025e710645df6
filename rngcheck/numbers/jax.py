"""JAX's numbers from random bits, rule by rule (jax.random on any PRNG implementation).

Sources (JAX 0.10.2; facts read there, written here):
  R  jax/_src/random/core.py (_uniform, _normal_real, _randint, bits) (older trees:
     jax/_src/random.py)
  S  jax/_src/lax/special.py (erf_inv: lowered to chlo.erf_inv, which XLA expands to a
     polynomial approximation: M. Giles, "Approximating the erfinv function", GPU Computing
     Gems Jade, 2011, single and double precision variants)
  P  jax/_src/random/threefry2x32.py, philox4x32.py (how a key's 32-bit outputs become the
     8/16/32/64-bit ``bits`` a distribution reads)
  M  measured against JAX 0.10.2 on CPU (tests/test_numbers_conventions.py)

The word stream. Every JAX distribution reads ``_random_bits(key, width, shape)``: one unsigned
integer of ``width`` bits per element, made by the key's PRNG implementation (P). How 32-bit
outputs become those integers is the implementation's (threefry's partitionable mode and
philox4x32 give one 32-bit output per element and combine two, first one high, for 64 bits;
threefry's default mode splits the output array in halves for 64 bits and cuts words into
little-endian pieces for 8 and 16). This convention reads the operator's stream the
per-element way: element i takes word i (its low 16 or 8 bits for the narrow widths), and a
64-bit element takes word 2i as its high half and word 2i+1 as its low half. The conversions
from bits on (rules 1-5) are JAX's whatever the implementation.

Conversions:
  1. uniform in [0, 1): the top ``nmant`` bits of an element of ``width`` bits become the
     mantissa of a float in [1, 2) (bits >> (width - nmant) | bits of 1.0), minus 1 (R):
       float32: 32-bit bits >> 9;  float64: 64-bit bits >> 12;  float16: 16-bit bits >> 6;
       bfloat16: nmant = 7 < 8, so JAX draws 8-bit bits, widens them to 16 and shifts by 1.
     Exact; 1.0 never comes out. (TensorFlow's rule 1 uses the LOW 23 bits; JAX the HIGH.)
  2. uniform in [low, high): max(low, u * (high - low) + low) in the dtype (R). XLA on CPU fuses
     the multiply-add for float32/float64 (one rounding) and rounds each step for float16 (M).
  3. normal: u = rule 2 with low = nextafter(-1, 0) and high = 1 (so the span high - low rounds
     to 2 for float16/32/64, and u = 2 x + low); element = sqrt(2) * erf_inv(u), the constant
     rounded to the dtype, the product in the dtype (R, S). One word (or pair) per element. The
     reference rounds the exact erf_inv to the dtype; for float16 and bfloat16 that is what JAX
     returns (M: bfloat16 bit-exact, float16 within 1 ULP), for float32/float64 XLA's polynomial
     erf_inv is further off (see the bounds).
  4. integers in [low, high) (randint): the key is split in two and each half draws ``width``
     bits per element: higher, lower (R). With span = high - low in the unsigned type (1 when
     high <= low), m = (2^(width/2) mod span)^2 mod span, the offset is
     ((higher mod span) * m + (lower mod span)) mod span, all in the unsigned type of the width,
     and the element is low + offset; every product and sum wraps modulo 2^width. So for a span
     above 2^(width/2) the square 2^width wraps to 0, m = 0 and only ``lower`` counts: one word
     of randomness, not the two the code comment promises. Widths below 32 are drawn in int32
     and cast. Because the two draws come from two split keys, which words they are is the PRNG
     implementation's: the convention states the rule on (higher, lower) and does not draw it
     from one stream.
  5. bits: jax.random.bits is the ``bits`` themselves (uint32: word i; uint64: word 2i << 32 |
     word 2i+1).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from . import floats
from .request import BITS, NORMAL, UNIFORM, Convention, Request, required_state
from .tensorflow import stream
from .tolerance import EXACT, Bound

SOURCE_R = "jax/_src/random/core.py"
SOURCE_S = "jax/_src/lax/special.py (erf_inv -> chlo.erf_inv)"
SOURCE_P = "jax/_src/random/threefry2x32.py, philox4x32.py"

# dtype -> (width of the bits drawn, explicit mantissa bits)
WIDTHS = {"float16": (16, 10), "bfloat16": (8, 7), "float32": (32, 23), "float64": (64, 52)}
UINT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


def bits_from_words(width: int, words: np.ndarray) -> np.ndarray:
    """The per-element reading of the stream: ``width``-bit integers (see the module docstring)."""
    words = np.asarray(words, dtype=np.uint32)
    if width == 64:
        result: np.ndarray = (words[0::2].astype(np.uint64) << np.uint64(32)) | words[1::2].astype(np.uint64)
        return result
    return words.astype(UINT[width])            # the low 32, 16 or 8 bits


def words_per_element(dtype: str) -> int:
    return 2 if dtype in ("float64", "uint64", "int64") else 1


def uniform_from_bits(dtype: str, bits: np.ndarray) -> np.ndarray:
    """Rule 1: [0, 1) in ``dtype`` from the ``bits`` JAX draws for it (held per floats rule 1)."""
    width, mantissa = WIDTHS[dtype]
    fmt = floats.format_of(dtype)
    unsigned = np.dtype(fmt.unsigned).type
    shifted = np.asarray(bits, dtype=UINT[width]).astype(unsigned) >> unsigned(width - mantissa)
    one_to_two = shifted | unsigned(fmt.one_bits)
    if dtype == "bfloat16":
        return floats.bfloat16_from_float32(floats.bfloat16_to_float32(one_to_two) - np.float32(1.0))
    kind = np.dtype(dtype).type
    result: np.ndarray = one_to_two.view(dtype) - kind(1.0)
    return result


def scaled(dtype: str, unit: np.ndarray, low: float, high: float) -> np.ndarray:
    """Rule 2: max(low, u * (high - low) + low) in ``dtype``. float32 and float64: the product and
    sum fused, one rounding (XLA on CPU emits a fused multiply-add; measured bit-exact for
    float32); float16 and bfloat16: each step rounded to the dtype (measured for float16)."""
    if dtype == "bfloat16":
        fmt = floats.BFLOAT16

        def rounded(values: npt.ArrayLike) -> np.ndarray:
            return floats.bfloat16_to_float32(floats.round_to(fmt, np.asarray(values, dtype=np.float64)))

        lo, hi = rounded([low])[0], rounded([high])[0]
        span = rounded([hi - lo])[0]
        value = rounded(rounded(floats.bfloat16_to_float32(unit) * span) + lo)
        return floats.bfloat16_from_float32(np.maximum(lo, value))
    kind = np.dtype(dtype).type
    lo, hi = kind(low), kind(high)
    if dtype == "float16":
        result: np.ndarray = np.maximum(lo, unit * (hi - lo) + lo).astype(dtype)
        return result
    value = floats.fused_multiply_add(floats.format_of(dtype), unit, hi - lo, lo)
    result = np.maximum(lo, value)
    return result


def normal_from_bits(dtype: str, bits: np.ndarray) -> np.ndarray:
    """Rule 3 with the exact erf_inv (scipy's, in binary64) rounded to ``dtype``, times sqrt(2)
    rounded to ``dtype``, the product rounded to ``dtype`` (held per floats rule 1)."""
    from scipy.special import erfinv

    fmt = floats.format_of(dtype)
    unit = uniform_from_bits(dtype, bits)
    if dtype == "bfloat16":
        low = float(floats.bfloat16_to_float32(np.array([0xBF7F], np.uint16))[0])   # nextafter(-1, 0)
        u = floats.as_values(fmt, scaled(dtype, unit, low, 1.0))
        inverse = floats.as_values(fmt, floats.round_to(fmt, erfinv(u)))
        root2 = floats.as_values(fmt, floats.round_to(fmt, np.array([np.sqrt(2.0)])))[0]
        return floats.round_to(fmt, inverse * root2)
    kind = np.dtype(dtype).type
    low = np.nextafter(kind(-1.0), kind(0.0))
    u = scaled(dtype, unit, float(low), 1.0)
    inverse = erfinv(u.astype(np.float64)).astype(dtype)
    result: np.ndarray = (kind(np.sqrt(2.0)) * inverse).astype(dtype)
    return result


def randint_from_bits(dtype: str, higher: np.ndarray, lower: np.ndarray, low: int, high: int) -> np.ndarray:
    """Rule 4 on two ``bits`` arrays of the dtype's width (int32/uint32: 32, int64/uint64: 64)."""
    width = 64 if dtype in ("int64", "uint64") else 32
    mask = (1 << width) - 1
    span = (high - low) & mask if high > low else 1
    if span == 0:                       # the whole range: the modulus is 2^width
        span = 1 << width
    multiplier = (((1 << (width // 2)) % span) ** 2 & mask) % span      # the square wraps in the width
    offsets = [((int(h) % span) * multiplier + int(lo_) % span) & mask for h, lo_ in zip(higher, lower)]
    return np.array([low + (o % span) for o in offsets], dtype=dtype)


class Jax(Convention):
    name = "jax"
    title = "JAX (jax.random.uniform / normal / randint / bits), bits read one element per word"
    kinds = {UNIFORM: ("float16", "bfloat16", "float32", "float64"),
             NORMAL: ("float16", "bfloat16", "float32", "float64"),
             BITS: ("uint32", "uint64")}
    sources = {UNIFORM: f"{SOURCE_R} (_uniform); {SOURCE_P}",
               NORMAL: f"{SOURCE_R} (_normal_real); {SOURCE_S}",
               BITS: f"{SOURCE_R} (bits); {SOURCE_P}"}
    reaches_high = True   # rule 2: max(low, u * (high - low) + low), no min: the sum can round onto high

    def draw(self, request: Request, state: npt.ArrayLike | None = None) -> np.ndarray:
        n, dtype = request.count, request.dtype
        words = stream(required_state(state), 0, n * words_per_element(dtype))
        if request.kind == BITS:
            return bits_from_words(64 if dtype == "uint64" else 32, words)
        bits = bits_from_words(WIDTHS[dtype][0], words)
        if request.kind == NORMAL:
            return normal_from_bits(dtype, bits)
        unit = uniform_from_bits(dtype, bits)
        return unit if request.low is None else scaled(dtype, unit, *request.uniform_range)

    def bound(self, request: Request) -> Bound:
        if request.kind == BITS or (request.kind == UNIFORM and request.low is None):
            return EXACT
        if request.kind == UNIFORM:
            return Bound(0, "the reference rounds as XLA on CPU does (fused for float32/float64, step by step for "
                            "float16/bfloat16; measured bit-exact); an implementation that rounds the product "
                            "separately differs by one rounding, which is many ULPs of a result near 0 when "
                            "low < 0 < high, and is reported")
        if request.dtype in ("float16", "bfloat16"):
            return Bound(1, "erf_inv's own error (a few float32 ULP, see float32) is far below one step of a "
                            "16-bit format (2^13 or 2^16 float32 ULPs) but can move its rounding by one step: "
                            "1 ULP (measured: bfloat16 bit-exact, float16 within 1 ULP on 2^18 draws, JAX 0.10.2 "
                            "CPU)")
        if request.dtype == "float64":
            return Bound(512, "XLA's double erf_inv is Giles' double-precision polynomial, not a correctly "
                              "rounded function (the reference's scipy erfinv is within a few ULP); the product "
                              "with sqrt(2) rounds once in each: measured median 0-1, worst 284 ULP in the tail on "
                              "2^16 draws (JAX 0.10.2 CPU); 512 admits that and still fails a wrong conversion, "
                              "which is off by far more in most elements")
        return Bound(128, "XLA's float32 erf_inv is Giles' single-precision polynomial approximation (two "
                          "branches on w = -log(1 - u^2)); its error is up to ~2e-5 relative in the tail branch "
                          "(|u| near 1), i.e. ~90 ULP, and 1-3 ULP in the central one; the product with "
                          "sqrt(2) rounds once: 128 ULP (measured: median 1, 99% 3, max 91 on 2^20 draws, "
                          "JAX 0.10.2 CPU); a wrong conversion is off by far more in most elements")


JAX = Jax()
