"""Floating-point formats as bits: the four widths the numbers layer produces, and ULPs.

Sources: IEEE 754-2008 (binary16, binary32, binary64); Google's bfloat16 (the high half of a
binary32: 1 sign, 8 exponent, 7 mantissa bits), as TensorFlow's and Eigen's ``bfloat16``.

Rules:
  1. A value of a format is held as numpy's own dtype (float16, float32, float64); a bfloat16
     value is held as its 16 bits in a uint16 array (numpy has no bfloat16). ``as_values``
     turns any of them into float64 for arithmetic and display (every format widens exactly).
  2. Rounding to bfloat16 is round-to-nearest-even on the binary32 bits (Eigen's
     ``float_to_bfloat16_rtne``); a NaN stays a NaN (quiet).
  3. A format's ``ordinal`` of a value maps its bits onto integers so that consecutive
     representable values are consecutive integers, +0 and -0 both 0 (the sign-magnitude
     bits folded onto a two's complement line).
  4. The ULP distance of two values of one format is the difference of their ordinals: the
     number of representable values one would step over to get from one to the other. A NaN
     is infinitely far from everything but a NaN.
  5. A fused multiply-add (``fused_multiply_add``) rounds a * b + c once, as IEEE 754's
     fusedMultiplyAdd does: the exact value, rounded to the nearest value of the format, ties to
     even. numpy has no fma; the product's and the sum's rounding errors are recovered exactly
     (Dekker's product, Knuth's sum: error-free transformations in binary64). Where they hold the
     exact value as one binary64 (or, for binary64 itself, as two whose sum IEEE rounds once), the
     rounding is decided there, ties included; any other element whose exact value lies too near a
     midpoint of the format for binary64 to decide is rounded from its exact rational value.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import numpy.typing as npt

INFINITE_ULPS = np.iinfo(np.int64).max


@dataclass(frozen=True)
class Format:
    name: str
    bits: int            # storage width
    mantissa: int        # explicit mantissa bits
    exponent: int        # exponent bits
    storage: str         # the numpy dtype a value is held in (rule 1)
    unsigned: str        # the unsigned integer dtype of its bits

    @property
    def exponent_bias(self) -> int:
        return (1 << (self.exponent - 1)) - 1

    @property
    def one_bits(self) -> int:
        """The bits of 1.0: the bias in the exponent field, a zero mantissa."""
        return self.exponent_bias << self.mantissa

    def bits_of(self, values: npt.ArrayLike) -> np.ndarray:
        """The bits of values held in this format's storage (rule 1)."""
        array = np.asarray(values, dtype=self.storage)
        return array.view(self.unsigned) if self.storage != self.unsigned else array

    def from_bits(self, bits: npt.ArrayLike) -> np.ndarray:
        """Values from their bits, held in this format's storage."""
        array = np.asarray(bits).astype(self.unsigned)
        return array.view(self.storage) if self.storage != self.unsigned else array

    def ordinal(self, values: npt.ArrayLike) -> np.ndarray:
        """Rule 3: consecutive representable values map to consecutive int64s."""
        bits = self.bits_of(values).astype(np.int64) if self.bits < 64 else \
            self.bits_of(values).view(np.int64).copy()
        sign = np.int64(1) << np.int64(self.bits - 1)
        if self.bits < 64:
            negative = bits >= sign
            magnitude = np.where(negative, bits - sign, bits)
        else:
            negative = bits < 0
            magnitude = bits & np.int64(0x7FFFFFFFFFFFFFFF)
        return np.where(negative, -magnitude, magnitude)

    def is_nan(self, values: npt.ArrayLike) -> np.ndarray:
        nan: np.ndarray = np.isnan(as_values(self, values))
        return nan


FLOAT16 = Format("float16", 16, 10, 5, "float16", "uint16")
BFLOAT16 = Format("bfloat16", 16, 7, 8, "uint16", "uint16")
FLOAT32 = Format("float32", 32, 23, 8, "float32", "uint32")
FLOAT64 = Format("float64", 64, 52, 11, "float64", "uint64")
FORMATS = {f.name: f for f in (FLOAT16, BFLOAT16, FLOAT32, FLOAT64)}


def format_of(name: str) -> Format:
    try:
        return FORMATS[name]
    except KeyError:
        raise ValueError(f"unknown floating-point format {name!r} (known: {', '.join(FORMATS)})") from None


def bfloat16_from_float32(values: npt.ArrayLike) -> np.ndarray:
    """Rule 2: binary32 values rounded to the nearest bfloat16, ties to even; bits as uint16."""
    bits = np.asarray(values, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounding = np.uint64(0x7FFF) + ((bits >> np.uint64(16)) & np.uint64(1))
    rounded = ((bits + rounding) >> np.uint64(16)).astype(np.uint16)
    nan = np.isnan(np.asarray(values, dtype=np.float32))
    held: np.ndarray = np.where(nan, ((bits >> np.uint64(16)).astype(np.uint16) | np.uint16(0x0040)), rounded)
    return held.astype(np.uint16)


def bfloat16_to_float32(bits: npt.ArrayLike) -> np.ndarray:
    """bfloat16 bits widened to binary32 (exact: the low 16 bits are zero)."""
    widened: np.ndarray = np.asarray(bits, dtype=np.uint16).astype(np.uint32) << np.uint32(16)
    return widened.view(np.float32)


def as_values(fmt: Format, held: npt.ArrayLike) -> np.ndarray:
    """Rule 1: values held in ``fmt``'s storage as float64 (exact)."""
    if fmt is BFLOAT16:
        return bfloat16_to_float32(held).astype(np.float64)
    return np.asarray(held, dtype=fmt.storage).astype(np.float64)


def round_to(fmt: Format, values: npt.ArrayLike) -> np.ndarray:
    """float64 (or any float) values rounded to ``fmt`` (nearest, ties to even), held per rule 1."""
    if fmt is BFLOAT16:
        return bfloat16_from_float32(np.asarray(values, dtype=np.float64).astype(np.float32))
    return np.asarray(values, dtype=np.float64).astype(fmt.storage)


def ulp_distance(fmt: Format, expected: npt.ArrayLike, actual: npt.ArrayLike) -> np.ndarray:
    """Rule 4: |ordinal(expected) - ordinal(actual)| per element, int64; NaN rules as documented."""
    expected = np.asarray(expected, dtype=fmt.storage)
    actual = np.asarray(actual, dtype=fmt.storage)
    distance = np.abs(fmt.ordinal(expected) - fmt.ordinal(actual))
    nan_e, nan_a = fmt.is_nan(expected), fmt.is_nan(actual)
    distance = np.where(nan_e | nan_a, INFINITE_ULPS, distance)
    return np.where(nan_e & nan_a, 0, distance).astype(np.int64)


def spacing(fmt: Format, magnitude: float) -> float:
    """The distance between consecutive values of ``fmt`` at ``magnitude`` (its ULP there; at least
    the smallest subnormal)."""
    magnitude = abs(float(magnitude))
    smallest = 2.0 ** (1 - fmt.exponent_bias - fmt.mantissa)
    if magnitude == 0 or not np.isfinite(magnitude):
        return smallest
    ulp: float = 2.0 ** (np.floor(np.log2(magnitude)) - fmt.mantissa)
    return max(ulp, smallest)


def hex_bits(fmt: Format, value: float | np.floating | np.integer) -> str:
    """One value's bits in hex, as wide as the format."""
    return f"0x{int(fmt.bits_of(np.asarray([value], dtype=fmt.storage))[0]):0{fmt.bits // 4}x}"


def from_ordinal(fmt: Format, ordinals: np.ndarray) -> np.ndarray:
    """The values of the given ordinals (floats rule 3 inverted), held per floats rule 1."""
    ordinals = np.asarray(ordinals, dtype=np.int64)
    sign = np.int64(1) << np.int64(fmt.bits - 1) if fmt.bits < 64 else None
    if sign is None:
        bits = np.where(ordinals < 0, (-ordinals) | np.int64(-0x8000000000000000), ordinals).view(np.uint64)
    else:
        bits = np.where(ordinals < 0, -ordinals + sign, ordinals)
    return fmt.from_bits(bits)


_SPLIT = 134217729.0   # 2^27 + 1: Veltkamp's split of a binary64 into two 26-bit halves


def _product_error(a: np.ndarray, b: np.ndarray, product: np.ndarray) -> np.ndarray:
    """Rule 5: a * b - product exactly (Dekker), for finite products of binary64 values."""
    def halves(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        scaled = _SPLIT * x
        high = scaled - (scaled - x)
        return high, x - high
    a_high, a_low = halves(a)
    b_high, b_low = halves(b)
    error: np.ndarray = ((a_high * b_high - product) + a_high * b_low + a_low * b_high) + a_low * b_low
    return error


def _sum_error(a: np.ndarray, b: np.ndarray, total: np.ndarray) -> np.ndarray:
    """Rule 5: a + b - total exactly (Knuth's two-sum)."""
    b_part = total - a
    error: np.ndarray = (a - (total - b_part)) + (b - b_part)
    return error


def _round_exact(fmt: Format, exact: Fraction) -> np.ndarray:
    """The rational ``exact`` rounded to ``fmt`` (nearest, ties to even), held per rule 1 (one element)."""
    centre = int(fmt.ordinal(round_to(fmt, np.array([float(exact)])))[0])
    candidates = from_ordinal(fmt, np.array([centre - 1, centre, centre + 1], dtype=np.int64))
    values = as_values(fmt, candidates)
    if not np.isfinite(values[1]):
        return candidates[1:2]                      # past the format's largest value: the infinity
    apart = [abs(Fraction(float(v)) - exact) if np.isfinite(v) else Fraction(1 << 1100) for v in values]
    best = min(range(3), key=lambda i: (apart[i], int(fmt.bits_of(candidates[i:i + 1])[0]) & 1))
    return candidates[best:best + 1]


def fused_multiply_add(fmt: Format, a: npt.ArrayLike, b: npt.ArrayLike, c: npt.ArrayLike) -> np.ndarray:
    """Rule 5: a * b + c rounded once to ``fmt``, held per rule 1; a, b, c are values (float64)."""
    a, b, c = np.broadcast_arrays(*(np.asarray(x, dtype=np.float64) for x in (a, b, c)))
    with np.errstate(all="ignore"):
        product = a * b
        total = product + c
        sum_error, product_error = _sum_error(product, c, total), _product_error(a, b, product)
        tail = sum_error + product_error                         # exact where its own error is 0:
        pair = _sum_error(sum_error, product_error, tail) == 0   # then the exact value is total + tail
        single = total + tail
        held = round_to(fmt, single)
        got = as_values(fmt, held)
        remainder = (total - got) + tail                         # the exact value - got, nearly exactly
        mantissa, exponent = np.frexp(got)
        half = np.maximum(np.ldexp(1.0, exponent - 2 - fmt.mantissa), 2.0 ** (-fmt.exponent_bias - fmt.mantissa))
        doubt = ~(np.abs(remainder) < half * (1 - 2.0 ** -20)) | (np.abs(mantissa) == 0.5) | (got == 0)
        doubt &= np.isfinite(a) & np.isfinite(b) & np.isfinite(c) & np.isfinite(product)
        # Decided without the rational value, however near a midpoint: an exact pair in binary64
        # (total + tail, one IEEE rounding of the exact value), and an exact single binary64 value in
        # a format numpy rounds to from binary64 in one step (not bfloat16: binary32 first).
        # Dekker's product is exact only away from binary64's underflow and overflow: elsewhere, doubt.
        # (An operand past 2^996 overflows Veltkamp's split: its error is NaN, so pair is False there.)
        pair &= (a == 0) | (b == 0) | ((np.abs(product) > 2.0 ** -900) & (np.abs(product) < 2.0 ** 900))
        decided = pair & (fmt.mantissa == 52)
        if fmt is not BFLOAT16:
            decided |= pair & (_sum_error(total, tail, single) == 0)
        doubt &= ~decided
    held = np.array(held, copy=True)
    for i in np.flatnonzero(doubt.reshape(-1)):
        index = np.unravel_index(i, held.shape)
        exact = Fraction(float(a[index])) * Fraction(float(b[index])) + Fraction(float(c[index]))
        held[index] = _round_exact(fmt, exact)[0]
    return held


def multiply_add(fmt: Format, a: npt.ArrayLike, b: npt.ArrayLike, c: npt.ArrayLike, fused: bool) -> np.ndarray:
    """a * b + c in ``fmt``, held per rule 1: one rounding (rule 5) where ``fused``, else the product
    rounded to ``fmt`` and then the sum (two roundings, as separate operations give)."""
    if fused:
        return fused_multiply_add(fmt, a, b, c)
    product = as_values(fmt, fused_multiply_add(fmt, a, b, 0.0))
    return fused_multiply_add(fmt, product, 1.0, c)
