"""Intel oneMKL's (VSL's) numbers from Philox words, rule by rule.

Sources (facts read there, written here):
  V  oneMKL Developer Reference, Statistical Functions, "Random Number Generators":
     VSL_BRNG_PHILOX4X32X10, vsRngUniform/vdRngUniform (VSL_RNG_METHOD_UNIFORM_STD),
     viRngUniformBits32, vsRngGaussian/vdRngGaussian (VSL_RNG_METHOD_GAUSSIAN_BOXMULLER,
     _BOXMULLER2, _ICDF): the method names, what each returns, that the standard uniform
     method may return values outside [a, b) for some bounds (use _STD_ACCURATE)
  M  measured on MKL 2026.2's libmkl_rt.so.3 through ctypes (viRngUniformBits32 against the
     others on one stream: tests/test_numbers_conventions.py). MKL's source is closed, so the
     arithmetic below is the one that reproduces its outputs bit for bit (uniforms) or within
     the stated bound (normals); it is a measured model, not a reading of its code.

The word stream. MKL's Philox4x32x10 stream is the operator's stream when its six seed words are
the state's key words then counter words (rngcheck.backends.mkl_backend): the first block MKL
computes is the counter itself (no increment first), viRngUniformBits32 returns the words in
order, lanes in order, one per value, and a stream keeps a partly used block for its next call
(so successive calls continue the word stream rather than starting at a block boundary). Every
method below reads words from that stream in order, one word per uniform (32 bits, also for
doubles), two per Box-Muller pair (M).

Conversions:
  1. float32 uniform, method STD: the word read as a signed int32, converted to float (rounded),
     times (b - a) / 2^32, plus (a + b) / 2, in float (M). For [0, 1): i * 2^-32 + 0.5, and the 191
     words 0x7fffff41..0x7fffffff give 1.0 (the int rounds to 2^31, or to 2^31 - 128 and the sum
     ties to even at 1): V warns that the STD method may reach b.
  2. float64 uniform, STD: int32(word) * ((b - a) / 2^32) + (a + b) / 2 in double (M); for
     [0, 1) it is exact: int32(word) * 2^-32 + 0.5, in [0, 1) (one word per value, 32 bits).
  3. normal, BOXMULLER (method 0, one value per pair): u1 = rule 1/2 of word 2k, u2 = rule 1/2 of
     word 2k+1, element k = sqrt(-2 ln u1) * sin(2 pi u2) (M; V: one number from two uniforms).
     In float every step is a float operation (2 pi is float(pi) doubled); in double, double, with
     MKL's transcendentals at the accuracy its CPU dispatch chooses (DOUBLE_NORMAL_ULPS: measured 3
     ULP on one machine and about 26 correct bits on an AVX-512 Xeon, both MKL 2026.2).
     u1 = 0 (word 0x80000000) gives an infinite result; that word has probability 2^-32.
  4. normal, BOXMULLER2 (method 1): words 2k, 2k+1 give elements 2k = r sin(2 pi u2) and
     2k+1 = r cos(2 pi u2), r = sqrt(-2 ln u1) (M; V: two numbers from two uniforms).
  5. normal, ICDF (method 2): element i = Phi^-1(u) with u = int32(word i) * 2^-32 + 0.5 in double
     (M). MKL's Phi^-1 is an approximation with an absolute error up to 8.2e-9 (measured, double),
     which is not a bounded number of ULPs near 0; the convention's normal is therefore rule 3
     and ICDF is given here as a documented rule only (tests hold its absolute error).
  6. bits: uint32 = word i (viRngUniformBits32).
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from . import floats
from .box_muller import radius32, sincos32
from .curand import SAME_ARITHMETIC
from .request import BITS, NORMAL, UNIFORM, Convention, Request, required_state
from .tensorflow import interleave, stream
from .tolerance import EXACT, Bound, Interval, multiply_add_orders

SOURCE_V = "oneMKL Developer Reference: Statistical Functions / Random Number Generators (VSL)"
SOURCE_M = "measured: libmkl_rt (MKL 2026.2) viRngUniformBits32 against vsRngUniform/vdRngUniform/v?RngGaussian"

BOXMULLER, BOXMULLER2, ICDF = 0, 1, 2       # VSL_RNG_METHOD_GAUSSIAN_*
# A double normal's bound (rule 3's note): MKL 2026.2 on an AVX-512 Xeon evaluates Box-Muller's log, sqrt
# and sin to about 26 bits (relative error up to 1.03e-8 measured on 4096 numbers: 85,178,727 ULP at worst
# on 65,536), where another machine measured 3 ULP. 2^27 ULP is a relative error of 2^-26.
DOUBLE_NORMAL_ULPS = 1 << 27
TWO_PI_FLOAT = np.float32(2.0) * np.float32(math.pi)


def signed(words: np.ndarray) -> np.ndarray:
    return np.asarray(words, dtype=np.uint32).view(np.int32)


def uniform(dtype: str, words: np.ndarray, low: float = 0.0, high: float = 1.0, fused: bool = False) -> np.ndarray:
    """Rules 1-2: int32(word) * (high - low) / 2^32 + (low + high) / 2 in ``dtype`` (the product and
    the sum each rounded, or, ``fused``, one multiply-add)."""
    kind = np.float32 if dtype == "float32" else np.float64
    scale = kind((high - low) * 2.0 ** -32)
    middle = kind((low + high) / 2.0)
    result: np.ndarray = floats.multiply_add(floats.format_of(dtype), signed(words).astype(kind), scale, middle,
                                             fused).astype(kind)
    return result


def _box_muller(dtype: str, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(r, sin, cos) of rules 3-4. float32: each step rounded to float (transcendentals evaluated
    in binary64 and rounded once); float64: binary64."""
    u1, u2 = uniform(dtype, x), uniform(dtype, y)
    if dtype == "float64":
        angle = 2.0 * math.pi * u2
        return np.sqrt(-2.0 * np.log(u1)), np.sin(angle), np.cos(angle)
    return (radius32(u1), *sincos32(TWO_PI_FLOAT * u2))


def box_muller(dtype: str, words: np.ndarray) -> np.ndarray:
    """Rule 3: one value per pair of words."""
    r, sin, _ = _box_muller(dtype, words[0::2], words[1::2])
    result: np.ndarray = r * sin
    return result


def box_muller2(dtype: str, words: np.ndarray) -> np.ndarray:
    """Rule 4: two values per pair of words, sine first."""
    r, sin, cos = _box_muller(dtype, words[0::2], words[1::2])
    return interleave(r * sin, r * cos)


def icdf(dtype: str, words: np.ndarray) -> np.ndarray:
    """Rule 5 with the exact inverse normal CDF (MKL's differs by up to ~1e-8 absolute)."""
    from scipy.special import ndtri
    result: np.ndarray = ndtri(uniform("float64", words)).astype(dtype)
    return result


class Mkl(Convention):
    name = "mkl"
    title = "Intel oneMKL VSL, VSL_BRNG_PHILOX4X32X10 (v?RngUniform STD, v?RngGaussian BOXMULLER)"
    kinds = {UNIFORM: ("float32", "float64"), NORMAL: ("float32", "float64"), BITS: ("uint32",)}
    sources = {UNIFORM: f"{SOURCE_V} (vsRngUniform, vdRngUniform: VSL_RNG_METHOD_UNIFORM_STD); {SOURCE_M}",
               NORMAL: f"{SOURCE_V} (vsRngGaussian, vdRngGaussian: VSL_RNG_METHOD_GAUSSIAN_BOXMULLER); {SOURCE_M}",
               BITS: f"{SOURCE_V} (viRngUniformBits32)"}

    def interval(self, request: Request) -> Interval | None:
        """Rule 1: the STD method reaches b (V; [0, 1) in float: 1.0 from 191 words): [a, b]."""
        if request.kind == UNIFORM:
            return Interval(*request.uniform_range, high_closed=True)
        return super().interval(request)

    def draw(self, request: Request, state: npt.ArrayLike | None = None) -> np.ndarray:
        n = request.count
        if request.kind == UNIFORM:
            low, high = request.uniform_range
            return uniform(request.dtype, stream(required_state(state), 0, n), float(low), float(high))
        if request.kind == NORMAL:
            with np.errstate(divide="ignore"):
                return box_muller(request.dtype, stream(required_state(state), 0, 2 * n))
        return stream(required_state(state), 0, n)

    def orders(self, request: Request, state: npt.ArrayLike | None) -> np.ndarray | None:
        """Tolerance rule 7 for the ranged uniform: the product and sum rounded apart, or fused."""
        if request.kind != UNIFORM or request.low is None:
            return None
        low, high = request.uniform_range
        words = stream(required_state(state), 0, request.count)
        return np.stack([uniform(request.dtype, words, float(low), float(high), fused) for fused in (False, True)])

    def bound(self, request: Request) -> Bound:
        if request.kind == BITS:
            return EXACT
        if request.kind == UNIFORM:
            if request.low is None:
                return SAME_ARITHMETIC
            return multiply_add_orders("i * scale + middle, the scale and middle MKL's own roundings of "
                                       "(b - a) / 2^32 and (a + b) / 2 (bit-exact as measured for [-3, 5))")
        if request.dtype == "float64":
            return Bound(DOUBLE_NORMAL_ULPS, "Box-Muller in double with MKL's transcendentals at the accuracy its "
                         "CPU dispatch chooses: 3 ULP measured on one machine, but up to 8.5e7 ULP (relative "
                         "1.03e-8, about 26 correct bits: VML's enhanced-performance accuracy) measured with "
                         "MKL 2026.2 on an AVX-512 Xeon; 2^27 ULP (relative 2^-26) covers both; float's 4 ULP "
                         "do not apply")
        return Bound(4, "Box-Muller: u1, u2 bit-exact (rule 1/2); log within 1 ULP (halved by sqrt: 0.5), sqrt "
                        "0.5, sin within 1 ULP of the rounded angle, the product 0.5, the reference's own "
                        "rounding of each step 0.5: at most 4 ULP; measured 3 (MKL 2026.2)")


MKL = Mkl()
