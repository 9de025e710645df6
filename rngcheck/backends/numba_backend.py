"""The ``numba`` backend: numba's CUDA random numbers (``numba.cuda.random``, xoroshiro128+), numbers only.

Written against numba 0.68.1 (numba/cuda/random.py). ``create_xoroshiro128p_states(n, seed)`` seeds state 0 with
SplitMix64's first output z of the seed, both words (s0 = s1 = z), and each further state by a jump of 2^64
steps; ``xoroshiro128p_uniform_float64`` is (x >> 11) * 2^-53 of the next output x, ``..._float32`` that float64
rounded to float32 (so 1 - 2^-25 and above round to 1.0: numba#10810), ``xoroshiro128p_normal_float32`` Box-Muller
of two float32 uniforms, the cosine only. Its convention, ``numba``, is the library's own, judged in a run by the
property axis (rngcheck.conformance.properties); rngcheck.numbers.numba models its seeding, xoroshiro128+ (numba's
constants 55, 14, 36) and uniforms, and tests/test_numba_backend.py checks numba against it bit for bit.

1. Mode: ``mode=cpu`` (the default): numba.cuda.random's device functions, which are numba ``@jit`` functions, called
   from an ``@njit`` loop on the CPU (no GPU, no CUDA toolkit; the same source the CUDA target compiles);
   ``mode=cudasim``: a ``@cuda.jit`` kernel run by numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``, set before
   numba is imported: the backend runs in its own worker process), about 1.5 ms a number; ``mode=cuda``: the same
   kernel compiled for a CUDA device (numba-cuda; NUMBA_ENABLE_CUDASIM=0), unavailable with the reason in one line
   when numba sees no CUDA device. Not run on a GPU yet (issue 41: scripts/gpu-check.sh runs it).
2. One generator, one thread: a request of n numbers is n draws from ``create_xoroshiro128p_states(1, seed)``'s
   state 0, in order (a CUDA thread that draws n numbers in a loop).
3. Seed and position (the property axis's rule 1): the seed is state word 4 (word 5 zero); position c is the
   (c + 1)-th draw of the same request from the state made from the seed (c draws are made first).
4. Kinds: uniform float32 and float64 in [0, 1) (numba has no range), normal float32 (``normal_float32``) and
   float64 (``normal_float64``, from float32 uniforms too). numba has no integer function.
"""

from __future__ import annotations

import importlib.util
import os
from typing import Any

import numpy as np

from .. import numbers
from ..description import FEATURE_LEVEL_4_0
from ..errors import BackendSpecError, BackendUnavailable, NotApplicable
from . import Backend, placement

INSTALL_HINT = "numba is not installed: pip install rngcheck[numba]"
WRITTEN_AGAINST = "0.68.1"
CONVENTION = "numba"
KINDS = {numbers.UNIFORM: ("float32", "float64"), numbers.NORMAL: ("float32", "float64")}
MODES = ("cpu", "cudasim", "cuda")
MAX_NUMBERS = 1 << 20
MAX_POSITION = 64
SIMULATED_NUMBERS = 1 << 14     # the simulator's limit a call (about 1.5 ms a number)


class NumbaBackend(Backend):
    """numba.cuda.random's xoroshiro128+ (module doc rules 1-4)."""

    name = "numba"
    validates = False
    conventions = (CONVENTION,)

    def __init__(self, mode: str = "cpu") -> None:
        if mode not in MODES:
            raise BackendSpecError(f"numba: mode={mode!r} is not one of {', '.join(MODES)}")
        if importlib.util.find_spec("numba") is None:
            raise BackendUnavailable(INSTALL_HINT)
        wanted = "1" if mode == "cudasim" else "0"
        os.environ.setdefault("NUMBA_ENABLE_CUDASIM", wanted)
        import numba

        if bool(vars(numba.config).get("ENABLE_CUDASIM")) != (mode == "cudasim"):   # set by numba from its environment
            raise BackendUnavailable(f"numba: NUMBA_ENABLE_CUDASIM={os.environ['NUMBA_ENABLE_CUDASIM']} is set; "
                                     f"mode={mode} needs NUMBA_ENABLE_CUDASIM={wanted}")
        if mode == "cuda":
            _cuda_or_unavailable()
        self.numba, self.mode = numba, mode
        self.kernels = _simulated() if mode in ("cudasim", "cuda") else _compiled()

    def describe(self) -> dict[str, str]:
        version = self.numba.__version__
        device = {"cudasim": "numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1)",
                  "cpu": "CPU (numba.cuda.random's functions under @njit)"}.get(self.mode) or _cuda_device_name()
        return {"implementation": "numba.cuda.random xoroshiro128p_uniform/normal_float32/float64",
                "generator": "xoroshiro128+ seeded by SplitMix64 (create_xoroshiro128p_states)", "device": device,
                "mode": self.mode, "written_against": WRITTEN_AGAINST, "version": f"numba {version}",
                "numba": version}

    def random_generator(self, state, sizes, strides, buffer, *, output_state=True,
                         feature_level=FEATURE_LEVEL_4_0):
        raise NotApplicable("numba draws numbers (xoroshiro128+), not DirectML's Philox words")

    def random_numbers(self, request: dict, state):
        """Rules 2-4 of the module doc."""
        parsed = self.numbers_request(request, kinds=KINDS, ranged=False,
                                      max_numbers=SIMULATED_NUMBERS if self.mode == "cudasim" else MAX_NUMBERS)
        seed, position = placement.seed_and_position(state, "numba", MAX_POSITION)
        states = self._states(seed)
        kernel = self.kernels[(parsed.kind, parsed.dtype)]
        out = np.zeros(parsed.count, dtype=parsed.dtype)
        for _ in range(position + 1):
            kernel(states, out)
        return out

    def _states(self, seed: int) -> Any:
        from numba.cuda.random import create_xoroshiro128p_states, init_xoroshiro128p_states_cpu, xoroshiro128p_dtype

        if self.mode in ("cudasim", "cuda"):
            return create_xoroshiro128p_states(1, seed)
        states = np.empty(1, dtype=xoroshiro128p_dtype)   # what create_xoroshiro128p_states copies to the device
        init_xoroshiro128p_states_cpu(states, seed, 0)
        return states


def _cuda_or_unavailable() -> None:
    """mode=cuda: numba's CUDA target with a device, else BackendUnavailable in one line."""
    try:
        from numba import cuda

        available = cuda.is_available()
    except Exception as error:  # numba-cuda missing or its driver bindings failing to load
        raise BackendUnavailable(f"numba: mode=cuda: numba's CUDA target does not load ({type(error).__name__}: "
                                 f"{error})") from None
    if not available:
        raise BackendUnavailable("numba: mode=cuda needs a CUDA device: numba.cuda.is_available() is False "
                                 "(no NVIDIA driver or GPU)")


def _cuda_device_name() -> str:
    from numba import cuda

    name = cuda.get_current_device().name
    return f"gpu ({name.decode() if isinstance(name, bytes) else name}), numba CUDA target"


def _functions() -> dict[tuple[str, str], Any]:
    from numba.cuda import random

    return {(numbers.UNIFORM, "float32"): random.xoroshiro128p_uniform_float32,
            (numbers.UNIFORM, "float64"): random.xoroshiro128p_uniform_float64,
            (numbers.NORMAL, "float32"): random.xoroshiro128p_normal_float32,
            (numbers.NORMAL, "float64"): random.xoroshiro128p_normal_float64}


def _loop(function) -> Any:
    """Rule 2: len(out) numbers drawn in turn from state 0 (the body both targets compile)."""
    def draw(states, out):
        for i in range(out.shape[0]):
            out[i] = function(states, 0)
    return draw


def _compiled() -> dict[tuple[str, str], Any]:
    """Rule 1, mode=cpu: the loop under @njit, a function each."""
    import numba

    return {kind: numba.njit(_loop(function)) for kind, function in _functions().items()}


def _simulated() -> dict[tuple[str, str], Any]:
    """Rule 1, mode=cudasim and mode=cuda: the loop as a kernel, launched as one block of one thread, a function
    each (on a real device numba copies the host array ``out`` in and back)."""
    from numba import cuda

    def launcher(kernel):
        return lambda states, out: kernel[1, 1](states, out)

    return {kind: launcher(cuda.jit(_loop(function))) for kind, function in _functions().items()}
