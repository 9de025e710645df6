"""The numbers diagnosis searches the conversion's steps (issue 40): the chain with TensorFlow's
parameters is the reference, and every broken implementation of tests/numbers_panel.py is caught and
named with its step and parameters."""

import json

import numpy as np
import pytest

from numbers_panel import PANEL, STATE, UNMODELLED
from rngcheck import numbers
from rngcheck.conformance import axes
from rngcheck.conformance.conventions import pipeline, search
from rngcheck.conformance.conventions.diagnosis import diagnose, registered_ids
from rngcheck.numbers import Request, tolerance


def requests():
    for dtype in ("float16", "bfloat16", "float32", "float64"):
        yield Request("tensorflow", "uniform", dtype, 67)
        yield Request("tensorflow", "uniform", dtype, 67, -3.5, 7.25)
        yield Request("tensorflow", "uniform", dtype, 9, seed=(1, 2))
        if dtype != "float64":
            yield Request("tensorflow", "normal", dtype, 67)
    for dtype, low, high in (("int32", -5, 10), ("int32", -(1 << 31), (1 << 31) - 1), ("int64", 0, 1 << 40),
                             ("int64", -(1 << 63), (1 << 63) - 1)):
        yield Request("tensorflow", "integers", dtype, 67, low, high)
    for dtype in ("int32", "uint32", "int64", "uint64"):
        yield Request("tensorflow", "bits", dtype, 67)


@pytest.mark.parametrize("request_", list(requests()), ids=lambda r: r.text())
def test_the_chain_with_tensorflow_s_parameters_is_the_reference(request_):
    right = numbers.draw(request_, STATE)
    predicted = pipeline.predict(pipeline.baseline(request_), request_, pipeline.Words(request_, STATE))
    assert predicted.dtype == right.dtype and predicted.tobytes() == right.tobytes()


def _caught(broken):
    request, state = broken.request, broken.state_of()
    actual = np.asarray(broken.draw(request, state))
    right = numbers.draw(request, state)
    wide = numbers.wide_reference(request, state)
    assert actual.dtype == right.dtype and actual.size == request.count, broken.name
    excess = numbers.excess(request, wide, actual)
    assert not tolerance.compare(request.dtype, right, actual, numbers.bound(request), excess=excess).within, \
        f"{broken.name} was not caught"
    return diagnose(request, state, actual, right=right, wide=wide)


@pytest.mark.parametrize("broken", PANEL, ids=lambda b: b.name)
def test_each_broken_implementation_is_caught_and_named_with_its_step_and_parameters(broken):
    diagnosis = _caught(broken)
    if broken.first:
        assert diagnosis["id"] == broken.id, diagnosis
        assert diagnosis.get("step") == broken.step, diagnosis
        assert diagnosis.get("parameters") == broken.parameters, diagnosis
    else:   # another model reproduces the numbers too: the expected one is listed with its parameters
        assert broken.id in [diagnosis["id"], *diagnosis["alternatives"]], diagnosis
    assert {"id": broken.id, "step": broken.step, "parameters": broken.parameters} in \
        [{k: m[k] for k in ("id", "step", "parameters")} for m in diagnosis["matches"]], diagnosis
    assert diagnosis["id"] in registered_ids() and set(diagnosis["alternatives"]) <= set(registered_ids())
    assert diagnosis["id"] not in diagnosis["alternatives"]
    json.dumps(diagnosis)   # JSON-safe


def test_the_panel_is_large_and_mostly_of_kinds_no_old_variant_names():
    assert len(PANEL) >= 15 and sum(b.new for b in PANEL) >= 10 and sum(b.first for b in PANEL) >= 15
    old = set(registered_ids()) - set(search.STEP_IDS)
    assert all(b.id not in old for b in PANEL if b.new)


def test_every_change_that_reproduces_a_case_is_listed():
    broken = next(b for b in PANEL if b.name == "whole-word-2^-32")
    diagnosis = _caught(broken)
    parameters = [m["parameters"] for m in diagnosis["matches"]]
    # the whole word is its low 32 bits and its high 32 bits alike: both reproduce the numbers
    assert {"bit selection": {"source": "high", "bits": 32}} in parameters
    assert diagnosis["search"]["not_tried"].startswith("pairs of changes")


@pytest.mark.parametrize("broken,line", UNMODELLED, ids=lambda x: getattr(x, "name", ""))
def test_where_the_search_ends_the_numbers_say_how_the_words_feed_them(broken, line):
    diagnosis = _caught(broken)
    assert diagnosis["id"] == "unknown-numbers" and line in diagnosis["inference"], diagnosis
    assert diagnosis["search"]["tried"] > 0 and diagnosis["search"]["seconds"] <= search.BUDGET_SECONDS + 1


def test_the_step_ids_are_registered_with_the_axis():
    registered = set(axes.DIAGNOSES.names())
    assert set(search.STEP_IDS) <= registered


def test_a_convention_the_chain_does_not_model_says_so():
    request = Request("jax", "uniform", "float32", 64)
    right = numbers.draw(request, STATE)
    diagnosis = diagnose(request, STATE, right[::-1].copy())
    assert diagnosis["search"]["tried"] == 0 and "tensorflow" in diagnosis["search"]["not_tried"]


def test_pairs_stop_at_the_budget_and_the_result_says_what_was_not_tried(monkeypatch):
    broken = next(b for b in PANEL if b.name == "half-high24-truncated")
    monkeypatch.setattr(search, "BUDGET_SECONDS", 0.0)
    diagnosis = _caught(broken)
    assert "past the budget of 0 s" in diagnosis["search"]["not_tried"], diagnosis["search"]


def test_numbers_no_change_comes_near_pay_for_no_pairs():
    request = Request("tensorflow", "uniform", "float32", 256)
    actual = np.full(256, np.nan, dtype=np.float32)
    diagnosis = diagnose(request, STATE, actual)
    assert diagnosis["id"] == "unknown-numbers"
    assert "neither change alone reproduces 25% of the numbers" in diagnosis["search"]["not_tried"]
