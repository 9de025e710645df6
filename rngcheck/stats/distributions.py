"""Goodness of fit of the numbers a convention produces: uniform, normal, truncated normal.

The stream of numbers (the rule, said once). For a request (convention, kind, dtype, low, high),
a key ``key`` and a first counter ``counter``, chunk k (k = 0, 1, ...) is the draw of ``chunk``
numbers on the state (counter + k * B, key), and number i of the stream is number i mod chunk
of chunk i // chunk. B, the blocks a chunk consumes, is chunk * w / 4 for uniform and normal
(w = words per element: 2 for float64, else 1) and chunk * 64 for truncated normal (TensorFlow
reserves 256 samples, 64 blocks, per output element: 256 blocks per group of 4 float32, 128 per
group of 2 float64). Under TensorFlow's rules this is the stream of one draw of any length, so
for a chunk that is a multiple of 4 the numbers do not depend on the chunk either (default
chunk: 65536 numbers; 4096 for truncated normal, which the reference draws slowly). Every
accumulator counts positions from number 0 of the stream; the document records key, counter and
chunk (``describe``), which is all a rerun needs.

Accumulators (``update(values)``, ``merge(other)``, ``result()``; values as float64, in stream
order; ``merge`` takes the contiguous piece right after): counts are integers, sums of
powers and products are exact (``exact_sum``: integer mantissas per binary exponent, summed as
a Fraction), per-element powers and products are computed in float64 the same way however the
stream is cut, and the one product across a cut is formed from the two held boundary values.
So a stream split anywhere and merged gives the result of one pass, bit for bit.

  support        values outside the convention's support (uniform [0, 1): 1.0 is outside; normal:
                 |x| above the Box-Muller bound that TensorFlow's clamp u1 >= 1e-7 implies; truncated
                 normal: |x| >= 2) and non-finite values: the count of an impossible event, so
                 p = 1 when it is 0 and p = 0 (FAIL) otherwise; min and max recorded
  chi2.binsB     Pearson's chi-square of B cells of equal null probability (uniform: B = 16, 256,
                 4096, 65536; normal 16 .. 1024 on normal quantiles; truncated normal on its own
                 quantiles), edges snapped to the dtype's values and cell probabilities taken there
  lattice.*      uniform [0, 1) only: values off the convention's lattice (multiples of 2^-m: m = 23
                 float32, 52 float64, 10 float16, 7 bfloat16) are impossible; the lattice index's low
                 8 bits are equidistributed (a coarser lattice fills only some cells); collisions
                 between lattice points used (Poisson when sparse, exact occupancy moments else)
  tail.Ksigma    normal: the count of |x| > K, K = 2..6, binomial with the convention's probability
                 (float32 family: the 2^23 radii of Box-Muller's u1 lattice enumerated; float64: the
                 normal with the clamp's atom); K = 6 is beyond the bound: probability 0
  moment.*       sums of (x - mu)^k, k = 1..4, against the null's exact mean and variance (z)
  pair, lag1     sums of products of consecutive centred values: within Box-Muller pairs (2i, 2i+1)
                 and at every lag-1 position; null mean 0, variance from the null's moments

Nulls (``Null``): uniform on the convention's lattice, enumerated when it has at most 2^23
points (the exact image of the lattice for [low, high)), continuous for float64; normal and
truncated normal as described above, their chi-square cells from the continuous normal (the
lattice's effect is of order 1e-7 in cells within |x| < 3.1).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from fractions import Fraction
from functools import cache, lru_cache

import numpy as np
from scipy import integrate, special, stats

from .. import counter as state_words
from .. import numbers
from ..errors import NotApplicable, RngcheckError, one_line
from ..numbers import NORMAL, TRUNCATED_NORMAL, UNIFORM, NumbersError, Request, floats
from ..registry import Registry
from ..results.verdicts import STATS_JUDGED, STATS_SUSPECT, stats_verdict
from . import pvalues
from .accumulators import chi2_uniform_exact
from .battery import FAIL_AT, FAMILY_SUSPECT, judge_first, record_retest

# The distributions with a goodness of fit, by kind (rngcheck.registry): each is the Null method
# that models its kind (support, moments, cells); registered below Null, in this order.
MODELS: Registry[Callable[[Null], None]] = Registry("distribution", load=lambda: _register_models())
CHUNK = 1 << 16
TRUNCATED_CHUNK = 1 << 12   # the reference draws a truncated normal group by group: a smaller last chunk
SOURCE = "rngcheck docs/distribution-stats.md; TensorFlow random_distributions.h (rngcheck.numbers.tensorflow)"
UNIFORM_BINS = (16, 256, 4096, 65536)
NORMAL_BINS = (16, 64, 256, 1024)
TRUNCATED_BINS = (16, 64, 256)
MIN_EXPECTED = 5          # a chi-square cell needs at least this many expected numbers
TAIL_SIGMAS = (2, 3, 4, 5, 6)
LOW_BITS = 8
EXACT_BATCH = 1 << 24     # exact_sum: float64 partial sums stay below 2^53
ITEMSIZE = {"float16": 2, "bfloat16": 2, "float32": 4, "float64": 8}


# ---------------------------------------------------------------------------------- exact sums
def exact_sum(values) -> Fraction:
    """The exact sum of finite float64 values: each is an integer mantissa times a power of two;
    mantissas (split in 27 + 26 bits) are summed per exponent with bincount, exactly, since no
    partial sum reaches 2^53, then joined as one integer."""
    values = np.asarray(values, dtype=np.float64).reshape(-1)
    total = Fraction(0)
    for first in range(0, values.size, EXACT_BATCH):
        part = values[first:first + EXACT_BATCH]
        part = part[part != 0]
        if not part.size:
            continue
        fraction, exponent = np.frexp(part)
        mantissa = (fraction * 2.0 ** 53).astype(np.int64)
        exponent = exponent.astype(np.int64) - 53
        lowest = int(exponent.min())
        index = exponent - lowest
        high = np.bincount(index, weights=(mantissa >> 26).astype(np.float64))
        low = np.bincount(index, weights=(mantissa & ((1 << 26) - 1)).astype(np.float64))
        integer = 0
        for k in np.nonzero(high.astype(bool) | low.astype(bool))[0]:
            integer += ((int(high[k]) << 26) + int(low[k])) << int(k)
        total += integer * Fraction(2) ** lowest
    return total


# ---------------------------------------------------------------------------------- dtype values
def _next_up(dtype: str, value: float) -> float:
    """The smallest value of ``dtype`` above ``value`` (a value of dtype)."""
    if dtype == "bfloat16":
        bits = int(np.array([value], dtype=np.float32).view(np.uint32)[0])
        if value == 0:
            bits = 0x00010000
        else:
            bits += 0x10000 if value > 0 else -0x10000
        return float(np.array([bits], dtype=np.uint32).view(np.float32)[0])
    kind = np.dtype(dtype).type
    return float(np.nextafter(kind(value), kind(np.inf)))


def _ceil(dtype: str, value: float) -> float:
    """The smallest value of ``dtype`` at or above ``value``."""
    fmt = floats.format_of(dtype)
    rounded = float(floats.as_values(fmt, floats.round_to(fmt, np.array([value])))[0])
    return rounded if rounded >= value else _next_up(dtype, rounded)


def snap(dtype: str, edge: float) -> tuple[float, float]:
    """(s, t): s the smallest dtype value >= edge (a value is in the cell above the edge iff it is
    >= s), t the real number where rounding to dtype turns from below s to s (the midpoint)."""
    if not math.isfinite(edge):
        return edge, edge
    s = _ceil(dtype, edge)
    below = -_next_up(dtype, -s)
    return s, (s + below) / 2


def as_values(dtype: str, held) -> np.ndarray:
    """A draw's numbers as float64 (bfloat16 given as uint16 bits or as float32 values)."""
    held = np.asarray(held)
    if dtype == "bfloat16" and held.dtype == np.uint16:
        return floats.as_values(floats.BFLOAT16, held)
    return held.astype(np.float64)


# ---------------------------------------------------------------------------------- the nulls
LATTICE_BITS = {"tensorflow": {"float32": 23, "float64": 52, "float16": 10, "bfloat16": 7},
                # ONNX Runtime's CPU uniforms (rngcheck.numbers.onnxruntime_cpu): float(k) * 2^-31 with
                # k uniform below 2^31 - 2 (float64: 62 bits of two engine values): multiples of 2^-31,
                # the null taken as continuous
                "onnxruntime-cpu": {"float32": 31, "float64": 62}}
ENUMERABLE_BITS = 23
# The kinds each convention's null models (TensorFlow's Box-Muller bounds are its own); and the
# conventions whose uniform is a fixed-point lattice of equally likely points, where the lattice
# tests apply (ONNX Runtime's float(k) rounds k to 24 bits: its spacing doubles in each binade).
MODELLED_KINDS = {"tensorflow": (UNIFORM, NORMAL, TRUNCATED_NORMAL), "onnxruntime-cpu": (UNIFORM,)}
FIXED_POINT = ("tensorflow",)


def _model_check(convention: str) -> None:
    if convention not in LATTICE_BITS:
        raise RngcheckError(f"no distribution model for convention {convention!r} "
                            f"(known: {', '.join(sorted(LATTICE_BITS))})")


def _central_moments(values: np.ndarray, mu: float) -> list[float]:
    """E (x - mu)^k, k = 0..8, of equally likely ``values`` (each term computed in float64)."""
    y = values - mu
    powers, out = np.ones_like(y), []
    with np.errstate(over="ignore"):   # a range too wide for the 8th power: inf, refused by _moments_usable
        for _ in range(9):
            out.append(_mean(powers))
            powers = powers * y
    return out


def _power_moments(span: float) -> list[float]:
    """E (x - mean)^k, k = 0..8, of the continuous uniform on a range ``span`` wide (inf where it overflows)."""
    out = []
    for k in range(9):
        try:
            out.append(0.0 if k % 2 else (span / 2) ** k / (k + 1))
        except OverflowError:
            out.append(math.inf)
    return out


def _mean(values: np.ndarray) -> float:
    """The mean of many float64 values (numpy's pairwise sum: relative error near 1e-16)."""
    return float(np.sum(values, dtype=np.float64) / values.size)


@cache
def _uniform_image(convention: str, dtype: str, low, high) -> np.ndarray:
    """Every value the convention's uniform takes, one per lattice point, in lattice order."""
    from ..numbers import tensorflow as tf

    bits = LATTICE_BITS[convention][dtype]
    unit = tf.unit_uniform(dtype, np.arange(1 << bits, dtype=np.uint32))
    held = unit if low is None else tf.scaled(dtype, unit, low, high)
    return as_values(dtype, held)


@cache
def _radii(dtype: str) -> np.ndarray:
    """Box-Muller's r for each of the 2^23 values of u1 (TensorFlow's float32 rule 5, clamp
    included; j = 0 is the clamped one), as float64."""
    from ..numbers import tensorflow as tf

    if dtype == "float64":
        raise ValueError("float64 radii are not enumerable")
    j = np.arange(1 << 23, dtype=np.uint32)
    return tf.box_muller_float(j, np.zeros_like(j))[1].astype(np.float64)  # cos(0) r = r


def _beyond(t: float, r) -> np.ndarray:
    """P(|r sin v| > t) for v uniform on the circle."""
    r = np.asarray(r, dtype=np.float64)
    ratio = np.where(r > t, t / np.where(r > 0, r, 1.0), 1.0)
    return np.where(r > t, 1.0 - (2.0 / math.pi) * np.arcsin(np.minimum(ratio, 1.0)), 0.0)


@lru_cache(maxsize=32)
def null_of(request: Request) -> Null:
    """The Null of ``request`` (built once: enumerating a lattice takes a fraction of a second)."""
    return Null(request)


class Null:
    """What a correct stream of ``request``'s numbers looks like (see the module docstring)."""

    def __init__(self, request: Request):
        _model_check(request.convention)
        numbers.check(request)
        model = MODELS.get(request.kind)
        self.request = request
        self.kind, self.dtype = request.kind, request.dtype
        self.bits = LATTICE_BITS[request.convention][request.dtype]
        self.unit = request.kind == UNIFORM and request.low is None
        self.rounded = request.dtype in ("float16", "bfloat16")   # float32 results rounded (rule 5)
        self.slack = numbers.bound(request).ulps   # an implementation may be this many ULPs off
        model(self)

    # -- uniform
    def _uniform(self):
        low, high = self.request.range
        self.low, self.high = float(low), float(high)
        self.lattice = self.unit and self.request.convention in FIXED_POINT
        self.enumerated = self.bits <= ENUMERABLE_BITS
        if self.enumerated:
            self.image = _uniform_image(self.request.convention, self.dtype, self.request.low, self.request.high)
            self.mu = _mean(self.image)
            self.moments = _central_moments(self.image, self.mu)
            self.lowest, self.highest = float(self.image[0]), float(self.image[-1])
            for _ in range(self.slack):
                self.lowest, self.highest = -_next_up(self.dtype, -self.lowest), _next_up(self.dtype, self.highest)
            self.support_text = f"[{self.lowest!r}, {self.highest!r}] (the lattice's image" + \
                (f", {self.slack} ULP either way)" if self.slack else ")")
        else:
            span = self.high - self.low
            self.mu = self.low + span * (1 - 2.0 ** -self.bits) / 2
            self.moments = _power_moments(span)
            self.support_text = f"[{self.low!r}, {self.high!r})" if self.unit else f"[{self.low!r}, {self.high!r}]"
        self._moments_usable()
        self.pair_product_variance = self.moments[2] ** 2
        self.bins = UNIFORM_BINS

    def _moments_usable(self) -> None:
        """The moment tests compare sums of (x - mean)^k, k <= 4, with their null mean and variance, which
        need E (x - mean)^8 in float64: a range so wide that it overflows, or so narrow that it underflows
        to 0, is refused in one line (its tests would divide by an infinite or zero variance)."""
        m = self.moments
        try:
            usable = all(math.isfinite(v) for v in m) and all(m[2 * k] - m[k] ** 2 > 0 for k in range(1, 5))
        except OverflowError:
            usable = False
        if not usable:
            raise RngcheckError(f"the range [{self.request.low}, {self.request.high}) in {self.dtype} is too "
                                f"{'wide' if self.high - self.low > 1 else 'narrow'} for the moment tests: "
                                "(x - mean)^8 is not a finite, non-zero float64 there")

    def outside(self, x: np.ndarray) -> np.ndarray:
        """Finite values the convention cannot produce (beyond its support)."""
        if self.kind == UNIFORM:
            if self.enumerated:
                return (x < self.lowest) | (x > self.highest)
            return (x < self.low) | ((x >= self.high) if self.unit else (x > self.high))
        if self.strict_bound:
            return np.abs(x) >= self.bound
        return np.abs(x) > self.bound

    # -- normal
    def _normal(self):
        self.mu = 0.0
        self.bins = NORMAL_BINS
        if self.dtype == "float64":
            radius = math.sqrt(-2.0 * math.log(1e-7))
            self.bound, self.radius = radius, radius
            # E r^(2m) = E (-2 ln max(u, eps))^m: 2^m m! P(m + 1, L) + eps (2L)^m, L = -ln eps
            big_l = -math.log(1e-7)
            r2m = [2.0 ** m * math.factorial(m) * special.gammainc(m + 1, big_l) + 1e-7 * (2 * big_l) ** m
                   for m in range(5)]
        else:
            radii = _radii(self.dtype)
            self.radius = float(radii.max())
            self.bound = self.radius if not self.rounded else _ceil(self.dtype, self.radius)
            r2m = [_mean(radii ** (2 * m)) for m in range(5)]
        for _ in range(self.slack):
            self.bound = _next_up(self.dtype, self.bound)
        # x = r sin v, v uniform: E sin^(2m) v = (2m-1)!! / (2m)!!, odd moments 0
        sin_even = [1.0, 1 / 2, 3 / 8, 5 / 16, 35 / 128]
        self.moments = [0.0 if k % 2 else r2m[k // 2] * sin_even[k // 2] for k in range(9)]
        # E (sin v cos v)^k = E sin^k(2v) / 2^k; Cov(x^k, y^k) within a pair
        self.pair_cross = [0.0 if k % 2 else r2m[k] * sin_even[k // 2] / 2 ** k for k in range(5)]
        self.pair_product_variance = r2m[2] / 8         # E (r^2 sin v cos v)^2
        self.strict_bound = False
        self.support_text = f"|x| <= {self.bound!r} (Box-Muller with u1 >= 1e-7: radius {self.radius!r}, " \
                            f"plus {self.slack} ULP)"

    def tail_probability(self, threshold: float) -> float:
        """P(|x| > threshold) for the value before any final rounding (normal only)."""
        if self.dtype != "float64":
            radii = _radii(self.dtype)
            far = radii[radii > threshold]
            return float(exact_sum(_beyond(threshold, far)) / radii.size)
        radius = self.radius
        if threshold >= radius:
            return 0.0
        # the true normal, less its part beyond the clamp's radius, plus the clamp's atom (1e-7)
        cut = integrate.quad(lambda r: float(_beyond(threshold, r)) * r * math.exp(-r * r / 2), radius, np.inf)[0]
        return max(0.0, 2 * stats.norm.sf(threshold) - cut + 1e-7 * float(_beyond(threshold, radius)))

    # -- truncated normal
    def _truncated_normal(self):
        from ..numbers import tensorflow as tf

        a = tf.TRUNCATE
        self.mu = 0.0
        self.bins = TRUNCATED_BINS
        self.bound = a
        self.strict_bound = not self.rounded   # a float16/bfloat16 rounding of 1.9999 may be 2.0
        self.mass = 1 - 2 * stats.norm.sf(a)
        # E x^(2m) for |x| < a: (2m-1)!! P(m + 1/2, a^2/2) / P(1/2, a^2/2)
        base = special.gammainc(0.5, a * a / 2)
        self.moments = [0.0 if k % 2 else special.factorial2(k - 1) * special.gammainc(k / 2 + 0.5, a * a / 2) / base
                        if k else 1.0 for k in range(9)]
        self.pair_product_variance = self.moments[2] ** 2
        self.support_text = f"|x| {'<' if self.strict_bound else '<='} {a!r}"

    # -- chi-square cells
    def cells(self, count: int) -> tuple[np.ndarray, np.ndarray]:
        """(edges, probabilities) of ``count`` cells: a value x is in cell c when
        edges[c] <= x < edges[c + 1] (edges[0] = -inf, edges[count] = +inf). Computed once."""
        cache = self.__dict__.setdefault("_cells", {})
        if count not in cache:
            cache[count] = self._cells_of(count)
        return cache[count]

    def tails(self) -> tuple[list[float], list[float]]:
        """Normal: (cuts, probabilities) of |x| > K for K in TAIL_SIGMAS: in the dtype, |x| > K means
        the value before rounding exceeded the midpoint between K and the next value. Computed once."""
        if "_tails" not in self.__dict__:
            cuts = [snap(self.dtype, _next_up(self.dtype, float(k)))[1] for k in TAIL_SIGMAS]
            self._tails = (cuts, [self.tail_probability(t) for t in cuts])
        return self._tails

    def _cells_of(self, count: int) -> tuple[np.ndarray, np.ndarray]:
        if self.kind == UNIFORM and self.enumerated:
            step = self.image.size // count
            edges = np.concatenate([[-np.inf], self.image[step::step][:count - 1], [np.inf]])
            counts = np.diff(np.searchsorted(self.image, edges, side="left"))
            return edges, counts / self.image.size
        if self.kind == UNIFORM:
            span = self.high - self.low
            inner = [self.low + span * c / count for c in range(1, count)]
            return np.array([-np.inf, *inner, np.inf]), np.full(count, 1.0 / count)
        if self.kind == NORMAL:
            cdf = stats.norm.cdf
            inner = stats.norm.ppf(np.arange(1, count) / count)
        else:
            lo = stats.norm.cdf(-self.bound)

            def cdf(t):
                return np.clip((stats.norm.cdf(t) - lo) / self.mass, 0.0, 1.0)

            inner = stats.norm.ppf(lo + self.mass * np.arange(1, count) / count)
        snapped = [snap(self.dtype, e) for e in inner]
        edges = np.array([-np.inf] + [s for s, _ in snapped] + [np.inf])
        cuts = np.array([-np.inf] + [t for _, t in snapped] + [np.inf])
        return edges, np.diff(cdf(cuts))

    def describe(self) -> dict:
        return {"support": self.support_text, "mean": self.mu, "variance": self.moments[2]}


def _register_models() -> None:
    for kind, model in ((UNIFORM, Null._uniform), (NORMAL, Null._normal), (TRUNCATED_NORMAL, Null._truncated_normal)):
        MODELS.add(kind, model)


# ---------------------------------------------------------------------------------- accumulators
class NumberAccumulator:
    """Base: positions (``start``, ``end``) in the stream of numbers, contiguity on merge."""

    name = "abstract"

    def __init__(self, null: Null, start: int = 0):
        self.null = null
        self.start = self.end = start

    def update(self, values) -> None:
        values = np.asarray(values, dtype=np.float64).reshape(-1)
        self._update(values, self.end)
        self.end += values.size

    def merge(self, other: NumberAccumulator) -> NumberAccumulator:
        if type(other) is not type(self) or other.null.request != self.null.request or \
                getattr(other, "parameters", None) != getattr(self, "parameters", None):
            raise ValueError("can only merge accumulators of the same test and request")
        if other.start != self.end:
            raise ValueError(f"not contiguous: this one ends at number {self.end}, the other starts at {other.start}")
        self._merge(other)
        self.end = other.end
        return self

    def _update(self, x: np.ndarray, position: int) -> None:
        """Each test: take numbers ``position`` .. ``position + x.size - 1`` of the stream."""
        raise NotImplementedError

    def _merge(self, other: NumberAccumulator) -> None:
        """Each test: add the state of ``other``, which continues this one."""
        raise NotImplementedError

    @property
    def count(self) -> int:
        return self.end - self.start

    def entry(self, test: str, statistic, pvalue: pvalues.PValue, **extra) -> dict:
        statistic = float(statistic)
        entry = {
            "test": f"{self.null.kind}.{test}",
            "level": "aggregate",
            "source": SOURCE,
            "statistic": statistic if math.isfinite(statistic) else None,
            "p_value": None if pvalue["p"] != pvalue["p"] else pvalue["p"],
            "q_value": pvalue["q"],
            "log10_p": pvalue["log10_p"],
            "tail": pvalue["tail"],
            "p_display": pvalues.display(pvalue["p"], pvalue["q"]),
            "numbers": self.count,
        }
        entry.update(extra)
        return entry

    def impossible(self, test: str, found: int, **extra) -> dict:
        """An event of null probability 0: p = 1 when it never happened, 0 (FAIL) when it did."""
        return self.entry(test, found, pvalues.from_float(0.0 if found else 1.0), count=int(found), **extra)

    def result(self) -> list[dict]:
        raise NotImplementedError

    def not_run(self) -> list[dict]:
        return []


class Support(NumberAccumulator):
    """Non-finite values, values beyond the convention's support, min and max."""

    name = "support"

    def __init__(self, null, start=0):
        super().__init__(null, start)
        self.nan = self.posinf = self.neginf = self.outside = self.at_one = 0
        self.minimum, self.maximum = math.inf, -math.inf

    def _update(self, x, position):
        finite = np.isfinite(x)
        self.nan += int(np.isnan(x).sum())
        self.posinf += int((x == np.inf).sum())
        self.neginf += int((x == -np.inf).sum())
        good = x[finite]
        if good.size:
            self.minimum = min(self.minimum, float(good.min()))
            self.maximum = max(self.maximum, float(good.max()))
            self.outside += int(self.null.outside(good).sum())
            if self.null.kind == UNIFORM and self.null.unit:
                self.at_one += int((good == 1.0).sum())

    def _merge(self, other):
        for name in ("nan", "posinf", "neginf", "outside", "at_one"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.minimum, self.maximum = min(self.minimum, other.minimum), max(self.maximum, other.maximum)

    def result(self):
        if not self.count:
            return []
        extremes = {"minimum": self.minimum if math.isfinite(self.minimum) else None,
                    "maximum": self.maximum if math.isfinite(self.maximum) else None}
        non_finite = self.nan + self.posinf + self.neginf
        out = [self.impossible("non_finite", non_finite, nan=self.nan, posinf=self.posinf, neginf=self.neginf),
               self.impossible("support", self.outside, support=self.null.support_text, **extremes)]
        if self.null.kind == UNIFORM and self.null.unit:
            out[1]["ones"] = self.at_one
        if self.null.kind == NORMAL:
            out[1]["test"] = "normal.bound"
        return out


class Binned(NumberAccumulator):
    """Pearson's chi-square on cells of (about) equal null probability, at one resolution."""

    name = "chi2"

    def __init__(self, null, start=0, *, cells: int):
        super().__init__(null, start)
        self.parameters = {"cells": cells}
        self.edges, self.probabilities = null.cells(cells)
        self.counts = np.zeros(cells, dtype=np.int64)

    def _update(self, x, position):
        x = x[np.isfinite(x)]
        index = np.searchsorted(self.edges, x, side="right") - 1
        self.counts += np.bincount(index, minlength=self.counts.size)

    def _merge(self, other):
        self.counts += other.counts

    def _possible(self):
        return self.probabilities > 0

    def result(self):
        n = int(self.counts.sum())
        cells = self.parameters["cells"]
        possible = self._possible()
        expected_min = n * float(self.probabilities[possible].min()) if n else 0.0
        if expected_min < MIN_EXPECTED:
            return []
        impossible = int(self.counts[~possible].sum())
        if impossible:
            statistic, p = math.inf, pvalues.from_float(0.0)
        else:
            observed = self.counts[possible].astype(np.float64)
            expected = n * self.probabilities[possible]
            statistic = float(((observed - expected) ** 2 / expected).sum())
            p = pvalues.chi2(statistic, int(possible.sum()) - 1)
        return [self.entry(f"chi2.bins{cells}", statistic, p, cells=int(possible.sum()),
                           df=int(possible.sum()) - 1, in_impossible_cells=impossible, binned=n)]

    def not_run(self):
        cells = self.parameters["cells"]
        need = math.ceil(MIN_EXPECTED / float(self.probabilities[self._possible()].min()))
        if self.count and int(self.counts.sum()) * float(self.probabilities[self._possible()].min()) < MIN_EXPECTED:
            return [{"test": f"{self.null.kind}.chi2.bins{cells}", "stream": "numbers",
                     "reason": f"needs {need} numbers ({MIN_EXPECTED} per cell), got {self.count}"}]
        return []


class Lattice(NumberAccumulator):
    """Uniform [0, 1): values off the lattice of multiples of 2^-m, the low bits of the lattice
    index, and the lattice points used (collisions)."""

    name = "lattice"

    def __init__(self, null, start=0):
        super().__init__(null, start)
        self.bits = null.bits
        self.low_bits = min(LOW_BITS, self.bits)
        self.off = 0
        self.on = 0
        self.low = np.zeros(1 << self.low_bits, dtype=np.int64)
        self.used = np.zeros(1 << self.bits, dtype=bool) if self.bits <= ENUMERABLE_BITS else None

    def _update(self, x, position):
        x = x[np.isfinite(x) & (x >= 0) & (x < 1)]
        scaled = x * 2.0 ** self.bits                      # exact: a power of two
        on = scaled == np.floor(scaled)
        self.off += int((~on).sum())
        index = scaled[on].astype(np.int64)
        self.on += index.size
        self.low += np.bincount(index & ((1 << self.low_bits) - 1), minlength=self.low.size)
        if self.used is not None:
            self.used[index] = True

    def _merge(self, other):
        self.off += other.off
        self.on += other.on
        self.low += other.low
        if self.used is not None:
            self.used |= other.used

    def result(self):
        if not self.count:
            return []
        lattice = f"multiples of 2^-{self.bits}"
        distinct = int(self.used.sum()) if self.used is not None else None
        out = [self.impossible("lattice.off", self.off, lattice=lattice, lattice_points=1 << self.bits,
                               distinct=distinct)]
        cells = self.low.size
        if self.on >= MIN_EXPECTED * cells:
            statistic = float(chi2_uniform_exact(self.low))
            out.append(self.entry("lattice.low_bits", statistic, pvalues.chi2(statistic, cells - 1),
                                  cells=cells, bits=self.low_bits, counted=self.on))
        collision = self._collisions(distinct)
        if collision is not None:
            out.append(collision)
        return out

    def _collisions(self, distinct):
        if distinct is None or not self.on:
            return None
        n, big_n = self.on, float(1 << self.bits)
        a = math.exp(n * math.log1p(-1 / big_n))
        b = math.exp(n * math.log1p(-2 / big_n))
        mean_distinct = big_n * -math.expm1(n * math.log1p(-1 / big_n))
        collisions = n - distinct
        extra = {"distinct": distinct, "expected_distinct": mean_distinct, "collisions": collisions}
        if n <= big_n / 16:      # sparse: collisions are about Poisson
            return self.entry("lattice.collisions", collisions, pvalues.poisson(collisions, n - mean_distinct), **extra)
        variance = big_n * (big_n - 1) * b + big_n * a - big_n * big_n * a * a
        if variance < 1:
            return None
        z = (distinct - mean_distinct) / math.sqrt(variance)
        return self.entry("lattice.collisions", z, pvalues.normal_two_sided(z), **extra)

    def not_run(self):
        out = []
        if self.count and self.on < MIN_EXPECTED * self.low.size:
            out.append({"test": f"{self.null.kind}.lattice.low_bits", "stream": "numbers",
                        "reason": f"needs {MIN_EXPECTED * self.low.size} numbers, got {self.on}"})
        if self.on and self.used is not None and self._collisions(int(self.used.sum())) is None:
            out.append({"test": f"{self.null.kind}.lattice.collisions", "stream": "numbers",
                        "reason": f"{self.on} numbers use all {1 << self.bits} lattice points but for a "
                                  "variance below 1: nothing to test"})
        return out


class Tails(NumberAccumulator):
    """Normal: counts of |x| > K for K in TAIL_SIGMAS, binomial with the convention's probability."""

    name = "tails"

    def __init__(self, null, start=0):
        super().__init__(null, start)
        self.counts = np.zeros(len(TAIL_SIGMAS), dtype=np.int64)
        self.probabilities = null.tails()[1]

    def _update(self, x, position):
        magnitude = np.abs(x[np.isfinite(x)])
        self.counts += np.array([(magnitude > k).sum() for k in TAIL_SIGMAS], dtype=np.int64)

    def _merge(self, other):
        self.counts += other.counts

    def result(self):
        if not self.count:
            return []
        out = []
        for k, found, p in zip(TAIL_SIGMAS, self.counts, self.probabilities):
            out.append(self.entry(f"tail.{k}sigma", int(found), pvalues.binomial(int(found), self.count, p),
                                  expected=self.count * p, probability=p, sigmas=k))
        return out


# The moment and correlation tests sum powers and products of x - mean exactly; a value further than
# this from the mean (2^200, far outside every support whose moments a Null takes: Null._moments_usable)
# is left out of them like a non-finite value (the support test counts it), so that their sums, and
# the z-scores made of them, stay finite floats.
CENTRED_LIMIT = 2.0 ** 200


def _centred(x: np.ndarray, mu: float) -> tuple[np.ndarray, np.ndarray]:
    """(x - mu where it is usable, else 0; which values are usable): finite and within CENTRED_LIMIT."""
    with np.errstate(over="ignore", invalid="ignore"):   # x - mu of a huge or infinite x: masked out here
        y = x - mu
        usable = np.abs(y) <= CENTRED_LIMIT
    return np.where(usable, y, 0.0), usable


class Moments(NumberAccumulator):
    """Exact sums of (x - mu)^k, k = 1..4 (finite values), as z-scores against the null."""

    name = "moments"
    NAMES = ("", "mean", "variance", "skewness", "kurtosis")   # by power

    def __init__(self, null, start=0):
        super().__init__(null, start)
        self.sums = [Fraction(0)] * 5
        self.finite = 0
        self.finite_pairs = 0    # normal: pairs (2i, 2i+1) both seen (for the variance of sums)

    def _update(self, x, position):
        y, usable = _centred(x, self.null.mu)
        self.finite += int(usable.sum())
        square = y * y
        for k, power in ((1, y), (2, square), (3, square * y), (4, square * square)):
            self.sums[k] += exact_sum(power)

    def _merge(self, other):
        self.sums = [a + b for a, b in zip(self.sums, other.sums)]
        self.finite += other.finite

    def result(self):
        if not self.finite:
            return []
        m, n = self.null.moments, self.finite
        out = []
        for k in range(1, 5):
            variance = m[2 * k] - m[k] ** 2
            if self.null.kind == NORMAL:      # pairs (r sin v, r cos v): Cov(x^k, y^k) = E r^2k ... - (E x^k)^2
                pairs = n // 2
                variance = variance + 2 * pairs / n * (self.null.pair_cross[k] - m[k] ** 2)
            deviation = self.sums[k] - n * Fraction(m[k])
            z = float(deviation) / math.sqrt(n * variance)
            out.append(self.entry(f"moment.{self.NAMES[k]}", z, pvalues.normal_two_sided(z), power=k,
                                  observed=float(self.sums[k] / n), expected=m[k]))
        return out


class Correlation(NumberAccumulator):
    """Exact sums of products of consecutive centred values: within pairs (2i, 2i+1) and at every
    lag-1 position; the value at each end is held so that a merge adds the product across."""

    name = "correlation"

    def __init__(self, null, start=0):
        super().__init__(null, start)
        self.pair_sum = self.lag_sum = Fraction(0)
        self.pairs = self.lags = 0
        self.first = self.last = None

    def _centred(self, x):
        return _centred(x, self.null.mu)[0]

    def _add_across(self, left: float, right: float, position: int):
        product = float(np.float64(left) * np.float64(right))
        self.lag_sum += Fraction(product)
        self.lags += 1
        if position % 2 == 0:
            self.pair_sum += Fraction(product)
            self.pairs += 1

    def _update(self, x, position):
        if not x.size:
            return
        y = self._centred(x)
        if self.last is not None:
            self._add_across(self.last, float(y[0]), position - 1)
        else:
            self.first = float(y[0])
        products = y[:-1] * y[1:]
        self.lag_sum += exact_sum(products)
        self.lags += products.size
        within = products[position % 2::2]
        self.pair_sum += exact_sum(within)
        self.pairs += within.size
        self.last = float(y[-1])

    def _merge(self, other):
        if other.first is None:
            return
        if self.last is not None:
            self._add_across(self.last, other.first, self.end - 1)
        else:
            self.first = other.first
        self.pair_sum += other.pair_sum
        self.lag_sum += other.lag_sum
        self.pairs += other.pairs
        self.lags += other.lags
        self.last = other.last

    def result(self):
        out = []
        within = self.null.pair_product_variance
        across = self.null.moments[2] ** 2
        if self.null.kind == NORMAL and self.pairs:
            z = float(self.pair_sum) / math.sqrt(self.pairs * within)
            out.append(self.entry("pair", z, pvalues.normal_two_sided(z), products=self.pairs,
                                  correlation=float(self.pair_sum) / self.pairs / self.null.moments[2]))
        if self.lags:
            variance = self.pairs * within + (self.lags - self.pairs) * across
            z = float(self.lag_sum) / math.sqrt(variance)
            out.append(self.entry("lag1", z, pvalues.normal_two_sided(z), products=self.lags,
                                  correlation=float(self.lag_sum) / self.lags / self.null.moments[2]))
        return out


def accumulators(null: Null, start: int = 0) -> list[NumberAccumulator]:
    """The tests of ``null``'s distribution, each starting at number ``start`` of the stream."""
    accs: list[NumberAccumulator] = [Support(null, start)]
    accs += [Binned(null, start, cells=c) for c in null.bins
             if not (null.kind == UNIFORM and null.enumerated and c > null.image.size)]
    if null.kind == UNIFORM and null.lattice:
        accs.append(Lattice(null, start))
    if null.kind == NORMAL:
        accs.append(Tails(null, start))
    accs += [Moments(null, start), Correlation(null, start)]
    return accs


def results(accs) -> tuple[list[dict], list[dict]]:
    found, not_run = [], []
    for acc in accs:
        for entry in acc.result():
            entry["stream"] = "numbers"
            found.append(entry)
        not_run += acc.not_run()
    return found, not_run


# ---------------------------------------------------------------------------------- sources
def blocks_per_chunk(request: Request, chunk: int) -> int:
    """Blocks (counter steps) a chunk of ``chunk`` numbers consumes (the module's rule)."""
    if request.kind == TRUNCATED_NORMAL:
        return chunk * 64
    words = chunk * (2 if request.dtype == "float64" else 1)
    return words // 4


class NumberStream:
    """The stream of the module docstring, drawn by ``draw(request, state)``: the reference
    (``rngcheck.numbers.draw``) or a backend's ``random_numbers``."""

    def __init__(self, request: Request, *, key: int = 1, counter: int = 0, chunk: int | None = None,
                 backend=None, backend_spec: str | None = None):
        if chunk is None:
            chunk = TRUNCATED_CHUNK if request.kind == TRUNCATED_NORMAL else CHUNK
        if chunk <= 0 or chunk % 4:
            raise RngcheckError(f"the chunk must be a positive multiple of 4, got {chunk}")
        if not 0 <= key < 1 << 64:
            raise RngcheckError("the key (--seed) must be a 64-bit unsigned integer")
        self.request = Request(request.convention, request.kind, request.dtype, chunk, request.low, request.high)
        numbers.check(self.request)
        self.key, self.counter, self.chunk = key, counter, chunk
        self.blocks = blocks_per_chunk(self.request, chunk)
        self.backend, self.backend_spec = backend, backend_spec
        if backend is not None:
            method = getattr(backend, "random_numbers", None)
            conventions = tuple(getattr(backend, "conventions", ()) or ())
            if not callable(method) or request.convention not in conventions:
                name = backend_spec or getattr(backend, "name", "the backend")
                raise RngcheckError(f"backend {name!r} draws no {request.convention} numbers (the backend "
                                    "contract's optional random_numbers/conventions)")

    def state(self, k: int) -> np.ndarray:
        start = state_words.make_state(self.counter, self.key)
        if self.generator != "philox4x32-10":   # minstd_rand0: chunk k continues the engine (onnxruntime_cpu)
            from ..numbers import onnxruntime_cpu

            per = 2 if self.request.dtype == "float64" else 1
            return onnxruntime_cpu.continued(start, k * self.chunk * per)
        return state_words.make_state(self.counter + k * self.blocks, self.key)

    @property
    def generator(self) -> str:
        return numbers.convention_of(self.request.convention).generator

    def chunk_values(self, k: int) -> np.ndarray:
        state = self.state(k)
        if self.backend is None:
            held = numbers.draw(self.request, state)
        else:
            try:
                held = self.backend.random_numbers(self.request.to_dict(), state)
            except NotApplicable as error:
                raise RngcheckError(f"the backend cannot draw {self.request.text()}: {one_line(error)}") from None
            held = np.asarray(held)
            if held.shape != (self.chunk,) or held.dtype.kind not in "fu":
                raise RngcheckError(f"the backend answered {self.request.text()} with shape {held.shape} "
                                    f"{held.dtype}, not {self.chunk} numbers")
        return as_values(self.request.dtype, held)

    def read(self, first: int, count: int):
        """Numbers first .. first+count-1, chunk by chunk (yields float64 arrays)."""
        position, end = first, first + count
        while position < end:
            k, offset = divmod(position, self.chunk)
            take = min(self.chunk - offset, end - position)
            yield self.chunk_values(k)[offset:offset + take]
            position += take

    def describe(self) -> dict:
        where = ({"numbers": "reference (rngcheck.numbers.draw)"} if self.backend is None else
                 {"numbers": "backend random_numbers", "backend": self.backend_spec or self.backend.name,
                  **{str(k): str(v) for k, v in _describe(self.backend).items()}})
        return {**where, "convention": self.request.convention, "kind": self.request.kind,
                "dtype": self.request.dtype, "low": self.request.low, "high": self.request.high,
                "key": self.key, "counter": self.counter, "chunk": self.chunk, "blocks_per_chunk": self.blocks,
                "rule": ("chunk k of `chunk` numbers is drawn on the state (counter + k * blocks_per_chunk, key)"
                         if self.generator == "philox4x32-10" else
                         f"{self.generator}: chunk k of `chunk` numbers is drawn on the state whose word 4 is the "
                         "engine's value after the numbers before it (one continuous stream)")}


def _describe(backend) -> dict:
    try:
        return dict(backend.describe())
    except Exception as error:  # a backend's description is informative only
        return {"describe() failed": one_line(error)}


def feed(stream: NumberStream, null: Null, first: int, count: int, tick=None):
    """Accumulators over numbers first .. first+count-1 of ``stream``."""
    accs = accumulators(null, first)
    for values in stream.read(first, count):
        for acc in accs:
            acc.update(values)
        if tick:
            tick(values.size)
    return accs


# ---------------------------------------------------------------------------------- the document
def run(stream: NumberStream, count: int, *, tier: str = "smoke", reproduce: str = "", progress=None) -> dict:
    """The stats document of ``count`` numbers of ``stream`` (verdicts and retest as battery.run)."""
    began = time.perf_counter()
    null = null_of(stream.request)
    say = progress or (lambda text: None)
    say(f"numbers: reading {count} {stream.request.kind} {stream.request.dtype}")
    accs = feed(stream, null, 0, count)
    found, not_run = results(accs)
    m = max(len(found), 1)
    suspect_at = judge_first(found)
    suspects = {e["test"] for e in found if e["verdict"] == STATS_SUSPECT}
    if suspects:   # the next range of the stream, numbers count .. 2 count - 1
        say(f"retesting {sorted(suspects)} on numbers {count}..{2 * count - 1}")
        again = {e["test"]: e for e in results(feed(stream, null, count, count))[0]}
        for entry in found:
            if entry["test"] in suspects and entry["test"] in again:
                record_retest(entry, again[entry["test"]], suspect_at, numbers_from=count)
    counts = {v: sum(e["verdict"] == v for e in found) for v in STATS_JUDGED}
    verdict = stats_verdict(counts, found=bool(found))
    elapsed = time.perf_counter() - began
    size = ITEMSIZE[stream.request.dtype]
    return {
        "schema": "rngcheck-stats",
        "schema_version": 1,
        "tier": tier,
        "seed": stream.key,
        "source": stream.describe(),
        "reproduce": reproduce,
        "bytes_requested": count * size,
        "bytes_tested": count * size,
        "complete": bool(found),
        "message": "" if found else f"{count} numbers are too few for any test",
        "thresholds": {"suspect": suspect_at, "fail": FAIL_AT, "tests": m, "family_false_suspect": FAMILY_SUSPECT,
                       "family_false_fail": m * FAIL_AT + FAMILY_SUSPECT * suspect_at},
        "verdict": verdict,
        "counts": counts,
        "elapsed_seconds": elapsed,
        "throughput_mb_s": count * size / (1 << 20) / elapsed if elapsed > 0 else None,
        "results": found,
        "not_run": not_run,
        "distribution": {"kind": stream.request.kind, "convention": stream.request.convention,
                         "dtype": stream.request.dtype, "low": stream.request.low, "high": stream.request.high,
                         "numbers": count, "null": null.describe()},
    }


def _check_range_in_dtype(request: Request) -> None:
    """[low, high) as the dtype holds it (numbers.Request checks it in float64 only: a conformance case
    may draw any range a library takes): both ends finite once rounded to the dtype, low < high after
    that rounding, and high - low finite in the dtype (the conventions scale by it: an infinite span
    draws inf and NaN). A range that fails is not tested: one line."""
    fmt = floats.FORMATS[request.dtype]
    low, high = (float(end) for end in request.uniform_range)
    with np.errstate(over="ignore", invalid="ignore"):   # an end past the dtype rounds to inf: refused below
        lo, hi = (float(v) for v in floats.as_values(fmt, floats.round_to(fmt, [low, high])))
        span = float(floats.as_values(fmt, floats.round_to(fmt, [np.float64(hi) - np.float64(lo)]))[0])
    shown = f"[{request.low}, {request.high}) in {request.dtype}"
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RngcheckError(f"the range {shown} is not finite (its ends round to {lo!r} and {hi!r})")
    if not lo < hi:
        raise RngcheckError(f"the range {shown} is empty: its ends round to {lo!r} and {hi!r}")
    if not math.isfinite(span):
        raise RngcheckError(f"the range {shown} is wider than {request.dtype} holds: high - low overflows it")


def request_of(kind: str, convention: str, dtype: str, low=None, high=None) -> Request:
    """A checked request (one-line RngcheckError for anything wrong)."""
    MODELS.get(kind)  # one line naming the known kinds otherwise
    try:
        request = Request(convention, kind, dtype, CHUNK, low, high)
        numbers.check(request)
    except NumbersError as error:
        raise RngcheckError(str(error)) from None
    _model_check(convention)
    if request.kind == UNIFORM and request.low is not None:
        _check_range_in_dtype(request)
    if kind not in MODELLED_KINDS.get(convention, MODELS.names()):
        raise RngcheckError(f"no {kind} goodness-of-fit for convention {convention!r} "
                            f"(modelled: {', '.join(MODELLED_KINDS[convention])})")
    return request
