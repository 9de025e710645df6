"""rngcheck.numbers.keras against Keras 3 itself (issue 43: Keras's conventions per backend): on each Keras backend,
SeedGenerator(s)'s draws 0-2 of float32 uniforms equal the module's model bit for bit (JAX's words from the key
data [s, c], TensorFlow's stateless seed [s, c], torch's mt19937 seeded s + c, numpy's default_rng([s, c]) cast to
float32), and the numpy backend's cast reaches 1.0 on the edge seed rule 5 names. Each Keras backend runs in its own
worker process (KERAS_BACKEND is read at import). Locally a missing keras or backend skips; with CI=true it fails."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from helpers import isolated_backend
from rngcheck.conformance.properties import cases as property_cases
from rngcheck.numbers import keras as keras_numbers

BACKENDS = str(Path(__file__).with_name("keras_backends.py"))
HOSTS = {"jax": ("KerasJax", "jax"), "tensorflow": ("KerasTensorflow", "tensorflow"),
         "torch": ("KerasTorch", "torch"), "numpy": ("KerasNumpy",)}


def _uniforms(backend, seed: int, position: int, count: int) -> np.ndarray:
    request = {"convention": "keras", "kind": "uniform", "dtype": "float32", "count": count}
    return np.asarray(backend.random_numbers(request, property_cases.seed_state(seed, position)))


@pytest.mark.parametrize("name", list(HOSTS))
def test_each_backend_s_float32_uniform_is_the_model_bit_for_bit(name):
    class_name, *modules = HOSTS[name]
    backend = isolated_backend(f"{BACKENDS}:{class_name}", "keras", *modules)
    try:
        for seed, position, count in ((5, 0, 1000), (42, 2, 257), (0, 1, 4096)):
            drawn = _uniforms(backend, seed, position, count)
            expected = keras_numbers.uniform32(name, seed, position, count)
            assert drawn.dtype == np.float32 and np.array_equal(drawn, expected), (name, seed, position)
        if name == "numpy":    # rule 5: the float64 cast reaches 1.0
            edge = next(s for s, finding in property_cases.EDGE_SEEDS.items() if "Keras" in finding)
            drawn = _uniforms(backend, edge, 0, property_cases.EDGE_COUNT)
            assert drawn.max() == np.float32(1.0) and np.array_equal(
                drawn, keras_numbers.uniform32("numpy", edge, 0, property_cases.EDGE_COUNT))
    finally:
        backend.close()


def test_the_models_differ_where_keras_s_backends_do():
    """The same seed gives four different streams (Keras promises no equality across its backends), and torch's
    seed + counter makes seed 1's draw 1 seed 2's draw 0."""
    streams = {name: keras_numbers.uniform32(name, 1, 0, 64) for name in keras_numbers.KERAS_BACKENDS}
    assert len({s.tobytes() for s in streams.values()}) == 4
    assert np.array_equal(keras_numbers.uniform32("torch", 1, 1, 64), keras_numbers.uniform32("torch", 2, 0, 64))
    assert not np.array_equal(keras_numbers.uniform32("jax", 1, 1, 64), keras_numbers.uniform32("jax", 2, 0, 64))
    with pytest.raises(ValueError, match="not 'mxnet'"):
        keras_numbers.uniform32("mxnet", 1, 0, 4)
