"""The ``onnxruntime`` backend (ONNX Runtime's CPU RandomUniform/RandomNormal) against its model,
rngcheck.numbers.onnxruntime_cpu (minstd_rand0, not Philox).

Exact for uniforms (float32, float64, a range), within the convention's 4 ULP for normals; a second
run() continues the engine; a state whose seed word is not a float32 integer is not applicable.
ONNX Runtime runs in a worker process, as `rngcheck run` hosts it. Locally a missing onnxruntime
skips; with CI=true it fails.
"""

from __future__ import annotations

import numpy as np
import pytest

from helpers import isolated_backend, require
from rngcheck import numbers
from rngcheck.conformance import axes
from rngcheck.conformance.conventions import cases as NC
from rngcheck.conformance.directml import cases as C
from rngcheck.conformance.directml import check
from rngcheck.errors import NotApplicable
from rngcheck.numbers import onnxruntime_cpu as model

SPEC = "rngcheck.backends.onnxruntime_backend:OnnxRuntimeBackend"
STATE = np.array(NC.BLOCK_ZERO_STATE, dtype=np.uint32)


@pytest.fixture(scope="module")
def ort():
    backend = isolated_backend(SPEC, "onnxruntime", "onnx")
    yield backend
    backend.close()


def state_with_seed(seed):
    state = STATE.copy()
    state[4] = seed
    return state


@pytest.mark.parametrize("seed", [1, 42, 12345, 0xA4093800])
def test_uniform_float32_is_minstd_rand0_through_generate_canonical(ort, seed):
    request = numbers.Request("onnxruntime-cpu", "uniform", "float32", 999)
    got = ort.random_numbers(request.to_dict(), state_with_seed(seed))
    assert np.array_equal(got, model.canonical32(model.minstd_rand0(seed, 999)))


def test_the_first_engine_values_are_minstd_rand0s():
    # x1 = 16807 * seed mod (2^31 - 1); the 10000th value from seed 1 is 1043618065 (C++11's check value)
    assert model.minstd_rand0(1, 10000)[-1] == 1043618065
    assert model.minstd_rand0(42, 1)[0] == 16807 * 42
    assert model.minstd_rand0(0, 1)[0] == 16807      # a zero seed becomes 1


@pytest.mark.parametrize("case_id", [c.id for c in axes.cases_for("quick")
                                     if c.procedure == "numbers" and "/onnxruntime-cpu/" in c.id
                                     and (c.id.endswith("-block0") or "clamp" in c.id)])
def test_every_case_ort_can_express_passes(ort, case_id):
    case = next(c for c in axes.cases_for("quick") if c.id == case_id)
    outcome = axes.run_case(ort, case)
    assert outcome.status == check.PASSED, outcome.message


def test_a_seed_word_that_is_no_float32_integer_is_not_applicable(ort):
    request = numbers.Request("onnxruntime-cpu", "uniform", "float32", 4)
    with pytest.raises(NotApplicable, match="not a float32 integer"):
        ort.random_numbers(request.to_dict(), np.array(C.BASE_STATE, dtype=np.uint32))


def test_a_second_run_continues_the_engine():
    require("onnxruntime")
    from rngcheck.backends.onnxruntime_backend import OnnxRuntimeBackend, model_bytes

    backend = OnnxRuntimeBackend()
    session = backend.session(model_bytes("RandomUniform", "float32", 100, 42.0, {}))
    first, second = session.run(None, {})[0], session.run(None, {})[0]
    values = model.canonical32(model.minstd_rand0(42, 200))
    assert np.array_equal(first, values[:100]) and np.array_equal(second, values[100:])


def test_a_philox_convention_on_minstd_numbers_fails_and_is_named_minstd():
    """rngcheck names ORT's generator when its numbers are offered as TensorFlow's."""
    from rngcheck.conformance.conventions.diagnosis import diagnose

    request = numbers.Request("tensorflow", "uniform", "float32", 999)
    actual = model.canonical32(model.minstd_rand0(int(STATE[4]), 999))
    assert diagnose(request, STATE, actual)["id"] == "convention-onnxruntime-cpu"
