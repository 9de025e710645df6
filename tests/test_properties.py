"""The property axis (issue 43): the reference and a correct backend pass every property case, each broken
backend of tests/properties_panel.py fails the case it breaks with its diagnosis and parameters, and a
backend that draws no numbers is not applicable."""

from __future__ import annotations

import numpy as np
import pytest

from properties_panel import CORRECT, PANEL, Drawing, JaxKeyed
from rngcheck.backends import Backend
from rngcheck.backends.reference import NumpyBackend
from rngcheck.conformance import axes
from rngcheck.conformance.properties import cases as property_cases
from rngcheck.conformance.properties import check as property_check
from rngcheck.numbers import jax as jax_numbers
from rngcheck.numbers import jax_keys
from rngcheck.results.statuses import FAILED, NOT_APPLICABLE, PASSED

CASES = property_cases.property_cases()


def _outcomes(backend):
    return {case.id: axes.run_case(backend, case) for case in CASES}


KEYING = f"properties/keying/seed-{property_cases.KEYING_SEED}"


@pytest.mark.parametrize("backend", [NumpyBackend(), CORRECT()], ids=["numpy", "correct"])
def test_a_generator_without_the_defects_passes_every_property(backend):
    outcomes = _outcomes(backend)
    assert outcomes.pop(KEYING).status == NOT_APPLICABLE     # rule 10: it names no platform
    assert {id_: o.status for id_, o in outcomes.items() if o.status != PASSED} == {}


def test_a_front_end_keyed_as_its_platform_passes_rule_10_and_a_platform_not_modelled_is_na():
    case = property_cases.by_id(KEYING)
    assert axes.run_case(JaxKeyed(), case).status == PASSED

    class OtherPlatform(CORRECT):
        def describe(self):
            return {"platform_seeding": "torch"}

    outcome = axes.run_case(OtherPlatform(), case)
    assert outcome.status == NOT_APPLICABLE and "no seeding of platform 'torch'" in outcome.message
    assert set(property_cases.PLATFORMS) == set(property_check.PLATFORM_NUMBERS)


def test_rule_10_names_the_key_data_and_the_layout_it_finds():
    class SwappedOldLayout(JaxKeyed):
        def numbers(self, request, state):
            words = jax_keys.words((int(state[4]), 0), request.count, "original")
            return jax_numbers.uniform_from_bits("float32", words)

    class Unkeyed(JaxKeyed):
        def numbers(self, request, state):
            return np.full(request.count, 0.5, dtype=np.float32)

    case = property_cases.by_id(KEYING)
    found = axes.run_case(SwappedOldLayout(), case)
    assert found.status == FAILED and found.diagnosis["parameters"]["key"] == [42, 0]
    assert found.diagnosis["parameters"]["layout"] == "original" and "original layout" in found.message
    unknown = axes.run_case(Unkeyed(), case)
    assert unknown.status == FAILED and unknown.diagnosis["parameters"]["key"] is None
    assert unknown.diagnosis["parameters"]["index"] == 0 and "no other key data" in unknown.message


@pytest.mark.parametrize("broken", PANEL, ids=[b.backend.name for b in PANEL])
def test_each_broken_backend_fails_its_property_named(broken):
    outcomes = _outcomes(broken.backend())
    failed = {id_: o for id_, o in outcomes.items() if o.status == FAILED}
    assert broken.case in failed, {i: o.message for i, o in outcomes.items()}
    diagnosis = failed[broken.case].diagnosis
    assert diagnosis["id"] == broken.diagnosis
    assert diagnosis["id"] in axes.DIAGNOSES
    assert diagnosis["parameters"]
    assert failed[broken.case].repro_arguments == ["--property", broken.case]


def test_the_parameters_say_what_broke():
    by_name = {b.backend.name: _outcomes(b.backend()) for b in PANEL}
    truncated = by_name["truncated-range"]["properties/integers/range-m5-5"].diagnosis["parameters"]
    assert truncated["missing"] == [-5]
    float32 = by_name["float32-integers"]["properties/bits/range-0-2pow30"].diagnosis["parameters"]
    assert float32["bits"] == list(range(6)) and float32["multiple_of"] % 64 == 0
    summed = by_name["seed-plus-counter"]["properties/seeds/adjacent-1-2"].diagnosis["parameters"]
    assert summed["positions"] == [1, 0] and summed["indexes"] == [0, 0]
    halves = by_name["halves-realised-late"]["properties/stream/seed-1"].diagnosis["parameters"]
    assert halves["shift"] == property_cases.WINDOW // 2
    assert by_name["uniform-reaches-one"]["properties/interval/uniform-float32"].diagnosis["parameters"]["ones"] > 0


def test_a_biased_range_fails_the_chi_square():
    class Biased(Drawing):
        name = "biased"

        def numbers(self, request, state):
            drawn = super().numbers(request, state)
            if request.kind == "integers":
                drawn[: request.count // 20] = request.high - 1   # 5% more of the last value
            return drawn

    outcome = axes.run_case(Biased(), next(c for c in CASES if c.id == "properties/integers/range-m5-5"))
    assert outcome.status == FAILED and outcome.diagnosis["id"] == "property-range-biased"
    assert outcome.diagnosis["parameters"]["value"] == 4 and outcome.diagnosis["parameters"]["p"] < 1e-9


def test_order_and_recreate_catch_a_backend_that_keeps_state():
    class Keeps(Drawing):
        name = "keeps"
        calls = 0

        def numbers(self, request, state):
            Keeps.calls += 1
            state = state.copy()
            state[2] = Keeps.calls      # a hidden counter moves every draw
            return super().numbers(request, state)

    outcomes = _outcomes(Keeps())
    assert outcomes["properties/order/seed-1"].diagnosis["id"] == "property-order"
    assert outcomes["properties/recreate/seed-7"].diagnosis["id"] == "property-recreate"
    assert outcomes["properties/repeat/seed-42"].diagnosis["id"] == "property-repeat"


def test_a_backend_that_draws_no_numbers_is_not_applicable():
    class Words(Backend):
        name = "words-only"

    outcomes = _outcomes(Words())
    assert {o.status for o in outcomes.values()} == {NOT_APPLICABLE}


def test_a_wrong_sized_answer_breaks_the_contract():
    class Short(Drawing):
        name = "short"

        def numbers(self, request, state):
            return super().numbers(request, state)[:-1]

    outcome = axes.run_case(Short(), CASES[0])
    assert outcome.status == FAILED and outcome.diagnosis["id"] == "contract"


def test_the_property_cases_are_cheap_on_the_reference():
    drawn = sum(case.size() for case in CASES)
    assert drawn < 50_000   # numbers a backend draws for the whole axis, about (checks draw some twice)
    assert np.all([case.category in property_cases.CATEGORIES for case in CASES])
