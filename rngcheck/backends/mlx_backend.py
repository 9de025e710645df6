"""The ``mlx`` backend: MLX's ``mlx.core.random`` on its CPU device (``pip install mlx[cpu]`` on Linux), numbers only.

Written against MLX 0.32.4 (mlx-cpu 0.32.4, x86_64 Linux). Its generator is Threefry-2x32-20 with JAX's layout from
before JAX 0.5 (``jax_threefry_partitionable`` off): ``mx.random.key(s)`` is [0, s]; n words of a key are lane 0
then lane 1 of Threefry(key, (i, i + n/2)) for i < n/2; ``split(key)`` is those 4 words as two keys; a float32
uniform is float32(bits) / float32(2^32 - 1), i.e. bits / 2^32 rounded, held below 1 (bits from 2^32 - 128 up round
to 1.0 and come out 1 - 2^-24). rngcheck.numbers.mlx models these (keys and words through
rngcheck.numbers.jax_keys), and tests/test_mlx_backend.py checks the library against it bit for bit. Its
convention, ``mlx``, is the library's own (a Threefry stream, not the Philox word stream the registered
conventions read), judged in a run by the property axis (rngcheck.conformance.properties).

1. Seed and position (the property axis's rule 1): MLX's global generator, ``mx.random.seed(seed)`` with the seed
   state word 4 (word 5 zero); position c (counter word 0) is its (c + 1)-th draw of the same request (c draws
   are made first). Each draw takes ``key, sub = split(key)`` and draws from ``sub`` (MLX's KeySequence).
2. Kinds: uniform (float32, float16; a range through low/high), normal (float32),
   integers (``mx.random.randint``, int32).
3. Device: MLX's CPU stream (``mx.cpu``); the backend runs in its own worker process.
"""

from __future__ import annotations

import importlib.util
from typing import Any

import numpy as np

from .. import numbers
from ..description import FEATURE_LEVEL_4_0
from ..errors import BackendUnavailable, NotApplicable
from . import Backend, placement

INSTALL_HINT = "mlx is not installed: pip install rngcheck[mlx] (mlx[cpu] on Linux)"
WRITTEN_AGAINST = "0.32.4"
CONVENTION = "mlx"
KINDS = {numbers.UNIFORM: ("float32", "float16"), numbers.NORMAL: ("float32",),
         numbers.INTEGERS: ("int32",)}
MAX_NUMBERS = 1 << 22
MAX_POSITION = 64


class MlxBackend(Backend):
    """MLX's random numbers from its global generator (module doc rules 1-3)."""

    name = "mlx"
    validates = False
    conventions = (CONVENTION,)

    def __init__(self) -> None:
        if importlib.util.find_spec("mlx") is None:
            raise BackendUnavailable(INSTALL_HINT)
        try:
            import mlx.core as mx
        except ImportError as error:   # mlx without a backend package (mlx[cpu] on Linux)
            raise BackendUnavailable(f"mlx: {error}; {INSTALL_HINT}") from None
        mx.set_default_device(mx.cpu)
        self.mx = mx

    def describe(self) -> dict[str, str]:
        version = str(getattr(self.mx, "__version__", ""))   # not in its type stubs
        return {"implementation": "mlx.core.random uniform / normal / randint (mx.random.seed)",
                "generator": "threefry2x32-20, JAX's layout before JAX 0.5, key [0, seed]",
                "device": "cpu", "written_against": WRITTEN_AGAINST, "version": f"mlx {version}", "mlx": version}

    def random_generator(self, state, sizes, strides, buffer, *, output_state=True,
                         feature_level=FEATURE_LEVEL_4_0):
        raise NotApplicable("MLX draws numbers (Threefry-2x32), not DirectML's Philox words")

    def random_numbers(self, request: dict, state):
        """Rules 1-2 of the module doc."""
        parsed = self.numbers_request(request, kinds=KINDS, max_numbers=MAX_NUMBERS)
        seed, position = placement.seed_and_position(state, "mlx", MAX_POSITION)
        self.mx.random.seed(seed)
        for _ in range(position):
            self._draw(parsed)
        return self._draw(parsed)

    def _draw(self, request: numbers.Request) -> np.ndarray:
        mx, shape = self.mx, (request.count,)
        drawn: Any
        if request.kind == numbers.UNIFORM:
            dtype = getattr(mx, request.dtype)
            if request.low is None:
                drawn = mx.random.uniform(shape=shape, dtype=dtype)
            else:
                low, high = request.uniform_range
                drawn = mx.random.uniform(low, high, shape=shape, dtype=dtype)
        elif request.kind == numbers.NORMAL:
            drawn = mx.random.normal(shape=shape, dtype=mx.float32)
        else:
            low, high = request.integer_range
            drawn = mx.random.randint(low, high, shape=shape, dtype=mx.int32)
        mx.eval(drawn)
        return np.array(drawn)
