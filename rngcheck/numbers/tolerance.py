"""The tolerance model, said once: how far an implementation's numbers may be from the reference's.

The TensorFlow guide promises "the same integers, almost the same floating-point numbers".
rngcheck makes "almost" a number per conversion:
  1. Words, integers and every conversion that only moves bits (a mantissa filled from a word,
     minus one; a product with a power of two) are exact: a bound of 0 ULP.
  2. A step that rounds more than once where a valid implementation may round once (a scaled
     uniform ``u * (high - low) + low``, which a fused multiply-add computes with one rounding)
     gets 1 ULP *of the range's larger endpoint* (``scale``): the rounding of the product is that
     large whatever the result, and near 0 (low < 0 < high) it is many ULPs of the result itself.
     A bound with a scale counts |expected - actual| in units of the format's spacing at the scale.
  3. A transcendental step (log, sqrt, sin, cos, erfinv) is compared in ULPs of the output
     format, with a bound derived per conversion in the convention's module from the error of
     each step (libm's float functions are within 1 ULP; the reference evaluates each step in
     binary64 and rounds once, so its own error is at most 0.5 ULP a step). The derivation is the
     ``why`` of the bound and is shown with every failure.
  4. A NaN matches only a NaN; an infinity only the same infinity (rngcheck.numbers.floats rule 4).
  5. A value computed in a wider format and rounded at the end (TensorFlow's float16 and bfloat16
     normals are float32 Box-Muller, rounded) has a bound in ULPs of the *wide* format (``wide``):
     the narrow result must be the rounding of a wide value within that bound of the exact model,
     i.e. lie between the roundings of the two ends of the interval. Rounding instead of
     truncating then shows wherever the interval does not straddle a rounding boundary.
  6. Some numbers fail however few ULPs they are from the reference, because the convention cannot
     draw them (a ULP distance, above all one counted in a large scale's ULPs by rule 2, is blind to
     them: +Inf was once 0 ULP of 7.25 from every number of [-3.5, 7.25)). Each counts as
     ``floats.INFINITE_ULPS``: past every bound, and the worst of a comparison.
       a. A NaN or an infinity where the reference draws another value (rule 4), whatever the scale.
       b. A value outside the request's interval (``Interval``, declared by the convention:
          rngcheck.numbers.Convention.interval): a uniform's [low, high) ([0, 1) unless ranged), a
          truncated normal's (-2, 2), an integer's [low, high). An end is in it only where the
          convention's arithmetic reaches it (MKL's uniform reaches b; a scaled uniform rounded in
          the dtype can round onto high; cuRAND's is (0, 1]). The ends are rounded to the format;
          -0.0 is outside an interval whose closed low end is +0.0 ([0, 1)). Where the reference
          itself draws a value outside the interval, the convention reaches there and the bound
          alone decides.
     A zero of the other sign than the reference's shares its ordinal (floats rule 3) but not its
     sign bit: it is one step away, which an exact bound (rule 1: bits only) fails and a bound of a
     step or more admits (unless b excludes it). ``distances`` applies the rule (b given the
     interval), ``compare`` with the bound's interval (rngcheck.numbers.bound sets it), and
     ``interval_excess`` (rule 5) given the interval.
  7. Where a convention computes in the output's precision and more than one evaluation order is
     allowed (TensorFlow's ranged uniform ``u * (high - low) + low``: two roundings, or one where a
     compiler fuses the multiply-add; in a narrow format, or in float32 and rounded once at the
     end), the bound is the *set* of results those orders give (``Bound.orders`` names them; the
     convention computes them: ``Convention.orders``), not an ULP distance from one of them: an
     element passes when its bits equal one of the set's (a NaN one of its NaNs). Its distance is
     counted in ULPs of the element to the nearest member (``set_excess``), and rule 6b's interval
     still applies. A bound that stays an ULP distance (a transcendental step, rule 3; a library
     whose order is not known) says why in its ``why``.
A bound must admit the 1-2 ULP differences of real implementations (the guide's own printed
numbers differ from the exact model by that much) and still fail a wrong conversion, which is
off by many ULPs in most elements (tests/test_numbers.py holds both).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import floats

HISTOGRAM_EDGES = (0, 1, 2, 4, 16, 256, 1 << 16)   # bins: 0, 1, 2-3, 4-15, 16-255, 256-65535, more


@dataclass(frozen=True)
class Interval:
    """Rule 6b: where a convention's numbers lie: ``low`` to ``high``, each end in or out."""

    low: float | int
    high: float | int
    low_closed: bool = True
    high_closed: bool = False

    def outside(self, dtype: str, values: np.ndarray) -> np.ndarray:
        """Per element, whether ``values`` (held per floats rule 1) lie outside; a NaN always does."""
        fmt = floats.FORMATS.get(dtype)
        if fmt is None:
            held = np.asarray(values)
            low, high = (np.asarray(end).astype(held.dtype) for end in (self.low, self.high))
            below: np.ndarray = held < low if self.low_closed else held <= low
            return below | (held > high if self.high_closed else held >= high)
        v = floats.as_values(fmt, values)
        low, high = (floats.as_values(fmt, floats.round_to(fmt, np.array([end], dtype=np.float64)))[0]
                     for end in (self.low, self.high))
        with np.errstate(invalid="ignore"):
            out: np.ndarray = ~((v > low) | ((v == low) & self.low_closed)) | \
                ~((v < high) | ((v == high) & self.high_closed))
        zero = v == 0
        if self.low_closed and low == 0 and not np.signbit(low):
            out |= zero & np.signbit(v)
        return out


@dataclass(frozen=True)
class Bound:
    ulps: int
    why: str
    wide: str | None = None     # rule 5: the format the bound is counted in before the last rounding
    scale: float | None = None  # rule 2: ULPs of this magnitude, not of each result
    interval: Interval | None = None   # rule 6b: where the numbers lie (rngcheck.numbers.bound sets it)
    orders: tuple[str, ...] = ()       # rule 7: the evaluation orders whose results are admitted, by name

    @property
    def exact(self) -> bool:
        return self.ulps == 0


EXACT = Bound(0, "bits only: the conversion moves bits and never rounds, so it is exact")
# Rule 7's orders of one multiply-add a * b + c (floats.multiply_add): two roundings or one.
MULTIPLY_ADD_ORDERS = ("the product rounded, then the sum", "one fused multiply-add")


def multiply_add_orders(why: str) -> Bound:
    """Rule 7 for a conversion whose only rounding steps are one multiply-add: the set of its two
    orders' results (the convention's ``orders`` computes them)."""
    return Bound(0, f"{why}: the result of one of its orders exactly ({'; '.join(MULTIPLY_ADD_ORDERS)}), "
                    "not a distance from one of them (tolerance rule 7)", orders=MULTIPLY_ADD_ORDERS)
def one_rounding(low: float, high: float, why: str = "", ulps: int = 1) -> Bound:
    """Rule 2: 1 ULP (``ulps``) of max(|low|, |high|)."""
    why = why or "u * (high - low) + low rounds twice; a fused multiply-add rounds once: 1 ULP of the range's " \
                 "larger endpoint (tolerance rule 2)"
    return Bound(ulps, why, scale=max(abs(float(low)), abs(float(high))))


@dataclass
class Comparison:
    """Expected against actual, element by element, in ULPs of the format (or exactly for integers)."""

    count: int
    over: int                      # elements past the bound
    worst: int                     # largest distance (ULPs; for integers 0 or 1: equal or not)
    worst_index: int
    histogram: dict[str, int] = field(default_factory=dict)
    first_over: list[int] = field(default_factory=list)

    @property
    def within(self) -> bool:
        return self.over == 0


def histogram_labels() -> list[str]:
    labels = []
    for low, high in zip(HISTOGRAM_EDGES, HISTOGRAM_EDGES[1:] + (None,)):
        if high is None:
            labels.append(f">={low}")
        elif high - low == 1:
            labels.append(str(low))
        else:
            labels.append(f"{low}-{high - 1}")
    return labels


def histogram(distances: np.ndarray) -> dict[str, int]:
    """Counts of ULP distances in the bins of HISTOGRAM_EDGES (only the non-empty bins)."""
    counts = np.histogram(np.minimum(distances, HISTOGRAM_EDGES[-1]),
                          bins=list(HISTOGRAM_EDGES) + [HISTOGRAM_EDGES[-1] + 1])[0]
    return {label: int(n) for label, n in zip(histogram_labels(), counts) if n}


def distances(dtype: str, expected: np.ndarray, actual: np.ndarray, scale: float | None = None,
              interval: Interval | None = None) -> np.ndarray:
    """Per element: ULPs for a float format (of each value, or of ``scale``: rule 2), 0/1 (equal or
    not) for integers; rule 6's values INFINITE_ULPS (those outside ``interval`` only when given)."""
    fmt = floats.FORMATS.get(dtype)
    if fmt is None:
        unequal: np.ndarray = np.asarray(expected) != np.asarray(actual)
        return _outside(dtype, expected, actual, interval, unequal.astype(np.int64))
    ulps = floats.ulp_distance(fmt, expected, actual)
    e, a = floats.as_values(fmt, expected), floats.as_values(fmt, actual)
    if scale is not None and scale != 0:
        with np.errstate(invalid="ignore", over="ignore"):
            apart = np.abs(e - a) / floats.spacing(fmt, scale)
            scaled = np.ceil(np.nan_to_num(apart, nan=0.0, posinf=0.0))
        ulps = np.where(ulps == floats.INFINITE_ULPS, ulps, np.minimum(scaled, ulps).astype(np.int64))
    with np.errstate(invalid="ignore"):
        other_infinity = (np.isinf(e) | np.isinf(a)) & ~(e == a)                  # rule 6a (rule 4)
    ulps = np.where(other_infinity, floats.INFINITE_ULPS, ulps)
    zeros = (e == 0) & (a == 0) & (np.signbit(e) != np.signbit(a))              # rule 6c
    ulps = np.where(zeros, np.maximum(ulps, 1), ulps)
    return _outside(dtype, expected, actual, interval, ulps)


def _outside(dtype: str, expected: np.ndarray, actual: np.ndarray, interval: Interval | None,
             distances: np.ndarray) -> np.ndarray:
    """Rule 6b: INFINITE_ULPS where ``actual`` is outside the interval and ``expected`` is not."""
    if interval is None:
        return distances
    out = interval.outside(dtype, actual) & ~interval.outside(dtype, expected)
    result: np.ndarray = np.where(out, floats.INFINITE_ULPS, distances).astype(np.int64)
    return result


def interval_excess(dtype: str, wide: str, wide_values: np.ndarray, ulps: int, actual: np.ndarray,
                    interval: Interval | None = None) -> np.ndarray:
    """Rule 5: per element, how many narrow ULPs ``actual`` lies outside [round(w - ulps), round(w + ulps)];
    rule 6: INFINITE_ULPS for a NaN or an infinity outside it, and for a value outside ``interval``
    (where the rounding of w is not)."""
    narrow_fmt, wide_fmt = floats.format_of(dtype), floats.format_of(wide)
    centre = wide_fmt.ordinal(wide_values)
    ends = [floats.round_to(narrow_fmt, floats.as_values(wide_fmt, floats.from_ordinal(wide_fmt, centre + step)))
            for step in (-ulps, ulps)]
    low, high = (narrow_fmt.ordinal(end) for end in ends)
    position = narrow_fmt.ordinal(actual)
    excess = np.where(position < low, low - position, np.where(position > high, position - high, 0))
    nan = narrow_fmt.is_nan(actual) | wide_fmt.is_nan(wide_values)
    both = narrow_fmt.is_nan(actual) & wide_fmt.is_nan(wide_values)
    excess = np.where(np.isinf(floats.as_values(narrow_fmt, actual)) & (excess > 0), floats.INFINITE_ULPS, excess)
    excess = np.where(nan & ~both, floats.INFINITE_ULPS, np.where(both, 0, excess)).astype(np.int64)
    rounded = floats.round_to(narrow_fmt, floats.as_values(wide_fmt, wide_values))
    return _outside(dtype, rounded, actual, interval, excess)


def set_excess(dtype: str, admitted: np.ndarray, actual: np.ndarray, interval: Interval | None = None) -> np.ndarray:
    """Rule 7: per element, 0 where ``actual`` equals one of ``admitted``'s rows (the results of the
    allowed evaluation orders, the reference first), else its ULP distance to the nearest of them;
    rule 6's values INFINITE_ULPS (outside ``interval`` where the reference is not)."""
    rows = [distances(dtype, row, actual) for row in np.asarray(admitted)]
    nearest: np.ndarray = np.minimum.reduce(rows) if rows else np.zeros(np.shape(actual), dtype=np.int64)
    return _outside(dtype, np.asarray(admitted)[0], actual, interval, nearest)


def compare(dtype: str, expected: np.ndarray, actual: np.ndarray, bound: Bound, shown: int = 8,
            excess: np.ndarray | None = None) -> Comparison:
    """Elements past the bound: ULP distance over ``bound.ulps``, or (rule 5) a positive ``excess``;
    either way rule 6's values (``bound.interval``'s outside included)."""
    d = distances(dtype, expected, actual, bound.scale, bound.interval)
    over = np.flatnonzero(d > bound.ulps if excess is None else (excess > 0) | (d == floats.INFINITE_ULPS))
    worst_index = int(np.argmax(d)) if d.size else 0
    return Comparison(count=int(d.size), over=int(over.size), worst=int(d[worst_index]) if d.size else 0,
                      worst_index=worst_index, histogram=histogram(d), first_over=[int(i) for i in over[:shown]])
