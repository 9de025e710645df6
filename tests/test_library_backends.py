"""The library backends (randomgen, TensorFlow, JAX) against rngcheck's reference model.

Where a library agrees with DML_RANDOM_GENERATOR the test demands bit-exact agreement;
where it differs (docs/library-findings.md) the test demands exactly the documented
difference, so that a change in the library fails here.

Locally a missing library skips its tests; with CI=true (CI installs all three) a missing
one fails instead of skipping (helpers.require).
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

from helpers import require
from library_cases import KEY, SENTINEL, layouts
from library_cases import STATES as CONTRACT_STATES
from rngcheck import counter, layout, reference
from rngcheck.backends import load
from rngcheck.backends.exec_backend import isolated
from rngcheck.errors import BackendUnavailable, Rejected

KEY64 = KEY[0] | (KEY[1] << 32)
# The contract's states (library_cases: every counter carry, the 2^128 wrap), and one more: the counter's
# high half equal to the key, where XLA's 2-word state agrees with the operator.
STATES = [*CONTRACT_STATES, counter.make_state((KEY64 << 64) | ((1 << 64) - 2), KEY)]


def library(module):
    """Skip when ``module`` is missing, except in CI where it must be installed.

    Only looks the module up: importing TensorFlow here would put its RTLD_GLOBAL LLVM into
    the test process, which breaks pocl for tests/test_opencl.py (the backends run isolated).
    """
    require(module, load=False)


# ---- expected results: the reference, or the documented difference --------------------

def spec_words(state, first, count, chunk):
    return reference.words(state, first, count)


def spec_state(state, n):
    return counter.advance(state, n)


def tf_library_state(state, n):
    """TensorFlow's Generator.skip(n): counter + 256 * n (mod 2^128), key unchanged."""
    return counter.add_to_counter(state, 256 * n)


def xla2_words(state, first, count, chunk):
    """XLA with a u64[2] state {key, counter_lo}: the counter's high 64 bits are the key.

    Each chunk restarts from the state XLA returned (low 64 bits + blocks, mod 2^64).
    """
    lo = counter.counter_of(state) & ((1 << 64) - 1)
    chunk_first = first - first % chunk if chunk else 0
    lo = (lo + chunk_first // 4) % (1 << 64)
    xla_state = counter.make_state((key64_of(state) << 64) | lo, key64_of(state))
    return reference.words(xla_state, first - chunk_first, count)


def key64_of(state):
    k0, k1 = counter.key_of(state)
    return k0 | (k1 << 32)


def xla2_state(state, n):
    """XLA's returned u64[2] state: counter low 64 bits advanced mod 2^64; words 2-3 as given."""
    return counter.advance(state, n, counter_bits=64)


MODELS = {
    # spec: backend spec, library module, words model, state model
    "randomgen": ("randomgen", "randomgen", spec_words, spec_state),
    "tensorflow": ("tensorflow", "tensorflow", spec_words, tf_library_state),
    "tensorflow-spec-state": ("tensorflow:state=spec", "tensorflow", spec_words, spec_state),
    "tensorflow-xla": ("tensorflow:jit_compile=1", "tensorflow", spec_words, tf_library_state),
    "jax": ("jax", "jax", xla2_words, xla2_state),
    "jax-u64x3": ("jax:state_words=3", "jax", spec_words, spec_state),
}


@pytest.fixture(scope="module")
def backends():
    """Backends by spec, built once per module, each in its worker process as `rngcheck run` does."""
    built = {}

    def get(spec, module):
        library(module)
        if spec not in built:
            built[spec] = isolated(spec)
        return built[spec]

    yield get
    for backend in built.values():
        backend.close()


@pytest.fixture(scope="module", params=sorted(MODELS))
def model(request, backends):
    spec, module, words_model, state_model = MODELS[request.param]
    return backends(spec, module), words_model, state_model


def expected(words_model, state_model, state, sizes, strides, length, chunk=None):
    """The buffer and state a backend must produce under its model."""
    buffer = np.full(length, SENTINEL, dtype=np.uint32)
    n = layout.element_count(sizes)
    step = chunk or max(n, 4)
    out = np.empty(n, dtype=np.uint32)
    for first in range(0, n, step):
        count = min(step, n - first)
        out[first:first + count] = words_model(state, first, count, chunk)
    buffer[layout.physical_offsets(sizes, strides)] = out
    return buffer, state_model(state, n)


def run(backend, state, sizes, strides, extra=5):
    length = layout.required_elements(sizes, strides) + extra
    buffer = np.full(length, SENTINEL, dtype=np.uint32)
    new_state = backend.random_generator(state.copy(), sizes, strides, buffer)
    return buffer, new_state


# ---- the tests ---------------------------------------------------------------------------

def test_describe(model):
    backend, _, _ = model
    info = backend.describe()
    assert info["device"]
    assert any(k in info for k in ("randomgen", "tensorflow", "jax"))
    assert all(isinstance(v, str) for v in info.values())


@pytest.mark.parametrize("state", STATES, ids=lambda s: hex(counter.counter_of(s)))
def test_against_model(model, state):
    """n = 1..9 in five layouts: exactly the reference, or exactly the documented difference."""
    backend, words_model, state_model = model
    for n in range(1, 10):
        for sizes, strides in layouts(n):
            buffer, new_state = run(backend, state, sizes, strides)
            want_buffer, want_state = expected(words_model, state_model, state, sizes, strides, buffer.size)
            assert np.array_equal(buffer, want_buffer), (n, sizes, strides)
            assert np.array_equal(np.asarray(new_state, dtype=np.uint32).reshape(-1), want_state), (n, sizes)


@pytest.fixture(scope="module")
def chunked_backends():
    """Backends whose worker splits every tensor into library calls of 8 elements."""
    built = {}

    def get(spec):
        if spec not in built:
            built[spec] = isolated(spec, env={"RNGCHECK_PLACEMENT_CHUNK": "8"})
        return built[spec]

    yield get
    for backend in built.values():
        backend.close()


@pytest.mark.parametrize("state", [STATES[0], STATES[3], STATES[5]], ids=["plain", "carry64", "wrap"])
def test_chunk_boundaries(model, state, chunked_backends, request):
    """Tensors over several library calls (chunks of 8 elements) stay contiguous."""
    _, words_model, state_model = model
    backend = chunked_backends(MODELS[request.node.callspec.params["model"]][0])
    for n in (7, 8, 9, 17, 30):
        for sizes, strides in ((n,), None), ((n, 1), (2, 1)):
            buffer, new_state = run(backend, state, sizes, strides)
            want_buffer, want_state = expected(words_model, state_model, state, sizes, strides,
                                               buffer.size, chunk=8)
            assert np.array_equal(buffer, want_buffer), (n, sizes)
            assert np.array_equal(np.asarray(new_state).reshape(-1), want_state), n


def test_large_tensor(model):
    """One call of 100003 elements (TensorFlow fills in parallel shards beyond a size)."""
    backend, words_model, state_model = model
    state = STATES[0]
    sizes = (7, 14286, 1)
    buffer, new_state = run(backend, state, sizes, None)
    want_buffer, want_state = expected(words_model, state_model, state, sizes, None, buffer.size)
    assert np.array_equal(buffer, want_buffer)
    assert np.array_equal(np.asarray(new_state).reshape(-1), want_state)


def test_feature_level_3_state_and_no_output_state(model):
    backend, words_model, state_model = model
    state = STATES[0].reshape(1, 1, 1, 6)
    buffer = np.full(10, SENTINEL, dtype=np.uint32)
    assert backend.random_generator(state, (1, 1, 2, 3), None, buffer,
                                    output_state=False, feature_level=(3, 0)) is None
    want, _ = expected(words_model, state_model, STATES[0], (1, 1, 2, 3), None, 10)
    assert np.array_equal(buffer, want)


@pytest.mark.parametrize("rank", range(1, 9))
def test_any_rank_any_strides_stays_in_extent(model, rank):
    """Valid descriptions of rank 1..8 with odd strides (0, aliasing, gaps): no crash, no stray writes."""
    backend, _, _ = model
    rng = np.random.default_rng(rank)
    for _ in range(3):
        sizes = tuple(int(s) for s in rng.integers(1, 4, size=rank))
        strides = tuple(int(s) for s in rng.integers(0, 6, size=rank))
        extent = layout.required_elements(sizes, strides)
        buffer = np.full(extent + 11, SENTINEL, dtype=np.uint32)
        backend.random_generator(STATES[0].copy(), sizes, strides, buffer)
        untouched = ~layout.covered_mask(sizes, strides, buffer.size)
        assert np.all(buffer[untouched] == SENTINEL), (sizes, strides)


@pytest.mark.parametrize("sizes, strides, length", [
    ((4, 4), (4,), 16),      # stride count
    ((4, 4), (4, -1), 16),   # negative stride
    ((4, 4), None, 15),      # buffer too short
])
def test_unplaceable_description_is_rejected(model, sizes, strides, length):
    backend, _, _ = model
    buffer = np.full(length, SENTINEL, dtype=np.uint32)
    with pytest.raises(Rejected):
        backend.random_generator(STATES[0].copy(), sizes, strides, buffer)
    assert np.all(buffer == SENTINEL)


def test_input_state_is_not_modified(model):
    backend, _, _ = model
    state = STATES[3].copy()
    backend.random_generator(state, (9,), None, np.zeros(9, dtype=np.uint32))
    assert np.array_equal(state, STATES[3])


# ---- the documented differences, stated directly ----------------------------------------

def test_xla_two_word_state_uses_the_key_as_counter_high_half(backends):
    """jax.lax.rng_bit_generator: agrees iff counter words 2-3 equal the key (words 4-5)."""
    backend = backends("jax", "jax")
    agreeing = counter.make_state((KEY64 << 64) | 5, KEY)
    differing = counter.make_state((1 << 64) | 5, KEY)
    for state, agrees in ((agreeing, True), (differing, False)):
        buffer, _ = run(backend, state, (8,), None, extra=0)
        assert np.array_equal(buffer, reference.words(state, 0, 8)) is agrees


def test_xla_two_word_state_drops_the_carry_out_of_word_1(backends):
    state = counter.make_state((KEY64 << 64) | ((1 << 64) - 1), KEY)
    buffer, new_state = run(backends("jax", "jax"), state, (8,), None, extra=0)
    assert np.array_equal(buffer, reference.words(state, 0, 8))  # the words carry (high = key + 1)
    assert counter.counter_of(new_state) == (KEY64 << 64) | 1      # the state does not


def test_tensorflow_generator_skips_256_blocks_per_output(backends):
    _, new_state = run(backends("tensorflow", "tensorflow"), STATES[0], (5,), None)
    advanced = (counter.counter_of(new_state) - counter.counter_of(STATES[0])) % (1 << 128)
    assert advanced == 256 * 5 != counter.blocks_for(5)


def test_tensorflow_runs_out_of_process(backends):
    """Isolated, TensorFlow's RTLD_GLOBAL LLVM never enters this process (pocl needs it out)."""
    backend = backends("tensorflow", "tensorflow")
    assert backend.describe()["exec-protocol"] == "1"
    run(backend, STATES[0], (5,), None)
    assert sys.modules.get("tensorflow") is None


# ---- unavailable libraries --------------------------------------------------------------

@pytest.mark.parametrize("spec, module, extra", [
    ("randomgen", "randomgen", "randomgen"),
    ("tensorflow", "tensorflow", "tensorflow"),
    ("jax", "jax", "jax"),
])
def test_missing_library_is_unavailable_with_install_hint(spec, module, extra, monkeypatch):
    monkeypatch.setitem(sys.modules, module, None)  # makes `import module` raise ImportError
    with pytest.raises(BackendUnavailable) as error:
        load(spec)
    message = str(error.value)
    assert f"pip install rngcheck[{extra}]" in message and "\n" not in message
