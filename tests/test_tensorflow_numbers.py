"""Real TensorFlow under the numbers layer: its numbers against rngcheck.numbers.tensorflow's model.

TensorFlow runs in worker processes (as `rngcheck run` hosts it: its RTLD_GLOBAL LLVM must stay
out of this process), one for the CPU kernels and one XLA-compiled, each started once per module.
Every kind and dtype TensorFlow defines is drawn for several states (keys 0 and all-ones, counters
whose low half or whole 128 bits carry within the draw) and counts 1..9 and a few hundred, and
compared with the reference within numbers.bound(request) (rngcheck.numbers.tolerance.compare).
"""

import json
import subprocess
import sys

import numpy as np
import pytest

from helpers import require
from rngcheck import counter, numbers, reference
from rngcheck.backends.exec_backend import isolated
from rngcheck.errors import NotApplicable
from rngcheck.numbers import floats, tolerance
from rngcheck.numbers.tensorflow import TensorFlow

MASK64 = (1 << 64) - 1
ALL_ONES = MASK64
STATES = {
    "zero": counter.make_state(0, 0),
    "key-all-ones": counter.make_state(0x0123456789ABCDEF, ALL_ONES),
    "low-half-carries": counter.make_state(MASK64 - 2, 0xDEADBEEFCAFEF00D),        # 2^64 - 3: carries at block 3
    "counter-wraps": counter.make_state((1 << 128) - 2, ALL_ONES),                  # 2^128 - 2: wraps to 0
    "groups-carry": counter.make_state(MASK64 - 300, 0x9E3779B97F4A7C15),          # truncated groups skip 256 blocks
    "word-carry": counter.make_state(0xFFFFFFFF, 12345),                           # word 0 into word 1
}
COUNTS = (*range(1, 10), 300)
KIND_DTYPES = [(kind, dtype) for kind, dtypes in TensorFlow.kinds.items() for dtype in dtypes]


@pytest.fixture(scope="module")
def tf_cpu():
    require("tensorflow", load=False)
    backend = isolated("tensorflow", timeout=300)
    yield backend
    backend.close()


@pytest.fixture(scope="module")
def tf_xla():
    require("tensorflow", load=False)
    backend = isolated("tensorflow:jit_compile=1", timeout=300)
    yield backend
    backend.close()


def check(backend, request: numbers.Request, state) -> tolerance.Comparison:
    """TensorFlow's numbers for the request against the reference's, within the request's bound."""
    expected = numbers.draw(request, state)
    actual = backend.random_numbers(request.to_dict(), state)
    assert actual.dtype == expected.dtype and actual.shape == expected.shape, (request.text(), actual.dtype)
    bound = numbers.bound(request)
    # tolerance rule 5 for a bound counted in a wider format
    excess = numbers.excess(request, numbers.wide_reference(request, state), actual)
    comparison = tolerance.compare(request.dtype, expected, actual, bound, excess=excess)
    assert comparison.within, (f"{request.text()} state {state_text(state)}: {comparison.over} over "
                               f"{bound.ulps} ULP, worst {comparison.worst} at {comparison.worst_index}, "
                               f"first {comparison.first_over}: expected {expected[comparison.first_over].tolist()}, "
                               f"tensorflow {actual[comparison.first_over].tolist()}")
    return comparison


def state_text(state) -> str:
    return "(seeded)" if state is None else str([int(w) for w in state])


def test_tensorflow_advertises_its_convention(tf_cpu):
    assert tf_cpu.conventions == ("tensorflow",)
    assert "StatelessRandomUniformFullIntV2" in tf_cpu.describe()["implementation"]


@pytest.mark.parametrize("kind, dtype", KIND_DTYPES, ids=lambda v: v)
def test_every_kind_and_dtype_within_the_bound(tf_cpu, kind, dtype):
    lowest, highest = numbers.INT_RANGES[dtype] if kind == numbers.INTEGERS else (None, None)
    worst = 0
    for state in STATES.values():
        for count in COUNTS:
            request = numbers.Request("tensorflow", kind, dtype, count, lowest, highest)
            worst = max(worst, check(tf_cpu, request, state).worst)
    if kind in (numbers.NORMAL, numbers.TRUNCATED_NORMAL) and dtype == "float32":
        assert worst > 0  # libm's transcendental functions are not the reference's correctly rounded ones
    # float64: TensorFlow's normals differ from the reference's correctly rounded ones on some CPUs
    # and are equal to them on others (0 ULP on an AMD EPYC with AVX2, 2026-11-29): the bound holds
    # either way (check above), and whether it is reached is the CPU's.


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("low, high", [(-3.5, 7.25), (1000.0, 1001.0), (-1.0, 1.0), (0.1, 0.3), (-1e4, -0.5)])
def test_uniform_in_a_range_within_one_rounding(tf_cpu, dtype, low, high):
    for name in ("zero", "counter-wraps", "key-all-ones"):
        check(tf_cpu, numbers.Request("tensorflow", numbers.UNIFORM, dtype, 300, low, high), STATES[name])


@pytest.mark.parametrize("dtype", ["int32", "int64"])
@pytest.mark.parametrize("span", ["full", "small", "bottom", "top", "one", "odd-large", "negative"])
def test_integers_over_full_and_small_ranges_are_exact(tf_cpu, dtype, span):
    lowest, highest = numbers.INT_RANGES[dtype]
    low, high = {"full": (lowest, highest), "small": (0, 10), "bottom": (lowest, lowest + 3),
                 "top": (highest - 5, highest), "one": (-1, 0), "odd-large": (-7, highest // 3 * 2 + 1),
                 "negative": (lowest, 0)}[span]
    for state in STATES.values():
        for count in (1, 2, 3, 9, 300):
            assert check(tf_cpu, numbers.Request("tensorflow", numbers.INTEGERS, dtype, count, low, high),
                         state).worst == 0


SEEDS = [(1, 2), (0, 0), (-1, -1), (MASK64, 5), (-(1 << 63), (1 << 63) - 1), (87654321, 12345678)]


@pytest.mark.parametrize("kind, dtype", KIND_DTYPES, ids=lambda v: v)
def test_tensorflow_s_seed_path_is_the_model_s(tf_cpu, kind, dtype):
    """tf.random.stateless_* with seed=[a, b] (TensorFlow scrambles the seed) against rule 10."""
    low, high = (-10, 1 << 30) if kind == numbers.INTEGERS else (None, None)
    for seed in SEEDS:
        for count in (1, 6, 301):
            request = numbers.Request("tensorflow", kind, dtype, count, low, high, seed=seed)
            check(tf_cpu, request, None)
    if kind == numbers.UNIFORM:
        check(tf_cpu, numbers.Request("tensorflow", kind, dtype, 6, -2.5, 4.0, seed=(1, 2)), None)


GUIDE = """
import json, os
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import tensorflow as tf
x = tf.random.stateless_normal(shape=[2, 3], seed=[1, 2])
print(json.dumps({"shape": x.shape.as_list(), "bits": x.numpy().reshape(-1).view("uint32").tolist()}))
"""


def test_the_guide_s_stateless_normal_through_tensorflow_s_own_seed_path():
    """The TensorFlow guide's ``tf.random.stateless_normal(shape=[2, 3], seed=[1, 2])``, called as
    the guide writes it (shape [2, 3], default dtype and algorithm), is the reference's
    Request(tensorflow, normal, float32, 6, seed=(1, 2)) row-major, within the bound."""
    require("tensorflow", load=False)
    result = subprocess.run([sys.executable, "-c", GUIDE], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    printed = json.loads(result.stdout.strip().splitlines()[-1])
    assert printed["shape"] == [2, 3]
    actual = np.array(printed["bits"], dtype=np.uint32).view(np.float32)
    request = numbers.Request("tensorflow", numbers.NORMAL, "float32", 6, seed=(1, 2))
    expected = numbers.draw(request)
    assert tolerance.compare("float32", expected, actual, numbers.bound(request)).within, (expected, actual)
    assert abs(float(expected[0]) - 0.5441101) < 1e-6  # the guide prints [[0.5441101 ...


def test_what_tensorflow_cannot_draw_is_not_applicable(tf_cpu):
    with pytest.raises(NotApplicable, match="at most 4194304 per call"):
        tf_cpu.random_numbers(numbers.Request("tensorflow", numbers.UNIFORM, "float32", (1 << 22) + 1).to_dict(),
                              STATES["zero"])
    with pytest.raises(NotApplicable, match="draws integers as int32, int64, not uint32"):
        tf_cpu.random_numbers({"convention": "tensorflow", "kind": "integers", "dtype": "uint32", "count": 3,
                               "low": 0, "high": 5}, STATES["zero"])
    with pytest.raises(NotApplicable, match="'jax' convention"):
        tf_cpu.random_numbers({"convention": "jax", "kind": "normal", "dtype": "float32", "count": 3}, STATES["zero"])
    request = numbers.Request("tensorflow", numbers.BITS, "uint32", 4)   # and the worker goes on
    words = tf_cpu.random_numbers(request.to_dict(), STATES["zero"])
    assert np.array_equal(words, reference.words(STATES["zero"], 0, 4))


def test_a_few_million_numbers_in_one_request(tf_cpu):
    request = numbers.Request("tensorflow", numbers.NORMAL, "float32", 1 << 22)
    comparison = check(tf_cpu, request, STATES["counter-wraps"])
    assert comparison.count == 1 << 22


# ---- XLA (jit_compile=1): the tf2xla kernels ---------------------------------------------------------
XLA_EXACT = [(numbers.BITS, d) for d in TensorFlow.kinds[numbers.BITS]] + \
    [(numbers.INTEGERS, d) for d in TensorFlow.kinds[numbers.INTEGERS]] + [(numbers.UNIFORM, "float16")]


@pytest.mark.parametrize("kind, dtype", XLA_EXACT, ids=lambda v: v)
def test_xla_integers_bits_and_float16_uniform_are_the_model_s(tf_xla, kind, dtype):
    low, high = numbers.INT_RANGES[dtype] if kind == numbers.INTEGERS else (None, None)
    for state in STATES.values():
        for count in (1, 5, 300):
            assert check(tf_xla, numbers.Request("tensorflow", kind, dtype, count, low, high), state).worst == 0
    seeded = numbers.Request("tensorflow", kind, dtype, 7, low, high, seed=(1, 2))
    assert check(tf_xla, seeded, None).worst == 0


def high_bits_uniform(dtype: str, words: np.ndarray) -> np.ndarray:
    """The conversion XLA's kernels use (measured, not TensorFlow's CPU/GPU rules 1-2): the *high*
    mantissa-width bits of the word (float32: word >> 9; float64: the 64-bit pair >> 12) in [1, 2),
    minus 1."""
    if dtype == "float64":
        pairs = words[0::2].astype(np.uint64) | (words[1::2].astype(np.uint64) << np.uint64(32))
        return ((pairs >> np.uint64(12)) | np.uint64(0x3FF0000000000000)).view(np.float64) - 1.0
    return ((words >> np.uint32(9)) | np.uint32(0x3F800000)).view(np.float32) - np.float32(1.0)


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_xla_uniform_floats_take_the_high_bits_unlike_the_cpu_kernel(tf_xla, dtype):
    """A finding: XLA-compiled, StatelessRandomUniformV2 fills float32/float64 from the high bits of
    the words (and bfloat16 is that float32 truncated to its high 16 bits), so it is far outside the
    model's bound; float16 and the integers are the CPU kernel's. The numbers are not TensorFlow's
    CPU numbers."""
    state = STATES["key-all-ones"]
    request = numbers.Request("tensorflow", numbers.UNIFORM, dtype, 300)
    actual = tf_xla.random_numbers(request.to_dict(), state)
    far = tolerance.compare(dtype, numbers.draw(request, state), actual, numbers.bound(request))
    assert far.over > 250 and far.worst > 1000
    words = reference.words(state, 0, 600 if dtype == "float64" else 300)
    model = high_bits_uniform("float32" if dtype == "bfloat16" else dtype, words)
    if dtype == "bfloat16":  # the float32 number truncated (its high 16 bits), not rounded
        assert not np.array_equal(actual, floats.bfloat16_from_float32(model))
        model = (model.view(np.uint32) >> np.uint32(16)).astype(np.uint16)
    assert np.array_equal(actual, model)
