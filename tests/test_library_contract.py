"""The library backends' one contract (tests/library_contract.py), a few lines per generator.

Each class names a generator and the parts of the contract it keeps; where it differs from the
operator (docs/library-findings.md) its ``words`` / ``state_after`` are the documented model, so a
change in the library fails here. What is peculiar to one backend is in its own file
(test_curand_backend.py, test_mkl_backend.py, ...). Locally a missing library skips; with
CI=true (CI installs them all) it fails instead (helpers.unavailable).
"""

from __future__ import annotations

import importlib.metadata

from helpers import unavailable
from library_cases import (
    CURAND_STATES,
    STATES,
    pyopencl_generator_state,
    pyopencl_generator_words,
    random123_engine_words,
)
from library_contract import (
    Chunked,
    Contract,
    FeatureLevel3,
    InputUntouched,
    InstallHint,
    LargeTensor,
    QuickProfile,
    state_id,
)
from rngcheck import counter
from rngcheck.results.statuses import INFO, NOT_APPLICABLE, PASSED


def pytest_generate_tests(metafunc):
    """``state``: the generator class's own states (cuRAND's expressible ones, ...)."""
    if "state" in metafunc.fixturenames and metafunc.function.__name__ == "test_against_model":
        metafunc.parametrize("state", metafunc.cls.states, ids=state_id)


class TestMkl(Contract, InstallHint, Chunked, LargeTensor, FeatureLevel3, InputUntouched, QuickProfile):
    """Intel oneMKL's VSL_BRNG_PHILOX4X32X10 (mkl_random): bit for bit, words and state."""

    spec, require = "rngcheck.backends.mkl_backend:MklBackend", "mkl_random"
    hidden, extra = ("mkl_random",), "mkl"
    large_states = (STATES[4],)

    def describe_check(self, info):
        assert info["mkl_random"] and info["mkl"] and info["device"].startswith("cpu")
        assert "PHILOX4X32X10" in info["implementation"]


class Random123(Contract, Chunked, LargeTensor, FeatureLevel3, InputUntouched):
    """Random123's own headers compiled with g++ (no pip extra: g++ and librandom123-dev)."""

    def describe_check(self, info):
        assert info["device"].startswith("cpu") and info["rounds"] == "10"
        assert info["random123"] and info["compiler"].startswith("g++")
        assert "Random123" in info["implementation"]


class TestRandom123Raw(Random123, QuickProfile):
    """raw philox4x32 + incr(): bit for bit."""

    spec = "rngcheck.backends.random123_backend:Random123Backend"


class TestRandom123Engine(Random123):
    """r123::Engine<Philox4x32> mapped naively: lanes reversed, one block late; the state is the operator's."""

    spec = "rngcheck.backends.random123_backend:engine_backend"

    def words(self, backend, state, n):
        return random123_engine_words(state, n)


class TestCurand(Contract, FeatureLevel3):
    """cuRAND's host Philox generator, from the states it can express (the rest: test_curand_backend.py)."""

    spec, require, worker = "rngcheck.backends.curand_backend:CurandBackend", "nvidia.curand", False
    states = CURAND_STATES
    counts = (*range(1, 10), 17, 30)

    def describe_check(self, info):
        assert info["curand"].startswith("10.") and "no GPU" in info["device"]


class Pyopencl(Contract, InstallHint):
    """pyopencl on PoCL, in this process (CI installs pocl-opencl-icd)."""

    require, worker = "pyopencl", False
    hidden, extra = ("pyopencl",), "opencl"


class TestPyopenclHeader(Pyopencl, Chunked, LargeTensor, QuickProfile):
    """pyopencl's bundled Random123 Philox header from rngcheck's kernel: bit for bit."""

    spec = "rngcheck.backends.pyopencl_backend:PyopenclBackend"
    large_states = (STATES[0], STATES[3], STATES[5])
    min_passed = 99

    def chunked(self, pool, monkeypatch):
        from rngcheck.backends import placement
        monkeypatch.setattr(placement, "CHUNK_ELEMENTS", 8)   # in this process: the placement's own chunk
        return self.make(pool)

    def quick_check(self, document, results):
        assert {r["status"] for r in document["results"]} <= {PASSED, INFO, NOT_APPLICABLE}

    def describe_check(self, info):
        assert "pyopencl-random123/philox.cl" in info["implementation"] and info["device"] and info["pyopencl"]


class TestPyopenclGenerator(Pyopencl):
    """pyopencl.clrandom.PhiloxGenerator: differs exactly as documented (its model: library_cases)."""

    spec = "rngcheck.backends.pyopencl_backend:PyopenclGeneratorBackend"
    counts = (*range(1, 10), 33, 300, 1001)
    layout_picks = (0, 1, 3)

    def words(self, backend, state, n):
        return pyopencl_generator_words(backend, state, n)

    def state_after(self, backend, state, n):
        return pyopencl_generator_state(state, n)

    def describe_check(self, info):
        assert info["device"] and info["pyopencl"]


class Torch(Contract, InstallHint):
    """PyTorch's at::Philox4_32 header through rngcheck's C++ helper (compiled on first use)."""

    require, worker_options = "torch", {"timeout": 600}
    hidden, extra = ("torch",), "torch"


class TestTorch(Torch):
    """The state it reports (seed, subsequence, get_offset()) drops the carry out of word 1."""

    spec = "rngcheck.backends.torch_backend:TorchBackend"

    def state_after(self, backend, state, n):
        return counter.advance(state, n, counter_bits=64)

    def describe_check(self, info):
        assert info["implementation"].startswith("at::Philox4_32")
        assert info["torch"].startswith("2.") and info["header"].endswith("PhiloxRNGEngine.h")
        assert "g++" in info["compiler"] or "GCC" in info["compiler"]
        assert "get_offset" in info["output-state"]


class TestTorchSpecState(Torch, QuickProfile):
    """state=spec (rngcheck's own output state): every word of at::Philox4_32 is the operator's."""

    spec = "rngcheck.backends.torch_backend:torch_spec_state"
    min_passed = None

    def describe_check(self, info):
        assert info["implementation"].startswith("at::Philox4_32") and info["torch"].startswith("2.")


class TestOnedpl(Contract, QuickProfile):
    """oneDPL's oneapi::dpl::philox4x32 (P2075) on the host, through rngcheck's C++ helper."""

    spec, worker_options = "rngcheck.backends.onedpl_backend:OneDPLBackend", {"timeout": 600}
    min_passed = None

    def present(self):
        try:
            importlib.metadata.distribution("onedpl-devel")
        except importlib.metadata.PackageNotFoundError:
            unavailable("onedpl-devel is not installed")

    def quick_check(self, document, results):
        assert {r["case"] for r in results if r["status"] == NOT_APPLICABLE} == {"validation/too-many-elements"}

    def describe_check(self, info):
        assert info["implementation"].startswith("oneapi::dpl::philox4x32")
        assert info["onedpl"] and info["header"].endswith("philox_engine.h")
