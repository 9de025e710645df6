"""The contract every library backend's test class states once (numpy's test_direct.py pattern:
one base contract, a few lines per generator; tests/test_library_contract.py has the lines).

A generator's class sets what it is and how it differs from the operator, if it does:

    spec       the backend (a registered name, module:attr)
    require    the module that must be there (looked up, never imported: CI fails without it)
    states     the states it is tested from (default library_cases.STATES)
    counts     the element counts n (default 1..9), each in every layout of library_cases.layouts
    words      (backend, state, n) -> the n words it must write (default: the reference's)
    state_after  (backend, state, n) -> the state it must return (default: the operator's)
    describe_check  (info) -> None: the keys that name the library and its version

and mixes in the parts of the contract that apply to it (each one an assertion that can fail):

    Contract         its describe(), words and state from every state and layout, unplaceable
                     descriptions refused without a write
    InstallHint      a missing library is one line with its ``pip install rngcheck[extra]`` hint
    Chunked          tensors split into library calls of 8 elements continue one stream
    LargeTensor      one execution of 100002 elements
    FeatureLevel3    a feature level 3.0 state (1x1x1x6) and no output state asked for, the
                     input state untouched
    InputUntouched   the input state array is not modified
    QuickProfile     the suite's quick profile passes (no required case broken, verdict pass)

What is peculiar to one backend (cuRAND's expressible states, the MKL stream layout, Random123's
engine, pyopencl's generator internals, torch's helper build) stays in its own small file.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

from helpers import require, unavailable
from library_cases import SENTINEL, STATES, WorkerPool, layouts, quick_run, run_one
from rngcheck import counter, layout, reference
from rngcheck.backends import load
from rngcheck.errors import BackendUnavailable, Rejected

CHUNK_STATES = [STATES[0], STATES[3], STATES[5]]
CHUNK_IDS = ["plain", "carry64", "wrap"]
UNPLACEABLE = [
    ((4, 4), (4,), 16),      # stride count
    ((4, 4), (4, -1), 16),   # negative stride
    ((4, 4), None, 15),      # buffer too short
]


def state_id(state) -> str:
    return hex(counter.counter_of(state))


def expected_buffer(words, state, sizes, strides, length):
    """A SENTINEL-filled buffer of ``length`` holding ``words`` at the layout's offsets."""
    buffer = np.full(length, SENTINEL, dtype=np.uint32)
    buffer[layout.physical_offsets(sizes, strides)] = words
    return buffer


def as_state(words) -> np.ndarray:
    return np.asarray(words, dtype=np.uint32).reshape(-1)


class Contract:
    """The base contract: every library backend. Not collected itself (no Test prefix)."""

    spec: str
    require: str | None = None
    worker = True                   # isolated in a worker process as `rngcheck run` hosts it; False: in this process
    worker_options: dict = {}       # e.g. a longer handshake for a backend that compiles its helper
    states = STATES
    counts: tuple[int, ...] = tuple(range(1, 10))
    layout_picks: tuple[int, ...] | None = None   # indices into library_cases.layouts(n); None: every layout

    # ---- the generator's model: the operator's by default --------------------------------

    def words(self, backend, state, n):
        return reference.words(state, 0, n)

    def state_after(self, backend, state, n):
        return counter.advance(state, n)

    def describe_check(self, info) -> None:
        raise NotImplementedError

    def present(self) -> None:
        """Skip locally, fail in CI, when what the backend needs is not installed."""
        if self.require:
            require(self.require, load=False)

    def make(self, pool, spec: str | None = None, env=None):
        """The backend (``spec`` default: the class's), in a worker or in this process, built once a class."""
        self.present()
        spec = spec or self.spec
        if self.worker:
            return pool(spec, env=env, **self.worker_options)
        if spec not in pool.built:
            try:
                pool.built[spec] = load(spec)
            except BackendUnavailable as error:
                unavailable(f"{spec} unavailable: {error}")
        return pool.built[spec]

    @pytest.fixture(scope="class")
    def pool(self):
        """The class's backends (workers, or in-process ones), closed after its last test."""
        pool = WorkerPool()
        yield pool
        pool.close()

    @pytest.fixture(scope="class")
    def backend(self, pool):
        return self.make(pool)

    def expected(self, backend, state, sizes, strides, length):
        n = layout.element_count(sizes)
        return (expected_buffer(self.words(backend, state, n), state, sizes, strides, length),
                as_state(self.state_after(backend, state, n)))

    # ---- the contract ----------------------------------------------------------------------

    def test_describe(self, backend):
        info = backend.describe()
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in info.items()), info
        assert info.get("version"), info          # the results table's version column
        self.describe_check(info)

    def test_against_model(self, backend, state):
        """n in ``counts``, in every layout: exactly the words and state of the generator's model."""
        for n in self.counts:
            shapes = layouts(n)
            for sizes, strides in shapes if self.layout_picks is None else [shapes[i] for i in self.layout_picks]:
                buffer, new_state = run_one(backend, state, sizes, strides)
                want_buffer, want_state = self.expected(backend, state, sizes, strides, buffer.size)
                assert np.array_equal(buffer, want_buffer), (n, sizes, strides)
                assert np.array_equal(as_state(new_state), want_state), (n, sizes)

    @pytest.mark.parametrize("sizes, strides, length", UNPLACEABLE, ids=["stride-count", "negative", "short"])
    def test_unplaceable_description_is_rejected(self, backend, sizes, strides, length):
        buffer = np.full(length, SENTINEL, dtype=np.uint32)
        with pytest.raises(Rejected):
            backend.random_generator(self.states[0].copy(), sizes, strides, buffer)
        assert np.all(buffer == SENTINEL)



class InstallHint:
    """A missing library: loading the backend is one line naming ``pip install rngcheck[extra]``."""

    hidden: tuple[str, ...] = ()    # the modules hidden from import
    extra = ""

    def hide_library(self, monkeypatch) -> None:
        for module in self.hidden:
            monkeypatch.setitem(sys.modules, module, None)   # makes `import module` raise ImportError

    def test_missing_library_is_unavailable_with_install_hint(self, monkeypatch):
        self.hide_library(monkeypatch)
        with pytest.raises(BackendUnavailable) as error:
            load(self.spec)
        message = str(error.value)
        assert f"pip install rngcheck[{self.extra}]" in message and "\n" not in message


class Chunked:
    """Tensors over several library calls (chunks of 8 elements) continue one stream."""

    def chunked(self, pool, monkeypatch):
        """The backend with chunks of 8: a worker started with RNGCHECK_PLACEMENT_CHUNK=8."""
        return self.make(pool, env={"RNGCHECK_PLACEMENT_CHUNK": "8"})

    @pytest.mark.parametrize("state", CHUNK_STATES, ids=CHUNK_IDS)
    def test_chunk_boundaries(self, pool, state, monkeypatch):
        backend = self.chunked(pool, monkeypatch)
        for n in (7, 8, 9, 17, 30):
            for sizes, strides in ((n,), None), ((n, 1), (2, 1)):
                buffer, new_state = run_one(backend, state, sizes, strides)
                want_buffer, want_state = self.expected(backend, state, sizes, strides, buffer.size)
                assert np.array_equal(buffer, want_buffer), (n, sizes)
                assert np.array_equal(as_state(new_state), want_state), n


class LargeTensor:
    """One execution of 100002 elements (libraries fill in parallel shards beyond a size)."""

    large_states = (STATES[5],)     # default: across the 2^128 wrap

    def test_large_tensor(self, backend):
        sizes = (7, 14286, 1)
        for state in self.large_states:
            buffer, new_state = run_one(backend, state, sizes, None, extra=3)
            want_buffer, want_state = self.expected(backend, state, sizes, None, buffer.size)
            assert np.array_equal(buffer, want_buffer), state_id(state)
            assert np.array_equal(as_state(new_state), want_state), state_id(state)


class FeatureLevel3:
    """A feature level 3.0 state (1x1x1x6) with no output state asked for: None back, the words
    written, the input state untouched."""

    def test_feature_level_3_state_and_no_output_state(self, backend):
        state = self.states[0].reshape(1, 1, 1, 6).copy()
        buffer = np.full(10, SENTINEL, dtype=np.uint32)
        assert backend.random_generator(state, (1, 1, 2, 3), None, buffer,
                                        output_state=False, feature_level=(3, 0)) is None
        want, _ = self.expected(backend, self.states[0], (1, 1, 2, 3), None, 10)
        assert np.array_equal(buffer, want)
        assert np.array_equal(state.reshape(-1), self.states[0])


class InputUntouched:
    """The input state array is not modified (a copy, not the caller's array, is advanced)."""

    def test_input_state_is_not_modified(self, backend):
        state = self.states[3].copy()
        backend.random_generator(state, (9,), None, np.zeros(9, dtype=np.uint32))
        assert np.array_equal(state, self.states[3])


class QuickProfile:
    """The suite's quick profile: no required case broken, verdict pass."""

    min_passed: int | None = 100      # words cases that must have passed (None: no count asked)

    def quick_check(self, document, results) -> None:
        """What else the generator's quick profile must show (its skipped cases, ...)."""

    def test_quick_profile_passes(self, backend):
        document, results = quick_run(self.spec, backend)
        if self.min_passed is not None:
            assert sum(r["status"] == "passed" for r in results) > self.min_passed
        self.quick_check(document, results)
