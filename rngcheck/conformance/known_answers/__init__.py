"""The generators' known answers as a conformance axis: not an operator but the generators under both,
every Random123 known answer one block a case (backend.generator_blocks)."""

from __future__ import annotations

from ..axis import Axis
from . import cases, check, diagnosis, search

# Asked of every backend (required): whether a backend computes a generator, and at that round count, is
# each case's to say (not applicable, never a pass).
AXIS = Axis(
    name="known-answers", title="Counter-based generators (Random123's known answers)",
    spec="rngcheck.generators", method="generator_blocks", rules={}, cases=cases.generator_cases,
    categories=cases.CATEGORIES, procedures={cases.GENERATOR: check.check_generator}, required=True,
    diagnoses=diagnosis.registered_ids, keep=search.Budget, within=search.using)
