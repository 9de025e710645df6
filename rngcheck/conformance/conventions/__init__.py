"""The numbers conventions as a conformance axis: uniform floats, normals and integers as each library
draws them from the operator's words (rngcheck.numbers), judged within each convention's bound."""

from __future__ import annotations

from ..axis import Axis
from . import cases, check, diagnosis, repro

# Asked of every backend (required): whether a backend draws a convention's numbers is each case's to say
# (not applicable, never a pass).
AXIS = Axis(
    name="numbers", title="numbers conventions (rngcheck.numbers)", spec="rngcheck.numbers",
    method="random_numbers", rules={}, cases=cases.numbers_cases, categories=cases.CATEGORIES,
    procedures={cases.NUMBERS: check.check_numbers}, required=True, diagnoses=diagnosis.registered_ids,
    repro=repro.REPRO)
