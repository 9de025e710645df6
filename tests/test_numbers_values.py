"""Numbers a convention cannot draw (rngcheck.numbers.tolerance rule 6): an infinity, a NaN, a zero of
the other sign where the reference draws +0.0, and a number just outside the request's interval fail
however few ULPs of the range's scale they are from the reference; a number just inside passes
(hardening round 4, item 1: a backend answering +inf everywhere passed every ranged uniform of the
quick profile, its distance from each number measured as 0 ULP of the range's scale).

The backends here are the reference (NumpyBackend) with its numbers changed. EDGE is a state whose
first block of words is chosen (its counter is Philox4x32-10 run backwards from the block) so that
the reference draws a ranged uniform's low end exactly, and a [0, 1) uniform's +0.0: the only
numbers a value just outside the interval, or a zero of the other sign, is within the bound of.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from rngcheck import counter, numbers, philox, reference
from rngcheck.backends.reference import NumpyBackend
from rngcheck.conformance import axes
from rngcheck.conformance.directml import check
from rngcheck.numbers import Request, floats, tolerance
from rngcheck.numbers.floats import INFINITE_ULPS

DTYPES = ("float16", "float32", "float64")


def _uniform_cases(ranged: bool) -> list:
    out = []
    for case in axes.cases_for("quick"):
        if case.procedure != "numbers" or case.expected_values is not None:
            continue
        request = case.request
        if request.kind == numbers.UNIFORM and request.dtype in DTYPES and (request.low is not None) == ranged:
            out.append(case)
    return out


RANGED = _uniform_cases(ranged=True)
UNIT = _uniform_cases(ranged=False)


def _ids(case) -> str:
    return case.id


# ---------------------------------------------------------------------------------- the edge state
MASK = 0xFFFFFFFF
MINSTD_MODULUS = (1 << 31) - 1


def _counter_of_block(block: tuple[int, int, int, int], key: tuple[int, int]) -> tuple[int, ...]:
    """The counter whose Philox4x32-10 block under ``key`` is ``block``: each round undone, last first
    (lo0 = M0 * c0 and lo1 = M1 * c2 mod 2^32 give c0 and c2, M0 and M1 being odd; then the high
    halves give c1 and c3)."""
    m0, m1 = int(philox.PHILOX_M0), int(philox.PHILOX_M1)
    keys = [((key[0] + r * philox.PHILOX_W0) & MASK, (key[1] + r * philox.PHILOX_W1) & MASK)
            for r in range(philox.DEFAULT_ROUNDS)]
    c0, c1, c2, c3 = block
    for k0, k1 in reversed(keys):
        x0 = c3 * pow(m0, -1, 1 << 32) & MASK
        x2 = c1 * pow(m1, -1, 1 << 32) & MASK
        c0, c1, c2, c3 = x0, c0 ^ ((x2 * m1) >> 32) ^ k0, x2, c2 ^ ((x0 * m0) >> 32) ^ k1
    return c0, c1, c2, c3


# Block 0's words: (0x001fffff, 0xffffffff) is cuRAND's double 1.0 (PyTorch: to becomes from);
# 0xffffffff is cuRAND's float 1.0; 0x80000000 is TensorFlow's and JAX's u = 0 (low mantissa bits
# zero; with the 0 after it TensorFlow's double too) and MKL's int32 -2^31 (u = 0). Key word 0 seeds
# ONNX Runtime's CPU minstd_rand0 with the x whose next value is 1 (u = 0 in float32).
EDGE_KEY = (pow(16807, -1, MINSTD_MODULUS), 0x299F31D0)
EDGE_BLOCK = (0x001FFFFF, 0xFFFFFFFF, 0x80000000, 0x00000000)
EDGE = counter.state_from_words(_counter_of_block(EDGE_BLOCK, EDGE_KEY), EDGE_KEY)


def test_the_edge_state_s_first_block_is_the_chosen_one():
    assert [int(w) for w in reference.words(EDGE, 0, 4)] == list(EDGE_BLOCK)


def at_edge(case):
    """The case drawn from EDGE, and the elements where its reference draws the range's low end
    (+0.0 for [0, 1))."""
    request = case.request
    expected = numbers.draw(request, EDGE)
    low = np.asarray(request.uniform_range[0], dtype=request.dtype)
    where = np.flatnonzero((expected == low) & (np.signbit(expected) == np.signbit(low)))
    return replace(case, state=tuple(int(w) for w in EDGE)), where


def _with_edge(cases):
    return [c for c in cases if c.request.seed is None and at_edge(c)[1].size]


RANGED_EDGE, UNIT_EDGE = _with_edge(RANGED), _with_edge(UNIT)


def test_the_edge_state_reaches_low_in_every_case_it_can():
    """Every ranged case has its low end drawn from EDGE but three: ONNX Runtime's CPU float64 is
    (a - 1) + (b - 1) * (2^31 - 2) from two engine values, never 0, and JAX's float64 needs a pair
    (0, below 2^20), which block 0 has no room for beside MKL's 0x80000000 and PyTorch's pair
    (JAX's bound is exact: a number one step away fails it anyway)."""
    assert {c.id for c in RANGED} - {c.id for c in RANGED_EDGE} == {
        "uniform/onnxruntime-cpu/float64-range", "uniform/onnxruntime-cpu/float64-range-block0",
        "uniform/jax/float64-range"}
    assert {c.request.dtype for c in UNIT_EDGE} == set(DTYPES)
    assert {c.request.convention for c in UNIT_EDGE} == {
        "tensorflow", "jax", "pytorch", "mkl", "onnxruntime-cpu", "onnxruntime-dml"}   # cuRAND: (0, 1]


# ---------------------------------------------------------------------------------- the backends
class Answering(NumpyBackend):
    """The reference's numbers with ``change(request, numbers)`` applied."""

    def __init__(self, change):
        super().__init__()
        self.change = change

    def random_numbers(self, request, state):
        values = np.array(super().random_numbers(request, state))
        return self.change(Request.from_dict(request), values)


def every(value):
    return Answering(lambda r, v: np.full(v.shape, value, dtype=v.dtype))


def at(elements, value_of):
    def change(request, values):
        values[elements] = value_of(request, values[elements])
        return values

    return Answering(change)


def verdict(backend, case):
    return axes.run_case(backend, case)


def test_the_quick_profile_has_the_ranged_cases_of_the_report():
    conventions = {c.request.convention for c in RANGED}
    assert conventions >= {"mkl", "onnxruntime-cpu", "pytorch", "tensorflow"}
    assert {c.request.dtype for c in RANGED} == set(DTYPES) and len(RANGED) >= 15


# ---------------------------------------------------------------------------------- non-finite values
@pytest.mark.parametrize("value", [np.inf, -np.inf], ids=["+inf", "-inf"])
@pytest.mark.parametrize("case", RANGED, ids=_ids)
def test_an_infinity_for_every_number_fails(case, value):
    outcome = verdict(every(value), case)
    assert outcome.status == check.FAILED, outcome.message
    assert outcome.numbers["over"] == case.request.count
    assert outcome.numbers["worst"]["ulps"] == INFINITE_ULPS
    assert outcome.numbers["mismatches"][0]["actual"].startswith("inf" if value > 0 else "-inf")


@pytest.mark.parametrize("case", RANGED, ids=_ids)
def test_one_infinity_among_the_right_numbers_fails_and_its_row_shows_it(case):
    outcome = verdict(at([5], lambda r, v: np.full(v.shape, np.inf, dtype=v.dtype)), case)
    assert outcome.status == check.FAILED, outcome.message
    assert outcome.numbers["over"] == 1
    row = outcome.numbers["mismatches"][0]
    assert row["index"] == 5 and row["actual"].startswith("inf") and row["ulps"] == INFINITE_ULPS


@pytest.mark.parametrize("case", RANGED, ids=_ids)
def test_nan_for_every_number_fails(case):
    outcome = verdict(every(np.nan), case)
    assert outcome.status == check.FAILED and outcome.numbers["over"] == case.request.count


# ---------------------------------------------------------------------------------- signed zeros
@pytest.mark.parametrize("case", RANGED, ids=_ids)
def test_negative_zero_for_every_number_fails(case):
    outcome = verdict(every(-0.0), case)
    assert outcome.status == check.FAILED, outcome.message


@pytest.mark.parametrize("case", UNIT_EDGE, ids=_ids)
def test_negative_zero_where_the_reference_draws_plus_zero_fails(case):
    """A [0, 1) uniform's +0.0 answered as -0.0: the same ordinal (floats rule 3), 0 ULP apart, but
    -0.0 is outside [0, 1) and the bound is exact (bits only)."""
    edge, where = at_edge(case)
    outcome = verdict(at(where, lambda r, v: -v), edge)
    assert outcome.status == check.FAILED, outcome.message
    assert outcome.numbers["over"] == where.size
    assert outcome.numbers["mismatches"][0]["actual"].startswith("-0 ")


@pytest.mark.parametrize("case", UNIT_EDGE, ids=_ids)
def test_the_reference_s_plus_zero_passes(case):
    edge, where = at_edge(case)
    outcome = verdict(NumpyBackend(), edge)
    assert outcome.status == check.PASSED, outcome.message


# ---------------------------------------------------------------------------------- the interval
def _next(request, values, direction):
    fmt = floats.format_of(request.dtype)
    return np.nextafter(values, np.asarray(direction, dtype=fmt.storage))


@pytest.mark.parametrize("case", RANGED_EDGE, ids=_ids)
def test_a_number_just_below_low_fails(case):
    """The reference draws low itself; the number below it is 1 ULP of the range's scale away (within
    the bound of a scaled uniform) but outside [low, high)."""
    edge, where = at_edge(case)
    outcome = verdict(at(where, lambda r, v: _next(r, v, -np.inf)), edge)
    assert outcome.status == check.FAILED, outcome.message
    assert outcome.numbers["over"] == where.size


@pytest.mark.parametrize("case", RANGED_EDGE, ids=_ids)
def test_a_number_just_above_low_passes_where_the_bound_admits_a_step(case):
    edge, where = at_edge(case)
    outcome = verdict(at(where, lambda r, v: _next(r, v, np.inf)), edge)
    bound = numbers.bound(case.request)
    if bound.exact:   # JAX: bit-exact, so one step inside is still a failure (of the bound, not the interval)
        assert outcome.status == check.FAILED
    else:
        assert outcome.status == check.PASSED, outcome.message
    assert verdict(NumpyBackend(), edge).status == check.PASSED


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("high_closed", [False, True])
def test_high_itself_is_outside_a_half_open_interval_only(dtype, high_closed):
    """The number below high answered as high: 1 ULP of the scale, admitted by the bound; outside
    [low, high), inside [low, high] (a convention whose arithmetic can round onto high)."""
    low, high = -3.5, 7.25
    below = np.nextafter(np.asarray(high, dtype=dtype), np.asarray(0, dtype=dtype))
    expected, actual = np.array([1.0, below], dtype=dtype), np.array([1.0, high], dtype=dtype)
    interval = tolerance.Interval(low, high, high_closed=high_closed)
    bound = replace(tolerance.one_rounding(low, high), interval=interval)
    comparison = tolerance.compare(dtype, expected, actual, bound)
    assert comparison.within == high_closed
    assert tolerance.distances(dtype, expected, actual, bound.scale, bound.interval)[1] == \
        (1 if high_closed else INFINITE_ULPS)
    assert tolerance.compare(dtype, expected, actual, replace(bound, interval=None)).within


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_truncated_normal_of_two_is_outside_its_open_interval(dtype):
    below = np.nextafter(np.asarray(2, dtype=dtype), np.asarray(0, dtype=dtype))
    bound = tolerance.Bound(4, "a normal's bound", interval=tolerance.Interval(-2, 2, False, False))
    assert not tolerance.compare(dtype, np.array([below]), np.array([2], dtype=dtype), bound).within
    assert not tolerance.compare(dtype, np.array([-below]), np.array([-2], dtype=dtype), bound).within
    assert tolerance.compare(dtype, np.array([below]), np.array([below], dtype=dtype), bound).within


def test_an_integer_outside_its_range_is_infinitely_far():
    interval = tolerance.Interval(-5, 10)
    distances = tolerance.distances("int32", np.array([9, -5, 3], dtype=np.int32),
                                    np.array([10, -6, 4], dtype=np.int32), interval=interval)
    assert list(distances) == [INFINITE_ULPS, INFINITE_ULPS, 1]


def test_a_value_the_reference_itself_draws_outside_the_interval_is_judged_by_the_bound():
    """The convention reaches there (MKL's STD method may reach b; a rounding may pass an end): the
    interval does not fail a number the reference draws, nor one within the bound of it."""
    interval = tolerance.Interval(0.0, 1.0)
    bound = tolerance.Bound(1, "one step", interval=interval)
    assert tolerance.compare("float32", np.float32([1.0]), np.float32([1.0]), bound).within
    assert tolerance.compare("float32", np.float32([1.0]), np.nextafter(np.float32([1.0]), np.float32(2)),
                             bound).within


def test_the_reference_s_numbers_lie_in_their_intervals():
    """Each convention's interval (Convention.interval) holds what its reference draws, for every
    numbers case of the quick profile and for the edge state."""
    checked = 0
    for case in axes.cases_for("quick"):
        if case.procedure != "numbers":
            continue
        request = case.request
        interval = numbers.bound(request).interval
        if interval is None:
            assert request.kind in (numbers.NORMAL, numbers.BITS), case.id
            continue
        for state in ((None,) if request.seed is not None else (counter.state_array(case.state), EDGE)):
            values = numbers.draw(request, state)
            assert not interval.outside(request.dtype, values).any(), (case.id, interval)
            checked += 1
    assert checked > 100


def test_non_finite_values_are_judged_by_rule_four_whatever_the_scale():
    """An infinity matches only the same infinity, a NaN only a NaN, with a scale (rule 2) or not."""
    bound = tolerance.one_rounding(-3.5, 7.25)
    expected = np.float32([np.inf, -np.inf, np.nan, np.inf, 1.0, 3.4028235e38])
    actual = np.float32([np.inf, -np.inf, np.nan, -np.inf, np.nan, np.inf])
    assert list(tolerance.distances("float32", expected, actual, bound.scale)) == \
        [0, 0, 0] + [INFINITE_ULPS] * 3
    assert list(tolerance.distances("float32", expected, actual)) == [0, 0, 0] + [INFINITE_ULPS] * 3


def test_a_zero_of_the_other_sign_is_one_step_away():
    """-0.0 and +0.0 share an ordinal (floats rule 3) but not their bits: one step, which an exact
    bound fails and a bound of a step or more admits."""
    expected, actual = np.float32([0.0, -0.0, 0.0]), np.float32([-0.0, 0.0, 0.0])
    assert list(tolerance.distances("float32", expected, actual)) == [1, 1, 0]
    assert list(tolerance.distances("float32", expected, actual, 7.25)) == [1, 1, 0]
    assert not tolerance.compare("float32", expected, actual, tolerance.EXACT).within
    assert tolerance.compare("float32", expected, actual, tolerance.Bound(1, "one step")).within
