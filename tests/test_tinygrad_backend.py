"""The ``tinygrad`` backend (issue 43) through the property axis: tinygrad 0.14.0's two defects are caught and
named (tinygrad#16520's realisation order; randint through float32), and the order is the cause: realised in
the order made, the same draw passes. tinygrad runs in a worker process, as ``rngcheck run`` hosts it.
Locally a missing tinygrad skips; with CI=true it fails."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from helpers import isolated_backend
from rngcheck.conformance import axes
from rngcheck.conformance.properties import cases as property_cases
from rngcheck.numbers import tinygrad as tinygrad_numbers
from rngcheck.results.statuses import FAILED, PASSED

SPEC = "rngcheck.backends.tinygrad_backend:TinygradBackend"


def _case(case_id):
    found = property_cases.by_id(case_id)
    assert found is not None
    return found


@pytest.fixture(scope="module")
def tinygrad():
    backend = isolated_backend(SPEC, "tinygrad")
    yield backend
    backend.close()


def test_a_draw_made_as_two_lazy_tensors_realised_last_first_repeats_itself(tinygrad):
    outcome = axes.run_case(tinygrad, _case("properties/stream/seed-1"))
    assert outcome.status == FAILED, outcome.message
    assert outcome.diagnosis["id"] == "property-stream-repeats"
    assert outcome.diagnosis["parameters"]["shift"] == property_cases.WINDOW // 2
    assert outcome.repro_arguments == ["--property", "properties/stream/seed-1"]


def test_realised_in_the_order_made_the_same_draw_passes():
    backend = isolated_backend(str(Path(__file__).with_name("tinygrad_made.py")) + ":RealisedAsMade", "tinygrad")
    try:
        assert axes.run_case(backend, _case("properties/stream/seed-1")).status == PASSED
    finally:
        backend.close()


@pytest.mark.parametrize("seed, position, count", [(7, 0, 11), (42, 2, 1000)])
def test_realised_as_made_a_draw_is_the_model_bit_for_bit(seed, position, count):
    """rngcheck.numbers.tinygrad: the backend makes a request as two lazy halves of n // 2 and n - n // 2 numbers
    at position c after c draws of the same request: the halves read the counter at c n and c n + n // 2."""
    backend = isolated_backend(str(Path(__file__).with_name("tinygrad_made.py")) + ":RealisedAsMade", "tinygrad")
    try:
        request = {"convention": "tinygrad", "kind": "uniform", "dtype": "float32", "count": count}
        drawn = np.asarray(backend.random_numbers(request, property_cases.seed_state(seed, position)))
        first = position * count
        expected = np.concatenate([tinygrad_numbers.rand32(seed, first, count // 2),
                                   tinygrad_numbers.rand32(seed, first + count // 2, count - count // 2)])
        assert drawn.dtype == np.float32 and np.array_equal(drawn, expected)
    finally:
        backend.close()


def test_the_first_device_key_is_sha256_of_0():
    assert tinygrad_numbers.device_key(7) == (0x14B81119, 7)


def test_randint_up_to_2pow30_never_sets_its_low_bits(tinygrad):
    outcome = axes.run_case(tinygrad, _case("properties/bits/range-0-2pow30"))
    assert outcome.status == FAILED and outcome.diagnosis["id"] == "property-bits-unreachable"
    parameters = outcome.diagnosis["parameters"]
    assert set(range(6)) <= set(parameters["bits"]) and parameters["multiple_of"] % 64 == 0


def test_its_seeds_repeat_and_its_small_range_is_whole(tinygrad):
    for case_id in ("properties/repeat/seed-0", "properties/integers/range-m5-5"):
        outcome = axes.run_case(tinygrad, _case(case_id))
        assert outcome.status == PASSED, (case_id, outcome.message)


def test_a_bad_option_is_one_line():
    from rngcheck.backends.tinygrad_backend import TinygradBackend
    from rngcheck.errors import BackendSpecError

    with pytest.raises(BackendSpecError, match="realise='sideways'"):
        TinygradBackend.from_options("realise=sideways")
