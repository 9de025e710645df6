"""Tolerance rule 7: a ranged uniform's bound is the set of its allowed evaluation orders' results.

TensorFlow's ``u * (high - low) + low`` rounds twice in the dtype, or once where a compiler fuses
the multiply-add; float16 may also be computed in float32 and rounded at the end. Those results pass
and nothing else does: another formula (``low * (1 - u) + high * u``, a lerp) is within 1 ULP of the
larger endpoint nearly everywhere, and thousands of ULP off near zero.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from rngcheck import counter, numbers
from rngcheck.numbers import floats, tolerance
from rngcheck.numbers import tensorflow as tf

STATE = counter.state_array([7, 0, 0, 0, 0x1234, 0x5678])


def _request(dtype: str, low: float = -3.5, high: float = 7.25, count: int = 4096) -> numbers.Request:
    return numbers.Request(convention="tensorflow", kind=numbers.UNIFORM, dtype=dtype, count=count,
                           low=low, high=high)


def _unit(request: numbers.Request) -> np.ndarray:
    per = 2 if request.dtype == "float64" else 1
    return floats.as_values(request.format, tf.unit_uniform(request.dtype, tf.stream(STATE, 0, per * request.count)))


def _over(request: numbers.Request, actual: np.ndarray) -> int:
    """How many elements the bound refuses, as the numbers check counts them."""
    bound = numbers.bound(request)
    admitted = numbers.excess(request, numbers.wide_reference(request, STATE), actual)
    return tolerance.compare(request.dtype, numbers.draw(request, STATE), actual, bound, excess=admitted).over


@pytest.mark.parametrize("fmt", list(floats.FORMATS.values()), ids=lambda f: f.name)
def test_a_fused_multiply_add_rounds_the_exact_value_once(fmt):
    rng = np.random.default_rng(5)
    unit = floats.as_values(fmt, floats.round_to(fmt, rng.integers(0, 1 << 10, 2000) / 1024.0))
    span = floats.as_values(fmt, floats.round_to(fmt, rng.uniform(-20, 20, 2000)))
    low = floats.as_values(fmt, floats.round_to(fmt, rng.uniform(-20, 20, 2000)))
    # exact ties and sums that cancel: half of a format step past a representable value, and low = -unit * span
    low[:100] = -unit[:100] * span[:100]
    held = floats.fused_multiply_add(fmt, unit, span, low)
    got = floats.as_values(fmt, held)
    ordinals = fmt.ordinal(held)
    for i in range(2000):
        exact = Fraction(unit[i]) * Fraction(span[i]) + Fraction(low[i])
        mine = abs(Fraction(got[i]) - exact)
        for step in (-1, 1):   # neither neighbour is nearer; an equally near one loses the tie to an even mantissa
            other = floats.as_values(fmt, floats.from_ordinal(fmt, np.array([ordinals[i] + step])))[0]
            theirs = abs(Fraction(other) - exact)
            assert mine < theirs or (mine == theirs and int(fmt.bits_of(held[i:i + 1])[0]) % 2 == 0), \
                (i, unit[i], span[i], low[i])
    rounded_twice = floats.as_values(fmt, floats.round_to(fmt, floats.as_values(
        fmt, floats.round_to(fmt, unit * span)) + low))
    assert np.any(rounded_twice != got), "the fused result must differ from two roundings somewhere"


def _assert_rounded_once(fmt, a, b, c, held):
    """Each element of ``held`` is a * b + c's exact value rounded to ``fmt``: no neighbour is nearer,
    and an equally near one loses the tie to an even mantissa (the oracle is rational arithmetic)."""
    got, ordinals = floats.as_values(fmt, held), fmt.ordinal(held)
    for i in range(len(got)):
        exact = Fraction(a[i]) * Fraction(b[i]) + Fraction(c[i])
        mine = abs(Fraction(got[i]) - exact)
        for step in (-1, 1):
            other = floats.as_values(fmt, floats.from_ordinal(fmt, np.array([ordinals[i] + step])))[0]
            if not np.isfinite(other):
                continue
            theirs = abs(Fraction(other) - exact)
            assert mine < theirs or (mine == theirs and int(fmt.bits_of(held[i:i + 1])[0]) % 2 == 0), \
                (fmt.name, i, a[i], b[i], c[i])


@pytest.mark.parametrize("fmt", list(floats.FORMATS.values()), ids=lambda f: f.name)
def test_a_fused_multiply_add_decided_in_binary64_is_still_rounded_once(fmt):
    """Rule 5's shortcut (no rational value where binary64 holds the exact value): full-precision
    binary64 units times spans of few bits (exact midpoints of binary64 and of the format), sums
    that are exact and sums that are not, products near binary64's underflow, signs of both kinds."""
    rng = np.random.default_rng(56)
    n = 1500
    unit = rng.integers(0, 1 << 53, n) / float(1 << 53)                  # 53-bit units (binary64's)
    span = rng.choice([3.0, 5.0, -6.0, 1.5, 0.75, 10.0, -2.5, 7.25], n)  # few bits: products end on midpoints
    low = floats.as_values(fmt, floats.round_to(fmt, rng.uniform(-20, 20, n)))
    low[::3] = 0.0
    low[1::7] = -unit[1::7] * span[1::7]                                 # cancelling sums
    unit[2::11] *= 2.0 ** -1000                                           # products near binary64's underflow
    narrow = floats.as_values(fmt, floats.round_to(fmt, unit))            # the format's own units, ties in it
    # binary64 products below its normal range (Dekker's product is not exact there), beside tiny sums
    tiny_a, tiny_b = (rng.uniform(1, 2, n) * 2.0 ** rng.integers(-560, -500, n) for _ in range(2))
    tiny_c = rng.uniform(-1, 1, n) * 2.0 ** rng.integers(-1074, -1020, n)
    # an operand past 2^996 (Veltkamp's split overflows) times a tiny one, products of ordinary size; a
    # subnormal operand whose product lies just inside the range Dekker's product is trusted in
    huge_a = rng.uniform(1, 2, n) * 2.0 ** rng.integers(997, 1011, n)
    huge_b = rng.uniform(1, 2, n) * 2.0 ** -1000
    subnormal_a = rng.integers(1, 1 << 20, n) * 2.0 ** -1074
    subnormal_b = rng.uniform(1, 2, n) * 2.0 ** rng.integers(150, 200, n)
    # exact values a hair past the format's midpoint M = 1 + step/2 (one ulp of binary64, or 2^-104 held
    # only in the product's error): one rounding goes up, rounding binary64's (or binary32's) value again
    # lands on M and goes to the even side, down
    step = 2.0 ** -fmt.mantissa
    hair = np.array([1 + step / 2 + 2.0 ** -52, 1 + 2.0 ** -52, 1 + step / 2 + 2.0 ** -40])
    hair_b = np.array([1.0, 1 + 2.0 ** -52, 1.0])
    hair_c = np.array([0.0, step / 2 - 2.0 ** -51, 0.0])
    for a, b, c in ((unit, span, low), (narrow, span, low), (narrow, span, np.zeros(n)),
                    (narrow, floats.as_values(fmt, floats.round_to(fmt, rng.uniform(-9, 9, n))), low),
                    (tiny_a, tiny_b, tiny_c), (huge_a, huge_b, low), (subnormal_a, subnormal_b, tiny_c),
                    (hair, hair_b, hair_c)):
        _assert_rounded_once(fmt, a, b, c, floats.fused_multiply_add(fmt, a, b, c))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_every_allowed_order_passes_and_the_reference_is_its_first(dtype):
    request = _request(dtype)
    orders = numbers.wide_reference(request, STATE)
    assert orders is not None and len(orders) == len(numbers.bound(request).orders)
    assert np.array_equal(orders[0], numbers.draw(request, STATE))
    for row in orders:
        assert _over(request, row) == 0
    assert any(not np.array_equal(row, orders[0]) for row in orders[1:]), "the orders must differ somewhere"


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_a_lerp_fails_though_it_is_within_one_ulp_of_the_endpoint(dtype):
    request = _request(dtype)
    u = _unit(request)
    kind = np.dtype(request.format.storage).type
    lerp = (kind(-3.5) * (kind(1) - u.astype(kind)) + kind(7.25) * u.astype(kind)).astype(kind)
    old = tolerance.one_rounding(-3.5, 7.25)
    assert tolerance.compare(dtype, numbers.draw(request, STATE), lerp, old).over <= request.count // 100
    assert _over(request, lerp) > request.count // 10


def test_one_step_off_fails_where_one_ulp_of_the_endpoint_admitted_it():
    request = _request("float32")
    right = numbers.draw(request, STATE)
    nudged = right.copy()
    nudged[10] = np.nextafter(nudged[10], np.float32(np.inf))
    if any(np.array_equal(nudged, row) for row in numbers.wide_reference(request, STATE)):
        nudged[10] = np.nextafter(nudged[10], np.float32(np.inf))
    assert tolerance.compare("float32", right, nudged, tolerance.one_rounding(-3.5, 7.25)).over == 0
    assert _over(request, nudged) == 1


def test_bfloat16_stays_a_distance_and_says_why():
    bound = numbers.bound(_request("bfloat16"))
    assert not bound.orders and bound.scale == 7.25 and "OpenVINO" in bound.why


class _Lerp:
    """A backend whose float32 ranged uniform is low * (1 - u) + high * u."""

    name = "lerp"
    conventions = ("tensorflow",)

    def random_numbers(self, request, state):
        parsed = numbers.Request.from_dict(request)
        u = tf.unit_uniform("float32", tf.stream(state, 0, parsed.count))
        low, high = np.float32(parsed.low), np.float32(parsed.high)
        return (low * (np.float32(1) - u) + high * u).astype(np.float32)


def test_the_numbers_check_fails_a_lerp_and_says_which_bound():
    from rngcheck.conformance.conventions.cases import Case
    from rngcheck.conformance.conventions.check import check_numbers

    case = Case(id="uniform/tensorflow/float32-lerp", category="uniform", state=tuple(int(w) for w in STATE),
                request=_request("float32"), description="a lerp", rule="tolerance rule 7", source="this test")
    outcome = check_numbers(_Lerp(), case, strict=False)
    assert outcome.status == "failed"
    assert "none of its 2 evaluation orders' results" in outcome.message


@pytest.mark.parametrize("convention, dtype", [("tensorflow", "float64"), ("mkl", "float32"), ("mkl", "float64"),
                                               ("pytorch", "float32"), ("pytorch", "float64"),
                                               ("onnxruntime-cpu", "float32")])
def test_each_convention_admits_its_orders_and_nothing_one_step_away(convention, dtype):
    # endpoints with many mantissa bits: MKL's scale (high - low) / 2^32 then has a product to round
    request = numbers.Request(convention=convention, kind=numbers.UNIFORM, dtype=dtype, count=2048, low=-3.1,
                              high=7.3)
    bound = numbers.bound(request)
    assert bound.orders and bound.ulps == 0
    orders = numbers.wide_reference(request, STATE)
    assert np.array_equal(orders[0], numbers.draw(request, STATE))
    assert all(_over(request, row) == 0 for row in orders)
    assert any(not np.array_equal(row, orders[0]) for row in orders[1:]), "the orders must differ somewhere"
    nudged = orders[0].copy()
    outside = [i for i in range(request.count)
               if all(np.nextafter(nudged[i], np.inf) != row[i] for row in orders)][:3]
    nudged[outside] = np.nextafter(nudged[outside], np.inf)
    assert _over(request, nudged) == len(outside) == 3
