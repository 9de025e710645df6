"""The ``keras`` backend (issue 43) through the property axis: on Keras's torch backend a SeedGenerator's
seed and counter are summed, so seed s's second draw is seed s + 1's first (caught and named); on its JAX
backend seed 42 keys JAX as [42, 0], not jax.random.key(42)'s [0, 42] (rule 10, named); on its numpy
backend a float32 uniform reaches 1.0 (rule 9's edge seed 1183528), and every other property holds. Each
Keras backend runs in its own worker process (KERAS_BACKEND is read at import). Locally a missing keras or torch
skips; with CI=true it fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import isolated_backend
from rngcheck.conformance import axes
from rngcheck.conformance.properties import cases as property_cases
from rngcheck.results.statuses import FAILED, NOT_APPLICABLE, PASSED

BACKENDS = str(Path(__file__).with_name("keras_backends.py"))


def _hosted(name: str, *modules: str):
    return isolated_backend(f"{BACKENDS}:{name}", "keras", *modules)


def test_on_torch_adjacent_seeds_overlap_one_draw_apart():
    backend = _hosted("KerasTorch", "torch")
    try:
        case = property_cases.by_id("properties/seeds/adjacent-1-2")
        assert case is not None
        outcome = axes.run_case(backend, case)
        assert outcome.status == FAILED, outcome.message
        assert outcome.diagnosis["id"] == "property-seeds-overlap"
        parameters = outcome.diagnosis["parameters"]
        assert parameters["seeds"] == [1, 2] and parameters["positions"] == [1, 0]
        assert parameters["indexes"] == [0, 0]
        assert axes.run_case(backend, property_cases.by_id("properties/repeat/seed-0")).status == PASSED
    finally:
        backend.close()


def test_on_numpy_its_float32_uniform_reaches_1_on_the_edge_seed_and_every_other_property_holds():
    """numpy's float64 uniform cast to float32 rounds [1 - 2^-25, 1) to 1.0 (rngcheck.numbers.keras rule 5)."""
    backend = _hosted("KerasNumpy")
    try:
        outcomes = {case.id: axes.run_case(backend, case) for case in property_cases.property_cases()}
        keying = f"properties/keying/seed-{property_cases.KEYING_SEED}"
        assert outcomes.pop(keying).status == NOT_APPLICABLE    # it names no platform rngcheck models
        edge = outcomes.pop("properties/interval/edge-seed-1183528")
        assert edge.status == FAILED and edge.diagnosis["id"] == "property-interval", edge.message
        assert edge.diagnosis["parameters"] == {"seed": 1183528, "value": 1.0, "index": 15, "count": 1, "ones": 1}
        assert {i: o.message for i, o in outcomes.items() if o.status != PASSED} == {}
    finally:
        backend.close()


def test_on_jax_seed_42_is_keyed_42_0_not_jax_s_0_42():
    """Keras's JAX backend draws from its SeedGenerator's [seed, counter] as raw key data: seed 42's first draw
    is jax.random.uniform's from [42, 0], where jax.random.key(42) is [0, 42] (rule 10 names it)."""
    backend = _hosted("KerasJax", "jax")
    try:
        assert backend.describe()["platform_seeding"] == "jax"
        outcome = axes.run_case(backend, property_cases.by_id(f"properties/keying/seed-{property_cases.KEYING_SEED}"))
        assert outcome.status == FAILED, outcome.message
        assert outcome.diagnosis["id"] == "property-keying"
        parameters = outcome.diagnosis["parameters"]
        assert parameters["key"] == [42, 0] and parameters["expected"] == [0, 42], parameters
        assert parameters["layout"] == "partitionable" and "[42, 0]" in outcome.message
        assert outcome.repro_arguments == ["--property", "properties/keying/seed-42"]
    finally:
        backend.close()


def test_a_bad_option_is_one_line():
    from rngcheck.backends.keras_backend import KerasBackend
    from rngcheck.errors import BackendSpecError

    with pytest.raises(BackendSpecError, match="backend='mxnet' is not one of torch, jax, tensorflow, numpy"):
        KerasBackend.from_options("backend=mxnet")
