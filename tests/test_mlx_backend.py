"""The ``mlx`` backend (issue 43): MLX 0.32.4 (mlx[cpu] on Linux) in a worker process as ``rngcheck run`` hosts it,
checked bit for bit against rngcheck.threefry under JAX's layout from before JAX 0.5 (its global generator's
key chain, its float32 uniform and the clamp that keeps it below 1), and through the property axis.
Locally a missing mlx skips; with CI=true it fails."""

from __future__ import annotations

import numpy as np
import pytest

from helpers import isolated_backend
from rngcheck.conformance import axes
from rngcheck.conformance.properties import cases as property_cases
from rngcheck.numbers import mlx as mlx_numbers
from rngcheck.results.statuses import NOT_APPLICABLE, PASSED
from rngcheck.threefry import threefry

SPEC = "rngcheck.backends.mlx_backend:MlxBackend"
BELOW_1 = mlx_numbers.BELOW_1


@pytest.fixture(scope="module")
def mlx():
    backend = isolated_backend(SPEC, "mlx")
    yield backend
    backend.close()


_subkey = mlx_numbers.draw_key       # rngcheck.numbers.mlx rule 3


def _draw(backend, seed: int, position: int, count: int, kind: str = "uniform", **drawn) -> np.ndarray:
    request = {"convention": "mlx", "kind": kind, "dtype": drawn.pop("dtype", "float32"), "count": count, **drawn}
    return np.asarray(backend.random_numbers(request, property_cases.seed_state(seed, position)))


@pytest.mark.parametrize("seed, position, count", [(0, 0, 1024), (42, 3, 4096), (7, 1, 2), (9, 2, 1001)])
def test_a_uniform_is_threefry_bits_over_2pow32_from_the_split_key_chain(mlx, seed, position, count):
    drawn = _draw(mlx, seed, position, count)
    assert drawn.dtype == np.float32 and np.array_equal(drawn, mlx_numbers.draw_uniform(seed, position, count))


def test_a_word_that_rounds_to_1_is_held_below_it(mlx):
    """Seed 1's first draw of 2^22: word 1518545 is 0xffffffed, which float32 rounds to 2^32 (1.0 after the
    division); MLX returns 1 - 2^-24."""
    key = _subkey(1, 0)
    counters = np.array([[1518545, 1518545 + (1 << 21)]], dtype=np.uint32)   # word i < n/2: lane 0 of (i, i + n/2)
    assert int(threefry(counters, key, 20)[0, 0]) == 0xFFFFFFED
    assert np.float32(0xFFFFFFED) / np.float32(2 ** 32 - 1) == np.float32(1.0)
    drawn = _draw(mlx, 1, 0, 1 << 22)
    assert drawn[1518545] == BELOW_1 and drawn.max() < 1


def test_every_property_passes(mlx):
    for case in property_cases.property_cases():
        outcome = axes.run_case(mlx, case)
        expected = NOT_APPLICABLE if case.procedure == "property-keying" else PASSED   # MLX is its own platform
        assert outcome.status == expected, (case.id, outcome.message)


def test_its_handshake_says_what_it_is(mlx):
    described = mlx.describe()
    assert described["written_against"] == "0.32.4" and described["mlx"] and mlx.conventions == ("mlx",)
