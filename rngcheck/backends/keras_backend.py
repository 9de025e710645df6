"""The ``keras`` backend: Keras 3's ``keras.random`` with a ``SeedGenerator``, on one of its backends, numbers
only: ``keras:backend=torch|jax|tensorflow|numpy`` (default tensorflow, Keras's own default).

Written against Keras 3.15.1. Keras selects its backend through ``KERAS_BACKEND`` before it is imported:
the backend sets it in the worker process that hosts it (rngcheck.backends.hosting), and a process whose
Keras already runs on another is unavailable (one line). Its convention, ``keras``, is the library's own, judged
in a run by the property axis (rngcheck.conformance.properties); rngcheck.numbers.keras models each Keras
backend's float32 uniform (rule 1 below).

1. Seed and position (the property axis's rule 1): ``keras.random.SeedGenerator(seed)`` with the seed
   the state's key word 4 (word 5 zero); position c (counter word 0, words 1-3 zero) is its (c + 1)-th
   draw: c draws of the same request are made first. A SeedGenerator's state is ``[seed, counter]``, its
   counter moved by one each draw; each Keras backend makes its generator's seed from that pair its own
   way (Keras 3.15.1, keras/src/backend/*/random.py): torch seeds ``torch.Generator`` with
   ``seed + counter`` (so seed s's draw 1 is seed s + 1's draw 0: the property axis names it
   property-seeds-overlap), JAX uses ``[seed, counter]`` as the key data (not ``jax.random.PRNGKey(seed)``,
   ``[0, seed]``), TensorFlow the pair as a stateless seed, numpy a generator seeded from the pair.
   On JAX the backend names its platform (``describe()["platform_seeding"] = "jax"``), so the property
   axis's rule 10 compares seed s's first draw with ``jax.random.key(s)``'s and names the key data
   [s, 0] it finds (property-keying). rngcheck models no other backend's own seeding. Each backend's float32
   uniform is modelled in rngcheck.numbers.keras (tests/test_keras_numbers.py checks Keras against it); on
   numpy it is a float64 cast to float32, which reaches 1.0 (rule 9's edge seed 1183528, property-interval).
2. Kinds: uniform (float32, float64; ``keras.random.uniform``, a range through minval/maxval), normal
   (float32, float64; ``keras.random.normal``), integers (int32, int64; ``keras.random.randint``).
"""

from __future__ import annotations

import importlib.util
import os
import sys
from typing import Any

import numpy as np

from .. import numbers
from ..description import FEATURE_LEVEL_4_0
from ..errors import BackendSpecError, BackendUnavailable, NotApplicable
from . import Backend, placement

INSTALL_HINT = "keras is not installed: pip install keras (it comes with tensorflow)"
WRITTEN_AGAINST = "3.15.1"
CONVENTION = "keras"
KERAS_BACKENDS = ("torch", "jax", "tensorflow", "numpy")
KINDS = {numbers.UNIFORM: ("float32", "float64"), numbers.NORMAL: ("float32", "float64"),
         numbers.INTEGERS: ("int32", "int64")}
MAX_NUMBERS = 1 << 22
MAX_POSITION = 64


class KerasBackend(Backend):
    """keras.random on one Keras backend (module doc rules 1-2)."""

    name = "keras"
    validates = False
    conventions = (CONVENTION,)

    def __init__(self, backend: str = "tensorflow") -> None:
        if backend not in KERAS_BACKENDS:
            raise BackendSpecError(f"keras: backend={backend!r} is not one of {', '.join(KERAS_BACKENDS)}")
        if importlib.util.find_spec("keras") is None:
            raise BackendUnavailable(INSTALL_HINT)
        if importlib.util.find_spec(backend) is None:
            raise BackendUnavailable(f"keras: its {backend} backend needs {backend}, which is not installed")
        if "keras" in sys.modules and os.environ.get("KERAS_BACKEND", "tensorflow") != backend:
            raise BackendUnavailable(f"keras: this process's Keras runs on {os.environ.get('KERAS_BACKEND')}; "
                                     f"backend={backend} needs its own process")
        os.environ["KERAS_BACKEND"] = backend
        import keras

        if keras.backend.backend() != backend:
            raise BackendUnavailable(f"keras: KERAS_BACKEND={backend} gave Keras's {keras.backend.backend()} "
                                     "backend")
        self.keras, self.backend = keras, backend

    def describe(self) -> dict[str, str]:
        library = sys.modules.get(self.backend)
        under = getattr(library, "__version__", "?")
        return {"implementation": f"keras.random with a SeedGenerator on the {self.backend} backend",
                "generator": f"{self.backend}'s, seeded from the SeedGenerator's [seed, counter]",
                "device": "cpu", "keras_backend": self.backend, "written_against": WRITTEN_AGAINST,
                "version": f"keras {self.keras.__version__} ({self.backend} {under})",
                "keras": self.keras.__version__, self.backend: under,
                **({"platform_seeding": "jax"} if self.backend == "jax" else {})}

    def random_generator(self, state, sizes, strides, buffer, *, output_state=True,
                         feature_level=FEATURE_LEVEL_4_0):
        raise NotApplicable("Keras draws numbers through its backend's generator, not DirectML's Philox words")

    def random_numbers(self, request: dict, state):
        """Rules 1-2 of the module doc."""
        parsed = self.numbers_request(request, kinds=KINDS, max_numbers=MAX_NUMBERS)
        seed, position = placement.seed_and_position(state, "keras", MAX_POSITION)
        generator = self.keras.random.SeedGenerator(seed)
        for _ in range(position):
            self._draw(parsed, generator)
        return self._draw(parsed, generator)

    def _draw(self, request: numbers.Request, generator: Any) -> np.ndarray:
        random, shape = self.keras.random, (request.count,)
        if request.kind == numbers.UNIFORM:
            low, high = request.uniform_range
            drawn = random.uniform(shape, minval=low, maxval=high, dtype=request.dtype, seed=generator)
        elif request.kind == numbers.NORMAL:
            drawn = random.normal(shape, dtype=request.dtype, seed=generator)
        else:
            low, high = request.integer_range
            drawn = random.randint(shape, low, high, dtype=request.dtype, seed=generator)
        return np.asarray(self.keras.ops.convert_to_numpy(drawn)).reshape(-1)
